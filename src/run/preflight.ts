/**
 * Preflight: a run starts only from a clean tree, so HEAD is exactly the design before it and a
 * rollback has one state to return to; and only where the approved proposal can be written,
 * so a bad `changes/` folder is a `bad_path` now rather than a failure mid-run. (The lock is
 * held and kicad-cli found by then.)
 */
import { dirtyPaths } from "../repo/git.ts";
import { assertProposalFolder } from "./propose.ts";
import { modelLabel, type RunState } from "./run-state.ts";

/** Why the run cannot start, or undefined when it can. */
export async function preflight(run: RunState): Promise<string | undefined> {
  const { summary, options } = run;
  run.transcript.append({
    type: "phase",
    phase: "preflight",
    runId: run.runId,
    request: summary.request,
    model: modelLabel(options),
    dryRun: summary.dryRun,
    recovered: summary.recovered,
  });
  run.progress({ type: "phase", phase: "preflight", message: `run ${run.runId} with ${modelLabel(options)}` });
  assertProposalFolder(options.repoRoot, run.ctx.docs);
  const dirty = await dirtyPaths(options.repoRoot);
  if (dirty.length === 0) return undefined;
  return `the working tree has uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", …" : ""}); commit or stash them first`;
}
