/**
 * New symbols look like the design's, judged on copies of real designs by the files written:
 * a part added `like` one whose Value was moved far from its body keeps that field's size and
 * visibility but sits compactly beside its own body; a new power symbol reuses the design's
 * embedded library symbol of its name, takes the next reference in the design's numbering
 * (`#PWR0101…` on a sheet numbered from 100, `#PWR01…` elsewhere) and hides its text where the
 * design's others of its name do; supply pins face up and a negative rail's pin down, power pins
 * before signal pins strapped to a rail.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportNetlist, runErc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { placePoint } from "../../src/kicad/schematic/geometry.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { symbolInstance, unitPins, type PlacedSymbol } from "../../src/kicad/schematic/model/symbols.ts";
import { copyCorpusProject, corpusProjects, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, gap, type MmBox } from "../support/sheet-boxes.ts";

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;

/** The root schematic of a copy of a demo or corpus project. */
async function copiedRoot(id: string): Promise<string> {
  const project = [...demoProjects(), ...corpusProjects()].find((p) => p.id === id);
  if (!project?.schematic) throw new Error(`project ${id} is missing`);
  return (await copyCorpusProject(project)).schematic!;
}

/** Names of a file's embedded library symbols. */
function embeddedNames(file: string): string[] {
  return [...loadSchematicProject(file).files.get(file)!.libSymbols.keys()].sort();
}

/** The placed symbol of `ref` on the root sheet. */
function rootSymbol(root: string, ref: string): PlacedSymbol {
  const project = loadSchematicProject(root);
  const found = project.root.file.symbols.find(
    (s) => symbolInstance(s, project.root.path, project.projectName).reference === ref,
  );
  if (!found) throw new Error(`${ref} is not on the root sheet`);
  return found;
}

function union(boxes: MmBox[]): MmBox {
  return boxes.reduce((a, b) => ({
    x0: Math.min(a.x0, b.x0),
    y0: Math.min(a.y0, b.y0),
    x1: Math.max(a.x1, b.x1),
    y1: Math.max(a.y1, b.y1),
  }));
}

describe("a part added like one with a hand-placed field fits beside its example", () => {
  test(
    "corpus/glasgow-revc3: like a capacitor whose Value sits 17 mm to its left",
    async () => {
      const root = await copiedRoot("corpus/glasgow-revc3");
      const project = loadSchematicProject(root);
      const example = project.root.file.symbols.find((s) => s.libId === "Device:C" && s.placement.rotation === 0)!;
      const ref = symbolInstance(example, project.root.path, project.projectName).reference;
      // Move the example's Value 17 mm to the left and give it a smaller font, as a designer would by hand.
      const value = example.fields.find((f) => f.name === "Value")!;
      const source = readFileSync(root, "utf8");
      const start = value.node.start;
      const end = source.indexOf("\n\t\t)", start);
      const moved = source
        .slice(start, end)
        .replace(/\(at ([\d.-]+) ([\d.-]+)/, (_, x: string, y: string) => `(at ${Number(x) - 17} ${y}`)
        .replace(/\(size 1\.27 1\.27\)/, "(size 1.016 1.016)");
      writeFileSync(root, source.slice(0, start) + moved + source.slice(end));

      const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
      const added = editor.addComponent({ like: ref, value: "22n", near: ref });
      editor.save();

      const items = drawnItems(root);
      const uuidOf = (r: string) => rootSymbol(root, r).uuid;
      const own = (uuid: string) => items.filter((i) => i.uuid === uuid && (i.kind === "symbol" || i.kind === "field"));
      const body = items.find((i) => i.kind === "symbol" && i.uuid === uuidOf(added.ref))!.box;
      const whole = union(own(uuidOf(added.ref)).map((i) => i.box));
      const exampleWhole = union(own(uuidOf(ref)).map((i) => i.box));
      console.log(
        `${ref}'s drawing with fields ${(exampleWhole.x1 - exampleWhole.x0).toFixed(1)} mm wide; ${added.ref}'s ${(whole.x1 - whole.x0).toFixed(1)} mm, ${added.distance} mm from it`,
      );
      // Every visible field beside the body, and the part far narrower than its example with the moved field.
      for (const field of own(uuidOf(added.ref)).filter((i) => i.kind === "field"))
        expect(gap(field.box, body)).toBeLessThanOrEqual(2.54);
      expect(whole.x1 - whole.x0).toBeLessThan(10);
      expect(added.distance!).toBeLessThanOrEqual(20);
      // The field keeps the example's look: its smaller font, shown.
      const newValue = rootSymbol(root, added.ref).fields.find((f) => f.name === "Value")!;
      expect(newValue.value).toBe("22n");
      const text = readFileSync(root, "utf8").slice(
        newValue.node.start,
        readFileSync(root, "utf8").indexOf("\n\t\t)", newValue.node.start),
      );
      expect(text).toContain("(size 1.016 1.016)");
      expect(text).not.toContain("hide");
    },
    TIMEOUT,
  );
});

describe("new power symbols follow the design's", () => {
  test(
    "demos/complex_hierarchy: GND reuses the embedded symbol, hides its text and numbers #PWR01xx",
    async () => {
      const cli = await requireKicadCli();
      const root = await copiedRoot("demos/complex_hierarchy/complex_hierarchy");
      const before = embeddedNames(root);
      const oldUuids = new Set(loadSchematicProject(root).root.file.symbols.map((s) => s.uuid));
      const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
      const added = editor.addComponent({ libId: "Device:R", value: "10k", sheet: "/", connect: { "2": "GND" } });
      editor.save();

      expect(embeddedNames(root)).toEqual([...before, "Device:R"].sort());
      const project = loadSchematicProject(root);
      const fresh = project.root.file.symbols.filter((s) => s.lib?.power && !oldUuids.has(s.uuid));
      expect(fresh.map((s) => s.libId)).toEqual(["complex_hierarchy:GND"]);
      const ref = symbolInstance(fresh[0]!, project.root.path, project.projectName).reference;
      console.log(`${added.ref} pin 2 to GND by ${ref}`);
      expect(ref).toMatch(/^#PWR01\d\d$/);
      const drawn = drawnItems(root).filter((i) => i.uuid === fresh[0]!.uuid && i.kind === "field");
      expect(drawn).toEqual([]);

      const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      expect(netlist.nets.find((n) => n.nodes.some((node) => node.ref === added.ref && node.pin === "2"))?.name).toBe(
        "GND",
      );
    },
    TIMEOUT,
  );

  test(
    "demos/simulation/generic_models: an op amp on ±5 V stands with V+ up and V- down",
    async () => {
      const cli = await requireKicadCli();
      const root = await copiedRoot("demos/simulation/generic_models/generic_opamp_bip");
      const before = embeddedNames(root);
      const mismatchedBefore = await mismatchedSymbols(root, cli);
      const oldUuids = new Set(loadSchematicProject(root).root.file.symbols.map((s) => s.uuid));
      const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
      const added = editor.addComponent({
        libId: "Simulation_SPICE:OPAMP",
        near: "U1",
        connect: { "3": "+5V", "4": "-5V" },
      });
      editor.save();

      // The design's own +5V and -5V are reused: nothing but the op amp's symbol is embedded.
      expect(embeddedNames(root)).toEqual(before);
      const opamp = rootSymbol(root, added.ref);
      const tip = (n: string) => placePoint(unitPins(opamp, 1).find((p) => p.number === n)!.at, opamp.placement);
      expect(tip("3").y).toBeLessThan(opamp.placement.at.y);
      expect(tip("4").y).toBeGreaterThan(opamp.placement.at.y);

      const project = loadSchematicProject(root);
      const powers = project.root.file.symbols.filter((s) => s.lib?.power && !oldUuids.has(s.uuid));
      const refs = powers.map((s) => symbolInstance(s, project.root.path, project.projectName).reference);
      console.log(`${added.ref} at rotation ${added.rotation}, its rails by ${refs.join(", ")}`);
      for (const ref of refs) expect(ref).toMatch(/^#PWR0\d+$/);
      // The -5V symbol hangs below the pin it names.
      const items = drawnItems(root);
      const minus = powers.find((s) => s.libId === "power:-5V")!;
      const minusBox = items.find((i) => i.kind === "symbol" && i.uuid === minus.uuid)!.box;
      expect(minusBox.y0).toBeGreaterThanOrEqual(tip("4").y / 10_000 - 0.01);

      const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      const netOf = (pin: string) =>
        netlist.nets.find((n) => n.nodes.some((node) => node.ref === added.ref && node.pin === pin))?.name;
      expect([netOf("3"), netOf("4")]).toEqual(["+5V", "-5V"]);
      // The design's +5V and -5V embed an older library's body (pin names shown, no hidden pin
      // numbers), so ERC finds each new rail symbol differing from the library as the design's
      // others of its name do, and no other symbol differing.
      const mismatchedAfter = await mismatchedSymbols(root, cli);
      expect(Object.keys(mismatchedAfter).sort()).toEqual(Object.keys(mismatchedBefore).sort());
      for (const rail of ["+5V", "-5V"]) {
        const finding = `Symbol '${rail}' doesn't match copy in library 'power'`;
        const placed = powers.filter((s) => s.libId === `power:${rail}`).length;
        expect(placed).toBeGreaterThan(0);
        expect(mismatchedAfter[finding]).toBe(mismatchedBefore[finding]! + placed);
      }
    },
    TIMEOUT,
  );
});

describe("a part is turned by its power pins, not by pins strapped to a rail", () => {
  test(
    "corpus/glasgow-revc3: an EEPROM with its address pins tied to +3V3 stands as drawn, VCC up and GND down",
    async () => {
      const root = await copiedRoot("corpus/glasgow-revc3");
      const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
      const sheet = editor.addSheet({
        name: "EEPROM",
        file: "eeprom.kicad_sch",
        nets: ["+3V3", "GND", "/SDA", "/SCL"],
      });
      const added = editor.addComponent({
        libId: "Memory_EEPROM:24LC02",
        sheet: sheet.sheet,
        connect: { A0: "+3V3", A1: "+3V3", A2: "+3V3", VCC: "+3V3", GND: "GND", WP: "GND", SDA: "/SDA", SCL: "/SCL" },
      });
      editor.save();
      const project = loadSchematicProject(root);
      const file = [...project.files.values()].find((f) => f.path.endsWith("eeprom.kicad_sch"))!;
      const eeprom = file.symbols.find((s) => s.libId === "Memory_EEPROM:24LC02")!;
      const tip = (n: string) => placePoint(unitPins(eeprom, 1).find((p) => p.number === n)!.at, eeprom.placement);
      expect(added.rotation).toBe(0);
      expect(tip("8").y).toBeLessThan(eeprom.placement.at.y);
      expect(tip("4").y).toBeGreaterThan(eeprom.placement.at.y);
      // The address pins share one wire to one +3V3 symbol: every pin is on its net, as KiCad reads it.
      const netlist = parseKicadNetlist(await exportNetlist(root, { cli: await requireKicadCli() }), root);
      const netOf = (pin: string) =>
        netlist.nets.find((n) => n.nodes.some((node) => node.ref === added.ref && node.pin === pin))?.name;
      expect(["1", "2", "3", "8", "4", "7", "5", "6"].map(netOf)).toEqual([
        "+3V3",
        "+3V3",
        "+3V3",
        "+3V3",
        "GND",
        "GND",
        "/SDA",
        "/SCL",
      ]);
    },
    TIMEOUT,
  );
});

/** How many of the sheet's symbols ERC finds differing from their library, by symbol. */
async function mismatchedSymbols(root: string, cli: KicadCli): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const v of (await runErc(root, { cli })).sheets.flatMap((s) => s.violations)) {
    if (v.type === "lib_symbol_mismatch") counts[v.description] = (counts[v.description] ?? 0) + 1;
  }
  return counts;
}
