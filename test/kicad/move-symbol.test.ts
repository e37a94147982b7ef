/**
 * move_symbol on usb-led and a real board's schematic, judged by kicad-cli's netlist of the saved file: every pin stays on
 * its net, the moved part overlaps nothing (boxes from the saved tree), and a move that cannot
 * keep its connections is refused with the tree unchanged.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { exportNetlist } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import type { Netlist } from "../../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { copyCorpusProject, fixtureCorpusProjects } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, gap, overlaps } from "../support/sheet-boxes.ts";

afterAll(cleanupTempDirs);

function pinNets(netlist: Netlist): string[] {
  return netlist.nets.flatMap((n) => n.nodes.map((node) => `${node.ref}.${node.pin}=${n.name}`)).sort();
}

describe("move_symbol", () => {
  test("C2 next to C1 and R3 next to J1: their wiring moves along or is reconnected by name, every pin keeps its net", async () => {
    const cli = await requireKicadCli();
    const dir = await copyFixture("usb-led");
    const root = join(dir, "usb-led.kicad_sch");
    const before = pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root));
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    const c2 = editor.moveSymbol("C2", { near: "C1" });
    expect(c2).toMatchObject({ ref: "C2", sheet: "/Regulator/", near: "C1" });
    expect(c2.distance!).toBeLessThan(10);
    editor.moveSymbol("R3", { near: "J1" });
    editor.save();
    expect(pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root))).toEqual(before);

    const items = drawnItems(join(dir, "regulator.kicad_sch"));
    const moved = items.find((i) => i.symbol?.reference === "C2")!;
    const c1 = items.find((i) => i.symbol?.reference === "C1")!;
    expect(gap(moved.box, c1.box)).toBeLessThan(10);
    const others = items.filter((i) => i.uuid !== moved.uuid && i.kind !== "wire" && i.kind !== "junction");
    expect(others.filter((o) => overlaps(moved.box, o.box)).map((o) => o.symbol?.reference ?? o.kind)).toEqual([]);
  }, 120_000);

  test("to coordinates: checked free; an occupied spot or a move without a target is refused and changes nothing", async () => {
    const dir = await copyFixture("usb-led");
    const root = join(dir, "usb-led.kicad_sch");
    const editor = SchematicEditor.open(root, await openLibraries(dir));
    const r1 = editor.moveSymbol("R1", { at: [200.66, 60.96] });
    expect(r1.at).toEqual([200.66, 60.96]);
    const text = editor.print(root);
    const occupied = thrownCopperheadError(() => editor.moveSymbol("R2", { at: [200.66, 60.96] }));
    expect(occupied.code).toBe("edit_conflict");
    expect(occupied.message).toContain("does not fit at 200.66, 60.96");
    expect(thrownCopperheadError(() => editor.moveSymbol("R2", {})).code).toBe("usage");
    expect(thrownCopperheadError(() => editor.moveSymbol("R2", { near: "R2" })).code).toBe("usage");
    expect(thrownCopperheadError(() => editor.moveSymbol("R9", { near: "R1" })).code).toBe("not_found");
    expect(editor.print(root)).toBe(text);
  });
});

/**
 * A pin sitting where the net's wiring meets itself, a wire on to other parts and one out to a
 * label beyond: Blaustahl's C17 hangs off the PWR5V0 rail at a junction. Moving it leaves that
 * wiring joined where the pin was (no longer a junction, two wire ends meeting) and reconnects the
 * pin by name; cutting the pin loose there, as it was, took the label's wire and cut U4 off
 * PWR5V0 without a word.
 */
test("a moved part leaves the wiring that meets at its pin joined there, and the net keeps every pin", async () => {
  const cli = await requireKicadCli();
  const copy = await copyCorpusProject(fixtureCorpusProjects().find((p) => p.id === "fixtures/blaustahl-v0")!);
  const root = copy.schematic!;
  const before = pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root));
  const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
  const file = editor.project.root.file;
  const tip = { x: 4_950_460, y: 3_401_060 };
  expect(file.junctions.filter((j) => j.at.x === tip.x && j.at.y === tip.y)).toHaveLength(1);
  editor.moveSymbol("C17", { near: "JP1" });
  editor.save();
  expect(pinNets(parseKicadNetlist(await exportNetlist(root, { cli }), root))).toEqual(before);
  const meeting = file.wires.filter((w) => [w.a, w.b].some((e) => e.x === tip.x && e.y === tip.y));
  expect(meeting).toHaveLength(2);
  expect(file.junctions.filter((j) => j.at.x === tip.x && j.at.y === tip.y)).toHaveLength(0);
}, 120_000);
