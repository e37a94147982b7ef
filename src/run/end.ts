/**
 * The two ways every run ends: `endRun` writes the verdict to the transcript and `summary.md`
 * (after the schematic plots in flight are done, kept for the sheets the run changed), and
 * `rollback` first restores every file the run touched, byte for byte, through its journal.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keepChangedSheets } from "./renders.ts";
import { modelLabel, renderDir, type RunState } from "./run-state.ts";
import { renderRunSummary, type RunReason, type RunStatus, type RunSummary } from "./summary.ts";

export async function endRun(
  run: RunState,
  status: RunStatus,
  reason?: RunReason,
  detail?: string,
): Promise<RunSummary> {
  const { summary, transcript } = run;
  await keepRenders(run);
  Object.assign(summary, { status }, reason ? { reason } : {}, detail ? { detail } : {});
  transcript.append({ type: "end", status, reason, detail });
  writeFileSync(join(run.dir, "summary.md"), renderRunSummary(summary, modelLabel(run.options), transcript.redact));
  return summary;
}

export async function rollback(run: RunState, reason: RunReason, detail: string): Promise<RunSummary> {
  const { summary, ctx } = run;
  run.progress({ type: "phase", phase: "rollback", message: reason });
  summary.filesTouched = ctx.journal?.touched() ?? [];
  ctx.journal?.rollback();
  run.transcript.append({ type: "rollback", reason, files: summary.filesTouched });
  run.progress({ type: "rollback", reason, files: summary.filesTouched.length });
  return endRun(run, "rolled_back", reason, detail);
}

/**
 * The record's schematic plots: of a run that changed a sheet, the sheets it changed, before
 * and after (committed, or tried and rolled back); of any other run, none.
 */
async function keepRenders(run: RunState): Promise<void> {
  const { summary, transcript } = run;
  const [before, after] = await Promise.all([run.renders.before, run.renders.after]);
  if (!summary.filesTouched.some((f) => f.endsWith(".kicad_sch"))) {
    rmSync(renderDir(run), { recursive: true, force: true });
    return;
  }
  const kept = keepChangedSheets(
    run.options.repoRoot,
    before ?? { files: [], skipped: "no baseline" },
    after ?? { files: [], skipped: "not verified" },
  );
  summary.renders = [...kept.before.files, ...kept.after.files];
  for (const r of [kept.before, kept.after])
    if (r.skipped) transcript.append({ type: "note", renders: `not rendered: ${r.skipped}` });
  if (kept.unchanged > 0)
    transcript.append({ type: "note", renders: `${kept.unchanged} sheets plotted alike before and after, not kept` });
}
