/**
 * Turning a family's findings into its `CheckResult`: status and summary are decided here once,
 * so every family reports them the same way.
 */
import { compareFindings, type CheckId, type CheckResult, type Finding, type Severity } from "./types.ts";

export interface ResultOptions {
  /** With `--strict`, warnings fail the family too. */
  strict?: boolean;
  /** Summary used when there are no findings (default "no findings"). */
  cleanSummary?: string;
}

/** A finding, and what ranks it among findings that share its key (see `distinctKeys`). */
export interface Candidate {
  finding: Finding;
  order: string;
}

/**
 * Gives every finding its own key. Two findings are two violations even when they name the
 * same objects (KiCad reports a teardrop's clearance twice when two teardrops of one net touch
 * a zone), so the second and later of a group get an occurrence index, `…#2`, `…#3`, in
 * `order`: the first keeps the plain key. The index only keeps keys unique within a report; a
 * finding is matched to a baseline by what it names (`checks/baseline.ts`), never by its index.
 */
export function distinctKeys(candidates: Candidate[]): Finding[] {
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) groups.set(c.finding.key, [...(groups.get(c.finding.key) ?? []), c]);
  const taken = new Set(groups.keys());
  const out: Finding[] = [];
  for (const [key, group] of groups) {
    group.sort((a, b) => cmp(a.order, b.order) || cmp(a.finding.message, b.finding.message));
    out.push(group[0]!.finding);
    let n = 2;
    for (const { finding } of group.slice(1)) {
      while (taken.has(`${key}#${n}`)) n++;
      taken.add(`${key}#${n}`);
      out.push({ ...finding, key: `${key}#${n}` });
    }
  }
  return out;
}

/** A key without its occurrence index: what every violation of one kind between the same objects shares. */
export function withoutOccurrence(key: string): string {
  return key.replace(/#\d+$/, "");
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Builds a family's result. Findings that share a key are told apart by an occurrence index
 * (`distinctKeys`), so keys stay unique within a report: ranked by message, or by the
 * candidate's own order (families fed by kicad-cli rank by item uuid).
 */
export function familyResult(
  id: CheckId,
  findings: Array<Finding | Candidate>,
  options: ResultOptions = {},
): CheckResult {
  const candidates = findings.map((f) => ("finding" in f ? f : { finding: f, order: "" }));
  const sorted = distinctKeys(candidates).sort(compareFindings);
  const { status, summary } = familyVerdict(sorted, options);
  return { id, status, summary, findings: sorted };
}

/** A family's status and summary from its findings: one rule for the report and every view of it. */
export function familyVerdict(
  findings: Finding[],
  options: ResultOptions = {},
): Pick<CheckResult, "status" | "summary"> {
  const count = countSeverities(findings);
  const failed = count.error > 0 || (options.strict === true && count.warning > 0);
  const status = failed ? "fail" : count.warning > 0 ? "warn" : "pass";
  const summary = findings.length === 0 ? (options.cleanSummary ?? "no findings") : describeCounts(count);
  return { status, summary };
}

export function skippedResult(id: CheckId, reason: string): CheckResult {
  return { id, status: "skipped", summary: reason, findings: [] };
}

export function countSeverities(findings: Finding[]): Record<Severity, number> {
  const count: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) count[f.severity]++;
  return count;
}

/** "2 errors, 1 warning" — zero counts left out. */
export function describeCounts(count: Record<Severity, number>): string {
  const parts: string[] = [];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (count.error) parts.push(plural(count.error, "error"));
  if (count.warning) parts.push(plural(count.warning, "warning"));
  if (count.info) parts.push(plural(count.info, "note"));
  return parts.join(", ") || "no findings";
}
