/**
 * A gated change, the heart of copperhead (see ARCHITECTURE.md): every repo-changing run — `do`
 * and `sync --resolve` are its two strategies — goes through the same stages, in this order:
 *
 *   lock → recover → preflight → baseline → propose → approve → edit → verify/repair → conclude
 *
 * Nothing is edited before a proposal passed the spec gate, nothing is committed before the
 * verification gate passed, every edit goes through the journal, and any other ending leaves
 * the tree byte for byte as it was. Each stage is a module of its own over one `RunState`.
 */
import type { LoopEnd } from "../agent/loop.ts";
import { findKicadCli } from "../kicad/cli/kicad-cli.ts";
import { withRepoLock } from "../repo/lock.ts";
import { restoreInterruptedRuns } from "../repo/recovery.ts";
import { newRunId } from "../repo/run-dir.ts";
import { startBaseline } from "./baseline.ts";
import { change } from "./change.ts";
import { abort, conclude } from "./conclude.ts";
import { endRun } from "./end.ts";
import { preflight } from "./preflight.ts";
import { openRun, type GatedRunOptions } from "./run-state.ts";
import type { RunSummary } from "./summary.ts";

export type { GatedRunOptions, PreparedRun, RunStrategy } from "./run-state.ts";
export type { RunReason, RunStatus, RunSummary } from "./summary.ts";

export async function runGatedChange(options: GatedRunOptions): Promise<RunSummary> {
  const cli = await findKicadCli();
  const runId = newRunId();
  return withRepoLock(
    options.repoRoot,
    async () => {
      const recovered = await restoreInterruptedRuns(options.repoRoot);
      const run = openRun(options, runId, cli, recovered);
      const refusal = await preflight(run);
      if (refusal) return endRun(run, "refused", "dirty_tree", refusal);
      startBaseline(run);
      let end: LoopEnd;
      try {
        end = await change(run);
      } catch (err) {
        return abort(run, err);
      }
      return conclude(run, end);
    },
    { runId },
  );
}
