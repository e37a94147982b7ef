/**
 * The two ways every run ends: `endRun` writes the verdict to the transcript and `summary.md`
 * (after the schematic plots in flight are done), and `rollback` first restores every file the
 * run touched, byte for byte, through its journal.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { modelLabel, type RunState } from "./run-state.ts";
import { renderRunSummary, type RunReason, type RunStatus, type RunSummary } from "./summary.ts";

export async function endRun(
  run: RunState,
  status: RunStatus,
  reason?: RunReason,
  detail?: string,
): Promise<RunSummary> {
  const { summary, transcript } = run;
  await Promise.all([run.renders.before, run.renders.after]);
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
