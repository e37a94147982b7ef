import { afterAll, describe, expect, test } from "bun:test";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CopperheadError } from "../../src/errors.ts";
import { head, printSexpr, q, setAtom } from "../../src/kicad/sexpr.ts";
import {
  fieldValue,
  loadSchematicProject,
  readSchematicFile,
  symbolInstance,
  unitLetter,
  unitPins,
} from "../../src/kicad/schematic.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

describe("loading a hierarchy", () => {
  const project = loadSchematicProject("fixtures/netlist/hierarchy/hierarchy.kicad_sch");

  test("builds sheet instances with instance paths and human paths", () => {
    const rootUuid = project.root.file.uuid;
    expect(project.root.path).toBe(`/${rootUuid}`);
    expect(project.instances.map((i) => i.humanPath)).toEqual(["/", "/ChanA/", "/ChanA/Stage/", "/ChanB/", "/ChanB/Stage/"]);
    const stage = project.instances.find((i) => i.humanPath === "/ChanA/Stage/")!;
    expect(stage.path.split("/")).toHaveLength(4);
    expect(stage.path.startsWith(`/${rootUuid}/`)).toBe(true);
    expect(stage.depth).toBe(3);
    expect(stage.parent?.humanPath).toBe("/ChanA/");
  });

  test("parses a file used by several sheets once", () => {
    expect(project.files.size).toBe(3);
    const channels = project.instances.filter((i) => i.humanPath.match(/^\/Chan.\/$/));
    expect(channels).toHaveLength(2);
    expect(channels[0]!.file).toBe(channels[1]!.file);
  });

  test("resolves a symbol's reference per sheet instance", () => {
    const [chanA, chanB] = ["/ChanA/Stage/", "/ChanB/Stage/"].map((h) => project.instances.find((i) => i.humanPath === h)!);
    const symbol = chanA!.file.symbols.find((s) => !fieldValue(s, "Reference")!.startsWith("#"))!;
    const a = symbolInstance(symbol, chanA!.path, project.projectName).reference;
    const b = symbolInstance(symbol, chanB!.path, project.projectName).reference;
    expect(a).toMatch(/^R\d+$/);
    expect(b).toMatch(/^R\d+$/);
    expect(a).not.toBe(b);
  });

  test("exposes sheet symbols with their pins, in place over the tree", () => {
    const sheets = project.root.file.sheets;
    expect(sheets.map((s) => s.name).sort()).toEqual(["ChanA", "ChanB"]);
    for (const sheet of sheets) {
      expect(sheet.fileName).toBe("channel.kicad_sch");
      expect(head(sheet.node)).toBe("sheet");
      expect(sheet.pins.length).toBeGreaterThan(0);
      expect(project.root.file.doc.root.items).toContain(sheet.node);
      for (const pin of sheet.pins) expect(sheet.node.items).toContain(pin.node);
    }
  });
});

describe("symbols and library pins", () => {
  const project = loadSchematicProject("fixtures/netlist/multi-unit/multi-unit.kicad_sch");
  const symbols = project.instances.flatMap((i) => i.file.symbols.map((symbol) => ({ symbol, instance: i })));

  test("reads placement, flags, fields and the library symbol", () => {
    for (const { symbol } of symbols) {
      expect(symbol.lib).toBeDefined();
      expect(head(symbol.node)).toBe("symbol");
      expect([0, 90, 180, 270]).toContain(symbol.placement.rotation);
      expect(symbol.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(fieldValue(symbol, "Reference")).toBeDefined();
    }
    expect(symbols.some(({ symbol }) => symbol.placement.mirror === "x")).toBe(true);
    expect(symbols.some(({ symbol }) => symbol.placement.mirror === "y")).toBe(true);
  });

  test("multi-unit symbols expose per-unit pins; unit 0 pins are common to every unit", () => {
    const multi = symbols.find(({ symbol }) => (symbol.lib?.unitCount ?? 1) > 1)!;
    expect(multi).toBeDefined();
    const lib = multi.symbol.lib!;
    const common = lib.pins.filter((p) => p.unit === 0).map((p) => p.number);
    for (let unit = 1; unit <= lib.unitCount; unit++) {
      const numbers = unitPins(multi.symbol, unit).map((p) => p.number);
      for (const n of common) expect(numbers).toContain(n);
      expect(unitPins(multi.symbol, unit).every((p) => p.unit === 0 || p.unit === unit)).toBe(true);
    }
  });

  test("power symbols are flagged and their pins are power inputs", () => {
    const power = symbols.filter(({ symbol }) => symbol.lib?.power);
    expect(power.length).toBeGreaterThan(0);
    for (const { symbol } of power) expect(symbol.lib!.pins.every((p) => p.type === "power_in" || p.type === "power_out")).toBe(true);
  });

  test("unit letters follow KiCad's sub-references", () => {
    expect([1, 2, 26, 27, 28].map(unitLetter)).toEqual(["A", "B", "Z", "AA", "AB"]);
  });
});

describe("file versions", () => {
  test("reads a KiCad 8 file (convert, bare hide) like a KiCad 9 one", async () => {
    const source = await readFile("fixtures/usb-led/usb-led.kicad_sch", "utf8");
    const v9 = readSchematicFile("usb-led.kicad_sch", source);
    const v8source = source
      .replace("(version 20250114)", "(version 20231120)")
      .replace(/\(body_style (\d+)\)/g, "(convert $1)")
      .replace(/\(hide yes\)/g, "hide");
    const v8 = readSchematicFile("usb-led.kicad_sch", v8source);
    expect(v9.version).toBe(20250114);
    expect(v8.version).toBe(20231120);
    const summary = (file: typeof v9) =>
      file.symbols.map((s) => ({ lib: s.libId, body: s.bodyStyle, at: s.placement, hidden: s.lib?.pins.map((p) => p.hidden) }));
    expect(summary(v8)).toEqual(summary(v9));
  });

  test("views work in place: editing through a node changes the printed file", async () => {
    const source = await readFile("fixtures/usb-led/usb-led.kicad_sch", "utf8");
    const file = readSchematicFile("usb-led.kicad_sch", source);
    expect(printSexpr(file.doc)).toBe(source);
    const field = file.symbols[0]!.fields.find((f) => f.name === "Value")!;
    setAtom(field.node, 2, q("CHANGED"));
    const printed = printSexpr(file.doc);
    expect(printed).not.toBe(source);
    expect(printed.replace('"CHANGED"', JSON.stringify(field.value))).toBe(source);
  });
});

describe("errors", () => {
  test("a missing sub-sheet file is a typed error naming the file", async () => {
    const dir = await copyFixture("netlist/hierarchy");
    await rm(join(dir, "stage.kicad_sch"));
    let error: unknown;
    try {
      loadSchematicProject(join(dir, "hierarchy.kicad_sch"));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CopperheadError);
    expect((error as CopperheadError).code).toBe("not_found");
    expect((error as CopperheadError).message).toContain("stage.kicad_sch");
  });

  test("a sheet that includes itself is a typed error, not a hang", async () => {
    const dir = await copyFixture("netlist/hierarchy");
    const stage = join(dir, "stage.kicad_sch");
    const channel = await readFile(join(dir, "channel.kicad_sch"), "utf8");
    // Make stage.kicad_sch a copy of channel.kicad_sch, whose sheet points at stage.kicad_sch.
    await writeFile(stage, channel);
    let error: unknown;
    try {
      loadSchematicProject(join(dir, "hierarchy.kicad_sch"));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CopperheadError);
    expect((error as CopperheadError).code).toBe("sheet_recursion");
  });
});

describe("format versions", () => {
  test("a schematic older than KiCad 8 is refused with a fix, not netlisted wrongly", () => {
    let caught: unknown;
    try {
      readSchematicFile("old.kicad_sch", '(kicad_sch (version 20230121) (generator "eeschema") (uuid "x"))\n');
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: "parse_error" });
    expect((caught as Error).message).toContain("older than KiCad 8");
    expect((caught as { fix: string }).fix).toContain("KiCad 8 or newer");
  });
});
