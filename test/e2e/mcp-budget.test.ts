/**
 * `copperhead_check` answers within what an MCP host holds (Claude Code caps a tool result at
 * about 25k tokens) on the largest board of both corpora, through the binary's stdio server:
 * the whole result frame under 20k tokens (estimated as characters / 3.5), the summary of what
 * `check --json` prints in full, and filters and pages that give what they name. The project
 * sits in a subfolder of its repository, as real ones do.
 *
 * The board's DRC takes many minutes: `check --json` runs it once and fills the repo's check
 * cache, and the server's calls read it back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { CheckReport } from "../../src/checks/types.ts";
import { summariseCheck, type CheckSummary } from "../../src/mcp/check-summary.ts";
import { git } from "../repo/git-repo.ts";
import { allProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { openMcpWire, type Frame, type McpWire } from "./mcp-wire.ts";

afterAll(cleanupTempDirs);

const TOKENS = 20_000;
const CHARS_PER_TOKEN = 3.5;
/** KiCad's DRC of the largest board, on a loaded machine. */
const LONG = 3_600_000;

const largest = allProjects()
  .filter((p) => p.board)
  .sort((a, b) => statSync(b.board!).size - statSync(a.board!).size)[0];
if (!largest) throw new Error("no corpus board: scripts/setup.sh --test installs KiCad's demos and the corpus");

function serverEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    ...ISOLATED_ENV,
    COPPERHEAD_KICAD_TIMEOUT: String(LONG / 1000),
  }))
    if (v !== undefined) env[k] = v;
  return env;
}

describe(`copperhead_check on the largest corpus board (${largest.id})`, () => {
  let repo = "";
  let report: CheckReport;
  let fullJson = "";
  let wire: McpWire;
  let id = 0;

  beforeAll(async () => {
    requireBinary();
    repo = join(await makeTempDir(), "repo");
    const folder = join(repo, "hw", basename(largest.root));
    mkdirSync(folder, { recursive: true });
    cpSync(largest.root, folder, { recursive: true });
    await git(repo, "init", "--quiet", "--initial-branch=main");
    const cli = await runBinary(["check", "--json", "--repo", repo], { env: serverEnv() });
    expect(cli.stderr).not.toContain("ERROR");
    fullJson = cli.stdout;
    report = JSON.parse(fullJson) as CheckReport;
    wire = await openMcpWire(repo, serverEnv());
  }, LONG);

  afterAll(async () => {
    await wire?.close();
  });

  /** The result frame as it went over the wire, and its summary. */
  async function check(args: Record<string, unknown>): Promise<{ line: string; summary: CheckSummary; relay: string }> {
    const n = ++id;
    await wire.send({
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "copperhead_check", arguments: args },
    });
    const frame: Frame = await wire.response(n, LONG);
    const line = wire.lines.find((l) => (JSON.parse(l) as Frame).id === n)!;
    const result = frame.result as {
      isError?: boolean;
      content: Array<{ text: string }>;
      structuredContent: CheckSummary;
    };
    expect(result.isError ?? false).toBe(false);
    expect(result.content[1]!.text).toBe(JSON.stringify(result.structuredContent, null, 2));
    return { line, summary: result.structuredContent, relay: result.content[0]!.text };
  }

  test(
    "by default: the summary of check --json, every count, the first findings of each rule, under 20k tokens",
    async () => {
      const findings = report.checks.flatMap((c) => c.findings);
      expect(findings.length).toBeGreaterThan(100);
      // What the full list would have cost a host.
      expect(fullJson.length / CHARS_PER_TOKEN).toBeGreaterThan(TOKENS);
      const { line, summary, relay } = await check({});
      expect(line.length / CHARS_PER_TOKEN).toBeLessThan(TOKENS);
      expect(summary).toEqual(JSON.parse(JSON.stringify(summariseCheck(report))));
      expect(summary.counts).toEqual(report.counts);
      for (const c of summary.checks) {
        const all = report.checks.find((r) => r.id === c.id)!.findings;
        if (c.otherRules === undefined) expect(c.rules.reduce((n, r) => n + r.count, 0)).toBe(all.length);
      }
      expect(relay).toContain(`Listed ${summary.page.returned} of ${findings.length} findings`);
    },
    LONG,
  );

  test(
    "rule, severity and limit give what they ask for, and pages continue where the last one stopped",
    async () => {
      const findings = report.checks.flatMap((c) => c.findings);
      const top = [...new Set(findings.map((f) => f.rule))].sort(
        (a, b) => findings.filter((f) => f.rule === b).length - findings.filter((f) => f.rule === a).length,
      )[0]!;
      const ofRule = findings.filter((f) => f.rule === top).map((f) => f.key);

      const limited = await check({ rule: top, limit: 7 });
      expect(limited.line.length / CHARS_PER_TOKEN).toBeLessThan(TOKENS);
      expect(limited.summary.findings.map((f) => f.key)).toEqual(ofRule.slice(0, 7));
      expect(limited.summary.page).toMatchObject({ mode: "filter", selected: ofRule.length, offset: 0, returned: 7 });

      const next = await check({ rule: top, limit: 7, offset: limited.summary.page.next });
      expect(next.summary.findings.map((f) => f.key)).toEqual(ofRule.slice(7, 14));

      for (const severity of ["error", "warning"] as const) {
        const { line, summary } = await check({ severity });
        expect(line.length / CHARS_PER_TOKEN).toBeLessThan(TOKENS);
        expect(summary.page.selected).toBe(report.counts[severity]);
        expect(summary.findings.every((f) => f.severity === severity)).toBe(true);
        expect(summary.findings.map((f) => f.key)).toEqual(
          findings
            .filter((f) => f.severity === severity)
            .slice(0, summary.findings.length)
            .map((f) => f.key),
        );
      }
    },
    LONG,
  );
});
