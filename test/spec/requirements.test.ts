import { describe, expect, test } from "bun:test";
import {
  MAX_REQUIREMENTS,
  MAX_RULES,
  parseRequirements,
  parseRule,
  requirementsSectionRange,
  requirementsSectionTexts,
  type Rule,
} from "../../src/spec/requirements.ts";
import { thrownCopperheadError } from "../support/errors.ts";

const FILE = "docs/SPEC.md";

/** Parses a rule that must parse; fails the test with the problem otherwise. */
function rule(text: string): Rule {
  const parsed = parseRule(text);
  if ("problem" in parsed) throw new Error(`${text}: ${parsed.problem}`);
  return parsed;
}

describe("parseRule: the closed grammar", () => {
  test("net exists / absent", () => {
    expect(rule("net VBUS exists")).toMatchObject({
      kind: "net",
      net: "VBUS",
      expect: "exists",
      text: "net VBUS exists",
    });
    expect(rule("net /CC1 absent")).toMatchObject({ kind: "net", net: "/CC1", expect: "absent" });
  });

  test("net names with / + - ( ) need no quotes; spaces need quotes", () => {
    expect(rule("net +3V3 exists")).toMatchObject({ net: "+3V3" });
    expect(rule("net unconnected-(U1-NC-Pad4) exists")).toMatchObject({ net: "unconnected-(U1-NC-Pad4)" });
    expect(rule("net /Regulator/VIN-(a) exists")).toMatchObject({ net: "/Regulator/VIN-(a)" });
    expect(rule('net "My Net" exists')).toMatchObject({ net: "My Net", text: 'net "My Net" exists' });
    expect(rule("net `My Net` exists")).toMatchObject({ net: "My Net", text: 'net "My Net" exists' });
  });

  test("ref exists / absent", () => {
    expect(rule("R1 exists")).toMatchObject({ kind: "ref", ref: "R1", expect: "exists" });
    expect(rule("Q9 absent")).toMatchObject({ kind: "ref", ref: "Q9", expect: "absent" });
  });

  test("pin on net, by number or name", () => {
    expect(rule("J1.A9 on VBUS")).toMatchObject({ kind: "pin", ref: "J1", pin: "A9", net: "VBUS" });
    expect(rule("U1.VOUT on +3V3")).toMatchObject({ kind: "pin", ref: "U1", pin: "VOUT", net: "+3V3" });
    expect(rule('U1."V OUT" on "Rail 1"')).toMatchObject({
      pin: "V OUT",
      net: "Rail 1",
      text: 'U1."V OUT" on "Rail 1"',
    });
  });

  test("field comparisons: numbers with SI prefixes and units, or text", () => {
    expect(rule("R2.value >= 680")).toMatchObject({
      kind: "field",
      ref: "R2",
      field: "value",
      op: ">=",
      value: "680",
      quantity: { value: 680 },
    });
    expect(rule("C1.value == 100nF")).toMatchObject({ op: "==", quantity: { value: 1e-7, unit: "F" } });
    expect(rule("U1.Imax < 100 mA")).toMatchObject({
      value: "100mA",
      quantity: { value: 0.1, unit: "A" },
      text: "U1.Imax < 100mA",
    });
    expect(rule("D1.value == Green")).toMatchObject({ value: "Green", text: "D1.value == Green" });
    expect(rule("D1.value == Green")).not.toHaveProperty("quantity");
    expect(rule("R1.Footprint != Resistor_SMD:R_0402_1005Metric")).toMatchObject({
      op: "!=",
      value: "Resistor_SMD:R_0402_1005Metric",
    });
    expect(rule('R1.value == "10k"')).not.toHaveProperty("quantity");
    expect(rule('R1.value == "10k"').text).toBe('R1.value == "10k"');
    expect(rule('D1."Part Number" == "LTST C191"')).toMatchObject({ field: "Part Number", value: "LTST C191" });
    for (const op of ["==", "!=", "<", "<=", ">", ">="]) expect(rule(`R1.value ${op} 4k7`)).toMatchObject({ op });
  });

  test("count by ref glob or lib_id glob", () => {
    expect(rule("count C* >= 2")).toMatchObject({ kind: "count", pattern: "C*", by: "ref", op: ">=", count: 2 });
    expect(rule("count Device:LED* == 1")).toMatchObject({
      kind: "count",
      pattern: "Device:LED*",
      by: "libId",
      count: 1,
    });
  });

  test("net pins", () => {
    expect(rule("net GND pins >= 10")).toMatchObject({ kind: "net-pins", net: "GND", op: ">=", count: 10 });
  });

  test("board width / height in mm, mil, in", () => {
    expect(rule("board width <= 40mm")).toMatchObject({
      kind: "board",
      dimension: "width",
      op: "<=",
      mm: 40,
      length: "40mm",
    });
    expect(rule("board height < 1000mil")).toMatchObject({ dimension: "height", mm: 25.4 });
    expect(rule("board width <= 1.6 in")).toMatchObject({ mm: 40.64, text: "board width <= 1.6in" });
    expect(rule("board width == 40")).toMatchObject({ mm: 40 });
  });

  test("keywords are case-insensitive; canonical text normalises them and the spacing", () => {
    expect(rule("NET   VBUS    Exists").text).toBe("net VBUS exists");
    expect(rule("Board WIDTH <= 40mm").text).toBe("board width <= 40mm");
  });

  test("a rule wrapped in backticks reads as the rule inside", () => {
    const r = rule("`net VBUS exists`");
    expect(r).toMatchObject({ kind: "net", net: "VBUS", span: { column: 2 } });
  });
});

describe("parseRule: problems point at the offending token", () => {
  // [rule, column of the offending token (rule starts at column 1), message fragment]
  const cases: [string, number, string][] = [
    ["", 1, "empty check"],
    ["net VBUS", 9, "missing `exists`, `absent` or `pins`"],
    ["net VBUS exist", 10, "expected `exists`, `absent` or `pins`"],
    ["net VBUS exists now", 17, "unexpected `now`"],
    ['net "VBUS exists', 5, 'unterminated " quote'],
    ["net `` exists", 5, "empty quoted name"],
    ["R2.value = 680", 10, "use `==`"],
    ["R2.value>=680", 9, "put spaces around the operator"],
    ["R2.value >= ", 12, "missing a value"],
    ["U1.value >= AP2112K", 13, "needs a number"],
    ['R1.value < "10k"', 12, "needs a number"],
    ["R2.value >= 680 ohm extra", 21, "unexpected `extra`"],
    ["count C* >= two", 13, "expected a whole number"],
    ["count C* >= 1.5", 13, "expected a whole number"],
    ["count C*", 9, "missing an operator"],
    ["count", 6, "missing a ref or lib_id pattern"],
    ["net GND pins many", 14, "expected an operator"],
    ["board depth < 3mm", 7, "expected `width` or `height`"],
    ["board width < 3 furlongs", 17, "unexpected `furlongs`"],
    ["board width < wide", 15, "is not a length"],
    ["R1", 1, "incomplete rule"],
    ["R1 is there", 4, "expected `exists` or `absent`"],
    ["1R exists", 1, "is not a reference designator"],
    ["R1. on GND", 4, "missing pin or field name"],
    ["R1.1 near GND", 6, "expected `on` or one of"],
    ["R1.1 on", 8, "missing a net name after `on`"],
    ['"R1" exists', 1, "cannot start with a quoted name"],
  ];
  for (const [text, column, fragment] of cases) {
    test(`${JSON.stringify(text)} → column ${column}`, () => {
      const parsed = parseRule(text, 7, 1);
      expect(parsed).toMatchObject({ column });
      expect("problem" in parsed && parsed.problem).toContain(fragment);
    });
  }

  test("columns are offset by where the rule starts in the line", () => {
    expect(parseRule("  net VBUS exist", 3, 12)).toMatchObject({ column: 23 });
    expect(parseRule("`net VBUS exist`", 3, 12)).toMatchObject({ column: 22 });
  });
});

const SPEC = `# Blinky spec

Prose for people. The rules below are what a machine checks.

## Requirements

- REQ-PWR-1: The board runs from USB-C VBUS at 5 V,
  through a 3.3 V LDO.
  - check: net VBUS exists
  - check: J1.A9 on VBUS
  - Note: this nested bullet is prose.
* REQ-LED-1: Indicator current stays under 5 mA.
  * Check: R3.value >= 680

### Mechanical

- REQ-MECH-1: Fits the enclosure.
  - check: board width <= 40mm

- REQ-DOC-1: Prose only.

\`\`\`
- REQ-EXAMPLE-1: inside a fence, not a requirement
  - check: this is not parsed
## Not a heading either
\`\`\`
<!--
- REQ-COMMENTED-1: inside a comment
-->
- A prose bullet after the requirements.

## Notes

- REQ-OUTSIDE-1: outside the section
  - check: net NOPE exists
`;

describe("parseRequirements", () => {
  test("finds the section and ends it at the next level-2 heading, ignoring fences and comments", () => {
    expect(requirementsSectionRange(SPEC)).toEqual({ start: 5, end: 31 });
    const lines = SPEC.split("\n");
    expect(lines[4]).toBe("## Requirements");
    expect(lines[31]).toBe("## Notes");
  });

  test("reads requirements, continuation text and nested checks with their lines", () => {
    const spec = parseRequirements(SPEC, FILE)!;
    expect(spec.problems).toEqual([]);
    expect(spec.requirements.map((r) => [r.id, r.line, r.checks.map((c) => c.text)])).toEqual([
      ["REQ-PWR-1", 7, ["net VBUS exists", "J1.A9 on VBUS"]],
      ["REQ-LED-1", 12, ["R3.value >= 680"]],
      ["REQ-MECH-1", 17, ["board width <= 40mm"]],
      ["REQ-DOC-1", 20, []],
    ]);
    expect(spec.requirements[0]!.text).toBe("The board runs from USB-C VBUS at 5 V, through a 3.3 V LDO.");
    expect(spec.requirements[0]!.checks[1]!.span).toEqual({ line: 10, column: 12, endColumn: 25 });
  });

  test("no Requirements section → undefined", () => {
    expect(parseRequirements("# Spec\n\n## Overview\ntext\n", FILE)).toBeUndefined();
    expect(requirementsSectionRange("# Spec\n```\n## Requirements\n```\n")).toBeUndefined();
  });

  test("the heading matches in any case and runs to the end of the file", () => {
    expect(requirementsSectionRange("# S\n## requirements ##\n- REQ-A-1: x\n")).toEqual({ start: 2, end: 4 });
  });

  test("CRLF line endings parse the same", () => {
    const spec = parseRequirements(SPEC.replace(/\n/g, "\r\n"), FILE)!;
    expect(spec.problems).toEqual([]);
    expect(spec.requirements).toHaveLength(4);
  });

  test("malformed rules and requirements are problems with file, line and column; parsing goes on", () => {
    const md = [
      "## Requirements", // 1
      "- REQ-A-1: a", // 2
      "  - check: net VBUS exist", // 3
      "  - check: R2.value = 680", // 4
      "  - check: net VBUS exists", // 5
      "- REQ-a-2: lower case", // 6
      "- check: net GND exists", // 7
      "- REQ-A-1: again", // 8
      "  - check: `count C* >= x`", // 9
      "- prose", // 10
      "  - check: net GND exists", // 11
      "## Requirements", // 12
    ].join("\n");
    const spec = parseRequirements(md, FILE)!;
    expect(spec.problems.map((p) => [p.kind, p.line, p.column, p.reqId])).toEqual([
      ["parse", 12, 1, undefined],
      ["parse", 3, 21, "REQ-A-1"],
      ["parse", 4, 21, "REQ-A-1"],
      ["parse", 6, 3, undefined],
      ["parse", 7, 3, undefined],
      ["duplicate", 8, 3, "REQ-A-1"],
      ["parse", 9, 25, "REQ-A-1"],
      ["parse", 11, 5, undefined],
    ]);
    expect(spec.problems[1]!.message).toBe(
      "docs/SPEC.md:3:21: expected `exists`, `absent` or `pins` after the net name, got `exist`",
    );
    expect(spec.problems[5]!.message).toContain("duplicate requirement id REQ-A-1 (first on line 2)");
    expect(spec.requirements.map((r) => [r.id, r.checks.length])).toEqual([
      ["REQ-A-1", 1],
      ["REQ-A-1", 0],
    ]);
  });
});

describe("parseRequirements: size", () => {
  /** A Requirements section of `n` requirements with one rule each, every id given twice when `twice`. */
  const generated = (n: number, twice = false) =>
    [
      "## Requirements",
      "",
      ...Array.from({ length: n }, (_, i) => [
        `- REQ-GEN-${twice ? i >> 1 : i}: generated ${i}`,
        "  - check: net VBUS exists",
      ]).flat(),
      "",
    ].join("\n");

  test(`up to ${MAX_REQUIREMENTS} requirements and ${MAX_RULES} rules parse; duplicates name the first definition`, () => {
    const spec = parseRequirements(generated(MAX_REQUIREMENTS, true), FILE)!;
    expect(spec.requirements).toHaveLength(MAX_REQUIREMENTS);
    expect(spec.requirements.flatMap((r) => r.checks)).toHaveLength(MAX_RULES);
    expect(spec.problems).toHaveLength(MAX_REQUIREMENTS / 2);
    expect(spec.problems[0]!.message).toBe(`${FILE}:5:3: duplicate requirement id REQ-GEN-0 (first on line 3)`);
  });

  test("100,000 requirements are input_too_large, naming the file and the line past the limit", () => {
    const err = thrownCopperheadError(() => parseRequirements(generated(100_000), FILE));
    expect(err.code).toBe("input_too_large");
    expect(err.message).toBe(
      `${FILE}:${3 + 2 * MAX_REQUIREMENTS}: the Requirements section holds more than ${MAX_REQUIREMENTS} requirements, copperhead's limit.`,
    );
    expect(err.details).toMatchObject({ file: FILE, line: 3 + 2 * MAX_REQUIREMENTS });
    expect(err.fix).toContain("fewer, broader");
  });

  test("more rules than the limit under few requirements are input_too_large too", () => {
    const rules = Array.from({ length: MAX_RULES + 1 }, () => "  - check: net VBUS exists");
    const err = thrownCopperheadError(() =>
      parseRequirements(["## Requirements", "- REQ-A-1: many rules", ...rules].join("\n"), FILE),
    );
    expect(err.code).toBe("input_too_large");
    expect(err.message).toContain(`more than ${MAX_RULES} check: rules`);
  });
});

describe("requirementsSectionTexts", () => {
  test("every section in order, so a second one appended is a change", () => {
    const one = "# Spec\n\n## Requirements\n- REQ-A-1: a\n\n## Notes\nprose\n";
    expect(requirementsSectionTexts(one)).toEqual(["## Requirements\n- REQ-A-1: a\n"]);
    expect(requirementsSectionTexts(`${one}\n## Requirements\n- REQ-B-1: b\n`)).toHaveLength(2);
    expect(requirementsSectionTexts(one.replace("prose", "other prose"))).toEqual(requirementsSectionTexts(one));
    expect(requirementsSectionTexts("```\n## Requirements\n```\n")).toEqual([]);
  });
});

describe("parseRequirements: hostile whitespace", () => {
  // Each input is a million characters: a pattern that retried every split of a run (quadratic)
  // would take tens of minutes here, far past the test's timeout; a linear scan takes
  // milliseconds.
  const run = 1_000_000;

  test("a heading followed by a million spaces, and one closed by #s, are headings", () => {
    const spec = [
      "## Requirements",
      "- REQ-A-1: one",
      "  - check: net VBUS exists",
      `### Notes${" ".repeat(run)}x`,
      `## Requirements${" ".repeat(run)}##\r`,
      "- REQ-B-1: a second section",
    ].join("\n");
    expect(requirementsSectionRange(spec)).toEqual({ start: 1, end: 4 });
    const parsed = parseRequirements(spec, FILE)!;
    expect(parsed.requirements.map((r) => r.id)).toEqual(["REQ-A-1"]);
    expect(parsed.problems.map((p) => p.message)).toEqual([
      `${FILE}:5:1: a second Requirements section; merge it into the first`,
    ]);
  }, 20_000);

  test("bullets of a million tabs and a CR, and a requirement padded with them, parse", () => {
    const spec = [
      "## Requirements",
      `- REQ-A-1:${"\t".repeat(run)}padded\r`,
      `  - check:${"\t".repeat(run)}net VBUS exists\r`,
      `- ${"\t".repeat(run)}\r`,
    ].join("\n");
    const parsed = parseRequirements(spec, FILE)!;
    expect(parsed.requirements).toMatchObject([
      { id: "REQ-A-1", text: "padded", checks: [{ kind: "net", net: "VBUS" }] },
    ]);
    expect(parsed.problems).toEqual([]);
  }, 20_000);
});
