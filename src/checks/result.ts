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

/**
 * Builds a family's result. Findings sharing a key are one finding (kicad-cli sometimes lists
 * a violation once per sheet), so keys stay unique within a report.
 */
export function familyResult(id: CheckId, findings: Finding[], options: ResultOptions = {}): CheckResult {
  const unique = new Map<string, Finding>();
  for (const f of findings) if (!unique.has(f.key)) unique.set(f.key, f);
  const sorted = [...unique.values()].sort(compareFindings);
  const count = countSeverities(sorted);
  const failed = count.error > 0 || (options.strict === true && count.warning > 0);
  const status = failed ? "fail" : count.warning > 0 ? "warn" : "pass";
  const summary = sorted.length === 0 ? (options.cleanSummary ?? "no findings") : describeCounts(count);
  return { id, status, summary, findings: sorted };
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
