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

/** "ERC clean, DRC clean, parity clean, requirements 6/6" — the commit's Verification line. */
export function verificationLine(report: CheckReport): string {
  const status = (id: string) => report.checks.find((c) => c.id === id);
  const word = (id: string, label: string) => {
    const c = status(id);
    if (!c || c.status === "skipped") return `${label} skipped`;
    const errors = c.findings.filter((f) => f.severity === "error").length;
    return errors === 0 ? `${label} clean` : `${label} ${errors} error${errors === 1 ? "" : "s"} (baseline)`;
  };
  const req = status("requirements");
  const ratio = req && /^\d+\/\d+/.exec(req.summary)?.[0];
  const reqPart = !req || req.status === "skipped" ? "requirements skipped" : `requirements ${ratio ?? "none"}`;
  return [word("erc", "ERC"), word("drc", "DRC"), word("parity", "parity"), reqPart].join(", ");
}
