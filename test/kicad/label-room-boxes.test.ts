/**
 * The boxes a label's room is judged by, on copies of KiCad's demos: a label is as big as its
 * own font makes it, is no obstacle to itself, a renamed global label's page references move
 * out past its longer name (KiCad draws them where the file says), and a label with no room
 * along its run goes at the end of a new stub off it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { LabelRoom } from "../../src/kicad/schematic/edit/label-room.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { toIU } from "../../src/kicad/schematic/geometry.ts";
import { fontSize, labelBox } from "../../src/kicad/schematic/space.ts";
import { child, children, num, text } from "../../src/kicad/sexpr/index.ts";
import { demoProjects, copyCorpusProject } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

async function demoRoot(id: string): Promise<string> {
  const copy = await copyCorpusProject(demoProjects().find((p) => p.id === id)!);
  return copy.schematic!;
}

describe("a label's room", () => {
  test("is measured in the label's own font size, and the label is no obstacle to itself", async () => {
    const root = await demoRoot("demos/sonde xilinx/sonde xilinx");
    const file = loadSchematicProject(root).files.get(root)!;
    // TMS-PROG is drawn at 1.524 mm, not KiCad's 1.27 mm default.
    const label = file.labels.find((l) => l.text === "TMS-PROG")!;
    const room = new LabelRoom(file, label);
    const box = room.box(label.at, "TMS-PROGXXXXXXXX");
    const drawn = labelBox(label.at, "TMS-PROGXXXXXXXX", label.rotation, false, toIU(1.524));
    const long = (b: typeof box) => Math.max(b.x1 - b.x0, b.y1 - b.y0);
    expect(long(box)).toBe(long(drawn));
    expect(room.blockers(label.at, label.text, label.rotation)).not.toContainEqual(
      expect.stringContaining("label TMS-PROG at"),
    );
  });

  test("a renamed global label's page references are moved out past its longer name", async () => {
    const root = await demoRoot("demos/flat_hierarchy/flat_hierarchy");
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    editor.renameNet("DATA-RB7", "DATA-RB7XXXXXXXX");
    editor.save();
    for (const name of ["pic_programmer.kicad_sch", "pic_sockets.kicad_sch"]) {
      const path = join(dirname(root), name);
      const label = loadSchematicProject(root)
        .files.get(path)!
        .labels.find((l) => l.kind === "global" && l.text === "DATA-RB7XXXXXXXX")!;
      expect(label.rotation).toBe(0);
      const refs = children(label.node, "property").find((p) => text(p, 1) === "Intersheetrefs")!;
      const flagEnd = labelBox(label.at, label.text, 0, true, fontSize(label.node)).x1;
      expect(toIU(num(child(refs, "at")!, 1)!)).toBeGreaterThanOrEqual(flagEnd);
    }
  });

  test("a label with no room along its run goes at the end of a new stub off it, with a junction where the stub leaves", async () => {
    const root = await demoRoot("demos/kit-dev-coldfire-xilinx_5213/kit-dev-coldfire-xilinx_5213");
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    // JTAG_EN sits on a wire between JP101 and a row of labelled wires: doubled, its name runs
    // into that row whichever way it reads or slides, and the wire's ends are taken.
    editor.renameNet("JTAG_EN", "JTAG_ENXXXXXXX");
    editor.save();
    const file = loadSchematicProject(root).files.get(root)!;
    const at = (x: number, y: number) => ({ x: toIU(x), y: toIU(y) });
    const label = file.labels.find((l) => l.text === "JTAG_ENXXXXXXX")!;
    expect(label.at).toEqual(at(135.89, 91.44));
    const ends = (p: { x: number; y: number }) =>
      file.wires.filter((w) => [w.a, w.b].some((e) => e.x === p.x && e.y === p.y));
    // The stub runs from the wire to the label; the wire it leaves is broken there, as eeschema
    // draws a T, and a junction marks it.
    expect(ends(label.at).map((w) => [w.a, w.b])).toContainEqual([at(135.89, 85.09), at(135.89, 91.44)]);
    expect(ends(at(135.89, 85.09)).length).toBe(3);
    expect(file.junctions.map((j) => j.at)).toContainEqual(at(135.89, 85.09));
  });
});
