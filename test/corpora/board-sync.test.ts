/**
 * `board sync` on every board of both corpora (KiCad's demos and the open-hardware projects),
 * judged by raw kicad-cli: DRC with schematic parity before and after, on a copy.
 *
 * - Where raw parity is clean, the sync changes no byte: a board in sync stays as KiCad wrote it.
 * - Elsewhere, after the sync kicad-cli loads the board, parity shows no issue except on the
 *   footprints the sync reported it could not fix (a footprint missing from every library, a
 *   locked part), and no kind of error is more frequent than before — except where the
 *   schematic moved pads to another net that the board's copper still joins: KiCad's "Update
 *   PCB from Schematic" makes that copper a short too (RoyalBlue54L-Feather's schematic splits
 *   the net its reset track carries into three), and each such error is on a re-netted pad.
 *
 * Raw DRC of the untouched project is cached by content (support/kicad-cache.ts); the DRC after
 * the sync runs every time. `vme-wren` (70 MB) dominates the run time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { syncBoard, type BoardSyncPlan, type SyncWarningCode } from "../../src/kicad/board-sync.ts";
import { runDrc, type DrcReport, type KicadCli, type Violation } from "../../src/kicad/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { allProjects, copyCorpusProject, type CorpusProject } from "../support/corpora.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
}, 60_000);
afterAll(cleanupTempDirs);

/** Warnings that leave a parity issue in place on purpose, and say so. */
const UNFIXABLE: SyncWarningCode[] = ["footprint_unavailable", "locked_not_swapped", "locked_not_removed", "no_footprint_assigned", "unannotated"];

const BIG_BOARD = 40_000_000;
const boards = allProjects().filter((p): p is CorpusProject & { board: string; schematic: string } => p.board !== undefined && p.schematic !== undefined);

describe("board sync on the corpora, judged by raw kicad-cli", () => {
  for (const project of boards) {
    const big = readFileSync(project.board).length > BIG_BOARD;
    test(
      project.id,
      async () => {
        const copy = await copyCorpusProject(project);
        const timeoutMs = big ? 900_000 : 120_000;
        const before = await cachedParityDrc(cli, copy.root, copy.board!, timeoutMs);
        expect(before.parityChecked).toBe(true);
        const original = readFileSync(copy.board!);
        const { plan, written } = await syncBoard(discoverProject(copy.root, project.projectFile));

        if (issues(before.report.schematic_parity).length === 0) {
          expect(written).toBe(false);
          expect(Buffer.compare(readFileSync(copy.board!), original)).toBe(0);
          return;
        }
        const after = await runDrc(copy.board!, { cli, schematicParity: true, timeoutMs });
        expect(after.parityChecked).toBe(true);
        expect(unexplained(after.report.schematic_parity, plan)).toEqual([]);
        expect(newErrors(before.report, after.report, renettedPads(plan))).toEqual([]);
      },
      big ? 2_000_000 : 300_000,
    );
  }
});

function issues(violations: Violation[]): Violation[] {
  return violations.filter((v) => !v.excluded);
}

/** Parity issues left on footprints the plan did not warn about, as "type: description". */
function unexplained(parity: Violation[], plan: BoardSyncPlan): string[] {
  const warned = new Set(plan.warnings.filter((w) => UNFIXABLE.includes(w.code)).map((w) => w.ref));
  return issues(parity)
    .filter((v) => !v.items.some((item) => warned.has(refOf(item.description))))
    .map((v) => `${v.type}: ${v.description} (${v.items.map((i) => i.description).join("; ")})`);
}

/** The footprint an item description names: "Footprint J1", "Pad 3 [GND] of J1 on F.Cu". */
function refOf(description: string): string | undefined {
  return /^Footprint (\S+)/.exec(description)?.[1] ?? / of (\S+) on /.exec(description)?.[1];
}

/** "Pad 2 [NET] of SW1" for every pad the sync moved to another net, as DRC describes it. */
function renettedPads(plan: BoardSyncPlan): Set<string> {
  return new Set(plan.updated.flatMap((u) => u.pads.filter((p) => p.from !== undefined && p.to !== undefined).map((p) => `${p.pad} [${p.to}] of ${u.ref}`)));
}

/**
 * Kinds of error (violations and unconnected items) that became more frequent, leaving out the
 * errors that involve a pad the schematic moved to another net (`renetted`).
 */
function newErrors(before: DrcReport, after: DrcReport, renetted: Set<string>): string[] {
  const onRenettedPad = (v: Violation) => v.items.some((item) => [...renetted].some((pad) => item.description.includes(`ad ${pad}`)));
  const count = (report: DrcReport) => {
    const counts = new Map<string, number>();
    for (const v of [...report.violations, ...report.unconnected_items]) {
      if (v.severity === "error" && !v.excluded && !onRenettedPad(v)) counts.set(v.type, (counts.get(v.type) ?? 0) + 1);
    }
    return counts;
  };
  const was = count(before);
  return [...count(after)].filter(([type, n]) => n > (was.get(type) ?? 0)).map(([type, n]) => `${type}: ${was.get(type) ?? 0} → ${n}`);
}
