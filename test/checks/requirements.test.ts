import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadDesign, type Design } from "../../src/design/design.ts";
import { checkRequirements, evaluateRequirements } from "../../src/checks/requirements.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const repo = await copyFixture("usb-led");
const design: Design = loadDesign(discoverProject(repo));

function writeSpec(markdown: string, docs = "docs") {
  mkdirSync(join(repo, docs), { recursive: true });
  writeFileSync(join(repo, docs, "SPEC.md"), markdown);
}

const PASSING = `# USB LED

## Requirements

- REQ-PWR-1: The board runs from USB-C VBUS at 5 V.
  - check: net VBUS exists
  - check: J1.A9 on VBUS
  - check: U1.VOUT on +3V3
- REQ-LED-1: Indicator current stays under 5 mA.
  - check: R3.value >= 680
  - check: count Device:LED* == 1
- REQ-MECH-1: Fits a 40 × 20 mm slot.
  - check: board width <= 40mm
`;

describe("checkRequirements on the usb-led design", () => {
  test("every rule passing → pass, with a count in the summary", () => {
    writeSpec(PASSING);
    expect(checkRequirements(design)).toEqual({
      id: "requirements",
      status: "pass",
      summary: "6/6 rules pass",
      findings: [],
    });
  });

  test("a failing rule is an error finding keyed by REQ id and canonical rule text", () => {
    writeSpec(
      PASSING.replace("R3.value >= 680", "R3.value  >=   4k7").replace("board width <= 40mm", "board  width <= 1.5 in"),
    );
    const result = checkRequirements(design);
    expect(result.status).toBe("fail");
    expect(result.summary).toBe("4/6 rules pass");
    expect(result.findings).toEqual([
      {
        check: "requirements",
        rule: "REQ-LED-1",
        severity: "error",
        message: "REQ-LED-1: R3.value is 1k, expected >= 4k7 (check: R3.value >= 4k7)",
        key: "requirements:REQ-LED-1:R3.value >= 4k7",
        location: { file: "docs/SPEC.md", line: 10 },
      },
      {
        check: "requirements",
        rule: "REQ-MECH-1",
        severity: "error",
        message: "REQ-MECH-1: board width is 40 mm, expected <= 1.5in (check: board width <= 1.5in)",
        key: "requirements:REQ-MECH-1:board width <= 1.5in",
        location: { file: "docs/SPEC.md", line: 13 },
      },
    ]);
  });

  test("the key survives edits elsewhere in the file", () => {
    writeSpec(`Intro line\n\n${PASSING.replace("R3.value >= 680", "R3.value >= 4k7")}`);
    const [finding] = checkRequirements(design).findings;
    expect(finding).toMatchObject({ key: "requirements:REQ-LED-1:R3.value >= 4k7", location: { line: 12 } });
  });

  test("parse problems and duplicate ids are errors with line and column; prose-only is info", () => {
    writeSpec(
      [
        "## Requirements",
        "- REQ-PWR-1: power",
        "  - check: net VBUS exist",
        "- REQ-PWR-1: again",
        "  - check: net VBUS exists",
        "- REQ-DOC-1: prose only",
      ].join("\n"),
    );
    const result = checkRequirements(design);
    expect(result.status).toBe("fail");
    expect(result.summary).toBe("1/1 rules pass, 2 spec problems");
    expect(result.findings).toEqual([
      {
        check: "requirements",
        rule: "duplicate",
        severity: "error",
        message: "docs/SPEC.md:4:3: duplicate requirement id REQ-PWR-1 (first on line 2)",
        key: "requirements:duplicate:REQ-PWR-1:REQ-PWR-1: again",
        location: { file: "docs/SPEC.md", line: 4, column: 3 },
      },
      {
        check: "requirements",
        rule: "parse",
        severity: "error",
        message: "docs/SPEC.md:3:21: expected `exists`, `absent` or `pins` after the net name, got `exist`",
        key: "requirements:parse:REQ-PWR-1:net VBUS exist",
        location: { file: "docs/SPEC.md", line: 3, column: 21 },
      },
      {
        check: "requirements",
        rule: "unchecked",
        severity: "info",
        message: "REQ-DOC-1 has no `check:` rules; it is prose only and nothing verifies it",
        key: "requirements:unchecked:REQ-DOC-1",
        location: { file: "docs/SPEC.md", line: 6 },
      },
    ]);
  });

  test("an empty Requirements section passes and says how to add rules", () => {
    writeSpec("# Spec\n\n## Requirements\n\nNone yet.\n");
    expect(checkRequirements(design)).toMatchObject({
      status: "pass",
      summary: "no rules yet; add `- check:` bullets under requirements in docs/SPEC.md",
      findings: [],
    });
  });

  test("no Requirements section → skipped, naming the fix", () => {
    writeSpec("# Spec\n\n## Overview\n\ntext\n");
    expect(checkRequirements(design)).toEqual({
      id: "requirements",
      status: "skipped",
      summary: "docs/SPEC.md has no `## Requirements` section; add one (`copperhead init` writes a template)",
      findings: [],
    });
  });

  test("no SPEC.md → skipped, pointing at copperhead init; docsDir is honoured", () => {
    writeSpec(PASSING, "design-docs");
    expect(checkRequirements(design, { docsDir: "elsewhere" })).toMatchObject({
      status: "skipped",
      summary: "no elsewhere/SPEC.md; run `copperhead init` to create one with a Requirements section",
    });
    expect(checkRequirements(design, { docsDir: "design-docs" })).toMatchObject({
      status: "pass",
      summary: "6/6 rules pass",
    });
    rmSync(join(repo, "design-docs"), { recursive: true });
  });

  test("per-rule outcomes let `do` compare passing rules against a baseline", () => {
    writeSpec(PASSING.replace("R3.value >= 680", "R3.value >= 4k7"));
    const evaluation = evaluateRequirements(design);
    if (evaluation.state !== "evaluated") throw new Error(`unexpected state ${evaluation.state}`);
    expect(evaluation.outcomes.map((o) => [o.key, o.pass])).toEqual([
      ["requirements:REQ-PWR-1:net VBUS exists", true],
      ["requirements:REQ-PWR-1:J1.A9 on VBUS", true],
      ["requirements:REQ-PWR-1:U1.VOUT on +3V3", true],
      ["requirements:REQ-LED-1:R3.value >= 4k7", false],
      ["requirements:REQ-LED-1:count Device:LED* == 1", true],
      ["requirements:REQ-MECH-1:board width <= 40mm", true],
    ]);
  });

  test("the result is deterministic: same spec, same bytes", () => {
    writeSpec(PASSING.replace("net VBUS exists", "net VIN exists"));
    expect(JSON.stringify(checkRequirements(design))).toBe(
      JSON.stringify(checkRequirements(loadDesign(discoverProject(repo)))),
    );
  });
});
