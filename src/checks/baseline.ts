/**
 * A check report against a baseline: the one comparison behind `do`'s verification gate,
 * `check --baseline <ref>` (and the CI formats it feeds) and the pre-commit hook.
 *
 * Findings are matched by key, which names the objects a finding is about and is unique per
 * violation, so a finding is `new` (only in the current report), `unchanged` (in both) or
 * `absent` (only in the baseline: fixed, or gone with what it was about). Only new findings can
 * fail: new errors always, new warnings with `strict`. A requirement rule that passed at the
 * baseline and fails now is a new error, because a failing rule is a finding keyed by the rule.
 */
import { compareFindings, type BaselineReport, type BaselineState, type CheckReport, type Finding } from "./types.ts";

export interface BaselineComparison {
  /** Every finding of the current report, marked `new` or `unchanged`, in report order. */
  current: Finding[];
  /** Baseline findings the current report no longer has, marked `absent`. */
  absent: Finding[];
  /** The new findings that fail: errors, and warnings when strict. */
  failing: Finding[];
}

export function compareWithBaseline(baseline: CheckReport, current: CheckReport, strict: boolean): BaselineComparison {
  const before = new Set(findingsOf(baseline).map((f) => f.key));
  const marked = findingsOf(current).map((f) => withState(f, before.has(f.key) ? "unchanged" : "new"));
  const after = new Set(marked.map((f) => f.key));
  const absent = findingsOf(baseline)
    .filter((f) => !after.has(f.key))
    .map((f) => withState(f, "absent"))
    .sort(compareFindings);
  const failing = marked.filter((f) => f.baselineState === "new" && (f.severity === "error" || (strict && f.severity === "warning")));
  return { current: marked, absent, failing };
}

/** Where the baseline came from, as the report names it. */
export type BaselineSource = Pick<BaselineReport, "ref" | "commit">;

/**
 * The current report judged against the baseline: each finding carries its `baselineState`,
 * the findings that went away are listed under `baseline.absent`, and `ok` means that no new
 * finding fails. Family statuses still describe the design as it is.
 */
export function reportAgainstBaseline(current: CheckReport, baseline: CheckReport, source: BaselineSource): CheckReport {
  const comparison = compareWithBaseline(baseline, current, current.strict);
  const states = new Map(comparison.current.map((f) => [f.key, f.baselineState!]));
  const checks = current.checks.map((c) => ({ ...c, findings: c.findings.map((f) => withState(f, states.get(f.key)!)) }));
  const count = (state: BaselineState) => comparison.current.filter((f) => f.baselineState === state).length;
  return {
    ...current,
    ok: comparison.failing.length === 0,
    checks,
    baseline: {
      ref: source.ref,
      commit: source.commit,
      counts: { new: count("new"), unchanged: count("unchanged"), absent: comparison.absent.length },
      absent: comparison.absent,
    },
  };
}

function findingsOf(report: CheckReport): Finding[] {
  return report.checks.flatMap((c) => c.findings);
}

function withState(finding: Finding, baselineState: BaselineState): Finding {
  return { ...finding, baselineState };
}
