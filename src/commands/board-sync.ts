/**
 * `copperhead board sync`: update the PCB from the schematic, headless (the GUI's "Update PCB
 * from Schematic"). The same module backs the `do` loop's `sync_board` tool and the board fix
 * of `sync --resolve`; this layer only finds the project and shapes the result.
 */
import { openRepo } from "../repo/recovery.ts";
import { syncBoard, type BoardSyncPlan } from "../kicad/board/sync/sync.ts";
import { discoverProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";

export interface BoardSyncOptions {
  repo?: string;
  project?: string;
  /** Plan only; write nothing. */
  dryRun?: boolean;
  /** Also update fields and sheet names, which parity does not compare. */
  fields?: boolean;
}

export interface BoardSyncResult extends BoardSyncPlan {
  /** The board, relative to the repo. */
  board: string;
  dryRun: boolean;
  /** Whether the board file was rewritten. */
  written: boolean;
}

export async function runBoardSync(options: BoardSyncOptions = {}): Promise<BoardSyncResult> {
  const project = discoverProject(await openRepo(options.repo), options.project);
  const { plan, board, written } = await syncBoard(project, { dryRun: options.dryRun, fields: options.fields });
  return { ...plan, board: repoRelative(project.repoRoot, board), dryRun: options.dryRun === true, written };
}
