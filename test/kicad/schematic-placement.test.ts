/**
 * "Add a 100 nF capacitor next to U1" on real designs, judged by the file written: the new
 * symbol is on U1's sheet within 15 mm of it, nothing new overlaps anything that was there
 * (boxes computed from the saved tree by test/support/sheet-boxes.ts, not by the engine), power
 * symbols stand upright with the supply pin up, and kicad-cli puts the pins on the right nets.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exportNetlist, runErc } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { placePoint } from "../../src/kicad/schematic/geometry.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { copyCorpusProject, corpusProjects, demoProjects, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, gap, overlaps, wiredTogether, type DrawnItem } from "../support/sheet-boxes.ts";

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;
/** How close "next to U1" must be: the gap between the two drawings, mm. */
const NEAR_MM = 15;

interface Case {
  id: string;
  root: () => Promise<string>;
}

async function corpusRoot(id: string): Promise<string> {
  const project = corpusProjects().find((p) => p.id === id);
  if (!project?.schematic) throw new Error(`corpus project ${id} is missing`);
  return (await copyCorpusProject(project)).schematic!;
}

const CASES: Case[] = [
  { id: "fixtures/usb-led", root: async () => join(await copyFixture("usb-led"), "usb-led.kicad_sch") },
  { id: "corpus/glasgow-revc3", root: () => corpusRoot("corpus/glasgow-revc3") },
  { id: "corpus/bms-c1", root: () => corpusRoot("corpus/bms-c1") },
];

/** New items may touch old ones only where a wire or junction joins the net on purpose. */
function overlapping(added: DrawnItem[], old: DrawnItem[]): string[] {
  const problems: string[] = [];
  for (const item of added) {
    if (item.kind === "junction") continue;
    const box = item.kind === "wire" ? shrink(item.box) : item.box;
    for (const other of old)
      if (overlaps(box, other.box))
        problems.push(
          `${item.kind} ${JSON.stringify(item.box)} overlaps ${other.kind}${other.symbol ? ` ${other.symbol.reference}` : ""} ${JSON.stringify(other.box)}`,
        );
  }
  return problems;
}

function shrink(b: { x0: number; y0: number; x1: number; y1: number }) {
  const e = 0.01;
  return b.x0 === b.x1 ? { ...b, y0: b.y0 + e, y1: b.y1 - e } : { ...b, x0: b.x0 + e, x1: b.x1 - e };
}

describe("add a 100 nF capacitor next to U1", () => {
  for (const c of CASES) {
    test(
      c.id,
      async () => {
        const cli = await requireKicadCli();
        const root = await c.root();
        const before = listComponents(loadSchematicProject(root));
        const u1 = before.find((x) => x.ref === "U1")!;
        const oldItems = new Set(drawnItems(u1.file).map((i) => i.uuid));

        const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
        const added = editor.addComponent({
          libId: "Device:C",
          value: "100n",
          footprint: "Capacitor_SMD:C_0603_1608Metric",
          near: "U1",
          connect: { "1": "+3V3", "2": "GND" },
        });
        editor.save();

        const project = loadSchematicProject(root);
        const cap = listComponents(project).find((x) => x.ref === added.ref)!;
        expect(cap.file).toBe(u1.file);
        expect(cap.sheet).toBe(u1.sheet);
        const items = drawnItems(u1.file, u1.sheetPath);
        const fresh = items.filter((i) => !oldItems.has(i.uuid));
        const old = items.filter((i) => oldItems.has(i.uuid));
        const capBox = fresh.find((i) => i.symbol?.reference === added.ref)!.box;
        const near = Math.min(...old.filter((i) => i.symbol?.reference === "U1").map((i) => gap(capBox, i.box)));
        console.log(
          `${c.id}: ${added.ref} at ${added.at.join(", ")} rot ${added.rotation}, ${near.toFixed(2)} mm from U1; ${fresh.length} new items`,
        );
        expect(near).toBeLessThanOrEqual(NEAR_MM);
        expect(overlapping(fresh, old)).toEqual([]);

        // Power symbols upright, and the supply pin above the ground pin.
        for (const power of fresh.filter((i) => i.symbol?.power))
          expect({ rotation: power.symbol!.rotation, mirror: power.symbol!.mirror }).toEqual({
            rotation: 0,
            mirror: undefined,
          });
        const symbol = cap.symbols[0]!;
        const tip = (n: string) => placePoint(unitPins(symbol, 1).find((p) => p.number === n)!.at, symbol.placement);
        expect(tip("1").y).toBeLessThan(tip("2").y);

        const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
        const netOf = (pin: string) =>
          netlist.nets.find((n) => n.nodes.some((node) => node.ref === added.ref && node.pin === pin))?.name;
        expect([netOf("1"), netOf("2")]).toEqual(["+3V3", "GND"]);
      },
      TIMEOUT,
    );
  }
});

/**
 * An LED and its series resistor added one after the other, the resistor `near` the LED: it
 * lands beside the LED and its pin meets the LED's net with a short wire (one label, not a
 * pair), with nothing new over anything that was drawn; kicad-cli puts both pins on the net.
 */
describe("parts added together sit together", () => {
  const PAIRS: (Case & { supply: string })[] = [
    {
      id: "demos/pic_programmer",
      supply: "VCC",
      root: async () =>
        join(
          (await copyCorpusProject(demoProjects().find((p) => p.id === "demos/pic_programmer/pic_programmer")!)).root,
          "pic_programmer.kicad_sch",
        ),
    },
    { id: "corpus/glasgow-revc3", supply: "+3V3", root: () => corpusRoot("corpus/glasgow-revc3") },
  ];
  for (const c of PAIRS) {
    test(
      `${c.id}: an LED and its resistor, joined by a wire within 10 mm`,
      async () => {
        const cli = await requireKicadCli();
        const root = await c.root();
        const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
        const led = editor.addComponent({ libId: "Device:LED", value: "LED", connect: { A: c.supply, K: "LED_K" } });
        const resistor = editor.addComponent({
          libId: "Device:R",
          value: "1k",
          near: led.ref,
          connect: { "1": "LED_K", "2": "GND" },
        });
        editor.save();

        const parts = listComponents(loadSchematicProject(root));
        const [d, r] = [led.ref, resistor.ref].map((ref) => parts.find((x) => x.ref === ref)!);
        expect(r!.file).toBe(d!.file);
        const items = drawnItems(d!.file, d!.sheetPath);
        const box = (uuid: string) => items.find((i) => i.kind === "symbol" && i.uuid === uuid)!.box;
        const apart = gap(box(d!.symbols[0]!.uuid), box(r!.symbols[0]!.uuid));
        const tip = (part: typeof d, pin: string): [number, number] => {
          const symbol = part!.symbols[0]!;
          const at = placePoint(
            unitPins(symbol, 1).find((p) => p.number === pin || p.name === pin)!.at,
            symbol.placement,
          );
          return [at.x / 10_000, at.y / 10_000];
        };
        console.log(`${c.id}: ${led.ref} and ${resistor.ref} ${apart.toFixed(2)} mm apart`);
        expect(apart).toBeLessThanOrEqual(10);
        expect(wiredTogether(d!.file, tip(d, "K"), tip(r, "1"))).toBe(true);
        expect(readFileSync(d!.file, "utf8").match(/\(label "LED_K"/g)?.length).toBe(1);

        const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
        const netOf = (ref: string, pin: string) =>
          netlist.nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
        expect(netOf(resistor.ref, "1")).toBe(netOf(led.ref, "1"));
        expect(netOf(resistor.ref, "1")).toMatch(/LED_K$/);
      },
      TIMEOUT,
    );
  }
});

/**
 * `near` a net means where that net meets the part's other nets, at their source: a bulk
 * capacitor "near GND" between +5V and GND on uext-esp32-c3 goes by J1, the USB connector that
 * brings +5V in, not by whichever part has the most GND pins.
 */
describe("near a net", () => {
  test("corpus/uext-esp32-c3: a +5V capacitor near GND goes by the connector that brings +5V in", async () => {
    const root = await corpusRoot("corpus/uext-esp32-c3");
    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    const added = editor.addComponent({
      libId: "Device:C",
      value: "10u",
      near: "GND",
      connect: { "1": "+5V", "2": "GND" },
    });
    editor.save();
    expect(added.near).toBe("J1");
    expect(added.distance).toBeLessThanOrEqual(NEAR_MM);
    const parts = listComponents(loadSchematicProject(root));
    const j1 = parts.find((x) => x.ref === "J1")!;
    expect(j1.libId).toMatch(/USB|Conn/i);
  });
});

/**
 * A new wire joined to the middle of an existing one breaks that wire in two where they meet,
 * as eeschema does. Left whole, kicad-cli breaks it on load and, for a wire drawn right to left,
 * drops the half leading to U5 pin 14 on pic_programmer, taking VDD off VCC_PIC.
 */
describe("joining the middle of a wire", () => {
  test(
    "demos/pic_programmer: a capacitor joined to VCC_PIC next to U5 leaves U5 pin 14 on it",
    async () => {
      const cli = await requireKicadCli();
      const project = demoProjects().find((p) => p.id === "demos/pic_programmer/pic_programmer")!;
      const root = join((await copyCorpusProject(project)).root, "pic_programmer.kicad_sch");
      const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
      const added = editor.addComponent({
        libId: "Device:C",
        value: "100n",
        near: "U5",
        connect: { "1": "/pic_sockets/VCC_PIC", "2": "GND" },
      });
      editor.save();

      const sheet = readFileSync(join(root, "..", "pic_sockets.kicad_sch"), "utf8");
      expect(sheet).toContain("(xy 139.7 116.84) (xy 120.65 116.84)");
      expect(sheet).toContain("(xy 120.65 116.84) (xy 114.3 116.84)");
      const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      const netOf = (ref: string, pin: string) =>
        netlist.nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
      expect(netOf("U5", "14")).toBe("/pic_sockets/VCC_PIC");
      expect(netOf(added.ref, "1")).toBe("/pic_sockets/VCC_PIC");
    },
    TIMEOUT,
  );
});

/**
 * KiCad's ERC flags every pin and wire end off the 50 mil connection grid. A sheet drawn off it
 * (blaustahl's on a 10 mil grid and off any, the RP2040 design guide's on 25 mil) keeps those
 * warnings of its own, and gets none more from what is added: new pins sit on the grid, and no
 * new wire ends at an old point off it.
 */
describe("a sheet drawn off the connection grid", () => {
  const OFF_GRID = [
    { id: "fixtures/blaustahl-v0", supply: "/PWR3V3" },
    { id: "corpus/rp2040-designguide", supply: "+3V3" },
  ];
  for (const c of OFF_GRID) {
    test(
      `${c.id}: a capacitor, an LED and its resistor add no endpoint off the grid`,
      async () => {
        const cli = await requireKicadCli();
        const project = await copyCorpusProject(everyProject().find((p) => p.id === c.id)!);
        const root = project.schematic!;
        const offGrid = async () =>
          (await runErc(root, { cli, timeoutMs: TIMEOUT })).sheets
            .flatMap((s) => s.violations)
            .filter((v) => v.type === "endpoint_off_grid")
            .map((v) => v.items.map((i) => `${i.description} at ${i.pos?.x}, ${i.pos?.y}`).join(" | "));
        const before = await offGrid();
        expect(before.length, `${c.id} is drawn off the grid`).toBeGreaterThan(0);

        const editor = SchematicEditor.open(root, await openLibraries(project.root));
        const added = [
          editor.addComponent({ libId: "Device:C", value: "100n", near: "U1", connect: { "1": c.supply, "2": "GND" } }),
          editor.addComponent({ libId: "Device:LED", value: "LED", near: "U1", connect: { A: "PWR_LED", K: "GND" } }),
        ];
        added.push(
          editor.addComponent({
            libId: "Device:R",
            value: "1k",
            near: added[1]!.ref,
            connect: { "1": c.supply, "2": "PWR_LED" },
          }),
        );
        editor.save();

        const parts = listComponents(loadSchematicProject(root));
        for (const { ref } of added) {
          const symbol = parts.find((x) => x.ref === ref)!.symbols[0]!;
          for (const pin of unitPins(symbol, 1)) {
            const at = placePoint(pin.at, symbol.placement);
            expect({ ref, pin: pin.number, onGrid: at.x % 12_700 === 0 && at.y % 12_700 === 0 }).toEqual({
              ref,
              pin: pin.number,
              onGrid: true,
            });
          }
        }
        expect((await offGrid()).filter((v) => !before.includes(v))).toEqual([]);
      },
      TIMEOUT,
    );
  }
});
