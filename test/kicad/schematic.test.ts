import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CopperheadError } from "../../src/errors.ts";
import { head, printSexpr, q, setAtom } from "../../src/kicad/sexpr/index.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { convertLegacyOverbars } from "../../src/kicad/schematic/model/read-items.ts";
import { readSchematicFile } from "../../src/kicad/schematic/model/schematic-file.ts";
import { fieldValue, symbolInstance, unitLetter, unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

describe("loading a hierarchy", () => {
  const project = loadSchematicProject("fixtures/netlist/hierarchy/hierarchy.kicad_sch");

  test("builds sheet instances with instance paths and human paths", () => {
    const rootUuid = project.root.file.uuid;
    expect(project.root.path).toBe(`/${rootUuid}`);
    expect(project.instances.map((i) => i.humanPath)).toEqual([
      "/",
      "/ChanA/",
      "/ChanA/Stage/",
      "/ChanB/",
      "/ChanB/Stage/",
    ]);
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
    const [chanA, chanB] = ["/ChanA/Stage/", "/ChanB/Stage/"].map(
      (h) => project.instances.find((i) => i.humanPath === h)!,
    );
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
    for (const { symbol } of power)
      expect(symbol.lib!.pins.every((p) => p.type === "power_in" || p.type === "power_out")).toBe(true);
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
      file.symbols.map((s) => ({
        lib: s.libId,
        body: s.bodyStyle,
        at: s.placement,
        hidden: s.lib?.pins.map((p) => p.hidden),
      }));
    expect(summary(v8)).toEqual(summary(v9));
  });

  test("views work in place: editing through a node changes the printed file", async () => {
    const source = await readFile("fixtures/usb-led/usb-led.kicad_sch", "utf8");
    const file = readSchematicFile("usb-led.kicad_sch", source);
    expect(printSexpr(file.doc)).toBe(source);
    const field = file.symbols[0]!.fields.find((f) => f.name === "Value")!;
    const before = field.value;
    setAtom(field.node, 2, q("CHANGED"));
    const printed = printSexpr(file.doc);
    expect(printed).not.toBe(source);
    expect(printed.replace('"CHANGED"', JSON.stringify(before))).toBe(source);
    // The view reads the tree it sits on.
    expect(field.value).toBe("CHANGED");
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
  test("a KiCad 6 project takes references and pages from the root's instance lists", () => {
    const project = loadSchematicProject("fixtures/netlist/kicad6/kicad6.kicad_sch");
    expect(project.root.file.version).toBe(20211123);
    expect(project.root.file.symbolInstances.length).toBeGreaterThan(0);
    const [chanA, chanB] = ["/ChanA/", "/ChanB/"].map((h) => project.instances.find((i) => i.humanPath === h)!);
    expect([chanA!.page, chanB!.page]).toEqual(["2", "3"]);
    const r = chanA!.file.symbols.find((s) => s.value === "1k")!;
    // The symbol's own Reference field says R1 in both instances; only symbol_instances tells them apart.
    expect(symbolInstance(r, chanA!.path, project.projectName).reference).toBe("R1");
    expect(symbolInstance(r, chanB!.path, project.projectName).reference).toBe("R2");
  });

  test("views are read from the tree on demand: after a change to the root's instance rows, other sheets' symbols follow", () => {
    const project = loadSchematicProject("fixtures/netlist/kicad6/kicad6.kicad_sch");
    const chanB = project.instances.find((i) => i.humanPath === "/ChanB/")!;
    const r = () => chanB.file.symbols.find((s) => s.value === "1k")!;
    expect(symbolInstance(r(), chanB.path, project.projectName).reference).toBe("R2");
    const rootFile = project.root.file;
    const table = rootFile.doc.root.items.find((i) => i.type === "list" && head(i) === "symbol_instances");
    const row =
      table?.type === "list" ? table.items.find((i) => i.type === "list" && printSexpr(i).includes('"R2"')) : undefined;
    const reference =
      row?.type === "list" ? row.items.find((i) => i.type === "list" && head(i) === "reference") : undefined;
    if (reference?.type !== "list") throw new Error("no R2 row in the fixture's symbol_instances");
    setAtom(reference, 1, q("R7"));
    rootFile.changed();
    expect(symbolInstance(r(), chanB.path, project.projectName).reference).toBe("R7");
  });

  test("before 20230221 a legacy power symbol takes its hidden pin's name as Value, whatever the sheet's own version", () => {
    for (const name of ["kicad6", "kicad7"]) {
      const project = loadSchematicProject(`fixtures/netlist/${name}/${name}.kicad_sch`);
      const legacy = [...project.files.values()].flatMap((f) => f.symbols).filter((s) => s.libId === "power:+3.3V");
      expect(legacy.length).toBeGreaterThan(0);
      for (const symbol of legacy) {
        expect(fieldValue(symbol, "Value")).toBe("+3.3V");
        expect(symbol.value).toBe("+3V3");
      }
    }
    const modern = readSchematicFile(
      "modern.kicad_sch",
      readFileSync("fixtures/netlist/kicad7/sensor.kicad_sch", "utf8"),
    );
    expect(modern.version).toBe(20250114);
    expect(modern.symbols.find((s) => s.libId === "power:+3.3V")!.value).toBe("+3.3V");
  });

  test("a pin name or number of ~ means none before KiCad 10", () => {
    const file = readSchematicFile(
      "unconnected.kicad_sch",
      readFileSync("fixtures/netlist/unconnected/unconnected.kicad_sch", "utf8"),
    );
    const hole = file.libSymbols.get("unconnected:HOLE")!;
    expect(hole.pins.map((p) => [p.number, p.name])).toEqual([["", "1"]]);
    const tenth = readFileSync("fixtures/netlist/unconnected/unconnected.kicad_sch", "utf8").replace(
      "(version 20250114)",
      "(version 20250318)",
    );
    expect(readSchematicFile("unconnected.kicad_sch", tenth).libSymbols.get("unconnected:HOLE")!.pins[0]!.number).toBe(
      "~",
    );
  });

  test("old overbar notation is read as ~{…}", () => {
    expect(convertLegacyOverbars("~RESET~")).toBe("~{RESET}");
    expect(convertLegacyOverbars("~CS~/A0")).toBe("~{CS}/A0");
    expect(convertLegacyOverbars("~WR")).toBe("~{WR}");
    expect(convertLegacyOverbars("~OE~ X")).toBe("~{OE} X");
    expect(convertLegacyOverbars("A~~B")).toBe("A~B");
    expect(convertLegacyOverbars("~{ALREADY}")).toBe("~{ALREADY}");
    expect(convertLegacyOverbars("~")).toBe("~");
    const source = '(kicad_sch (version 20210406) (generator eeschema) (uuid 1) (label "~RESET~" (at 0 0 0)))\n';
    expect(readSchematicFile("old.kicad_sch", source).labels[0]!.text).toBe("~{RESET}");
  });

  test("a KiCad 5 schematic is a typed error that names the fix", async () => {
    const legacy = "EESchema Schematic File Version 4\nEELAYER 30 0\nEELAYER END\n$EndSCHEMATC\n";
    const error = thrownCopperheadError(() => readSchematicFile("board.sch", legacy));
    expect(error.code).toBe("legacy_format");
    expect(error.message).toContain("board.sch");
    expect(error.fix).toContain("KiCad 6 or newer");
    const dir = await copyFixture("netlist/kicad8");
    await writeFile(join(dir, "kicad8.kicad_sch"), legacy);
    expect(thrownCopperheadError(() => loadSchematicProject(join(dir, "kicad8.kicad_sch"))).code).toBe("legacy_format");
  });

  test("text with no known version is refused with a fix", () => {
    const error = thrownCopperheadError(() =>
      readSchematicFile("odd.kicad_sch", '(kicad_sch (generator "x") (uuid "x"))\n'),
    );
    expect(error.code).toBe("parse_error");
    expect(error.fix).toContain("KiCad 6 or newer");
  });
});
