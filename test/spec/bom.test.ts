import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadDesign, type Design } from "../../src/design/design.ts";
import type { Component } from "../../src/kicad/netlist/components.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { bomHash, bomLines, componentMpn, parseBom, renderBom } from "../../src/spec/bom.ts";
import { FIXTURES_DIR } from "../support/kicad.ts";

const design = loadDesign(discoverProject(join(FIXTURES_DIR, "usb-led")));

/** A design whose components are those of usb-led, with `edit` applied to copies. */
function edited(edit: (components: Component[]) => Component[]): Design {
  return { ...design, components: edit(design.components.map((c) => ({ ...c, fields: { ...c.fields } }))) };
}

function lineOf(text: string, needle: string): number {
  return text.split("\n").findIndex((l) => l.startsWith(needle)) + 1;
}

describe("renderBom", () => {
  test("a fresh BOM: one row per BOM component in natural ref order, a Notes column, hashed markers", () => {
    const text = renderBom(design);
    const begin = `<!-- copperhead:bom:begin sha256=${bomHash(bomLines(design.components))} -->`;
    expect(text).toContain(
      [
        begin,
        "| Ref | Value | Footprint | MPN | DNP | Notes |",
        "| --- | --- | --- | --- | --- | --- |",
        "| C1 | 1u | Capacitor_SMD:C_0603_1608Metric | GRM188R61E105KA12D |  |  |",
        "| C2 | 1u | Capacitor_SMD:C_0603_1608Metric | GRM188R61E105KA12D |  |  |",
        "| D1 | Green | LED_SMD:LED_0603_1608Metric | LTST-C191KGKT |  |  |",
      ].join("\n"),
    );
    expect(text).toContain(
      "| U1 | AP2112K-3.3 | Package_TO_SOT_SMD:SOT-23-5 | AP2112K-3.3TRG1 |  |  |\n<!-- copperhead:bom:end -->\n",
    );
    expect(text.startsWith("# Bill of materials: usb-led\n")).toBe(true);
    expect(renderBom(design)).toBe(text);
  });

  test("parseBom reads back the generated cells with line numbers, unedited", () => {
    const text = renderBom(design);
    const table = parseBom(text)!;
    expect(table.rows.map(({ ref, value, footprint, mpn, dnp }) => ({ ref, value, footprint, mpn, dnp }))).toEqual(
      bomLines(design.components),
    );
    expect(table.rows[0]!.line).toBe(lineOf(text, "| C1 |"));
    expect(table.beginLine).toBe(lineOf(text, "<!-- copperhead:bom:begin"));
    expect(table.endLine).toBe(lineOf(text, "<!-- copperhead:bom:end"));
    expect(table.humanColumns).toEqual(["Notes"]);
    expect(table.missingColumns).toEqual([]);
    expect(table.edited).toBe(false);
    expect(table.storedHash).toBe(table.hash);
  });

  test("regenerating keeps human columns by ref and all text outside the markers", () => {
    const original = renderBom(design)
      .replace(
        "| Ref | Value | Footprint | MPN | DNP | Notes |",
        "| Ref | Value | Footprint | MPN | DNP | Notes | Supplier |",
      )
      .replace("| --- | --- | --- | --- | --- | --- |", "| --- | --- | --- | --- | --- | --- | --- |")
      .replace(/^(\| R1 \| .*\|) {2}\|$/m, "$1 5% is fine | Digikey |")
      .replace(/^(\| C1 \| .*\|  \|)$/m, "$1 |")
      .concat("\n## Assembly\n\nHand-solder `J1` last.\n");
    expect(parseBom(original)!.edited).toBe(false);
    const changed = edited((cs) => {
      for (const c of cs) if (c.ref === "R1") c.value = "4.7k";
      return cs.filter((c) => c.ref !== "R2");
    });
    const regenerated = renderBom(changed, original);
    expect(regenerated).toContain(
      "| R1 | 4.7k | Resistor_SMD:R_0603_1608Metric | RC0603FR-075K1L |  | 5% is fine | Digikey |",
    );
    expect(regenerated).toContain("| C1 | 1u | Capacitor_SMD:C_0603_1608Metric | GRM188R61E105KA12D |  |  |  |");
    expect(regenerated).not.toContain("| R2 |");
    expect(regenerated).toContain("\n## Assembly\n\nHand-solder `J1` last.\n");
    expect(regenerated.startsWith("# Bill of materials: usb-led\n")).toBe(true);
    expect(parseBom(regenerated)!.edited).toBe(false);
    expect(renderBom(changed, regenerated)).toBe(regenerated);
  });

  test("a hand edit to a generated cell is detected; one to a human cell is not", () => {
    const text = renderBom(design);
    expect(parseBom(text.replace("| R3 | 1k |", "| R3 | 2k2 |"))!.edited).toBe(true);
    expect(parseBom(text.replace(/^(\| R3 \| .*\|) {2}\|$/m, "$1 check polarity |"))!.edited).toBe(false);
    expect(parseBom(text.replace(/^\| R3 \|.*\n/m, ""))!.edited).toBe(true);
  });

  test("a file without markers gets the table appended; a begin without an end is a parse error", () => {
    const appended = renderBom(design, "# Parts\n\nOur notes.\n");
    expect(appended.startsWith("# Parts\n\nOur notes.\n\n<!-- copperhead:bom:begin sha256=")).toBe(true);
    expect(parseBom(appended)!.rows).toHaveLength(9);
    expect(parseBom("# Parts\n")).toBeUndefined();
    expect(() => parseBom("x\n<!-- copperhead:bom:begin -->\n| Ref |\n")).toThrow(
      expect.objectContaining({ code: "parse_error", details: expect.objectContaining({ line: 2 }) }),
    );
  });

  test("hand-placed markers without a hash are filled, keeping CRLF line endings", () => {
    const existing = "# BOM\r\n\r\n<!-- copperhead:bom:begin -->\r\n<!-- copperhead:bom:end -->\r\nafter\r\n";
    expect(parseBom(existing)!.edited).toBe(false);
    const text = renderBom(design, existing);
    expect(text.startsWith("# BOM\r\n\r\n<!-- copperhead:bom:begin sha256=")).toBe(true);
    expect(
      text.endsWith(
        "| U1 | AP2112K-3.3 | Package_TO_SOT_SMD:SOT-23-5 | AP2112K-3.3TRG1 |  |  |\r\n<!-- copperhead:bom:end -->\r\nafter\r\n",
      ),
    ).toBe(true);
  });

  test("pipes in cells are escaped and read back; rows sort naturally; only BOM components are listed", () => {
    const changed = edited((cs) => {
      const r1 = cs.find((c) => c.ref === "R1")!;
      const r10 = { ...r1, ref: "R10", fields: { ...r1.fields } };
      r1.value = "5k1 | 1%";
      const d1 = cs.find((c) => c.ref === "D1")!;
      d1.inBom = false;
      return [r10, ...cs];
    });
    const text = renderBom(changed);
    expect(text).toContain("| R1 | 5k1 \\| 1% |");
    const refs = parseBom(text)!.rows.map((r) => r.ref);
    expect(refs).toEqual(["C1", "C2", "J1", "J2", "R1", "R2", "R3", "R10", "U1"]);
    expect(parseBom(text)!.rows.find((r) => r.ref === "R1")!.value).toBe("5k1 | 1%");
  });
});

describe("do-not-populate", () => {
  const r3Dnp = edited((cs) => cs.map((c) => (c.ref === "R3" ? { ...c, dnp: true } : c)));

  test("a DNP part keeps its row, marked DNP in the DNP column; the hash of a table with no DNP part is as before the column", () => {
    const text = renderBom(r3Dnp);
    expect(text).toMatch(/^\| R3 \| 1k \| Resistor_SMD:R_0603_1608Metric \| [^|]* \| DNP \|  \|$/m);
    expect(text).toContain("(DNP: not fitted, do not order or place)");
    expect(parseBom(text)!.rows.find((r) => r.ref === "R3")!.dnp).toBe("DNP");
    expect(
      parseBom(text)!
        .rows.filter((r) => r.dnp !== "")
        .map((r) => r.ref),
    ).toEqual(["R3"]);
    const lines = bomLines(design.components);
    const withoutColumn = lines.map(({ dnp: _dnp, ...rest }) => rest);
    expect(bomHash(lines)).toBe(bomHash(withoutColumn.map((l) => ({ ...l, dnp: "" }))));
    expect(bomHash(bomLines(r3Dnp.components))).not.toBe(bomHash(lines));
  });

  test("a table written before the DNP column is read, not missing a column, and regenerating adds the column keeping human cells", () => {
    const old = renderBom(design)
      .replace("| Ref | Value | Footprint | MPN | DNP | Notes |", "| Ref | Value | Footprint | MPN | Notes |")
      .replace("| --- | --- | --- | --- | --- | --- |", "| --- | --- | --- | --- | --- |")
      .replace(/^(\| [A-Z]+\d+ \| [^|]* \| [^|]* \| [^|]* \|)  \|  \|$/gm, "$1  |")
      .replace(/^(\| R3 \| .*\|) {2}\|$/m, "$1 hand-fit |");
    const table = parseBom(old)!;
    expect(table.columns).toEqual(["Ref", "Value", "Footprint", "MPN", "Notes"]);
    expect(table.missingColumns).toEqual([]);
    expect(table.edited).toBe(false);
    const regenerated = renderBom(r3Dnp, old);
    expect(regenerated).toMatch(/^\| R3 \| 1k \| [^|]* \| [^|]* \| DNP \| hand-fit \|$/m);
  });
});

test("componentMpn reads the MPN field or a common synonym", () => {
  const r1 = design.components.find((c) => c.ref === "R1")!;
  expect(componentMpn(r1)).toBe("RC0603FR-075K1L");
  const { MPN: _mpn, ...rest } = r1.fields;
  expect(componentMpn({ ...r1, fields: { ...rest, "Manufacturer Part Number": "X-1" } })).toBe("X-1");
  expect(componentMpn({ ...r1, fields: rest })).toBe("");
});
