/**
 * Baseline: the check of the design before the run, taken on a snapshot of HEAD. The run
 * starts from a clean tree, so HEAD is exactly the design before the run; checking a copy of it
 * lets the model propose and edit the real tree meanwhile, and the gate awaits the baseline only
 * when it needs it — with a real model the baseline costs no wall time at all. Check results
 * are cached by content, so the snapshot shares the repo's cache in both directions.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { checkProject } from "../checks/check.ts";
import type { CheckReport } from "../checks/types.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import type { KicadProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { withSnapshot } from "../repo/snapshot.ts";
import { renderCommitted } from "./renders.ts";
import { renderDir, type Baseline, type RunState } from "./run-state.ts";

/** Starts the baseline check and the "before" plots, both alongside the model. */
export function startBaseline(run: RunState): void {
  const { project, config } = run.options;
  run.progress({
    type: "phase",
    phase: "baseline",
    message: "checking the design before any change (alongside the model)",
  });
  const baseline: Baseline = { report: checkCommitted(project, config.strict) };
  // A baseline that cannot run (kicad-cli cannot load HEAD's files) stops the model at once;
  // the run then rolls back and reports that error, as a check would have.
  baseline.report.catch((err) => {
    baseline.failure = err;
    run.stop.abort();
  });
  run.baseline = baseline;
  // run_check marks each finding new or unchanged against it.
  run.ctx.baseline = () => baseline.report;
  // Plotted while the model proposes and edits, which leaves a core idle (see renders.ts).
  run.renders.before = renderCommitted(project, join(renderDir(run), "before"), run.cli);
}

/** The full check of HEAD, on a snapshot of it. */
export async function checkCommitted(project: KicadProject, strict: boolean): Promise<CheckReport> {
  const root = project.repoRoot;
  return withSnapshot(root, "HEAD", async (snapshot) => {
    // The snapshot's own config: HEAD's, which the clean tree the run started from shares.
    const committed = discoverConfiguredProject(realpathSync(snapshot.root), repoRelative(root, project.projectFile));
    return checkProject(committed.project, { ...committed.config, strict, cacheRepo: root });
  });
}
