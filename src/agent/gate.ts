/**
 * The verification gate (ARCHITECTURE.md, "Invariants"): a run may commit only when it made nothing
 * worse. Judged by finding keys, which survive moves, against the check that ran before any
 * edit: no error finding may be new, so no requirement rule that passed may now fail; with
 * `strict`, the result must be spotless.
 */
import { compareWithBaseline } from "../checks/baseline.ts";
import type { CheckReport, Finding } from "../checks/types.ts";

export interface GateResult {
  ok: boolean;
  /** Error findings absent from the baseline (and, when strict, any finding at all). */
  newFindings: Finding[];
}

export function evaluateGate(baseline: CheckReport, after: CheckReport, strict: boolean): GateResult {
  const newFindings = strict
    ? after.checks.flatMap((c) => c.findings).filter((f) => f.severity !== "info")
    : compareWithBaseline(baseline, after, false).failing;
  return { ok: newFindings.length === 0, newFindings };
}

/**
 * The commit's Verification line, e.g. "ERC clean (44 warnings, none new), DRC clean, parity
 * clean, requirements 6/6": every family's errors and warnings, and against the run's baseline
 * how many of them the change added, so a record never calls a design with warnings clean
 * without saying so.
 */
export function verificationLine(report: CheckReport, baseline?: CheckReport): string {
  const marked = baseline ? compareWithBaseline(baseline, report, false).current : undefined;
  const word = (id: string, label: string) => {
    const c = report.checks.find((check) => check.id === id);
    if (!c || c.status === "skipped") return `${label} skipped`;
    const count = (severity: Finding["severity"]) => c.findings.filter((f) => f.severity === severity).length;
    const [errors, warnings] = [count("error"), count("warning")];
    if (errors + warnings === 0) return `${label} clean`;
    const added = marked?.filter((f) => f.check === id && f.baselineState === "new" && f.severity !== "info").length;
    const news = added === undefined ? "" : `, ${added === 0 ? "none" : added} new`;
    const warned = warnings > 0 ? `${plural(warnings, "warning")}` : "";
    if (errors === 0) return `${label} clean (${warned}${news})`;
    return `${label} ${plural(errors, "error")}${warned ? `, ${warned}` : ""} (baseline${news})`;
  };
  const req = report.checks.find((c) => c.id === "requirements");
  const ratio = req && /^\d+\/\d+/.exec(req.summary)?.[0];
  const reqPart = !req || req.status === "skipped" ? "requirements skipped" : `requirements ${ratio ?? "none"}`;
  return [word("erc", "ERC"), word("drc", "DRC"), word("parity", "parity"), reqPart].join(", ");
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
