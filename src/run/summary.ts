/**
 * What a gated run returns (`do --json`, the MCP result, `sync --resolve`'s resolution) and the
 * record a person opens first, `.copperhead/runs/<run-id>/summary.md`.
 */
import * as v from "valibot";
import { describeLocation } from "../checks/location.ts";
import { FindingSchema, type Finding } from "../checks/types.ts";
import { UsageTotalsSchema, type UsageTotals } from "../agent/conversation.ts";
import { DesignDiffSchema } from "../diff/diff.ts";
import { diffMarkdown } from "../diff/format.ts";
import { AmendmentSchema, ApprovalSchema, describeAmendment } from "../spec/proposal.ts";
import { redactDeep, redactSecrets } from "../redact.ts";
import { oneLine } from "../util/trim.ts";
import { shown } from "../visible.ts";

const RunStatusSchema = v.picklist(["committed", "rolled_back", "refused", "proposed"]);
export type RunStatus = v.InferOutput<typeof RunStatusSchema>;

const RunReasonSchema = v.picklist([
  "dirty_tree",
  // The model declined the request (its `refuse` tool), before or after approval.
  "refused",
  "requirement_change",
  "needs_input",
  "not_approved",
  "verification_failed",
  "turn_budget_exhausted",
  "provider_error",
  "cancelled",
  "commit_failed",
  "stalled",
  "abandoned",
  "internal_error",
]);
export type RunReason = v.InferOutput<typeof RunReasonSchema>;

/** The run's summary: its type, and the `outputSchema` of the MCP tool that returns it. */
export const RunSummarySchema = v.object({
  schema: v.literal("copperhead.do/1"),
  status: RunStatusSchema,
  reason: v.optional(RunReasonSchema),
  /** Why, in a sentence a person reads (the refusal, the failing findings, the error). */
  detail: v.optional(v.string()),
  runId: v.string(),
  request: v.string(),
  approval: v.nullable(ApprovalSchema),
  dryRun: v.boolean(),
  commit: v.optional(v.string()),
  filesTouched: v.array(v.string()),
  /** The proposal that gated the run; `amendments` are what the run added to it, in order. */
  proposal: v.optional(
    v.object({ id: v.string(), path: v.string(), title: v.string(), amendments: v.optional(v.array(AmendmentSchema)) }),
  ),
  /** `ok` is null while verification has not run (a refusal, or a run that ended before `finish`). */
  verification: v.object({
    ok: v.nullable(v.boolean()),
    newFindings: v.array(FindingSchema),
    checks: v.array(v.object({ id: v.string(), status: v.string(), summary: v.string() })),
    repairCycles: v.number(),
    maxRepairCycles: v.number(),
  }),
  transcriptPath: v.string(),
  summaryPath: v.string(),
  /** Model calls and tokens; the cache counts are the part of the input read from and written to the prompt cache. */
  usage: UsageTotalsSchema,
  /** Parts the run left for a person to place or route, each with the reason (see run/gate.ts). */
  layoutPending: v.array(v.object({ ref: v.string(), reason: v.string() })),
  /**
   * The Verification line of a verified change, as the commit and the CHANGELOG carry it: it
   * says in words how many connections were left for layout, and why.
   */
  verificationLine: v.optional(v.string()),
  /** Before/after SVG renders of the sheets the run changed, in the run directory (repo-relative). */
  renders: v.array(v.string()),
  /**
   * What the change did to the design — parts, nets, pins, board, requirements, BOM — from HEAD
   * to the tree as the verified run left it (`copperhead diff`'s result); null unless the change
   * verified (committed, or proposed by a dry run).
   */
  diff: v.nullable(DesignDiffSchema),
  /** Earlier runs that had crashed mid-edit and were restored before this one started. */
  recovered: v.array(v.string()),
});
export type RunSummary = v.InferOutput<typeof RunSummarySchema>;

/** One line per finding, as the model reads it in a repair cycle and a person in summary.md. */
export function describeFinding(f: Finding): string {
  return `- [${f.check}/${f.rule}] ${f.message}${f.location ? ` (${describeLocation(f.location)})` : ""}`;
}

/** "not run", or "passed"/"not passed" with the repair cycles used. */
export function describeVerification(v: RunSummary["verification"]): string {
  if (v.ok === null) return "not run";
  return `${v.ok ? "passed" : "not passed"}, ${v.repairCycles}/${v.maxRepairCycles} repair cycles`;
}

/** The provider failed before the run edited anything: one line says all there is to say. */
export function failedBeforeEditing(s: RunSummary): string | undefined {
  if (s.reason !== "provider_error" || s.filesTouched.length > 0) return undefined;
  return `the model provider failed before any edit, so nothing was started and nothing was changed: ${oneLine(s.detail ?? "")}`;
}

/** "6 turns, 22000 input (18000 read from the prompt cache, 3000 written to it) and 820 output tokens". */
export function describeUsage(u: UsageTotals): string {
  const cached =
    u.cacheReadTokens > 0 || u.cacheWriteTokens > 0
      ? ` (${u.cacheReadTokens} read from the prompt cache, ${u.cacheWriteTokens} written to it)`
      : "";
  return `${u.turns} turns, ${u.inputTokens} input${cached} and ${u.outputTokens} output tokens`;
}

/**
 * The run's `summary.md`, with secrets redacted (by `redact`, the run's own redactor) and then
 * hidden characters spelled out (visible.ts). The summary is redacted before any of it is
 * folded onto one line or escaped, so neither can change a key before the redactor sees it.
 */
export function renderRunSummary(
  summary: RunSummary,
  model: string,
  redact: (text: string) => string = redactSecrets,
): string {
  const s = redactDeep(summary, redact);
  const lines = [
    `# copperhead run ${s.runId}`,
    "",
    `- Request: ${oneLine(s.request)}`,
    `- Model: ${model}`,
    `- Status: **${s.status}**${s.reason ? ` (${s.reason})` : ""}${s.dryRun ? " — dry run" : ""}`,
    ...(failedBeforeEditing(s)
      ? [`- ${failedBeforeEditing(s)}`]
      : s.detail
        ? [`- ${s.reason === "needs_input" ? "Question" : "Detail"}: ${oneLine(s.detail)}`]
        : []),
    ...(s.proposal ? [`- Proposal: ${s.proposal.path} — ${s.proposal.title} (approval: ${s.approval})`] : []),
    ...(s.proposal?.amendments ?? []).map(
      (a, i) => `- Amendment ${i + 1}: ${describeAmendment(a)} — ${oneLine(a.why)}`,
    ),
    ...(s.commit ? [`- Commit: ${s.commit}`] : []),
    `- Verification: ${describeVerification(s.verification)}`,
    `- Model usage: ${describeUsage(s.usage)}`,
    ...(s.verificationLine ? [`- Verification line: ${s.verificationLine}`] : []),
    ...s.layoutPending.map((p) => `- Layout pending: ${p.ref} — ${p.reason}`),
    ...(s.renders.length ? [`- Schematic renders: ${s.renders.join(", ")}`] : []),
    ...(s.recovered.length ? [`- Recovered before starting: ${s.recovered.join(", ")}`] : []),
    "",
    "## Files",
    "",
    ...(s.filesTouched.length ? s.filesTouched.map((f) => `- ${f}`) : ["- none"]),
    "",
  ];
  if (s.diff) lines.push(diffMarkdown(s.diff, { base: "HEAD", head: "the change" }, { heading: "## Design changes" }));
  if (s.verification.newFindings.length > 0) {
    lines.push("## New findings", "", ...s.verification.newFindings.map(describeFinding), "");
  }
  return shown(lines.join("\n"), redact);
}
