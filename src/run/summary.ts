/**
 * What a gated run returns (`do --json`, the MCP result, `sync --resolve`'s resolution) and the
 * record a person opens first, `.copperhead/runs/<run-id>/summary.md`.
 */
import { describeLocation } from "../checks/location.ts";
import type { Finding } from "../checks/types.ts";
import type { UsageTotals } from "../agent/model.ts";
import type { DesignDiff } from "../diff/diff.ts";
import { diffMarkdown } from "../diff/format.ts";
import { describeAmendment, type Amendment, type Approval } from "../spec/proposal.ts";
import { redactDeep, redactSecrets } from "../redact.ts";
import { oneLine } from "../util/text.ts";
import { shown } from "../visible.ts";

export type RunStatus = "committed" | "rolled_back" | "refused" | "proposed";
export type RunReason =
  | "dirty_tree"
  /** The model declined the request (its `refuse` tool), before or after approval. */
  | "refused"
  | "requirement_change"
  | "needs_input"
  | "not_approved"
  | "verification_failed"
  | "turn_budget_exhausted"
  | "provider_error"
  | "cancelled"
  | "commit_failed"
  | "stalled"
  | "abandoned"
  | "internal_error";

export interface RunSummary {
  schema: "copperhead.do/1";
  status: RunStatus;
  reason?: RunReason;
  /** Why, in a sentence a person reads (the refusal, the failing findings, the error). */
  detail?: string;
  runId: string;
  request: string;
  approval: Approval | null;
  dryRun: boolean;
  commit?: string;
  filesTouched: string[];
  /** The proposal that gated the run; `amendments` are what the run added to it, in order. */
  proposal?: { id: string; path: string; title: string; amendments?: Amendment[] };
  /** `ok` is null while verification has not run (a refusal, or a run that ended before `finish`). */
  verification: { ok: boolean | null; newFindings: Finding[]; checks: { id: string; status: string; summary: string }[]; repairCycles: number; maxRepairCycles: number };
  transcriptPath: string;
  summaryPath: string;
  /** Model calls and tokens; the cache counts are the part of the input read from and written to the prompt cache. */
  usage: UsageTotals;
  /** Parts the run left for a person to place or route, each with the reason (see run/gate.ts). */
  layoutPending: { ref: string; reason: string }[];
  /**
   * The Verification line of a verified change, as the commit and the CHANGELOG carry it: it
   * says in words how many connections were left for layout, and why.
   */
  verificationLine?: string;
  /** Before/after SVG renders of the schematic in the run directory (repo-relative). */
  renders: string[];
  /**
   * What the change did to the design — parts, nets, pins, board, requirements, BOM — from HEAD
   * to the tree as the verified run left it (`copperhead diff`'s result); null unless the change
   * verified (committed, or proposed by a dry run).
   */
  diff: DesignDiff | null;
  /** Earlier runs that had crashed mid-edit and were restored before this one started. */
  recovered: string[];
}

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
  const cached = u.cacheReadTokens > 0 || u.cacheWriteTokens > 0 ? ` (${u.cacheReadTokens} read from the prompt cache, ${u.cacheWriteTokens} written to it)` : "";
  return `${u.turns} turns, ${u.inputTokens} input${cached} and ${u.outputTokens} output tokens`;
}

/**
 * The run's `summary.md`, with secrets redacted (by `redact`, the run's own redactor) and then
 * hidden characters spelled out (visible.ts). The summary is redacted before any of it is
 * folded onto one line or escaped, so neither can change a key before the redactor sees it.
 */
export function renderRunSummary(summary: RunSummary, model: string, redact: (text: string) => string = redactSecrets): string {
  const s = redactDeep(summary, redact);
  const lines = [
    `# copperhead run ${s.runId}`,
    "",
    `- Request: ${oneLine(s.request)}`,
    `- Model: ${model}`,
    `- Status: **${s.status}**${s.reason ? ` (${s.reason})` : ""}${s.dryRun ? " — dry run" : ""}`,
    ...(failedBeforeEditing(s) ? [`- ${failedBeforeEditing(s)}`] : s.detail ? [`- ${s.reason === "needs_input" ? "Question" : "Detail"}: ${oneLine(s.detail)}`] : []),
    ...(s.proposal ? [`- Proposal: ${s.proposal.path} — ${s.proposal.title} (approval: ${s.approval})`] : []),
    ...(s.proposal?.amendments ?? []).map((a, i) => `- Amendment ${i + 1}: ${describeAmendment(a)} — ${oneLine(a.why)}`),
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
