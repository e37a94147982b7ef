/**
 * What `copperhead_check` answers: the check report cut to a size an MCP host can hold.
 *
 * A board with history has hundreds of findings, and its full report runs to hundreds of
 * kilobytes — far past what hosts pass to their model (Claude Code caps a tool result at about
 * 25k tokens). So the tool answers with every count (per family, per rule and severity), every
 * new finding against a baseline, and the first few findings of each rule; a host asks for
 * more by filter (`only_new`, `check`, `rule`, `severity`) and pages with `limit` and `offset`.
 * Whatever is asked, the answer stays within `SUMMARY_BUDGET` characters and says where the
 * next page starts. The CLI's `check --json` keeps the full list.
 */
import * as v from "valibot";
import { countSeverities } from "../checks/result.ts";
import {
  BaselineReportSchema,
  CheckIdSchema,
  CheckStatusSchema,
  FindingSchema,
  SeverityCountsSchema,
  SeveritySchema,
  type CheckId,
  type CheckReport,
  type Finding,
  type Severity,
} from "../checks/types.ts";

/** Findings per rule in the default answer (the text format's count too). */
export const PER_RULE = 3;
/** Absent (fixed) findings listed in the answer; the rest are counted. */
const ABSENT_SHOWN = 10;
/** Rules listed per family, most frequent first; a family with more says how many it left out. */
const RULES_SHOWN = 40;
/**
 * Characters of the pretty-printed summary. The result frame carries it twice (the JSON text
 * block, escaped, and `structuredContent`), so this keeps the whole frame near 60k characters:
 * about 17k tokens at 3.5 characters a token, under the 20k a host can be expected to hold.
 */
export const SUMMARY_BUDGET = 24_000;

export interface CheckSelection {
  /** Only findings new against the baseline (without one, none is new). */
  onlyNew?: boolean;
  check?: CheckId;
  rule?: string;
  severity?: Severity;
  /** At most this many findings. */
  limit?: number;
  /** Skip this many of the selected findings (the previous page's `page.next`). */
  offset?: number;
}

export const RuleCountSchema = v.object({
  rule: v.string(),
  severity: SeveritySchema,
  count: v.number(),
  /** How many are new, in a report checked against a baseline. */
  new: v.optional(v.number()),
});
export type RuleCount = v.InferOutput<typeof RuleCountSchema>;

/** The answer's type, and the `outputSchema` the MCP server advertises for it. */
export const CheckSummarySchema = v.object({
  schema: v.literal("copperhead.check-summary/1"),
  ok: v.boolean(),
  project: v.string(),
  kicad: v.nullable(v.object({ version: v.string() })),
  strict: v.boolean(),
  fab: v.boolean(),
  counts: SeverityCountsSchema,
  checks: v.array(
    v.object({
      id: CheckIdSchema,
      status: CheckStatusSchema,
      summary: v.string(),
      counts: SeverityCountsSchema,
      rules: v.array(RuleCountSchema),
      /** Rules left out of `rules`, the least frequent. */
      otherRules: v.optional(v.number()),
    }),
  ),
  /** The baseline's absent findings are the first few, without their uuids. */
  baseline: v.optional(BaselineReportSchema),
  /** The findings asked for, in report order (new ones first in the default answer). */
  findings: v.array(FindingSchema),
  page: v.object({
    /** "summary": new findings and the first few of each rule; "filter": every finding that matches. */
    mode: v.picklist(["summary", "filter"]),
    /** How many findings the answer's mode and filters select, over every page. */
    selected: v.number(),
    offset: v.number(),
    returned: v.number(),
    /** The `offset` of the next page, when findings are left. */
    next: v.optional(v.number()),
  }),
});
export type CheckSummary = v.InferOutput<typeof CheckSummarySchema>;

export function summariseCheck(report: CheckReport, selection: CheckSelection = {}): CheckSummary {
  const filtered = [
    selection.onlyNew,
    selection.check,
    selection.rule,
    selection.severity,
    selection.limit,
    selection.offset,
  ].some((x) => x !== undefined);
  const all = report.checks.flatMap((c) => c.findings);
  const selected = filtered ? all.filter((f) => matches(f, selection)) : defaultPick(report);
  const offset = selection.offset ?? 0;
  const wanted = selected
    .slice(offset, selection.limit === undefined ? undefined : offset + selection.limit)
    .map(withoutItems);

  const summary: CheckSummary = {
    schema: "copperhead.check-summary/1",
    ok: report.ok,
    project: report.project,
    kicad: report.kicad,
    strict: report.strict,
    fab: report.fab,
    counts: report.counts,
    checks: report.checks.map((c) => {
      const rules = ruleCounts(c.findings);
      const more = rules.length - RULES_SHOWN;
      return {
        id: c.id,
        status: c.status,
        summary: c.summary,
        counts: countSeverities(c.findings),
        rules: rules.slice(0, RULES_SHOWN),
        ...(more > 0 ? { otherRules: more } : {}),
      };
    }),
    ...(report.baseline
      ? { baseline: { ...report.baseline, absent: report.baseline.absent.slice(0, ABSENT_SHOWN).map(withoutItems) } }
      : {}),
    findings: [],
    page: { mode: filtered ? "filter" : "summary", selected: selected.length, offset, returned: 0 },
  };
  // Findings go in while the answer stays within its budget; a page always carries at least one.
  let size = prettySize(summary);
  for (const finding of wanted) {
    const grows = prettySize(finding) + FINDING_OVERHEAD;
    if (summary.findings.length > 0 && size + grows > SUMMARY_BUDGET) break;
    summary.findings.push(finding);
    size += grows;
  }
  summary.page.returned = summary.findings.length;
  if (offset + summary.findings.length < selected.length) summary.page.next = offset + summary.findings.length;
  return summary;
}

/**
 * A finding nested in the summary is indented by four more spaces per line than on its own,
 * and joined by a comma; this bounds that for findings of up to ~15 lines (location included).
 */
const FINDING_OVERHEAD = 80;

const prettySize = (value: unknown) => JSON.stringify(value, null, 2).length;

/** Every new finding, then the first few of each rule not already listed. */
function defaultPick(report: CheckReport): Finding[] {
  const findings = report.checks.flatMap((c) => c.findings);
  const fresh = findings.filter((f) => f.baselineState === "new");
  const picked = new Set(fresh);
  const perRule = new Map<string, number>();
  for (const f of findings) {
    const rule = `${f.check}\0${f.rule}`;
    const shown = perRule.get(rule) ?? 0;
    if (shown >= PER_RULE) continue;
    perRule.set(rule, shown + 1);
    picked.add(f);
  }
  return findings
    .filter((f) => picked.has(f))
    .sort((a, b) => Number(b.baselineState === "new") - Number(a.baselineState === "new"));
}

function matches(f: Finding, s: CheckSelection): boolean {
  return (
    (!s.onlyNew || f.baselineState === "new") &&
    (s.check === undefined || f.check === s.check) &&
    (s.rule === undefined || f.rule === s.rule) &&
    (s.severity === undefined || f.severity === s.severity)
  );
}

/** Counts per rule and severity, most frequent first. */
function ruleCounts(findings: Finding[]): RuleCount[] {
  const rules = new Map<string, RuleCount>();
  for (const f of findings) {
    const id = `${f.rule}\0${f.severity}`;
    const count = rules.get(id) ?? {
      rule: f.rule,
      severity: f.severity,
      count: 0,
      ...(f.baselineState ? { new: 0 } : {}),
    };
    count.count++;
    if (f.baselineState === "new") count.new = (count.new ?? 0) + 1;
    rules.set(id, count);
  }
  return [...rules.values()].sort((a, b) => b.count - a.count || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0));
}

/** The uuids a finding keeps for baseline matching mean nothing to a host. */
function withoutItems({ items: _items, ...finding }: Finding): Finding {
  return finding;
}
