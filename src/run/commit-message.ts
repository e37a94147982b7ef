/**
 * The commit a verified run makes: the proposal's title, the model's summary, the short form of
 * what it did to the design, and trailers that lead back to the proposal, the verification and
 * the run's record.
 */
import type { RunContext } from "../agent/context.ts";
import { verificationLine } from "../agent/gate.ts";
import type { CheckReport } from "../checks/types.ts";
import { diffShort } from "../diff/format.ts";
import type { RunSummary } from "./summary.ts";

export function commitMessage(ctx: RunContext, summary: RunSummary, report: CheckReport): string {
  const proposal = ctx.proposal!;
  return [
    `copperhead: ${proposal.title}`,
    "",
    ctx.finished ?? proposal.why,
    "",
    ...(summary.diff ? [diffShort(summary.diff), ""] : []),
    `Change: ${summary.proposal!.path}`,
    `Verification: ${verificationLine(report)}`,
    `Copperhead-Run: ${summary.runId}`,
    `Copperhead-Approval: ${proposal.approval}`,
    "",
  ].join("\n");
}
