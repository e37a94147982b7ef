/**
 * Verify: after the edits (each `finish`, and once for a run code resolved alone), derived docs
 * are regenerated and the full check runs against the baseline. The gate passes when nothing
 * got worse (see run/gate.ts), the result carries out the approved proposal (`unmetPlan`) and
 * the strategy has no objection; otherwise the new findings and unmet items are what the model
 * reads in its repair cycle.
 */
import { join } from "node:path";
import { currentDesign, placedByRun, unchangedByRun, type RunContext } from "../agent/context.ts";
import type { CheckReport } from "../checks/types.ts";
import { aboutZone, checkCommittedRefilled, judgedBaseline } from "./baseline.ts";
import { evaluateGate, unmetPlan } from "./gate.ts";
import type { VerifyOutcome } from "../agent/loop.ts";
import { asCopperheadError } from "../errors.ts";
import { regenerateDerivedDocs } from "./derived-docs.ts";
import { renderWorkingTree } from "./renders.ts";
import { renderDir, type RunState } from "./run-state.ts";
import { describeFinding } from "./summary.ts";

export async function verify(run: RunState): Promise<VerifyOutcome> {
  const { ctx, summary, options } = run;
  regenerateDerivedDocs(ctx);
  await run.renders.after;
  run.renders.after = renderWorkingTree(options.project, join(renderDir(run), "after"), run.cli);
  const [current, base] = await Promise.allSettled([ctx.check(), run.baseline!.report]);
  // A baseline that could not run ends the run (see conclude.ts), whatever the model did.
  if (base.status === "rejected") throw base.reason;
  if (current.status === "rejected") {
    summary.verification.ok = false;
    const typed = asCopperheadError(current.reason);
    return { ok: false, newFindings: 1, feedback: `- the design no longer loads: ${typed.message}` };
  }
  const report = current.value;
  run.lastReport = report;
  const judge = (baseline: CheckReport) =>
    evaluateGate(baseline, report, options.config.strict, ctx.layoutPending, unchangedByRun(ctx), {
      placed: placedByRun(ctx),
      decisions: ctx.decisions,
    });
  let gate = judge(await judgedBaseline(run.baseline!));
  // A finding about a pour may be the filler's own: judged again against HEAD refilled by KiCad.
  if (!options.config.strict && !run.baseline!.refilled && gate.blocking.some(aboutZone)) {
    run.baseline!.refilled = checkCommittedRefilled(options.project, false);
    gate = judge(await judgedBaseline(run.baseline!));
  }
  const plan = ctx.proposal ? unmetPlan(ctx.proposal, currentDesign(ctx), changedDesign(ctx)) : [];
  const extra = [...plan, ...(options.strategy.extraGate?.(ctx) ?? [])];
  summary.verification.ok = gate.ok && extra.length === 0;
  summary.verification.newFindings = gate.newFindings;
  summary.verification.checks = report.checks.map((c) => ({ id: c.id, status: c.status, summary: c.summary }));
  const warned = gate.blocking.some((f) => f.check === "drc" && f.severity === "warning");
  const answer = warned
    ? [
        "- the DRC warnings above are about parts this run placed or its refill: repair them, or keep one by record_decision naming its rule (and its part, if it names one) with the reason",
      ]
    : [];
  const feedback = [...gate.blocking.map(describeFinding), ...answer, ...extra.map((e) => `- ${e}`)].join("\n");
  return { ok: summary.verification.ok, newFindings: gate.blocking.length + extra.length, feedback };
}

/** Whether the run wrote a schematic or the board (not only docs and records). */
function changedDesign(ctx: RunContext): boolean {
  return (ctx.journal?.touched() ?? []).some((path) => /\.kicad_(sch|pcb)$/.test(path));
}

/** Verifies and records the verdict, as the loop does after `finish`. */
export async function verifyOnce(run: RunState): Promise<VerifyOutcome> {
  run.progress({ type: "phase", phase: "verify", message: "running the full check" });
  const verdict = await verify(run);
  run.transcript.append({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings, repairCycles: 0 });
  run.progress({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings });
  return verdict;
}
