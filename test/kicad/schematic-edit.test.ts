import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { exportNetlist, runErc, type ErcReport, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries, type Libraries } from "../../src/kicad/library/libraries.ts";
import { buildNetlist, type Netlist } from "../../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";
import { thrownCopperheadError } from "../support/errors.ts";

afterAll(cleanupTempDirs);

const KICAD_TIMEOUT = 120_000;

let cli: KicadCli;
let baselineErc: ErcReport;

beforeAll(async () => {
  cli = await requireKicadCli();
  const dir = await copyFixture("usb-led");
  baselineErc = await runErc(join(dir, "usb-led.kicad_sch"), { cli });
});

interface Project {
  dir: string;
  root: string;
  regulator: string;
  libraries: Libraries;
  editor: SchematicEditor;
  /** Sheet texts as copied, by path. */
  before: Map<string, string>;
}

async function openCopy(): Promise<Project> {
  const dir = await copyFixture("usb-led");
  const root = join(dir, "usb-led.kicad_sch");
  const regulator = join(dir, "regulator.kicad_sch");
  const libraries = await openLibraries(dir);
  const before = new Map([root, regulator].map((p) => [p, readFileSync(p, "utf8")]));
  return { dir, root, regulator, libraries, editor: SchematicEditor.open(root, libraries), before };
}

/** kicad-cli's netlist of the saved project, checked against the native one. */
async function kicadNetlist(p: Project): Promise<Netlist> {
  const expected = parseKicadNetlist(await exportNetlist(p.root, { cli }), p.root);
  expect(netlistDiff(expected, buildNetlist(loadSchematicProject(p.root)))).toEqual([]);
  expect(netlistDiff(expected, p.editor.netlist())).toEqual([]);
  return expected;
}

function netOf(netlist: Netlist, ref: string, pin: string): string | undefined {
  return netlist.nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
}

function pinsOf(netlist: Netlist, name: string): string[] {
  return (netlist.nets.find((n) => n.name === name)?.nodes ?? []).map((n) => `${n.ref}.${n.pin}`).sort();
}

/** ERC errors and warnings as `type` counts, for comparing against the unedited fixture. */
function ercCounts(report: ErcReport): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sheet of report.sheets)
    for (const v of sheet.violations ?? []) if (!v.excluded) counts[v.type] = (counts[v.type] ?? 0) + 1;
  return counts;
}

/** True when `before`'s lines all appear, in order, in `after`: the edit only inserted lines. */
function onlyInserted(before: string, after: string): boolean {
  const a = before.split("\n");
  const b = after.split("\n");
  let i = 0;
  for (const line of b) if (i < a.length && line === a[i]) i++;
  return i === a.length;
}

function changedLines(before: string, after: string): string[] {
  const a = before.split("\n");
  const b = after.split("\n");
  expect(b.length).toBe(a.length);
  return b.filter((line, i) => line !== a[i]);
}

describe("SchematicEditor on usb-led", () => {
  test(
    "adds a 100 nF capacitor on the Regulator sheet between +3V3 and GND",
    async () => {
      const p = await openCopy();
      const added = p.editor.addComponent({
        libId: "Device:C",
        value: "100n",
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        sheet: "/Regulator/",
      });
      expect(added).toMatchObject({
        ref: "C3",
        sheet: "/Regulator/",
        pins: [
          { number: "1", name: "" },
          { number: "2", name: "" },
        ],
      });
      p.editor.connect("C3", "1", "+3V3");
      p.editor.connect("C3", "2", "GND");
      expect(p.editor.changedFiles()).toEqual([p.regulator]);
      const after = p.editor.print(p.regulator);
      expect(p.editor.print(p.root)).toBe(p.before.get(p.root)!);
      expect(onlyInserted(p.before.get(p.regulator)!, after)).toBe(true);
      // The symbol, two stubs, two power symbols and the +3V3 power symbol's library entry.
      const grown = after.split("\n").length - p.before.get(p.regulator)!.split("\n").length;
      expect(grown).toBeGreaterThan(100);
      expect(grown).toBeLessThan(450);
      expect(after).toContain('(property "Value" "100n"');
      expect(after).toContain('(reference "C3")');

      expect(p.editor.save()).toEqual([p.regulator]);
      const netlist = await kicadNetlist(p);
      expect(netOf(netlist, "C3", "1")).toBe("+3V3");
      expect(netOf(netlist, "C3", "2")).toBe("GND");
      expect(ercCounts(await runErc(p.root, { cli }))).toEqual(ercCounts(baselineErc));
    },
    KICAD_TIMEOUT,
  );

  test("the same edit of the same file writes the same bytes, and an edit of the edited file new uuids", async () => {
    const addCapacitor = (editor: SchematicEditor, value: string) => {
      const { ref } = editor.addComponent({
        libId: "Device:C",
        value,
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        sheet: "/Regulator/",
      });
      editor.connect(ref, "1", "+3V3");
      editor.connect(ref, "2", "GND");
    };
    const uuids = (text: string) =>
      new Set(text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g));
    const first = await openCopy();
    const second = await openCopy();
    addCapacitor(first.editor, "100n");
    addCapacitor(second.editor, "100n");
    const once = first.editor.print(first.regulator);
    expect(second.editor.print(second.regulator)).toBe(once);
    const before = uuids(first.before.get(first.regulator)!);
    const added = [...uuids(once)].filter((u) => !before.has(u));
    // The symbol, its two pins, two wires and two power symbols with a pin each.
    expect(added.length).toBeGreaterThanOrEqual(7);

    first.editor.save();
    const again = SchematicEditor.open(first.root, first.libraries);
    addCapacitor(again, "1u");
    const twice = uuids(again.print(first.regulator));
    expect(added.every((u) => twice.has(u))).toBe(true);
    expect(twice.size - uuids(once).size).toBe(added.length);
  });

  test(
    "setting R3's value changes one line",
    async () => {
      const p = await openCopy();
      p.editor.setField("R3", "Value", "680");
      expect(p.editor.changedFiles()).toEqual([p.root]);
      expect(changedLines(p.before.get(p.root)!, p.editor.print(p.root))).toEqual(['\t\t(property "Value" "680"']);
      p.editor.save();
      await kicadNetlist(p);
    },
    KICAD_TIMEOUT,
  );

  test("a field the symbol lacks is added hidden; setting it back restores the file", async () => {
    const p = await openCopy();
    p.editor.setField("R3", "LCSC", "C21190");
    const text = p.editor.print(p.root);
    expect(text).toContain('(property "LCSC" "C21190"');
    expect(onlyInserted(p.before.get(p.root)!, text)).toBe(true);
    p.editor.setField("R3", "Value", "2k2");
    p.editor.setField("R3", "Value", "1k");
    expect(p.editor.print(p.root)).toBe(text);
    p.editor.setField("R3", "Value", "1k");
    expect(p.editor.changedFiles()).toEqual([p.root]);
  });

  test(
    "renames /LED_A to /LED_DRIVE: same pins, nothing else changes",
    async () => {
      const p = await openCopy();
      const before = p.editor.netlist();
      p.editor.renameNet("/LED_A", "/LED_DRIVE");
      // Measured glyph by glyph as KiCad draws it, the longer name ends short of the GND symbol's text to its right.
      expect(changedLines(p.before.get(p.root)!, p.editor.print(p.root))).toEqual(['\t(label "LED_DRIVE"']);
      p.editor.save();
      const after = await kicadNetlist(p);
      expect(pinsOf(after, "/LED_DRIVE")).toEqual(pinsOf(before, "/LED_A"));
      expect(after.nets.map((n) => n.name).sort()).toEqual(
        before.nets.map((n) => (n.name === "/LED_A" ? "/LED_DRIVE" : n.name)).sort(),
      );
    },
    KICAD_TIMEOUT,
  );

  test("a unique short name means the sheet's net, as in every other tool", async () => {
    const p = await openCopy();
    const before = p.editor.netlist();
    p.editor.renameNet("LED_A", "LED_DRIVE");
    expect(pinsOf(p.editor.netlist(), "/LED_DRIVE")).toEqual(pinsOf(before, "/LED_A"));
    const missing = thrownCopperheadError(() => p.editor.renameNet("LED_B", "X"));
    expect(missing.code).toBe("not_found");
    expect(missing.fix).toContain("/LED_DRIVE");
  });

  test(
    "set attributes: DNP and exclude from BOM on every unit, in the flags eeschema writes",
    async () => {
      const p = await openCopy();
      p.editor.setAttributes("R3", { dnp: true, excludeFromBom: true });
      expect(changedLines(p.before.get(p.root)!, p.editor.print(p.root)).sort()).toEqual([
        "\t\t(dnp yes)",
        "\t\t(in_bom no)",
      ]);
      p.editor.setAttributes("R3", { dnp: false, excludeFromBom: false });
      expect(p.editor.changedFiles()).toEqual([]);
      p.editor.setAttributes("R3", { excludeFromBoard: true });
      p.editor.save();
      const r3 = listComponents(loadSchematicProject(p.root)).find((c) => c.ref === "R3")!;
      expect({ onBoard: r3.onBoard, inBom: r3.inBom, dnp: r3.dnp }).toEqual({
        onBoard: false,
        inBom: true,
        dnp: false,
      });
      // kicad-cli reads it: a part off the board leaves the netlist's components.
      const netlist = await exportNetlist(p.root, { cli });
      expect(netlist).not.toContain('(ref "R3")');
      expect(thrownCopperheadError(() => p.editor.setAttributes("R33", { dnp: true })).code).toBe("not_found");
    },
    KICAD_TIMEOUT,
  );

  test(
    "renames a power net by its power symbols' Value",
    async () => {
      const p = await openCopy();
      const before = p.editor.netlist();
      p.editor.renameNet("VBUS", "VBUS_IN");
      p.editor.save();
      const after = await kicadNetlist(p);
      expect(pinsOf(after, "VBUS_IN")).toEqual(pinsOf(before, "VBUS"));
      expect(pinsOf(after, "VBUS")).toEqual([]);
    },
    KICAD_TIMEOUT,
  );

  test(
    "connect then disconnect round-trips; a no-connect flag marks a free pin",
    async () => {
      const p = await openCopy();
      const added = p.editor.addComponent({
        libId: "Device:R",
        value: "10k",
        footprint: "Resistor_SMD:R_0603_1608Metric",
      });
      expect(added.ref).toBe("R4");
      const placed = p.editor.print(p.root);
      p.editor.connect("R4", "1", "LED_A");
      expect(netOf(p.editor.netlist(), "R4", "1")).toBe("/LED_A");
      // Connecting again to the same net is a no-op; to another net is refused.
      p.editor.connect("R4", "1", "/LED_A");
      expect(thrownCopperheadError(() => p.editor.connect("R4", "1", "GND")).code).toBe("edit_conflict");
      p.editor.save();
      const connected = await kicadNetlist(p);
      expect(pinsOf(connected, "/LED_A")).toEqual(["D1.2", "R3.2", "R4.1"]);

      p.editor.disconnect("R4", "1");
      expect(p.editor.print(p.root)).toBe(placed);
      p.editor.markNoConnect("R4", "2");
      p.editor.connect("R4", "1", "GND");
      p.editor.save();
      const netlist = await kicadNetlist(p);
      expect(netOf(netlist, "R4", "1")).toBe("GND");
      expect(netOf(netlist, "R4", "2")).toBe("unconnected-(R4-Pad2)");
      expect(ercCounts(await runErc(p.root, { cli }))).toEqual(ercCounts(baselineErc));
    },
    KICAD_TIMEOUT,
  );

  test(
    "disconnecting a pin wired into a larger net cuts only its segment",
    async () => {
      const p = await openCopy();
      p.editor.disconnect("D1", "2");
      p.editor.save();
      const netlist = await kicadNetlist(p);
      expect(pinsOf(netlist, "/LED_A")).toEqual(["R3.2"]);
      expect(netOf(netlist, "D1", "2")).toBe("unconnected-(D1-A-Pad2)");
      expect(netOf(netlist, "D1", "1")).toBe("GND");
    },
    KICAD_TIMEOUT,
  );

  test(
    "removing D1 takes its GND symbol and its stub, and leaves the LED_A label on R3",
    async () => {
      const p = await openCopy();
      const before = p.editor.netlist();
      p.editor.removeComponent("D1");
      const text = p.editor.print(p.root);
      expect(text).not.toContain('(reference "D1")');
      expect(text).not.toContain('(reference "#PWR06")');
      expect(text).not.toContain('(symbol "Device:LED"');
      expect(text).toContain('(label "LED_A"');
      expect(p.editor.changedFiles()).toEqual([p.root]);
      p.editor.save();
      const after = await kicadNetlist(p);
      expect(after.nets.flatMap((n) => n.nodes).some((n) => n.ref === "D1")).toBe(false);
      expect(pinsOf(after, "/LED_A")).toEqual(["R3.2"]);
      // Every other pin stays where it was.
      for (const net of before.nets) {
        for (const node of net.nodes.filter((n) => n.ref !== "D1"))
          expect(netOf(after, node.ref, node.pin)).toBe(net.name);
      }
      // The only new finding: LED_A now names a one-pin net (R3.2), which ERC calls dangling.
      const erc = await runErc(p.root, { cli });
      expect(ercCounts(erc)).toEqual({ ...ercCounts(baselineErc), label_dangling: 1 });
      const dangling = erc.sheets.flatMap((s) => s.violations ?? []).find((v) => v.type === "label_dangling")!;
      expect(dangling.items.map((i) => i.description).join(" ")).toContain("LED_A");
    },
    KICAD_TIMEOUT,
  );

  test("unknown refs, pins, lib ids and sheets are typed errors and change nothing", async () => {
    const p = await openCopy();
    const ref = thrownCopperheadError(() => p.editor.setField("R33", "Value", "1k"));
    expect(ref.code).toBe("not_found");
    expect(ref.fix).toContain("R3");

    const pin = thrownCopperheadError(() => p.editor.connect("R3", "7", "GND"));
    expect(pin.code).toBe("not_found");
    expect(pin.fix).toContain("1, 2");
    const named = thrownCopperheadError(() => p.editor.disconnect("U1", "VOUTT"));
    expect(named.fix).toContain("VOUT");

    const lib = thrownCopperheadError(() => p.editor.addComponent({ libId: "Device:CC" }));
    expect(["symbol_not_found", "library_not_found"]).toContain(lib.code);
    expect(lib.fix).toContain("Device:C");
    expect(thrownCopperheadError(() => p.editor.addComponent({ libId: "Devize:R" })).code).toBe("library_not_found");

    const sheet = thrownCopperheadError(() => p.editor.addComponent({ libId: "Device:C", sheet: "/Regulatr/" }));
    expect(sheet.code).toBe("not_found");
    expect(sheet.fix).toContain("/Regulator/");

    expect(thrownCopperheadError(() => p.editor.connect("R3", "1", "/Regulator/VOUT")).code).toBe("edit_conflict");
    // A name KiCad made up for an unnamed net: a label of that text would start another net.
    const unnamed = thrownCopperheadError(() =>
      p.editor.addComponent({ libId: "Device:C", connect: { "1": "unconnected-(U1-NC-Pad4)", "2": "GND" } }),
    );
    expect(unnamed.code).toBe("edit_conflict");
    expect(unnamed.message).toContain("after U1 pin 4");
    expect(thrownCopperheadError(() => p.editor.renameNet("/NOPE", "/X")).code).toBe("not_found");
    expect(thrownCopperheadError(() => p.editor.renameNet("/LED_A", "GND")).code).toBe("edit_conflict");
    expect(thrownCopperheadError(() => p.editor.addComponent({ libId: "Device:C", ref: "C1" })).code).toBe(
      "edit_conflict",
    );

    expect(p.editor.changedFiles()).toEqual([]);
    for (const [path, text] of p.before) expect(p.editor.print(path)).toBe(text);
  });

  test("pins are found by name too", async () => {
    const p = await openCopy();
    const netlist = p.editor.netlist();
    p.editor.disconnect("U1", "NC");
    expect(p.editor.changedFiles()).toEqual([]);
    p.editor.markNoConnect("U1", "NC");
    expect(p.editor.changedFiles()).toEqual([p.regulator]);
    expect(netOf(p.editor.netlist(), "U1", "4")).toBe(netOf(netlist, "U1", "4"));
  });
});

describe("SchematicEditor on a sheet used twice (hierarchy fixture)", () => {
  test(
    "a new part gets one reference per sheet instance, and its connections hold in both",
    async () => {
      const dir = await copyFixture("netlist/hierarchy");
      const root = join(dir, "hierarchy.kicad_sch");
      const editor = SchematicEditor.open(root, await openLibraries(dir));
      const added = editor.addComponent({ libId: "Device:R", value: "1k", sheet: "ChanB", ref: "R20" });
      expect(added.ref).toBe("R20");
      expect(added.sheet).toBe("/ChanB/");
      editor.connect("R20", "1", "GND");
      editor.connect("R20", "2", "/ChanB/MID");
      expect(editor.changedFiles()).toEqual([join(dir, "channel.kicad_sch")]);
      editor.save();
      const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      expect(netlistDiff(netlist, editor.netlist())).toEqual([]);
      // The ChanA copy got the next free reference and the same connections in its instance.
      const original = buildNetlist(
        loadSchematicProject(join(FIXTURES_DIR, "netlist", "hierarchy", "hierarchy.kicad_sch")),
      );
      const joined = pinsOf(netlist, "/ChanA/MID").filter((pin) => !pinsOf(original, "/ChanA/MID").includes(pin));
      expect(joined).toHaveLength(1);
      const twin = joined[0]!.split(".")[0]!;
      expect(twin).not.toBe("R20");
      expect(joined[0]).toBe(`${twin}.2`);
      expect(netOf(netlist, twin, "1")).toBe("GND");
      expect(netOf(netlist, "R20", "2")).toBe("/ChanB/MID");
      expect(netOf(netlist, "R20", "1")).toBe("GND");
    },
    KICAD_TIMEOUT,
  );
});

/** A copy of corpus project `id` opened for editing. */
async function editCopy(id: string): Promise<{ root: string; editor: SchematicEditor }> {
  const copy = await copyCorpusProject(everyProject().find((p) => p.id === id)!);
  const root = copy.schematic!;
  return { root, editor: SchematicEditor.open(root, await openLibraries(dirname(root))) };
}

/** kicad-cli's netlist of `root`, checked against copperhead's. */
async function kicadNets(root: string, editor?: SchematicEditor): Promise<Netlist> {
  const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
  if (editor) expect(netlistDiff(netlist, editor.netlist())).toEqual([]);
  return netlist;
}

describe("connect finds how the part's own sheet names the net, judged by kicad-cli's netlist", () => {
  test(
    "a net a vendor's power symbols name by a hidden power pin gets one more of those symbols, looking like the design's",
    async () => {
      // OLIMEX's VDD_CORE symbol has no (power) flag: its hidden power-input pin names the net.
      const { root, editor } = await editCopy("fixtures/esp32-p4-devkit-revc");
      const added = editor.addComponent({ libId: "Device:R", value: "10k", near: "R41" });
      editor.connect(added.ref, "1", "VDD_CORE");
      editor.save();
      expect(netOf(await kicadNets(root, editor), added.ref, "1")).toBe("VDD_CORE");
      const text = readFileSync(root, "utf8");
      const placed = text.slice(text.lastIndexOf('(symbol (lib_id "OLIMEX_Power:VDD_CORE")'));
      // Its Reference hidden as on the design's others, written once in the file's own (KiCad 7) way.
      expect(placed.slice(0, placed.indexOf('(property "Value"'))).toMatch(
        /\(effects \(font \(size 1\.524 1\.524\)\) hide\)/,
      );
      expect(text.split("\n").filter((line) => line.includes("hide hide"))).toEqual([]);
    },
    KICAD_TIMEOUT,
  );

  test(
    "a local net of another sheet is joined by the name it has on the part's sheet: a bus member's, a port's",
    async () => {
      /** The net kicad-cli puts pin 1 of a resistor on, added `near` a part on `sheet` and connected to `net`. */
      async function joined(id: string, near: string, sheet: string, net: string): Promise<string | undefined> {
        const { root, editor } = await editCopy(id);
        const added = editor.addComponent({ libId: "Device:R", value: "10k", near });
        expect(added.sheet).toBe(sheet);
        editor.connect(added.ref, "1", net);
        editor.save();
        return netOf(await kicadNets(root, editor), added.ref, "1");
      }
      // DIG.D11 is a member of a bus both sheets label; subsheet1 takes the root's out1 through its port "out".
      const dig = "/Connectors/DIG.D11";
      expect(await joined("demos/royalblue54L_feather/RoyalBlue54L-Feather", "U1", "/nRF54L15/", dig)).toBe(dig);
      expect(await joined("demos/simulation/subsheets/mainsheet", "R6", "/subsheet1/", "/out1")).toBe("/out1");

      // A net that does not reach the part's sheet: the refusal says which sheet it is drawn on.
      const glasgow = await editCopy("corpus/glasgow-revc3");
      const g = glasgow.editor.addComponent({ libId: "Device:R", value: "10k", sheet: "/" });
      const refused = thrownCopperheadError(() => glasgow.editor.connect(g.ref, "1", "/IO_Banks/Z9_P"));
      expect(refused.message).toStartWith("/IO_Banks/Z9_P is a local net of sheet /IO_Banks/, and no name on sheet /");
      expect(refused.fix).toStartWith("Put the part on sheet /IO_Banks/");
    },
    KICAD_TIMEOUT,
  );
});

describe("a net nothing names is joined by a wire, judged by kicad-cli's netlist and ERC", () => {
  test(
    "a part added to the net between an LED and its resistor is wired to their joint, with a junction",
    async () => {
      // RoyalBlue's D1 and R6 meet pin to pin; KiCad calls that net Net-(D1-K).
      const { root, editor } = await editCopy("demos/royalblue54L_feather/RoyalBlue54L-Feather");
      const before = await kicadNets(root);
      const ercBefore = ercCounts(await runErc(root, { cli }));
      const joint = pinsOf(before, "Net-(D1-K)");
      const sheet = [...editor.project.files.values()].find((f) => f.path.endsWith("nRF54L15.kicad_sch"))!;
      const junctions = sheet.junctions.length;
      const added = editor.addComponent({
        libId: "Device:R",
        value: "10k",
        near: "R6",
        connect: { "1": "Net-(D1-K)", "2": "GND" },
      });
      editor.save();
      const after = await kicadNets(root, editor);
      const net = netOf(after, added.ref, "1")!;
      expect(pinsOf(after, net)).toEqual([...joint, `${added.ref}.1`].sort());
      expect(sheet.labels.filter((l) => l.text.startsWith("Net-"))).toEqual([]);
      expect(sheet.junctions.length).toBe(junctions + 1);
      // Nothing new but the library this checkout's KiCad has no table entry for.
      const ercAfter = ercCounts(await runErc(root, { cli }));
      for (const [kind, n] of Object.entries(ercAfter))
        if (kind !== "lib_symbol_issues") expect(n, kind).toBeLessThanOrEqual(ercBefore[kind] ?? 0);
    },
    KICAD_TIMEOUT,
  );

  test(
    "a part is met along the unnamed net's wiring where its pins are crowded: a T with a junction",
    async () => {
      // laser_driver's Net-(Q1-E) runs from Q1's emitter down a wire past R3 and C1.
      const { root, editor } = await editCopy("demos/simulation/laser_driver/laser_driver");
      const members = pinsOf(await kicadNets(root), "Net-(Q1-E)");
      const file = editor.project.root.file;
      const junctions = file.junctions.length;
      const added = editor.addComponent({
        libId: "Device:R",
        value: "10k",
        near: "C2",
        connect: { "1": "Net-(Q1-E)" },
      });
      editor.save();
      const after = await kicadNets(root, editor);
      expect(pinsOf(after, netOf(after, added.ref, "1")!)).toEqual([...members, `${added.ref}.1`].sort());
      expect(file.junctions.length).toBe(junctions + 1);
      expect(file.labels.filter((l) => l.text.startsWith("Net-"))).toEqual([]);
    },
    KICAD_TIMEOUT,
  );

  test("with no free way to the net from where the part stands, connect says so and writes nothing", async () => {
    const { editor } = await editCopy("demos/royalblue54L_feather/RoyalBlue54L-Feather");
    const added = editor.addComponent({ libId: "Device:R", value: "10k", sheet: "/nRF54L15/", at: [40.64, 180.34] });
    const changed = editor.changedFiles().map((f) => editor.print(f));
    const refused = thrownCopperheadError(() => editor.connect(added.ref, "1", "Net-(D1-K)"));
    expect(refused.code).toBe("edit_conflict");
    expect(refused.message).toStartWith(`No wire reaches Net-(D1-K) from ${added.ref} pin 1 on sheet /nRF54L15/`);
    expect(refused.fix).toContain("near D1");
    expect(editor.changedFiles().map((f) => editor.print(f))).toEqual(changed);
  });
});

describe("remove_component and disconnect on real designs, judged by kicad-cli's netlist", () => {
  test(
    "a removed part takes only the wiring that served it: a wire carrying a label along it is cut back to the label, and wires that meet at its pin with a label beyond stay",
    async () => {
      const { root, editor } = await editCopy("corpus/rp2040-designguide");
      const before = await kicadNets(root);
      // R1's pin 2 wire runs on to U3's pin 1 through the global label CS sitting along it; Y1's
      // pin 3 is where C2's wire meets the one out to the global label XTAL_IN.
      editor.removeComponent("R1");
      editor.removeComponent("Y1");
      editor.save();
      const after = await kicadNets(root, editor);
      expect(pinsOf(after, "CS")).toEqual(pinsOf(before, "CS").filter((p) => !p.startsWith("R1.")));
      expect(pinsOf(after, "XTAL_IN")).toEqual(["C2.2", "U3.20"]);
      const file = editor.project.root.file;
      const cs = file.labels.find((l) => l.text === "CS" && l.at.x === 1_390_650)!;
      expect(file.wires.some((w) => [w.a, w.b].some((e) => e.x === cs.at.x && e.y === cs.at.y))).toBe(true);
    },
    KICAD_TIMEOUT,
  );

  test(
    "a vendor's power symbol that only served the removed part goes with it, as a flagged power symbol does",
    async () => {
      // R35's pin 1 is wired to a VDD_CORE symbol of its own, one whose hidden power pin names the net.
      const { root, editor } = await editCopy("fixtures/esp32-p4-devkit-revc");
      const before = await kicadNets(root);
      const ercBefore = ercCounts(await runErc(root, { cli }));
      const symbols = () => editor.project.root.file.symbols.filter((s) => s.libId === "OLIMEX_Power:VDD_CORE").length;
      const count = symbols();
      editor.removeComponent("R35");
      editor.save();
      expect(symbols()).toBe(count - 1);
      const after = await kicadNets(root, editor);
      expect(pinsOf(after, "VDD_CORE")).toEqual(pinsOf(before, "VDD_CORE").filter((p) => p !== "R35.1"));
      // Nothing left dangling: ERC finds what it found, less what R35's other pin had.
      const ercAfter = ercCounts(await runErc(root, { cli }));
      for (const [kind, n] of Object.entries(ercAfter)) expect(n, kind).toBeLessThanOrEqual(ercBefore[kind] ?? 0);
    },
    KICAD_TIMEOUT,
  );

  test("a pin whose wiring carries other pins' net is not cut loose, and nothing changes", async () => {
    // Cutting Y1's pin 3 loose would take the wire out to XTAL_IN and leave C2 off that net.
    const { editor } = await editCopy("corpus/rp2040-designguide");
    const refused = thrownCopperheadError(() => editor.disconnect("Y1", "3"));
    expect(refused.code).toBe("edit_conflict");
    expect(refused.message).toStartWith("Disconnecting Y1 pin 3 would change other nets: net XTAL_IN would lose");
    expect(editor.changedFiles()).toEqual([]);
  });
});

describe("rename_net on real designs, judged by kicad-cli's netlist", () => {
  /** Renames `net` to `to` on a copy of `projectId`; returns kicad-cli's netlists before and after, and the editor. */
  async function renamed(projectId: string, net: string, to: string) {
    const { root, editor } = await editCopy(projectId);
    const before = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    const result = editor.renameNet(net, to);
    editor.save();
    const after = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    expect(netlistDiff(after, editor.netlist())).toEqual([]);
    expect(pinsOf(after, result.to)).toEqual(pinsOf(before, net));
    expect(after.nets.map((n) => n.name).sort()).toEqual(
      before.nets.map((n) => (n.name === net ? result.to : n.name)).sort(),
    );
    return { editor, result };
  }

  test(
    "a rename follows the net through sheet pins into each sheet below, where its labels join the hierarchical label by name alone",
    async () => {
      // The root names 3V3 and hands it to four sheets through pins; below, the ESP32 sheet's
      // labels "3V3" meet its hierarchical label "3V3" by name only, with no wire between them.
      const { editor, result } = await renamed("fixtures/bitaxe-ultra", "/3V3", "/3V3_MAIN");
      expect(result).toEqual({ from: "/3V3", to: "/3V3_MAIN", madeRoom: [] });
      // Every label, sheet pin and hierarchical label of the net took the new name, on every sheet.
      for (const file of editor.project.files.values()) {
        expect(file.labels.filter((l) => l.text === "3V3")).toEqual([]);
        expect(file.sheets.flatMap((s) => s.pins).filter((p) => p.name === "3V3")).toEqual([]);
      }
    },
    KICAD_TIMEOUT,
  );

  test(
    "a sheet pin named like the net but on another net is left alone, and so is the sheet below it",
    async () => {
      // Both sheets have a pin "in"; only subsheet2's is wired to the root's net /in.
      const { editor } = await renamed("demos/simulation/subsheets/mainsheet", "/in", "/in_main");
      const files = [...editor.project.files.values()];
      const byName = (name: string) => files.find((f) => basename(f.path) === name)!;
      expect(byName("subsheet1.kicad_sch").labels.map((l) => l.text)).toContain("in");
      expect(byName("subsheet2.kicad_sch").labels.map((l) => l.text)).toContain("in_main");
    },
    KICAD_TIMEOUT,
  );

  test(
    "renaming a global net renames the local labels of its name that join it on the sheets where it is named",
    async () => {
      // Blaustahl joins JP1's pin 1 to GND through a local label "GND" beside its GND symbols.
      const { editor } = await renamed("fixtures/blaustahl-v0", "GND", "GND_MAIN");
      expect(pinsOf(editor.netlist(), "GND_MAIN")).toContain("JP1.1");
      const root = editor.project.root.file;
      expect(root.labels.filter((l) => l.kind === "local" && l.text === "GND")).toEqual([]);
    },
    KICAD_TIMEOUT,
  );

  test("a sheet placed several times is a reused block: its port names stay as they are", async () => {
    // vme-wren's output banks place io_driver.kicad_sch four times; bank0's OUT0 meets one of
    // them at its pin OUT0, while the others' OUT0 pins carry OUT2, OUT4 and OUT6.
    const project = everyProject().find((p) => p.id === "demos/vme-wren/vme-wren")!;
    const editor = SchematicEditor.open(project.schematic!, await openLibraries(dirname(project.schematic!)));
    const before = editor.netlist();
    const done = editor.renameNet("/io_drivers_pp/bank0/OUT0", "OUT0_MAIN");
    expect(done.to).toBe("/io_drivers_pp/bank0/OUT0_MAIN");
    expect(pinsOf(editor.netlist(), done.to)).toEqual(pinsOf(before, "/io_drivers_pp/bank0/OUT0"));
    expect(editor.changedFiles().map((f) => basename(f))).not.toContain("io_driver.kicad_sch");
  });

  test("a net that hidden power pins join by name is not renamed, and the refusal names the pins", async () => {
    // The sonde demo's 74-series parts join GND and VCC through hidden power pins.
    const { editor } = await editCopy("demos/sonde xilinx/sonde xilinx");
    const refused = thrownCopperheadError(() => editor.renameNet("GND", "GND_MAIN"));
    expect(refused.code).toBe("edit_conflict");
    expect(refused.message).toStartWith("GND is also joined by hidden power pins named GND (U1.7, U2.7)");
    expect(editor.changedFiles()).toEqual([]);
  });

  test("a bus member is not renamed alone, and the refusal says it is one", async () => {
    const { editor } = await editCopy("demos/royalblue54L_feather/RoyalBlue54L-Feather");
    const refused = thrownCopperheadError(() => editor.renameNet("/Connectors/ANALOG.A0", "/Connectors/ANALOG.A0_X"));
    expect(refused.code).toBe("edit_conflict");
    expect(refused.message).toStartWith("/Connectors/ANALOG.A0 is a member of bus ANALOG{A[0..5]}");
    expect(refused.message).toContain("would lose U1.E9");
    expect(editor.changedFiles()).toEqual([]);
  });
});

describe("the edited project's views follow the edits", () => {
  test("an edit changes the trees in place: the views show it, nothing is re-read, and only the touched sheets change", async () => {
    const p = await openCopy();
    const project = p.editor.project;
    const docs = new Map([...project.files].map(([path, file]) => [path, file.doc]));
    const added = p.editor.addComponent({
      libId: "Device:C",
      value: "100n",
      sheet: "/Regulator/",
      connect: { "1": "+3V3", "2": "GND" },
    });
    expect(p.editor.changedFiles()).toEqual([p.regulator]);
    p.editor.setField("R3", "Value", "330");
    for (const [path, file] of project.files) expect(file.doc).toBe(docs.get(path)!);
    const parts = listComponents(project);
    expect(parts.find((c) => c.ref === added.ref)).toMatchObject({ value: "100n", sheet: "/Regulator/" });
    expect(parts.find((c) => c.ref === "R3")!.value).toBe("330");
    expect([netOf(p.editor.netlist(), added.ref, "1"), netOf(p.editor.netlist(), added.ref, "2")]).toEqual([
      "+3V3",
      "GND",
    ]);
    expect(p.editor.changedFiles().sort()).toEqual([p.root, p.regulator].sort());

    // A failed edit puts back what it touched, and the views show the trees as they were.
    const symbols = project.files.get(p.regulator)!.symbols.length;
    expect(thrownCopperheadError(() => p.editor.connect(added.ref, "1", "GND")).code).toBe("edit_conflict");
    expect(project.files.get(p.regulator)!.symbols).toHaveLength(symbols);
    expect(netOf(p.editor.netlist(), added.ref, "1")).toBe("+3V3");

    // Saving writes the changed sheets once; after it, nothing is left to write.
    expect(p.editor.save().sort()).toEqual([p.root, p.regulator].sort());
    expect(p.editor.changedFiles()).toEqual([]);
    expect(netlistDiff(buildNetlist(loadSchematicProject(p.root)), p.editor.netlist())).toEqual([]);
  });

  test("in a KiCad 6 project, what the root's instance rows say follows edits of the root", async () => {
    const dir = await copyFixture("netlist/kicad6");
    const root = join(dir, "kicad6.kicad_sch");
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    editor.setField("R1", "Value", "2k2");
    editor.setField("R1", "Reference", "R9");
    const parts = listComponents(editor.project);
    expect(parts.find((c) => c.ref === "R9")!.symbols[0]!.value).toBe("2k2");
    expect(parts.some((c) => c.ref === "R1")).toBe(false);
    editor.save();
    expect(netlistDiff(buildNetlist(loadSchematicProject(root)), editor.netlist())).toEqual([]);
    expect(listComponents(loadSchematicProject(root)).map((c) => [c.ref, c.symbols[0]!.value])).toEqual(
      parts.map((c) => [c.ref, c.symbols[0]!.value]),
    );
  });
});
