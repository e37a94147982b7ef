/**
 * The commit a verified run makes: the proposal's title, the model's summary, the amendments the
 * run made to its proposal, the short form of what it did to the design, and trailers that lead
 * back to the proposal, the verification and the run's record.
 */
import { unchangedByRun, type RunContext } from "../agent/context.ts";
import { verificationLine } from "./gate.ts";
import type { CheckReport } from "../checks/types.ts";
import { diffShort } from "../diff/format.ts";
import { describeAmendment, type Proposal } from "../spec/proposal.ts";
import { oneLine } from "../util/trim.ts";
import { shown } from "../visible.ts";
import type { RunSummary } from "./summary.ts";

export function commitMessage(
  ctx: RunContext,
  summary: RunSummary,
  report: CheckReport,
  baseline?: CheckReport,
): string {
  const proposal = ctx.proposal!;
  // `git log` shows the body raw: a value's bidi override or ESC would act there.
  return shown(
    [
      `copperhead: ${proposal.title}`,
      "",
      ctx.finished ?? proposal.why,
      "",
      ...amendmentLines(proposal.amendments ?? []),
      ...(summary.diff ? [diffShort(summary.diff), ""] : []),
      `Change: ${summary.proposal!.path}`,
      `Verification: ${verificationLine(report, baseline, ctx.layoutPending, unchangedByRun(ctx))}`,
      `Copperhead-Run: ${summary.runId}`,
      `Copperhead-Approval: ${proposal.approval}`,
      "",
    ].join("\n"),
  );
}

/** "Proposal amended during the run:" and one line per amendment, or nothing. */
function amendmentLines(amendments: NonNullable<Proposal["amendments"]>): string[] {
  if (amendments.length === 0) return [];
  return [
    "Proposal amended during the run:",
    ...amendments.map((a, i) => `${i + 1}. ${describeAmendment(a)}: ${oneLine(a.why)}`),
    "",
  ];
}
