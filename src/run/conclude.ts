/**
 * Conclude: how the conversation ended decides the outcome. A refusal leaves the tree as it was;
 * a failure rolls it back; a verified change is committed. An error — a baseline that could not
 * run, or a fault of copperhead's own — rolls back too, and the run says why.
 */
import type { LoopEnd } from "../agent/loop.ts";
import { asCopperheadError } from "../errors.ts";
import { cancelled, commit } from "./commit.ts";
import { endRun, rollback } from "./end.ts";
import type { RunState } from "./run-state.ts";
import type { RunSummary } from "./summary.ts";

export async function conclude(run: RunState, end: LoopEnd): Promise<RunSummary> {
  const { summary, ctx } = run;
  if (run.baseline?.failure !== undefined)
    return cancelled(run) ? rollback(run, "cancelled", CANCELLED) : failBaseline(run);
  if (end.kind === "refused") {
    ctx.journal?.rollback();
    return endRun(run, "refused", end.reason, end.detail);
  }
  summary.verification.repairCycles = end.repairCycles;
  if (end.kind === "failed") return rollback(run, end.reason, end.detail);
  summary.verification.ok = true;
  // A cancellation during the last verification (after the model's finish) still stops the run.
  if (cancelled(run))
    return rollback(
      run,
      "cancelled",
      "cancelled after the change verified, before the commit started; nothing was committed",
    );
  try {
    return await commit(run);
  } catch (err) {
    const typed = asCopperheadError(err);
    run.transcript.append({ type: "error", where: "commit", code: typed.code, message: typed.message });
    return rollback(run, typed.code === "git_failed" ? "commit_failed" : "internal_error", typed.message);
  }
}

/**
 * A cancellation stops the KiCad processes of the run too (kicad/cli/process-group.ts): what
 * fails because of it, the baseline's check or the verification's, is the cancellation.
 */
const CANCELLED = "cancelled by the user, with what KiCad was running; nothing was committed";

/** The change stage threw: undo whatever was done, and say why. */
export async function abort(run: RunState, err: unknown): Promise<RunSummary> {
  if (cancelled(run)) return rollback(run, "cancelled", CANCELLED);
  if (run.baseline?.failure !== undefined) return failBaseline(run);
  const typed = asCopperheadError(err);
  run.transcript.append({ type: "error", where: "pipeline", code: typed.code, message: typed.message });
  const summary = await rollback(run, "internal_error", typed.message);
  // An error that ends a run (no KiCad Python to finish a board edit) is the user's to fix: the
  // command fails with it and its fix, like a baseline that could not run.
  if (typed.endsRun) throw typed;
  return summary;
}

/** The baseline could not run: undo whatever the model did, then report it like check would. */
async function failBaseline(run: RunState): Promise<never> {
  const typed = asCopperheadError(run.baseline!.failure);
  run.transcript.append({ type: "error", where: "baseline", code: typed.code, message: typed.message });
  await rollback(run, "internal_error", `the baseline check could not run: ${typed.message}`);
  throw typed;
}
