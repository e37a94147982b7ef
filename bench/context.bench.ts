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
 * prefix whatever the client does, so its full-history runs are cached too (and a longer
 * unchanged front caches better: compaction trades some of that for half the tokens). The input
 * cost weighs tokens as the providers bill them: Anthropic a cache read at 0.1 and a write at
 * 1.25 of the input price, OpenAI a cached token at 0.5 (its smallest discount). Target: no
 * request over the 60k default budget.
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
  {
    name: "bms-c1-add-bulk-cap",
    request: "add a 10 µF bulk capacitor on +3V3 next to U5",
    repo: corpusRepo("corpus/bms-c1"),
  },
];

const APIS: WireApi[] = ["anthropic", "openai"];

interface Totals {
  requests: number;
  largest: number;
  total: number;
  pictures: number;
  /** The share of input tokens a cache served. */
  cached: number;
  /** Input tokens weighed by price (see the header). */
  cost: number;
}

/** What a cached token costs, as a share of the input price. */
const PRICE = { anthropic: { read: 0.1, write: 1.25 }, openai: { read: 0.5, write: 1 } };

function totals(api: WireApi, requests: MeteredRequest[]): Totals {
  const sum = (f: (r: MeteredRequest) => number) => requests.reduce((n, r) => n + f(r), 0);
  const total = sum((r) => r.tokens);
  const read = sum((r) => r.cacheRead);
  const write = sum((r) => r.cacheWrite);
  return {
    requests: requests.length,
    largest: Math.max(0, ...requests.map((r) => r.tokens)),
    total,
    pictures: sum((r) => r.pictures),
    cached: total > 0 ? read / total : 0,
    cost: total - read - write + read * PRICE[api].read + write * PRICE[api].write,
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
      report(
        `${session.name} (${turns.length} recorded turns): tokens per request by the estimate, compacted and cached vs the full history`,
      );
      for (const api of APIS) {
        const small = await meteredRun(api, turns, session.request, await session.repo());
        const full = await meteredRun(api, turns, session.request, await session.repo(), { full: true });
        const [s, f] = [totals(api, small.requests), totals(api, full.requests)];
        report(`  ${api} (${small.summary.status}${small.summary.reason ? `/${small.summary.reason}` : ""})`);
        report(line("copperhead", s));
        report(line("full history", f));
        report(
          `    largest request vs the ${DEFAULT_CONTEXT_BUDGET_TOKENS / 1000}k budget ${ratio(s.largest / DEFAULT_CONTEXT_BUDGET_TOKENS, { max: 1 })}`,
        );
        report(
          `    whole run vs full history: tokens ${ratio(f.total ? s.total / f.total : 1)}  input cost ${ratio(f.cost ? s.cost / f.cost : 1)}`,
        );
      }
    }
  } finally {
    await cleanupTempDirs();
  }
}

if (import.meta.main) await benchContext(process.argv.slice(2));
