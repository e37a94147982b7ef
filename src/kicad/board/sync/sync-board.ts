/**
 * `kicad/board/sync/` owns "Update PCB from Schematic": the plan, its application, and the
 * scope a run's proposal allows.
 *
 * Headless "Update PCB from Schematic": `copperhead board sync`, the `do` loop's `sync_board`
 * tool and the board fix of `sync --resolve` all go through here.
 *
 * `planBoardSync` (kicad/board/sync/plan.ts) compares the board with the schematic and returns a plan
 * of plain data; `applyBoardSync` (kicad/board/sync/apply.ts) carries it out on the board tree in
 * place; `syncBoard` loads, plans, applies and writes only when something changed, so a board
 * that is in sync keeps every byte.
 */
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import type { KicadProject } from "../../../repo/project.ts";
import { BoardRules } from "../clearance/rules.ts";
import { Board } from "../model.ts";
import { boardFootprints } from "../footprint/library-copy.ts";
import { applyBoardSync } from "./apply.ts";
import { isEmptyPlan, planBoardSync, type BoardSyncOptions, type BoardSyncPlan } from "./plan.ts";
import { listComponents } from "../../netlist/components.ts";
import { openLibraries, type Libraries } from "../../library/libraries.ts";
import { buildNetlist } from "../../netlist/netlist.ts";
import { loadSchematicProject } from "../../schematic/model/hierarchy.ts";
import { printSexprBytes, sameBytes, writeSexprFile } from "../../sexpr/index.ts";

export { applyBoardSync } from "./apply.ts";
export * from "./plan.ts";

export interface BoardSyncResult {
  plan: BoardSyncPlan;
  /** Path of the board the plan is for. */
  board: string;
  /** Whether the board file changed (always false on a dry run). */
  written: boolean;
}

/**
 * Loads the project's schematic and board, plans the sync, and — unless `dryRun` — applies it
 * and writes the board when its text changed. Nothing is written when planning or applying
 * fails, so a bad footprint id leaves the board byte-identical.
 */
export async function syncBoard(
  project: KicadProject,
  options: BoardSyncOptions & { dryRun?: boolean; libraries?: Libraries } = {},
): Promise<BoardSyncResult> {
  const boardPath = project.board;
  if (!boardPath || !existsSync(boardPath)) {
    throw new CopperheadError(
      "not_found",
      `The project has no board: ${project.name}.kicad_pcb is missing next to ${basename(project.projectFile)}.`,
      {
        fix: "Create the board in KiCad (File → New board, saved next to the .kicad_pro) before syncing it.",
      },
    );
  }
  const schematic = loadSchematicProject(project.schematic, { within: project.repoRoot });
  const board = Board.load(boardPath, { within: project.repoRoot });
  const libraries = options.libraries ?? (await openLibraries(dirname(project.projectFile)));
  // A footprint no library holds is taken from the board's own copy of it.
  libraries.footprintFallback ??= boardFootprints(boardPath, project.repoRoot);
  const plan = planBoardSync(
    { board, schematic, components: listComponents(schematic), netlist: buildNetlist(schematic), libraries },
    options,
  );
  if (options.dryRun || isEmptyPlan(plan)) return { plan, board: boardPath, written: false };
  applyBoardSync(board, plan, libraries, BoardRules.load(project.projectFile, project.repoRoot).silkText());
  const next = printSexprBytes(board.doc);
  if (sameBytes(next, board.doc.bytes)) return { plan, board: boardPath, written: false };
  writeSexprFile(boardPath, next);
  return { plan, board: boardPath, written: true };
}
