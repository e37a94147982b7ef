/**
 * move_label and a refused rename on usb-led, judged by kicad-cli's netlist of the saved files:
 * a label slides along its wire or goes out beyond its wire's free end (the wire lengthened to
 * meet it) with every pin on its net; a spot off its wiring, or one where it would run over
 * another item, is refused with the sheets unchanged; a label holding its wire's free end takes
 * the end along or stays; a rename with no readable spot says what each way of making room ran
 * into.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { exportNetlist, runErc } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import type { Netlist } from "../../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

function pinNets(netlist: Netlist): string[] {
  return netlist.nets.flatMap((n) => n.nodes.map((node) => `${node.ref}.${node.pin}=${n.name}`)).sort();
}

describe("move_label", () => {
  test("slides a label along its wire, and lengthens a free wire end to carry one out; every pin keeps its net", async () => {
    const cli = await requireKicadCli();
    const dir = await copyFixture("usb-led");
    const root = join(dir, "usb-led.kicad_sch");
    const before = pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root));
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    expect(editor.moveLabel("LED_A", { to: [142.24, 96.52], rotation: 180 })).toEqual({
      net: "/LED_A",
      label: "LED_A",
      sheet: "/",
      from: [142.24, 95.25],
      at: [142.24, 96.52],
      rotation: 180,
    });
    const vout = editor.moveLabel("/Regulator/VOUT", { to: [165.1, 73.66] });
    expect(vout.lengthened).toEqual({ from: [154.94, 73.66], to: [165.1, 73.66] });
    editor.save();
    expect(pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root))).toEqual(before);
    const regulator = loadSchematicProject(root).files.get(join(dir, "regulator.kicad_sch"))!;
    expect(regulator.labels.find((l) => l.text === "VOUT")!.at).toEqual({ x: 1_651_000, y: 736_600 });
    expect(regulator.wires.some((w) => w.b.x === 1_651_000 || w.a.x === 1_651_000)).toBe(true);
  }, 120_000);

  test("a spot off its wiring, over another item, or a label the net does not have is refused and changes nothing", async () => {
    const dir = await copyFixture("usb-led");
    const root = join(dir, "usb-led.kicad_sch");
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    const text = editor.print(root);
    const off = thrownCopperheadError(() => editor.attempt(() => editor.moveLabel("LED_A", { to: [150, 96.52] })));
    expect(off.code).toBe("edit_conflict");
    expect(off.message).toContain("on no wire of its sheet");
    expect(off.message).toContain("also meets another wire");
    const over = thrownCopperheadError(() => editor.attempt(() => editor.moveLabel("CC1", { to: [71.12, 96.52] })));
    expect(over.message).toContain("would run over");
    expect(over.message).toContain("label CC2");
    expect(thrownCopperheadError(() => editor.moveLabel("GND", { to: [0, 0] })).code).toBe("not_found");
    expect(editor.print(root)).toBe(text);
    expect(editor.changedFiles()).toEqual([]);
  });
});

/**
 * A label at its wire's free end is all that keeps that end from dangling (KiCad's ERC reports
 * an unconnected wire end once it goes): on pico-ice, PICO_PMOD_A1 ends a short run from J2's
 * pin 23. Moved along that run it takes the end with it; moved elsewhere it is refused.
 */
test("move_label takes the free wire end a label holds along with it, and refuses to leave it dangling", async () => {
  const cli = await requireKicadCli();
  const copy = await copyCorpusProject(everyProject().find((p) => p.id === "fixtures/pico-ice-rev3")!);
  const root = copy.schematic!;
  const erc = async () => (await runErc(root, { cli })).sheets.flatMap((s) => s.violations.map((v) => v.type)).sort();
  const before = { erc: await erc(), nets: pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root)) };
  const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
  const away = thrownCopperheadError(() =>
    editor.attempt(() => editor.moveLabel("/PICO_PMOD_A1", { from: [331.47, 130.81], to: [334.01, 120] })),
  );
  expect(away.code).toBe("edit_conflict");
  const moved = editor.moveLabel("/PICO_PMOD_A1", { from: [331.47, 130.81], to: [332.74, 130.81] });
  expect(moved.lengthened).toEqual({ from: [331.47, 130.81], to: [332.74, 130.81] });
  editor.save();
  expect(await erc()).toEqual(before.erc);
  expect(pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root))).toEqual(before.nets);
}, 120_000);

describe("rename_net that cannot be drawn readably", () => {
  test("says which ways of making room it tried and why each failed, and renames nothing", async () => {
    const dir = await copyFixture("usb-led");
    const root = join(dir, "usb-led.kicad_sch");
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    const text = editor.print(root);
    const err = thrownCopperheadError(() => editor.attempt(() => editor.renameNet("CC1", `CC1_${"X".repeat(80)}`)));
    expect(err.code).toBe("edit_conflict");
    for (const way of [
      "Tried, least change first",
      "turned at the same point:",
      "sliding along the wiring it sits on, any way round:",
      "moving to its wire's other end:",
      "lengthening its wire's free end by up to 25.4 mm: its wire's end at (76.2, 93.98) also meets another wire",
    ])
      expect(err.message).toContain(way);
    expect(err.fix).toContain("move_label");
    expect(editor.print(root)).toBe(text);
  });
});
