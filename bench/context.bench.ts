/**
 * What a run costs in tokens, and what keeping the history small and cached saves.
 *
 * Each recorded add-part session is replayed as a real `do` run (real kicad-cli, real view
 * renders) through each HTTP provider (Anthropic Messages, OpenAI Chat Completions) against a
 * loopback server that measures every request (test/support/model-meter.ts): its size by the
 * estimate copperhead budgets with (text characters / 3.5 + 1,600 per picture), the pictures it
 * carries, and the share a prompt cache served (Anthropic: from its breakpoints; OpenAI: its
 * automatic prefix cache). Each session runs twice per provider, as copperhead sends it and with
 * `COPPERHEAD_FULL_CONTEXT=1` (no compaction, no breakpoints: every request resends the whole
 * history), and the two are printed side by side with their ratio. OpenAI caches a repeated
 * prefix whatever the client does, so its full-history runs are cached too. Targets, from the 60k
 * default budget: no request over 60k tokens, and the whole run at most 0.5× the full history's
 * on the sessions long enough to need it.
 *
 * Sessions may be named on the command line (`bun bench/context.bench.ts bms-c1-add-bulk-cap`);
 * the default is all of them. The 35-turn bms-c1 session takes minutes per run.
 */
import { DEFAULT_CONTEXT_BUDGET_TOKENS } from "../src/config/schema.ts";
import { corpusProjects } from "../test/support/corpora.ts";
import { cleanupTempDirs } from "../test/support/kicad.ts";
import { meteredRun, type MeteredRequest, type WireApi } from "../test/support/model-meter.ts";
import { initialisedCorpusRepo, initialisedRepo } from "../test/support/repos.ts";
import { sessionTurns } from "../test/e2e/scripted-model.ts";
import { ratio, report } from "./lib/measure.ts";

interface BenchSession {
  name: string;
  request: string;
  repo: () => Promise<string>;
}

const corpusRepo = (id: string) => () => initialisedCorpusRepo(corpusProjects().find((p) => p.id === id)!);

const SESSIONS: BenchSession[] = [
  { name: "add-decoupling-cap", request: "add a 100 nF decoupling capacitor on +3V3", repo: () => initialisedRepo() },
  { name: "add-cap-next-to-u1", request: "add a 100 nF capacitor next to U1", repo: () => initialisedRepo() },
  { name: "view-sheet-and-board", request: "show me R1", repo: corpusRepo("corpus/rvpc-revb") },
  { name: "bms-c1-add-bulk-cap", request: "add a 10 µF bulk capacitor on +3V3 next to U5", repo: corpusRepo("corpus/bms-c1") },
];

const APIS: WireApi[] = ["anthropic", "openai"];

interface Totals {
  requests: number;
  largest: number;
  total: number;
  pictures: number;
  cached: number;
}

function totals(requests: MeteredRequest[]): Totals {
  const total = requests.reduce((n, r) => n + r.tokens, 0);
  return {
    requests: requests.length,
    largest: Math.max(0, ...requests.map((r) => r.tokens)),
    total,
    pictures: requests.reduce((n, r) => n + r.pictures, 0),
    cached: total > 0 ? requests.reduce((n, r) => n + r.cacheRead, 0) / total : 0,
  };
}

const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`.padStart(8);

function line(label: string, t: Totals): string {
  return `    ${label.padEnd(14)} ${String(t.requests).padStart(3)} requests  largest ${k(t.largest)}  run ${k(t.total)}  pictures ${String(t.pictures).padStart(4)}  cached ${(t.cached * 100).toFixed(0).padStart(3)}%`;
}

export async function benchContext(names: string[] = []): Promise<void> {
  const chosen = names.length ? SESSIONS.filter((s) => names.includes(s.name)) : SESSIONS;
  try {
    for (const session of chosen) {
      const turns = sessionTurns(session.name);
      report(`${session.name} (${turns.length} recorded turns): tokens per request by the estimate, compacted and cached vs the full history`);
      for (const api of APIS) {
        const small = await meteredRun(api, turns, session.request, await session.repo());
        const full = await meteredRun(api, turns, session.request, await session.repo(), { full: true });
        const [s, f] = [totals(small.requests), totals(full.requests)];
        report(`  ${api} (${small.summary.status}${small.summary.reason ? `/${small.summary.reason}` : ""})`);
        report(line("copperhead", s));
        report(line("full history", f));
        report(`    largest request vs the ${DEFAULT_CONTEXT_BUDGET_TOKENS / 1000}k budget ${ratio(s.largest / DEFAULT_CONTEXT_BUDGET_TOKENS, { max: 1 })}`);
        // Uncached input is what is billed in full: the cost ratio that matters.
        const billed = (t: Totals) => t.total * (1 - t.cached);
        report(`    whole run vs full history ${ratio(f.total ? s.total / f.total : 1, turns.length >= 30 ? { max: 0.5 } : undefined)}  uncached input ${ratio(billed(f) ? billed(s) / billed(f) : 1)}`);
      }
    }
  } finally {
    await cleanupTempDirs();
  }
}

if (import.meta.main) await benchContext(process.argv.slice(2));
