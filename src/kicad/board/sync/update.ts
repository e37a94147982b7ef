/**
 * Updating a board from its schematic, as one edit of a `BoardEditor`: the sync plan is applied,
 * new footprints are placed beside their anchors (or staged below the outline where nothing
 * fits), routed to their nets' copper, and the zones they touch refilled. All or nothing: an
 * update that fails midway leaves the board as it was. The caller saves the board.
 */
import { BoardObstacles } from "../clearance/obstacles.ts";
import type { BoardEditor } from "../editor.ts";
import { indexForRouting, placeAdditions } from "../placement.ts";
import { reportLayout } from "../route/layout-report.ts";
import { assertCanRefill } from "../zones/refill.ts";
import { bestPartOn, netsOf } from "../../netlist/parts.ts";
import {
  applyBoardSync,
  isEmptyPlan,
  planBoardSync,
  type BoardSyncInputs,
  type BoardSyncOptions,
  type BoardSyncPlan,
} from "./sync-board.ts";

/** Why a part is left for a person: no spot inside the outline. */
const STAGED = "staged below the outline: no free spot inside it near its anchor";

export interface BoardUpdateOptions extends Pick<BoardSyncOptions, "filter" | "overrideLock"> {
  /** The part each new part was placed beside in the schematic: its footprint goes beside that one's. */
  anchors?: ReadonlyMap<string, string>;
  /**
   * Parts left for a person, by reference, with the reason: the update records the footprints
   * it staged and the connections it could not route, and clears the parts it connected.
   */
  pending: Map<string, string>;
}

/** The plan applied, and one line per placed part saying how it was connected. */
export type BoardUpdate = BoardSyncPlan & { routing: string[] };

/** Updates `editor`'s board from `source` (the schematic side of the design; its `board` is the editor's). */
export async function updateBoardFromSchematic(
  editor: BoardEditor,
  source: Omit<BoardSyncInputs, "board">,
  options: BoardUpdateOptions,
): Promise<BoardUpdate> {
  const { netlist } = source;
  const result = await editor.attempt(async (board) => {
    const plan = planBoardSync({ ...source, board }, options);
    // A new footprint goes next to the part it was placed beside in the schematic (or shares the
    // most nets with); where nothing fits, it stays staged beside the outline.
    const anchorOf = (ref: string) =>
      options.anchors?.get(ref) ??
      bestPartOn(netlist, netsOf(netlist, ref), (other) => other !== ref && !plan.added.some((a) => a.ref === other));
    // A removed part makes room first: it takes the run's tracks for it along, and those that
    // served only it, and its pads and courtyard are out of the way of the new parts' placement.
    const removedRefs = plan.removed.map((r) => r.ref);
    if (plan.added.length > 0) editor.expectRefill();
    const { vacated, tookAlong } = editor.vacateForRemoval(removedRefs);
    if (tookAlong.tracks + tookAlong.vias > 0) tellTakenAlong(plan, removedRefs, tookAlong);
    // Not the editor's index: the sync edits this tree after placing.
    const obstacles = new BoardObstacles(board, editor.rules);
    for (const ref of removedRefs) obstacles.remove(ref);
    const staged = new Map(
      placeAdditions(board, plan, source.libraries, anchorOf, editor.rules, obstacles).map((s) => [s.ref, s.reason]),
    );
    for (const add of plan.added) {
      add.staged = staged.has(add.ref);
      add.stagedReason = staged.get(add.ref);
    }
    let routing: string[] = [];
    if (!isEmptyPlan(plan)) {
      const placed = plan.added.filter((a) => !a.staged).map((a) => a.ref);
      // Without KiCad's Python this throws, and the attempt takes the removal back.
      if (placed.length > 0 || plan.removed.length > 0) await assertCanRefill(board);
      // The pours are refilled where the removed parts and their copper were (`vacated`).
      const written = editor.change((b) => applyBoardSync(b, plan, source.libraries, editor.rules.silkText()));
      const layout = await editor.connect(placed, {
        vacated,
        staged: plan.added.filter((a) => a.staged).map((a) => a.ref),
        obstacles: indexForRouting(obstacles, written, plan),
      });
      routing = reportLayout(options.pending, layout, placed);
    }
    return { ...plan, routing };
  });
  for (const added of result.added)
    if (added.staged)
      options.pending.set(added.ref, added.stagedReason ? `staged below the outline: ${added.stagedReason}` : STAGED);
  return result;
}

/**
 * The plan said the copper on the removed parts' pads would dangle; the editor took what served
 * only them along instead, and the warning says so.
 */
function tellTakenAlong(plan: BoardSyncPlan, refs: string[], { tracks, vias }: { tracks: number; vias: number }) {
  plan.warnings = plan.warnings.filter((w) => !(w.code === "tracks_left_dangling" && refs.includes(w.ref ?? "")));
  const what = [
    ...(tracks > 0 ? [`${tracks} track${tracks === 1 ? "" : "s"}`] : []),
    ...(vias > 0 ? [`${vias} via${vias === 1 ? "" : "s"}`] : []),
  ].join(" and ");
  plan.warnings.push({
    code: "copper_taken_along",
    message: `${refs.join(", ")} went with the ${what} laid before this run that served only ${refs.length === 1 ? "its" : "their"} pads; the pours are refilled where they were.`,
  });
}
