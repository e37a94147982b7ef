/**
 * add_sheet on uext-esp32-c3 (KiCad 6, one full A4 sheet) and the pic_programmer demo (KiCad
 * 9): a sheet carrying a supply, GND and a signal, with parts placed on it and connected to
 * those nets by name. kicad-cli is the judge: its netlist puts the parts' pins on the parent's
 * nets, its ERC finds no new kind of violation, it plots the new file on its own, and the board
 * sync gives the new parts footprints under the new sheet. The new file keeps the design's
 * format; refusals and a failed edit leave no file and no sheet behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RunContext } from "../../src/agent/context.ts";
import { exportNetlist, exportSvg, runErc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { copyCorpusProject, corpusProjects, demoProjects, type CorpusProject } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { withTools } from "../support/tool-context.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

/** A copy of the project in a git repo of its own (a run's journal needs one). */
async function copyOf(id: string): Promise<CorpusProject> {
  const project = [...demoProjects(), ...corpusProjects()].find((p) => p.id === id)!;
  const copy = await copyCorpusProject(project);
  await git(copy.root, "init", "--quiet", "--initial-branch=main");
  await commitAll(copy.root, "design");
  return copy;
}

/** The kinds of ERC violation (type and severity) KiCad reports on a design. */
async function ercKinds(schematic: string): Promise<Set<string>> {
  const report = await runErc(schematic, { cli });
  return new Set(report.sheets.flatMap((s) => s.violations.map((v) => `${v.type} ${v.severity}`)));
}

/** The net KiCad's netlist puts a pin on, and how many pins that net has. */
function netOf(netlist: ReturnType<typeof parseKicadNetlist>, ref: string, pin: string) {
  const net = netlist.nets.find((n) => n.nodes.some((x) => x.ref === ref && x.pin === pin));
  return { name: net?.name, pins: net?.nodes.length ?? 0 };
}

interface Case {
  id: string;
  version: number;
  supply: string;
  signal: string;
  /** How the parts are made: a lib id, or like an existing part (the demo's libraries have no Device). */
  resistor: Record<string, unknown>;
  capacitor: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    id: "corpus/uext-esp32-c3",
    version: 20211123,
    supply: "+3V3",
    signal: "/UEXT_TX",
    resistor: { lib_id: "Device:R" },
    capacitor: { lib_id: "Device:C" },
  },
  {
    id: "demos/pic_programmer/pic_programmer",
    version: 20250114,
    supply: "VCC",
    signal: "/VPP_ON",
    resistor: { like: "R1" },
    capacitor: { like: "C1" },
  },
];

describe("add_sheet", () => {
  for (const c of CASES) {
    test(`${c.id}: parts on a new sheet land on the parent's ${c.supply}, GND and ${c.signal}`, async () => {
      const project = await copyOf(c.id);
      const root = project.schematic!;
      const before = await ercKinds(root);

      const { added, r, cap } = await withTools(project.root, async ({ call }) => {
        const added = (await call("add_sheet", {
          name: "EEPROM",
          file: "eeprom.kicad_sch",
          nets: [c.signal, "GND", c.supply],
        })) as { sheet: string; file: string; pins: { net: string; pin: string }[] };
        const r = (await call("add_component", {
          ...c.resistor,
          sheet: added.sheet,
          connect: { "1": c.supply, "2": c.signal },
        })) as { ref: string };
        const cap = (await call("add_component", {
          ...c.capacitor,
          sheet: added.sheet,
          near: r.ref,
          connect: { "1": c.signal, "2": "GND" },
        })) as { ref: string };
        return { added, r, cap };
      });
      expect(added.sheet).toBe("/EEPROM/");
      // Supplies at the top, grounds at the bottom.
      expect(added.pins.map((p) => p.net)).toEqual([c.supply, c.signal, "GND"]);

      const file = join(dirname(root), "eeprom.kicad_sch");
      const text = readFileSync(file, "utf8");
      expect(Number(/\(version (\d+)\)/.exec(text)?.[1])).toBe(c.version);
      expect(Number(/\(version (\d+)\)/.exec(readFileSync(root, "utf8"))?.[1])).toBe(c.version);
      expect(text).toContain('(hierarchical_label "GND"');

      const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      expect(netOf(netlist, r.ref, "1").name).toBe(c.supply);
      const signal = netOf(netlist, r.ref, "2");
      expect(signal.name).toBe(c.signal);
      // The parent's own pins of the signal are there too: the sheet joined the net, not a namesake.
      expect(signal.pins).toBeGreaterThan(2);
      expect(netOf(netlist, cap.ref, "1").name).toBe(c.signal);
      expect(netOf(netlist, cap.ref, "2").name).toBe("GND");

      const after = await ercKinds(root);
      expect([...after].filter((k) => !before.has(k))).toEqual([]);

      // The new file opens in KiCad on its own.
      const plotted = await exportSvg(file, await makeTempDir(), { cli });
      expect(plotted).toHaveLength(1);
    }, 240_000);
  }

  test("pic_programmer: a net the design lacks becomes a new net of the parent, and the board sync puts the sheet's parts under it", async () => {
    const project = await copyOf("demos/pic_programmer/pic_programmer");
    const root = project.schematic!;
    const before = await ercKinds(root);
    const { sheetUuid, ref } = await withTools(project.root, async ({ call }) => {
      const added = (await call("add_sheet", {
        name: "Protect",
        file: "protect.kicad_sch",
        nets: ["WP_EN", "GND"],
      })) as {
        note?: string;
      };
      expect(added.note).toContain("WP_EN is a new net of /");
      const part = (await call("add_component", {
        like: "R1",
        sheet: "/Protect/",
        connect: { "1": "WP_EN", "2": "GND" },
      })) as { ref: string };
      // A part on the parent joins the new net too, as the note asks.
      await call("add_component", { like: "R1", sheet: "/", connect: { "1": "WP_EN", "2": "GND" } });
      await call("sync_board", {});
      const sheet = loadSchematicProject(root).instances.find((i) => i.humanPath === "/Protect/")!;
      return { sheetUuid: sheet.sheet!.uuid, ref: part.ref };
    });
    const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    expect(netOf(netlist, ref, "1").name).toBe("/WP_EN");
    expect(netOf(netlist, ref, "2").name).toBe("GND");
    expect([...(await ercKinds(root))].filter((k) => !before.has(k))).toEqual([]);
    const footprint = Board.load(project.board!)
      .footprints()
      .find((f) => f.ref === ref)!;
    expect(footprint.path).toContain(`/${sheetUuid}/`);
    expect(footprint.sheetname).toBe("/Protect/");
  }, 240_000);

  test("uext-esp32-c3: a sheet inside the new sheet carries the parent's net on down, KiCad 6 listing both pages in the root", async () => {
    const project = await copyOf("corpus/uext-esp32-c3");
    const root = project.schematic!;
    const before = await ercKinds(root);
    const ref = await withTools(project.root, async ({ call }) => {
      await call("add_sheet", { name: "EEPROM", file: "eeprom.kicad_sch", nets: ["+3V3", "GND", "/UEXT_TX"] });
      await call("add_sheet", {
        name: "Inner",
        file: "inner.kicad_sch",
        parent: "/EEPROM/",
        nets: ["/UEXT_TX", "GND"],
      });
      const part = (await call("add_component", {
        lib_id: "Device:R",
        sheet: "/EEPROM/Inner/",
        connect: { "1": "/UEXT_TX", "2": "GND" },
      })) as { ref: string };
      return part.ref;
    });
    const project2 = loadSchematicProject(root);
    const outer = project2.instances.find((i) => i.humanPath === "/EEPROM/")!;
    const inner = project2.instances.find((i) => i.humanPath === "/EEPROM/Inner/")!;
    expect([outer.page, inner.page]).toEqual(["2", "3"]);
    const rows = readFileSync(root, "utf8");
    expect(rows).toContain(`(path "/${outer.sheet!.uuid}/" (page "2"))`);
    expect(rows).toContain(`(path "/${outer.sheet!.uuid}/${inner.sheet!.uuid}/" (page "3"))`);
    const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    const signal = netOf(netlist, ref, "1");
    expect(signal).toMatchObject({ name: "/UEXT_TX" });
    expect(signal.pins).toBeGreaterThan(1);
    expect([...(await ercKinds(root))].filter((k) => !before.has(k))).toEqual([]);
  }, 240_000);

  test("refusals name what is wrong and leave the design as it was", async () => {
    const project = await copyOf("demos/pic_programmer/pic_programmer");
    const root = project.schematic!;
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    const refused = (args: Partial<Parameters<SchematicEditor["addSheet"]>[0]>) =>
      thrownCopperheadError(() =>
        editor.attempt(() => editor.addSheet({ name: "EEPROM", file: "eeprom.kicad_sch", nets: ["VCC"], ...args })),
      );
    expect(refused({ file: "pic_sockets.kicad_sch" })).toMatchObject({ code: "edit_conflict" });
    expect(refused({ file: "pic_sockets.kicad_sch" }).message).toContain("already exists");
    expect(refused({ name: "pic_sockets" }).message).toContain("already has a sheet named pic_sockets");
    expect(refused({ name: "a/b" })).toMatchObject({ code: "usage" });
    expect(refused({ file: "../eeprom.kicad_sch" })).toMatchObject({ code: "usage" });
    expect(refused({ file: "sub/eeprom.kicad_sch" })).toMatchObject({ code: "usage" });
    expect(refused({ file: "eeprom.sch" })).toMatchObject({ code: "usage" });
    expect(refused({ nets: [] })).toMatchObject({ code: "usage" });
    expect(refused({ at: [10, 10] }).message).toContain("does not fit at 10, 10");
    expect(editor.changedFiles()).toEqual([]);
    expect(editor.project.instances.map((i) => i.humanPath)).toEqual(["/", "/pic_sockets/"]);

    // A sheet whose file two sheet symbols use would show the new sheet in both.
    const shared = await copyOf("demos/complex_hierarchy/complex_hierarchy");
    const twice = SchematicEditor.open(shared.schematic!, await openLibraries(dirname(shared.schematic!)));
    const err = thrownCopperheadError(() =>
      twice.addSheet({ name: "Extra", file: "extra.kicad_sch", parent: "/ampli_ht_vertical/", nets: ["GND"] }),
    );
    expect(err.code).toBe("usage");
    expect(err.message).toContain("used by several sheet symbols");
  }, 120_000);

  test("at puts the symbol's corner exactly where asked, when it and its pins' wiring are clear there", async () => {
    const project = await copyOf("demos/pic_programmer/pic_programmer");
    const root = project.schematic!;
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    const args = { name: "EEPROM", file: "eeprom.kicad_sch", nets: ["VCC", "GND"] };
    const spot = editor.preview((e) => e.addSheet(args)).at;
    expect(editor.changedFiles()).toEqual([]);
    const moved: [number, number] = [Math.round((spot[0] + 25.4) * 10_000) / 10_000, spot[1]];
    const added = editor.attempt(() => editor.addSheet({ ...args, at: moved }));
    expect(added.at).toEqual(moved);
    editor.save();
    const sheet = loadSchematicProject(root).instances.find((i) => i.humanPath === "/EEPROM/")!.sheet!;
    expect([sheet.at.x / 10_000, sheet.at.y / 10_000]).toEqual(moved);
  }, 120_000);

  test("rvpc-revb: a sheet whose symbol and pins' wiring find no room on the full parent is refused, naming the size", async () => {
    const project = await copyOf("corpus/rvpc-revb");
    const root = project.schematic!;
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    const err = thrownCopperheadError(() =>
      editor.attempt(() =>
        editor.addSheet({ name: "EEPROM", file: "eeprom.kicad_sch", nets: ["+5V", "GND", "/PA2\\KBD_DAT"] }),
      ),
    );
    expect(err.code).toBe("edit_conflict");
    expect(err.message).toMatch(/^No free room on sheet \/ for the symbol of sheet EEPROM \([\d.]+ × [\d.]+ mm/);
    expect(editor.changedFiles()).toEqual([]);
    expect(editor.save()).toEqual([]);
    expect(existsSync(join(dirname(root), "eeprom.kicad_sch"))).toBe(false);
  }, 120_000);

  test("a failed edit takes the new sheet out of the project, and a rolled back run removes its file", async () => {
    const project = await copyOf("demos/pic_programmer/pic_programmer");
    const root = project.schematic!;
    const file = join(dirname(root), "eeprom.kicad_sch");
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    const parent = editor.print(root);
    expect(() =>
      editor.attempt(() => {
        editor.addSheet({ name: "EEPROM", file: "eeprom.kicad_sch", nets: ["VCC", "GND"] });
        expect(editor.project.instances.map((i) => i.humanPath)).toContain("/EEPROM/");
        throw new Error("a later check failed");
      }),
    ).toThrow("a later check failed");
    expect(editor.project.instances.map((i) => i.humanPath)).toEqual(["/", "/pic_sockets/"]);
    expect(editor.project.files.has(file)).toBe(false);
    expect(editor.print(root)).toBe(parent);
    expect(editor.save()).toEqual([]);
    expect(existsSync(file)).toBe(false);

    const bytes = readFileSync(root);
    await withTools(project.root, async ({ ctx, call }) => {
      await call("add_sheet", { name: "EEPROM", file: "eeprom.kicad_sch", nets: ["VCC", "GND"] });
      expect(existsSync(file)).toBe(true);
      (ctx as RunContext).journal!.rollback();
    });
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(root).equals(bytes)).toBe(true);
  }, 120_000);
});
