/**
 * `board sync` on every board of the corpora (KiCad's demos, the open-hardware projects and the
 * repository's own), judged by raw kicad-cli: DRC with schematic parity before and after, on a
 * copy.
 *
 * - Where raw parity is clean, the sync changes no byte: a board in sync stays as KiCad wrote it.
 * - Elsewhere, after the sync kicad-cli loads the board, parity shows no issue except on the
 *   footprints the sync reported it could not fix (a footprint missing from every library, a
 *   locked part, a DNP part on a board saved before KiCad 8, whose format has no DNP flag), and
 *   no kind of error is more frequent than before — except where the
 *   schematic moved pads to another net (or off any) that the board's copper still joins:
 *   KiCad's "Update PCB from Schematic" makes that copper a short too (RoyalBlue54L-Feather's
 *   schematic splits the net its reset track carries into three; sweep-half-swept's renumbers
 *   its switch nets), so an error on a re-netted pad, or copper of a net that lost a pad left
 *   unconnected, is the schematic's.
 *
 * Raw DRC of the untouched project is cached by content (support/kicad-cache.ts); the DRC after
 * the sync runs every time. Boards over 40 MB (KiCad's 70 MB `vme-wren`) are left to the
 * finished-part acceptance (e2e/board-finish-vme-wren.test.ts): each of its runs syncs that board
 * through `do`, whose gate holds parity, and raw DRC judges every commit. A second sync and
 * DRC of it here would add a quarter of an hour to the suite and check nothing more.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { syncBoard, type BoardSyncPlan, type SyncWarningCode } from "../../src/kicad/board/sync/sync-board.ts";
import { runDrc, type DrcReport, type KicadCli, type Violation } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { copyCorpusProject, everyProject, type CorpusProject } from "../support/corpora.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
}, 60_000);
afterAll(cleanupTempDirs);

/** Warnings that leave a parity issue in place on purpose, and say so. */
const UNFIXABLE: SyncWarningCode[] = [
  "footprint_unavailable",
  "locked_not_swapped",
  "locked_not_removed",
  "no_footprint_assigned",
  "second_footprint_kept",
  "unannotated",
];

const BIG_BOARD = 40_000_000;
const boards = everyProject().filter(
  (p): p is CorpusProject & { board: string; schematic: string } =>
    p.board !== undefined && p.schematic !== undefined && statSync(p.board).size <= BIG_BOARD,
);

describe("board sync on the corpora, judged by raw kicad-cli", () => {
  for (const project of boards) {
    test(project.id, async () => {
      const copy = await copyCorpusProject(project);
      const timeoutMs = 120_000;
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
      expect(newErrors(before.report, after.report, renetted(plan))).toEqual([]);
    }, 300_000);
  }
});

function issues(violations: Violation[]): Violation[] {
  return violations.filter((v) => !v.excluded);
}

/**
 * Parity issues left on footprints the plan did not warn about, and symbol pins without a pad it
 * did not name, as "type: description".
 */
function unexplained(parity: Violation[], plan: BoardSyncPlan): string[] {
  const warned = new Set(plan.warnings.filter((w) => UNFIXABLE.includes(w.code)).map((w) => w.ref));
  const dnpKept = dnpKeptInSchematic(plan);
  const padless = new Set(
    plan.warnings
      .filter((w) => w.code === "pin_without_pad")
      .map((w) => `${w.ref} ${/ pin (\S+) has no pad/.exec(w.message)?.[1]}`),
  );
  return issues(parity)
    .filter(
      (v) => !warned.has(missingRef(v.description)) && !v.items.some((item) => warned.has(refOf(item.description))),
    )
    .filter((v) => !v.items.some((item) => padless.has(`${refOf(item.description)} ${padlessPin(v.description)}`)))
    .filter((v) => !(DNP_DIFFERS.test(v.description) && v.items.some((item) => dnpKept.has(refOf(item.description)))))
    .map((v) => `${v.type}: ${v.description} (${v.items.map((i) => i.description).join("; ")})`);
}

/** KiCad's parity issue for a footprint whose DNP flag is not its symbol's. */
const DNP_DIFFERS = /'Do not populate' settings differ/;

/**
 * The DNP parts the plan left unmarked on a board whose format has no footprint DNP flag (before
 * KiCad 8), which its `dnp_not_on_board` warning names first: "C26, C30 are "Do not populate"…".
 * KiCad's DRC reports those until the board is saved in a newer format, as the warning says.
 */
function dnpKeptInSchematic(plan: BoardSyncPlan): Set<string | undefined> {
  return new Set(
    plan.warnings
      .filter((w) => w.code === "dnp_not_on_board")
      .flatMap((w) => /^(.*?) (?:is|are) "Do not populate"/.exec(w.message)?.[1]?.split(", ") ?? []),
  );
}

/** The symbol a missing-footprint issue names ("Missing footprint SW2_r1 (SW_Push)"); it has no items. */
function missingRef(description: string): string | undefined {
  return /^Missing footprint (\S+)/.exec(description)?.[1];
}

/**
 * The pin a "No pad found for pin S2 (GND) in schematic." issue names: a symbol pin its
 * footprint has no pad for, which no sync can mend and the plan's `pin_without_pad` warns of
 * (schoko-v2's USB-C J1 numbers its four shield pads all S1).
 */
function padlessPin(description: string): string | undefined {
  return /^No pad found for pin (\S+)/.exec(description)?.[1];
}

/** The footprint an item description names: "Footprint J1", "Pad 3 [GND] of J1 on F.Cu". */
function refOf(description: string): string | undefined {
  return /^Footprint (\S+)/.exec(description)?.[1] ?? / of (\S+) on /.exec(description)?.[1];
}

/** What the sync re-netted: each pad moved to another net or off any, and the nets they left. */
interface Renetted {
  /** "2 [NET] of SW1", "R2 [<no net>] of J2": the pad as DRC describes it after the sync. */
  pads: Set<string>;
  /** Nets that lost a pad: their copper may now end in nothing. */
  nets: Set<string>;
}

function renetted(plan: BoardSyncPlan): Renetted {
  const moved = plan.updated.flatMap((u) =>
    u.pads.filter((p) => p.from !== undefined && p.from !== p.to).map((p) => ({ ref: u.ref, ...p })),
  );
  return {
    pads: new Set(moved.map((p) => `${p.pad} [${p.to ?? "<no net>"}] of ${p.ref}`)),
    nets: new Set(moved.map((p) => p.from!)),
  };
}

/**
 * Kinds of error (violations and unconnected items) that became more frequent, leaving out the
 * errors the schematic's own nets make on copper: those on a re-netted pad, and unconnected
 * copper of a net that lost a pad.
 */
function newErrors(before: DrcReport, after: DrcReport, moved: Renetted): string[] {
  const onRenettedPad = (v: Violation) =>
    v.items.some((item) => [...moved.pads].some((pad) => item.description.includes(`ad ${pad}`)));
  const leftByPad = (v: Violation) =>
    v.type === "unconnected_items" &&
    v.items.some((item) => [...moved.nets].some((net) => item.description.includes(`[${net}]`)));
  const count = (report: DrcReport) => {
    const counts = new Map<string, number>();
    for (const v of [...report.violations, ...report.unconnected_items]) {
      if (v.severity === "error" && !v.excluded && !onRenettedPad(v) && !leftByPad(v))
        counts.set(v.type, (counts.get(v.type) ?? 0) + 1);
    }
    return counts;
  };
  const was = count(before);
  return [...count(after)]
    .filter(([type, n]) => n > (was.get(type) ?? 0))
    .map(([type, n]) => `${type}: ${was.get(type) ?? 0} → ${n}`);
}
