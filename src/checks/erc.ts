/** The `erc` family: kicad-cli's electrical rules check on the root schematic. */
import type { ErcReport } from "../kicad/cli/kicad-cli.ts";
import type { Design } from "../design/design.ts";
import { violationFinding } from "./kicad-findings.ts";
import { schematicLookup, type SchematicIndex } from "./kicad-items.ts";
import { familyResult, type Candidate } from "./result.ts";
import type { CheckResult } from "./types.ts";

/** One finding per violation kicad-cli lists, per sheet instance (a sheet placed twice reports twice). */
export function checkErc(report: ErcReport, design: Design, index: SchematicIndex, strict: boolean): CheckResult {
  const findings: Candidate[] = [];
  const instances = new Map(design.schematic.instances.map((i) => [i.path, i]));
  for (const sheet of report.sheets) {
    const instance = sheet.uuid_path ? instances.get(sheet.uuid_path) : undefined;
    const identify = schematicLookup(index, instance?.path);
    for (const violation of sheet.violations) {
      const finding = violationFinding("erc", violation, {
        design,
        identify,
        file: instance?.file.path ?? design.project.schematic,
        sheet: sheet.path,
        positionScale: 100,
      });
      if (finding) findings.push(finding);
    }
  }
  return familyResult("erc", findings, { strict, cleanSummary: "no violations" });
}
