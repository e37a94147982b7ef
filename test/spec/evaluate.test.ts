/**
 * Every rule form, passing and failing, against the real usb-led design (native netlist,
 * merged components, board Edge.Cuts: 40 × 19 mm).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadDesign } from "../../src/design/design.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { evaluateRule } from "../../src/spec/evaluate.ts";
import { parseRule } from "../../src/spec/requirements.ts";

const design = loadDesign(discoverProject(join(import.meta.dir, "..", "..", "fixtures", "usb-led")));

function evaluate(text: string) {
  const rule = parseRule(text);
  if ("problem" in rule) throw new Error(`${text}: ${rule.problem}`);
  return evaluateRule(rule, design);
}

/** [rule, passes, actual] */
type Case = [string, boolean, string];

function table(cases: Case[]) {
  for (const [text, pass, actual] of cases) {
    test(`${text} → ${pass ? "pass" : "fail"}`, () => expect(evaluate(text)).toEqual({ pass, actual }));
  }
}

describe("net exists / absent", () => {
  table([
    ["net VBUS exists", true, "net VBUS exists"],
    ["net +3V3 exists", true, "net +3V3 exists"],
    ["net /CC1 exists", true, "net /CC1 exists"],
    ["net CC1 exists", true, "net CC1 exists (as /CC1)"],
    ["net unconnected-(U1-NC-Pad4) exists", true, "net unconnected-(U1-NC-Pad4) exists"],
    ["net VIN exists", false, "net VIN does not exist"],
    ["net gnd exists", false, "net gnd does not exist; did you mean GND?"],
    ["net VIN absent", true, "net VIN is absent"],
    ["net GND absent", false, "net GND exists, expected absent"],
    ["net LED_A absent", false, "net LED_A exists (as /LED_A), expected absent"],
  ]);
});

describe("ref exists / absent", () => {
  table([
    ["U1 exists", true, "U1 exists"],
    ["C2 exists", true, "C2 exists"],
    ["Q1 exists", false, "Q1 does not exist"],
    ["Q1 absent", true, "Q1 is absent"],
    ["D1 absent", false, "D1 exists, expected absent"],
  ]);
});

describe("pin on net, by number or name", () => {
  table([
    ["U1.5 on +3V3", true, "U1.5 (VOUT) is on +3V3"],
    ["U1.VOUT on +3V3", true, "U1.VOUT (pin 5) is on +3V3"],
    ["U1.VIN on VBUS", true, "U1.VIN (pin 1) is on VBUS"],
    ["J1.A9 on VBUS", true, "J1.A9 (VBUS) is on VBUS"],
    ["J1.CC1 on CC1", true, "J1.CC1 (pin A5) is on /CC1"],
    ["R3.2 on /LED_A", true, "R3.2 is on /LED_A"],
    // A name shared by several pins holds only if all of them are on the net.
    ["J1.GND on GND", true, "J1.GND (pin A12), J1.GND (pin B12) are on GND"],
    ["J1.VBUS on GND", false, "J1.VBUS (pin A9) is on VBUS, J1.VBUS (pin B9) is on VBUS, expected GND"],
    ["U1.5 on VBUS", false, "U1.5 (VOUT) is on +3V3, expected VBUS"],
    ["U1.EN on GND", false, "U1.EN (pin 3) is on VBUS, expected GND"],
    ["U1.1 on VIN", false, "U1.1 (VIN) is on VBUS, expected VIN (no such net)"],
    ["J1.A4 on VBUS", false, "J1 has no pin A4 (pins: A5 CC1, A9 VBUS, A12 GND, B5 CC2, B9 VBUS, B12 GND, S1 SHIELD)"],
    ["Q1.1 on GND", false, "Q1 does not exist"],
  ]);
});

describe("field comparisons", () => {
  table([
    ["R3.value >= 680", true, "R3.value is 1k, expected >= 680"],
    ["R3.value < 680", false, "R3.value is 1k, expected < 680"],
    ["R1.value == 5k1", true, "R1.value is 5.1k, expected == 5k1"],
    ["R1.value != 5.1k", false, "R1.value is 5.1k, expected != 5.1k"],
    ["C1.value == 1uF", true, "C1.value is 1u, expected == 1uF"],
    ["C1.value <= 1000 nF", true, "C1.value is 1u, expected <= 1000nF"],
    ["C1.value > 1u", false, "C1.value is 1u, expected > 1u"],
    ["D1.value == Green", true, "D1.value is Green, expected == Green"],
    ["D1.value == green", false, "D1.value is Green, expected == green"],
    ["D1.VALUE != Red", true, "D1.VALUE is Green, expected != Red"],
    [
      "R1.footprint == Resistor_SMD:R_0603_1608Metric",
      true,
      "R1.footprint is Resistor_SMD:R_0603_1608Metric, expected == Resistor_SMD:R_0603_1608Metric",
    ],
    ['U1.MPN == "AP2112K-3.3TRG1"', true, "U1.MPN is AP2112K-3.3TRG1, expected == AP2112K-3.3TRG1"],
    ["U1.value >= 3", false, "U1.value is AP2112K-3.3, not a number; expected >= 3"],
    ["R3.Tolerance == 1%", false, "R3 has no field Tolerance"],
    ["Q1.value == 1k", false, "Q1 does not exist"],
  ]);

  test("different units are a failing rule that says why", () => {
    // The fixture's values carry no unit; give R3 one in a copy of the design.
    const withUnit = {
      ...design,
      components: design.components.map((c) => (c.ref === "R3" ? { ...c, fields: { ...c.fields, Value: "1kΩ" } } : c)),
    };
    const rule = parseRule("R3.value >= 3.3V");
    if ("problem" in rule) throw new Error(rule.problem);
    expect(evaluateRule(rule, withUnit)).toEqual({
      pass: false,
      actual: "R3.value is 1kΩ: cannot compare Ω with V; expected >= 3.3V",
    });
  });
});

describe("count by ref glob and lib_id glob", () => {
  table([
    ["count C* == 2", true, "count C* is 2 (C1, C2), expected == 2"],
    ["count R? >= 3", true, "count R? is 3 (R1, R2, R3), expected >= 3"],
    ["count Q* == 0", true, "count Q* is 0, expected == 0"],
    ["count C* > 2", false, "count C* is 2 (C1, C2), expected > 2"],
    ["count Device:LED* == 1", true, "count Device:LED* is 1 (D1), expected == 1"],
    ["count Device:R == 3", true, "count Device:R is 3 (R1, R2, R3), expected == 3"],
    ["count Regulator_Linear:* <= 1", true, "count Regulator_Linear:* is 1 (U1), expected <= 1"],
    ["count Device:C* != 2", false, "count Device:C* is 2 (C1, C2), expected != 2"],
  ]);
});

describe("net pins", () => {
  table([
    ["net GND pins == 10", true, "net GND has 10 pins, expected == 10"],
    ["net CC1 pins == 2", true, "net /CC1 has 2 pins, expected == 2"],
    ["net VBUS pins < 5", false, "net VBUS has 5 pins, expected < 5"],
    ["net unconnected-(U1-NC-Pad4) pins <= 1", true, "net unconnected-(U1-NC-Pad4) has 1 pin, expected <= 1"],
    ["net VIN pins >= 1", false, "net VIN does not exist"],
  ]);
});

describe("board width / height from Edge.Cuts (40 × 19 mm)", () => {
  table([
    ["board width == 40mm", true, "board width is 40 mm, expected == 40mm"],
    ["board width <= 40", true, "board width is 40 mm, expected <= 40"],
    ["board width < 40mm", false, "board width is 40 mm, expected < 40mm"],
    ["board height == 19 mm", true, "board height is 19 mm, expected == 19mm"],
    ["board height > 19mm", false, "board height is 19 mm, expected > 19mm"],
    ["board width < 1575mil", true, "board width is 40 mm, expected < 1575mil"],
    ["board width < 1574mil", false, "board width is 40 mm, expected < 1574mil"],
    ["board height <= 0.75in", true, "board height is 19 mm, expected <= 0.75in"],
    ["board width <= 1.5in", false, "board width is 40 mm, expected <= 1.5in"],
  ]);

  test("a design without a board fails board rules instead of passing them", () => {
    const boardless = { ...design, board: undefined };
    const rule = parseRule("board width < 100mm");
    if ("problem" in rule) throw new Error(rule.problem);
    expect(evaluateRule(rule, boardless)).toEqual({ pass: false, actual: "the project has no board (.kicad_pcb)" });
  });
});
