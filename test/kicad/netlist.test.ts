import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { exportNetlist, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { naturalCompare } from "../../src/util/natural-compare.ts";
import { buildNetlist, defaultNetName, driverPriority, Priority } from "../../src/kicad/netlist/netlist.ts";
import { collectItems } from "../../src/kicad/schematic/connectivity.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { child, parseSexpr, printSexpr } from "../../src/kicad/sexpr/index.ts";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";

afterAll(cleanupTempDirs);

/** Every fixture project: `<dir>/<name>.kicad_pro` with its root `<dir>/<name>.kicad_sch`. */
const projects = [...new Bun.Glob("fixtures/**/*.kicad_pro").scanSync(".")]
  .sort()
  .map((pro) => pro.replace(/\.kicad_pro$/, ".kicad_sch"))
  .filter((sch) => existsSync(sch));

describe("parity with kicad-cli sch export netlist", () => {
  let cli: KicadCli;
  beforeAll(async () => {
    cli = await requireKicadCli();
  });

  test("there are fixture projects to compare", () => {
    expect(projects.length).toBeGreaterThan(0);
  });

  for (const sch of projects) {
    test(sch, async () => {
      const copy = await copyFixture(dirname(sch).replace(/^fixtures\//, ""));
      const root = join(copy, basename(sch));
      const expected = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      const actual = buildNetlist(loadSchematicProject(root));
      const diff = netlistDiff(expected, actual);
      if (diff.length > 0) throw new Error(`netlist differs from kicad-cli for ${sch}:\n  ${diff.join("\n  ")}`);
      expect(actual.nets).toEqual(expected.nets);
      expect(actual.nets.length).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe("naming rules", () => {
  const project = loadSchematicProject("fixtures/netlist/multi-unit/multi-unit.kicad_sch");
  const pins = project.instances
    .flatMap((instance) => collectItems(instance, project.projectName))
    .flatMap((item) => (item.kind === "pin" ? [item.pin] : []));

  test("an unnamed pin gives Net-(REF-PadN), or unconnected-(REF-PadN) with a no-connect", () => {
    const pin = pins.find((p) => !p.name && !p.reference.startsWith("#"));
    expect(pin).toBeDefined();
    expect(defaultNetName(pin!, false)).toBe(`Net-(${pin!.reference}-Pad${pin!.lib.number})`);
    expect(defaultNetName(pin!, true)).toBe(`unconnected-(${pin!.reference}-Pad${pin!.lib.number})`);
  });

  test("a named pin of a multi-unit symbol names the unit, and adds the pad when unconnected", () => {
    const pin = pins.find(
      (p) => p.name && p.name !== p.lib.number && (p.symbol.lib?.unitCount ?? 1) > 1 && p.type !== "power_in",
    );
    expect(pin).toBeDefined();
    const letter = String.fromCharCode(64 + pin!.unit);
    expect(defaultNetName(pin!, false)).toBe(`Net-(${pin!.reference}${letter}-${pin!.name})`);
    expect(defaultNetName(pin!, true)).toBe(
      `unconnected-(${pin!.reference}${letter}-${pin!.name}-Pad${pin!.lib.number})`,
    );
  });

  test("driver priorities rank pin < sheet pin < hierarchical < local < power < global", () => {
    expect([
      Priority.PIN,
      Priority.SHEET_PIN,
      Priority.HIER_LABEL,
      Priority.LOCAL_LABEL,
      Priority.POWER_PIN,
      Priority.GLOBAL,
    ]).toEqual(
      [
        ...[
          Priority.PIN,
          Priority.SHEET_PIN,
          Priority.HIER_LABEL,
          Priority.LOCAL_LABEL,
          Priority.POWER_PIN,
          Priority.GLOBAL,
        ],
      ].sort((a, b) => a - b),
    );
    const powerPin = pins.find((p) => p.symbol.lib?.power);
    expect(powerPin).toBeDefined();
    expect(driverPriority({ kind: "pin", pin: powerPin!, points: [powerPin!.at] })).toBe(Priority.POWER_PIN);
  });

  test("net names sort naturally, like KiCad's StrNumCmp", () => {
    const names = ["/D10", "/D2", "Net-(R10-Pad1)", "/d3", "Net-(R9-Pad1)"];
    expect(names.sort(naturalCompare)).toEqual(["/D2", "/D10", "/d3", "Net-(R9-Pad1)", "Net-(R10-Pad1)"]);
  });
});

describe("parseKicadNetlist", () => {
  test("reads nets, nodes, pinfunction and pintype", () => {
    const netlist = parseKicadNetlist(`(export (version "E")
  (nets
    (net (code "2") (name "/SIG") (class "Default")
      (node (ref "R2") (pin "1") (pintype "passive"))
      (node (ref "U1") (pin "3") (pinfunction "IN") (pintype "input")))
    (net (code "1") (name "GND") (class "Default")
      (node (ref "R1") (pin "2") (pintype "passive+no_connect")))))`);
    expect(netlist).toEqual({
      nets: [
        {
          name: "/SIG",
          nodes: [
            { ref: "R2", pin: "1", pintype: "passive" },
            { ref: "U1", pin: "3", pinfunction: "IN", pintype: "input" },
          ],
        },
        { name: "GND", nodes: [{ ref: "R1", pin: "2", pintype: "passive+no_connect" }] },
      ],
    });
  });

  test("rejects a file that is not a netlist", () => {
    expect(() => parseKicadNetlist("(kicad_sch)")).toThrow(/not a KiCad netlist/);
  });
});

/**
 * Connectivity edge cases, built as small schematics from Device:R (taken from the usb-led
 * fixture's symbol cache) and checked against kicad-cli. Device:R at (x, y) has pin 1 at
 * (x, y - 3.81) and pin 2 at (x, y + 3.81).
 */
describe("wire geometry edge cases match kicad-cli", () => {
  const source = readFileSync("fixtures/usb-led/usb-led.kicad_sch", "utf8");
  const libSymbols = printSexpr(child(parseSexpr(source).root, "lib_symbols")!);
  const root = "11111111-1111-4111-8111-111111111111";
  let counter = 0;
  const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, "0")}`;
  const resistor = (ref: string, x: number, y: number) => `(symbol (lib_id "Device:R") (at ${x} ${y} 0) (unit 1)
    (exclude_from_sim no) (in_bom yes) (on_board yes) (dnp no) (uuid "${uuid()}")
    (property "Reference" "${ref}" (at ${x} ${y} 0) (effects (font (size 1.27 1.27))))
    (property "Value" "1k" (at ${x} ${y} 0) (effects (font (size 1.27 1.27))))
    (pin "1" (uuid "${uuid()}")) (pin "2" (uuid "${uuid()}"))
    (instances (project "edge" (path "/${root}" (reference "${ref}") (unit 1)))))`;
  const wire = (x1: number, y1: number, x2: number, y2: number) =>
    `(wire (pts (xy ${x1} ${y1}) (xy ${x2} ${y2})) (stroke (width 0) (type default)) (uuid "${uuid()}"))`;
  const label = (name: string, x: number, y: number) =>
    `(label "${name}" (at ${x} ${y} 0) (effects (font (size 1.27 1.27))) (uuid "${uuid()}"))`;
  const junction = (x: number, y: number) =>
    `(junction (at ${x} ${y}) (diameter 0) (color 0 0 0 0) (uuid "${uuid()}"))`;
  const schematic = (items: string[]) =>
    `(kicad_sch (version 20250114) (generator "eeschema") (generator_version "9.0") (uuid "${root}") (paper "A4")\n${libSymbols}\n${items.join("\n")}\n(sheet_instances (path "/" (page "1"))) (embedded_fonts no))\n`;
  const cross = [
    resistor("R1", 90, 50),
    resistor("R2", 120, 50),
    resistor("R3", 100, 30),
    resistor("R4", 100, 80),
    wire(90, 53.81, 120, 53.81),
    wire(100, 33.81, 100, 76.19),
  ];
  const tee = [
    resistor("R1", 100, 50),
    wire(100, 53.81, 100, 60),
    resistor("R2", 90, 63.81),
    resistor("R3", 110, 63.81),
    wire(90, 60, 110, 60),
  ];
  const cases: Record<string, string[]> = {
    "a wire end mid-way along another wire does not connect": tee,
    "a junction mid-wire cuts the wire short (kicad-cli drops the far part)": [...tee, junction(100, 60)],
    "crossing wires do not connect": cross,
    "a junction on a crossing cuts both wires": [...cross, junction(100, 53.81)],
    "a label on a crossing joins both wires": [...cross, label("X", 100, 53.81)],
    "overlapping collinear wires do not connect": [
      resistor("R1", 90, 50),
      resistor("R2", 120, 50),
      wire(90, 53.81, 105, 53.81),
      wire(100, 53.81, 120, 53.81),
    ],
    "a label anywhere along a wire names it": [
      resistor("R1", 90, 50),
      resistor("R2", 120, 50),
      wire(90, 53.81, 120, 53.81),
      label("MID", 100, 53.81),
    ],
    "a pin tip mid-way along a wire does not connect": [
      resistor("R1", 90, 50),
      resistor("R2", 120, 50),
      wire(90, 53.81, 120, 53.81),
      resistor("R3", 100, 57.62),
    ],
  };

  let cli: KicadCli;
  beforeAll(async () => {
    cli = await requireKicadCli();
  });

  for (const [name, items] of Object.entries(cases)) {
    test(name, async () => {
      const dir = await makeTempDir();
      const path = join(dir, "edge.kicad_sch");
      await writeFile(path, schematic(items));
      await writeFile(join(dir, "edge.kicad_pro"), "{}\n");
      const expected = parseKicadNetlist(await exportNetlist(path, { cli }), path);
      const actual = buildNetlist(loadSchematicProject(path));
      const diff = netlistDiff(expected, actual);
      if (diff.length > 0) throw new Error(`netlist differs from kicad-cli:\n  ${diff.join("\n  ")}`);
      expect(actual.nets).toEqual(expected.nets);
    }, 60_000);
  }
});
