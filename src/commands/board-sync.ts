/**
 * `copperhead board sync`: update the PCB from the schematic, headless (the GUI's "Update PCB
 * from Schematic"). The same module backs the `do` loop's `sync_board` tool and the board fix
 * of `sync --resolve`; this layer only finds the project and shapes the result.
 *
 * Writing the board is a repo change like a run's: it holds the repo lock (a live run elsewhere
 * is `busy`, and one queued in this process waits), so a board sync can never land in the
 * middle of a `do` that later rolls back. A dry run writes nothing and takes no lock.
 */
import { syncBoard, type BoardSyncPlan } from "../kicad/board/sync/sync-board.ts";
import { withRepoLock } from "../repo/lock.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { locateRepo } from "../repo/project.ts";
import { restoreInterruptedRuns } from "../repo/recovery.ts";
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
  const { root: repoRoot, within } = locateRepo(options.repo);
  const sync = async () => {
    await restoreInterruptedRuns(repoRoot);
    const { project } = discoverConfiguredProject(repoRoot, options.project, within);
    const { plan, board, written } = await syncBoard(project, { dryRun: options.dryRun, fields: options.fields });
    return { ...plan, board: repoRelative(project.repoRoot, board), dryRun: options.dryRun === true, written };
  };
  return options.dryRun ? sync() : withRepoLock(repoRoot, sync);
}
