/**
 * The families fed by one `kicad-cli pcb drc` run: `drc` (design rules) and `routing`
 * (unconnected items). Parity is native, in `parity.ts`: DRC runs without `--schematic-parity`.
 */
import type { DrcReport, Violation } from "../kicad/cli/kicad-cli.ts";
import type { Design } from "../design/design.ts";
import { violationFinding } from "./kicad-findings.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import { familyResult, type Candidate } from "./result.ts";
import type { CheckId, CheckResult } from "./types.ts";

export function drcFindings(
  check: CheckId,
  violations: Violation[],
  design: Design,
  items: Map<string, ItemIdentity>,
): Candidate[] {
  const file = design.project.board!;
  return violations.flatMap(
    (violation) => violationFinding(check, violation, { design, identify: (uuid) => items.get(uuid), file }) ?? [],
  );
}

export function checkDrc(
  report: DrcReport,
  design: Design,
  items: Map<string, ItemIdentity>,
  strict: boolean,
): CheckResult {
  return familyResult("drc", drcFindings("drc", report.violations, design, items), {
    strict,
    cleanSummary: "no violations",
  });
}

/**
 * Unconnected items are work in progress while a design is being routed, so they warn; for a
 * fabrication check (`--fab`) or with `--strict` they are errors.
 */
export function checkRouting(
  report: DrcReport,
  design: Design,
  items: Map<string, ItemIdentity>,
  asErrors: boolean,
): CheckResult {
  const findings = drcFindings("routing", report.unconnected_items, design, items).map(({ finding, order }) => ({
    finding: {
      ...finding,
      rule: "unconnected",
      key: finding.key.replace(/^routing:[^:]*/, "routing:unconnected"),
      severity: asErrors ? ("error" as const) : ("warning" as const),
    },
    order,
  }));
  return familyResult("routing", findings, { cleanSummary: "fully routed" });
}
