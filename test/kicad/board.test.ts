import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Board } from "../../src/kicad/board/model.ts";
import { setFootprintField } from "../../src/kicad/board/footprint/fields.ts";
import { boardDialect } from "../../src/kicad/format-versions.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";

const USB_LED = "fixtures/usb-led/usb-led.kicad_pcb";

describe("board view on the usb-led fixture (KiCad 9)", () => {
  const board = Board.load(USB_LED);

  test("version and numbered net table", () => {
    expect(board.version).toBe(20241229);
    expect(board.netFormat).toBe("numbered");
    expect(board.nets().map((n) => n.name)).toEqual([
      "+3V3",
      "/CC1",
      "/CC2",
      "/LED_A",
      "GND",
      "VBUS",
      "unconnected-(U1-NC-Pad4)",
    ]);
  });

  test("footprints carry ref, value, library id, symbol path, sheet and pads with nets", () => {
    const byRef = new Map(board.footprints().map((f) => [f.ref, f]));
    expect([...byRef.keys()].sort()).toEqual(["C1", "C2", "D1", "J1", "J2", "R1", "R2", "R3", "U1"]);
    const u1 = byRef.get("U1")!;
    expect(u1).toMatchObject({
      value: "AP2112K-3.3",
      libId: "Package_TO_SOT_SMD:SOT-23-5",
      sheetname: "Regulator",
      sheetfile: "regulator.kicad_sch",
      layer: "F.Cu",
    });
    expect(u1.path).toMatch(/^\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/);
    expect(u1.pads.map((p) => [p.number, p.net?.name])).toEqual([
      ["1", "VBUS"],
      ["2", "GND"],
      ["3", "VBUS"],
      ["4", "unconnected-(U1-NC-Pad4)"],
      ["5", "+3V3"],
    ]);
    expect(u1.fields.MPN).toBeTruthy();
    expect(byRef.get("R1")!.at).toEqual({ x: 111, y: 87, rotation: 90 });
    expect(byRef.get("J2")!.attributes).toEqual(["through_hole"]);
  });

  test("Edge.Cuts bounding box", () => {
    expect(board.edgeCutsBBox()).toEqual({ minX: 100, minY: 83, maxX: 140, maxY: 102 });
  });

  test("reading changes nothing: the tree prints back byte-identically", () => {
    expect(printSexpr(board.doc)).toBe(readFileSync(USB_LED, "utf8"));
  });
});

describe("other board formats", () => {
  test('KiCad 10 name-only nets: no table, pads carry (net "name")', () => {
    const source = readFileSync(USB_LED, "utf8")
      .replace(/^\t\(net \d+ "[^"]*"\)\n/gm, "")
      .replace(/\(net \d+ ("[^"]*")\)/g, "(net $1)");
    const board = Board.parse(source);
    expect(board.netFormat).toBe("named");
    expect(board.nets().map((n) => n.name)).toContain("GND");
    expect(board.nets().every((n) => n.code === undefined)).toBe(true);
    const d1 = board.footprints().find((f) => f.ref === "D1")!;
    expect(d1.pads.map((p) => p.net)).toEqual([{ name: "GND" }, { name: "/LED_A" }]);
  });

  test("KiCad 8 board (20240108) with footprint-level edge cuts and an arc", () => {
    const board = Board.parse(
      [
        '(kicad_pcb (version 20240108) (generator "pcbnew") (generator_version "8.0")',
        '  (net 0 "") (net 1 "GND")',
        '  (gr_arc (start 0 0) (mid 10 -10) (end 20 0) (layer "Edge.Cuts") (stroke (width 0.05) (type default)))',
        '  (gr_line (start 0 0) (end 20 0) (layer "Edge.Cuts"))',
        '  (footprint "MountingHole:MountingHole_3.2mm_M3" (layer "F.Cu") (at 50 50 90)',
        '    (property "Reference" "H1") (property "Value" "MountingHole")',
        '    (fp_line (start -1 0) (end 1 0) (layer "Edge.Cuts"))',
        '    (pad "1" thru_hole circle (at 0 0) (size 6 6) (drill 3.2) (layers "*.Cu") (net 1 "GND")))',
        ")",
      ].join("\n"),
    );
    expect(board.version).toBe(20240108);
    expect(board.nets()).toEqual([{ code: 1, name: "GND" }]);
    const box = board.edgeCutsBBox()!;
    // The arc's top reaches y = -10; the footprint's line, rotated 90°, spans y 49..51 at x = 50.
    expect(box.minX).toBeCloseTo(0);
    expect(box.minY).toBeCloseTo(-10);
    expect(box.maxX).toBeCloseTo(50);
    expect(box.maxY).toBeCloseTo(51);
  });

  test("KiCad 6 texts locked ahead of their string: the reference is the string, and writing it keeps the flag", () => {
    // As the Sofle keyboard (fixtures/corpus/sofle-v2-soldered) has its ProMicro U1.
    const board = Board.parse(
      [
        "(kicad_pcb (version 20211014) (generator pcbnew)",
        '  (net 0 "") (net 1 "GND")',
        '  (footprint "Sofle:ProMicro" (layer "F.Cu") (at 50 50)',
        '    (fp_text reference locked "U1" (at 0 1.6 90) (layer "F.SilkS") hide (effects (font (size 1 1))))',
        '    (fp_text value locked "ProMicro" (at 0 0 90) (layer "F.SilkS") hide (effects (font (size 1 1))))',
        '    (pad "1" thru_hole circle (at 0 0) (size 1.6 1.6) (drill 1) (layers "*.Cu") (net 1 "GND"))))',
      ].join("\n"),
    );
    const u1 = board.footprints()[0]!;
    expect([u1.ref, u1.value]).toEqual(["U1", "ProMicro"]);
    setFootprintField(u1, boardDialect(board.version), "Reference", "U7");
    expect(printSexpr(board.doc)).toContain('(fp_text reference locked "U7" (at 0 1.6 90)');
    expect(Board.parse(printSexpr(board.doc)).footprints()[0]!.ref).toBe("U7");
  });

  test("a file that is not a board is a typed error", () => {
    expect(() => Board.parse("(kicad_sch (version 20250114))", "x.kicad_pcb")).toThrow(/not a KiCad board/);
  });
});
