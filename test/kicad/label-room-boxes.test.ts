/**
 * The boxes a label's room is judged by, on copies of KiCad's demos: a label is as big as its
 * own font makes it, is no obstacle to itself, and a renamed global label's page references
 * move out past its longer name (KiCad draws them where the file says).
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
    const box = room.box(label.at, 16);
    const drawn = labelBox(label.at, 16, label.rotation, false, toIU(1.524));
    const long = (b: typeof box) => Math.max(b.x1 - b.x0, b.y1 - b.y0);
    expect(long(box)).toBe(long(drawn));
    expect(room.blockers(label.at, label.text.length, label.rotation)).not.toContainEqual(
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
        .labels.find((l) => l.text === "DATA-RB7XXXXXXXX")!;
      expect(label.rotation).toBe(0);
      const refs = children(label.node, "property").find((p) => text(p, 1) === "Intersheetrefs")!;
      const flagEnd = labelBox(label.at, 16, 0, true, fontSize(label.node)).x1;
      expect(toIU(num(child(refs, "at")!, 1)!)).toBeGreaterThanOrEqual(flagEnd);
    }
  });
});
