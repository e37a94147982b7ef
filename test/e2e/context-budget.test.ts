/**
 * A long run stays within the request budget and is cached: the recorded 35-turn session on
 * LibreSolar's bms-c1, a real four-layer board (16 views, three full checks, the proposal, the
 * edit, the board sync), replayed through the real Anthropic and OpenAI providers against
 * loopback servers that measure every request (test/support/model-meter.ts), with real
 * kicad-cli and the real view renders.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_CONTEXT_BUDGET_TOKENS } from "../../src/config/schema.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { meteredRun } from "../support/model-meter.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { sessionTurns } from "./scripted-model.ts";

afterAll(cleanupTempDirs);
beforeAll(async () => {
  await requireKicadCli();
}, 60_000);

const SESSION = "bms-c1-add-bulk-cap";
const REQUEST = "add a 10 µF bulk capacitor on +3V3 next to U5";
const TIMEOUT = 600_000;

async function bmsRepo(): Promise<string> {
  const project = corpusProjects().find((p) => p.id === "corpus/bms-c1");
  if (!project) throw new Error("corpus/bms-c1 is missing from the corpus");
  return initialisedCorpusRepo(project);
}

describe("a 35-turn add-part run on a four-layer board stays within the context budget", () => {
  test(
    "through the Anthropic provider: no request over 60k tokens, the run under 600k, a cache breakpoint on every request",
    async () => {
      const turns = sessionTurns(SESSION);
      expect(turns).toHaveLength(35);
      const { summary, requests } = await meteredRun("anthropic", turns, REQUEST, await bmsRepo());
      expect(summary.status, `${summary.reason}: ${summary.detail}`).toBe("committed");
      expect(requests).toHaveLength(35);
      expect(requests.reduce((n, r) => n + r.pictures, 0)).toBeGreaterThan(0);
      for (const [i, r] of requests.entries()) {
        expect(r.tokens, `request ${i + 1}`).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET_TOKENS);
        expect(r.breakpoints, `request ${i + 1}`).toBeGreaterThan(0);
        expect(r.pictures, `request ${i + 1}`).toBeLessThanOrEqual(2);
        expect(r.unpaired, `request ${i + 1}`).toEqual([]);
      }
      const total = requests.reduce((n, r) => n + r.tokens, 0);
      expect(total).toBeLessThanOrEqual(600_000);
      // The cache serves most of it, and the run's usage says so.
      const read = requests.reduce((n, r) => n + r.cacheRead, 0);
      expect(read / total).toBeGreaterThan(0.5);
      expect(summary.usage.cacheReadTokens).toBe(read);
      expect(summary.usage.turns).toBe(35);
    },
    TIMEOUT,
  );

  test(
    "through the OpenAI provider: every request within the budget",
    async () => {
      const { summary, requests } = await meteredRun("openai", sessionTurns(SESSION), REQUEST, await bmsRepo());
      expect(summary.status, `${summary.reason}: ${summary.detail}`).toBe("committed");
      expect(requests).toHaveLength(35);
      for (const [i, r] of requests.entries()) {
        expect(r.tokens, `request ${i + 1}`).toBeLessThanOrEqual(DEFAULT_CONTEXT_BUDGET_TOKENS);
        expect(r.unpaired, `request ${i + 1}`).toEqual([]);
      }
      expect(summary.usage.cacheReadTokens).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
