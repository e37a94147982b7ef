/**
 * `copperhead do` on KiCad demos whose boards carry drift nobody asked to fix — `pic_programmer`
 * and `complex_hierarchy` hold footprints from project libraries the schematic no longer names
 * (`footprints:X` on the board, `Capacitor_THT:X` in the schematic). A recorded session adds an
 * LED with its resistor, through the compiled binary with real kicad-cli and git: the run
 * commits, `sync_board` adds the two footprints and changes no byte of any footprint that was
 * there, and raw DRC finds no error and no parity issue the board did not have; a connection
 * left unrouted belongs to a part the run lists in layoutPending with its reason.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { footprintId } from "../../src/kicad/board/sync/sync-board.ts";
import { runDrc, type DrcReport, type KicadCli, type Violation } from "../../src/kicad/cli/kicad-cli.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { copyCorpusProject, demoProjects } from "../support/corpora.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo, ISOLATED_ENV } from "../support/repos.ts";
import { git } from "../repo/git-repo.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

let cli: KicadCli;
beforeAll(async () => {
  requireBinary();
  cli = await requireKicadCli();
}, 60_000);
afterAll(cleanupTempDirs);

const REQUEST = "add a power-on LED with its series resistor";

const CASES = [
  { id: "demos/pic_programmer/pic_programmer", session: "add-status-led-pic-programmer", added: ["D13", "R22"] },
  {
    id: "demos/complex_hierarchy/complex_hierarchy",
    session: "add-status-led-complex-hierarchy",
    added: ["D102", "R101"],
  },
];

describe("do on a demo board with footprint-library drift", () => {
  for (const { id, session, added } of CASES) {
    test(`${id}: an LED and its resistor are committed; no existing footprint changes, DRC gains no error`, async () => {
      const project = demoProjects().find((p) => p.id === id)!;
      const repo = await initialisedCorpusRepo(project);
      const boardFile = join(repo, relative(project.root, project.board!));
      const before = Board.load(boardFile);

      const run = await runBinary(
        ["do", REQUEST, "--model", `replay:${join(SESSIONS_DIR, `${session}.json`)}`, "--json", "--repo", repo],
        { env: ISOLATED_ENV },
      );
      expect(run.exitCode).toBe(0);
      const summary = JSON.parse(run.stdout);
      expect(summary.status).toBe("committed");
      // What the run could not route is one of the new parts, with its reason.
      const pending: string[] = summary.layoutPending.map((p: { ref: string; reason: string }) =>
        p.reason ? p.ref : `${p.ref} without a reason`,
      );
      expect(pending.filter((ref) => !added.includes(ref))).toEqual([]);
      // The record says what the board carries: its warnings, and that the change added none.
      const message = await git(repo, "log", "-1", "--format=%B");
      // (pic_programmer: "ERC clean (1 warning, none new), DRC clean (1 warning, none new), parity clean (61 warnings, none new)".)
      expect(message).toMatch(
        /\nVerification: ERC [^\n]*, parity clean \(\d+ warnings, none new\), requirements \d+\/\d+\n/,
      );

      // Every footprint that was on the board keeps its bytes; the new parts are the only additions.
      const after = Board.load(boardFile);
      const printed = new Map(after.footprints().map((f) => [footprintId(f), printSexpr(f.node)]));
      expect(
        before
          .footprints()
          .filter((f) => printed.get(footprintId(f)) !== printSexpr(f.node))
          .map((f) => f.ref),
      ).toEqual([]);
      expect(
        after
          .footprints()
          .filter((f) => !before.footprints().some((b) => footprintId(b) === footprintId(f)))
          .map((f) => f.ref)
          .sort(),
      ).toEqual([...added].sort());

      // The tool told the model what it did and what it left, briefly.
      const result = syncBoardResult(repo);
      expect(result.length).toBeLessThan(4000);
      expect(JSON.parse(result).notApplied.baseline.byKind.footprint.count).toBeGreaterThan(50);

      const original = await copyCorpusProject(project);
      const drcBefore = (await cachedParityDrc(cli, original.root, original.board!, 120_000)).report;
      const drcAfter = (await runDrc(boardFile, { cli, schematicParity: true })).report;
      expect(grown(drcBefore.violations, drcAfter.violations, (v) => v.severity === "error")).toEqual([]);
      expect(grown(drcBefore.schematic_parity, drcAfter.schematic_parity, () => true)).toEqual([]);
      expect(unroutedOutside(drcAfter, pending)).toEqual([]);
    }, 300_000);
  }
});

/** The `sync_board` tool result in the run's transcript. */
function syncBoardResult(repo: string): string {
  const runs = join(repo, ".copperhead/runs");
  const [runId] = readdirSync(runs);
  const lines = readFileSync(join(runs, runId!, "transcript.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  return lines.find((e) => e.type === "tool_result" && e.name === "sync_board").content;
}

/** Kinds of finding (matching `which`) more frequent after than before. */
function grown(before: Violation[], after: Violation[], which: (v: Violation) => boolean): string[] {
  const count = (vs: Violation[]) => {
    const counts = new Map<string, number>();
    for (const v of vs) if (!v.excluded && which(v)) counts.set(v.type, (counts.get(v.type) ?? 0) + 1);
    return counts;
  };
  const was = count(before);
  return [...count(after)]
    .filter(([type, n]) => n > (was.get(type) ?? 0))
    .map(([type, n]) => `${type}: ${was.get(type) ?? 0} → ${n}`);
}

/** Unrouted connections that involve none of the parts the run left for layout (those wait for a person). */
function unroutedOutside(report: DrcReport, pending: string[]): string[] {
  return report.unconnected_items
    .filter((v) => !v.items.some((i) => pending.some((ref) => i.description.includes(` of ${ref}`))))
    .map((v) => v.items.map((i) => i.description).join(" / "));
}
