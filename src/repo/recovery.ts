/**
 * "Any copperhead command that finds an unfinished run restores the tree first and says so"
 * (the recover stage, ARCHITECTURE.md): the one call every repo command makes before reading the repo.
 */
import { log } from "../log.ts";
import { recoverUnfinished } from "./journal.ts";
import { locateRepo, type RepoLocation } from "./project.ts";

/** Restores runs that died mid-edit (no live lock holder); returns their ids. */
export async function restoreInterruptedRuns(repoRoot: string): Promise<string[]> {
  const recovered = await recoverUnfinished(repoRoot);
  for (const run of recovered) {
    log.warn(
      `Run ${run.runId} was interrupted mid-edit; restored ${run.restored.length} file(s) to their state before it started.`,
    );
  }
  return recovered.map((r) => r.runId);
}

/** The repo a command works on (`--repo`, default the working directory; see `locateRepo`), restored first. */
export async function openRepo(repo: string | undefined): Promise<RepoLocation> {
  const location = locateRepo(repo);
  await restoreInterruptedRuns(location.root);
  return location;
}
