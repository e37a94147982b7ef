/** The `erc` family: kicad-cli's electrical rules check on the root schematic. */
import type { ErcReport } from "../kicad/kicad-cli.ts";
import type { Design } from "../design/design.ts";
import { violationFinding } from "./kicad-findings.ts";
import type { SchematicIndex } from "./kicad-items.ts";
import { familyResult } from "./result.ts";
import type { CheckResult, Finding } from "./types.ts";

export function checkErc(report: ErcReport, design: Design, index: SchematicIndex, strict: boolean): CheckResult {
  const findings: Finding[] = [];
  const instances = new Map(design.schematic.instances.map((i) => [i.path, i]));
  for (const sheet of report.sheets) {
    const instance = sheet.uuid_path ? instances.get(sheet.uuid_path) : undefined;
    const items = (instance && index.get(instance.path)) ?? new Map();
    for (const violation of sheet.violations) {
      const finding = violationFinding("erc", violation, {
        design,
        identify: (uuid) => items.get(uuid),
        file: instance?.file.path ?? design.project.schematic,
        sheet: sheet.path,
      });
      if (finding) findings.push(finding);
    }
  }
  return familyResult("erc", findings, { strict, cleanSummary: "no violations" });
}
