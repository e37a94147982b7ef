/**
 * `add_component like: "R1"` when R1's footprint library is in no table: the footprint comes
 * from the board's own copy of it, and board sync adds the new part with that same footprint
 * (same pads, same courtyard) rather than failing or swapping in another.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { boardFootprints, libraryCopy } from "../../src/kicad/board/footprint/library-copy.ts";
import { localBounds } from "../../src/kicad/board/footprint/instance.ts";
import { applyBoardSync, planBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { child, children, printSexpr, text } from "../../src/kicad/sexpr/index.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/** The fixture with its resistors' footprints in a vendor library that no table lists. */
async function vendorFootprints(): Promise<string> {
  const dir = await copyFixture("usb-led");
  for (const file of ["usb-led.kicad_sch", "usb-led.kicad_pcb"]) {
    const path = join(dir, file);
    writeFileSync(
      path,
      readFileSync(path, "utf8").replaceAll("Resistor_SMD:R_0603_1608Metric", "vendor-footprints:R_0603_1608Metric"),
    );
  }
  return dir;
}

/** Pads as number, form, size and position: what makes two footprints the same part. */
function padsOf(fp: Parameters<typeof children>[0]) {
  return children(fp, "pad").map((p) => [
    text(p, 1),
    text(p, 3),
    printSexpr(child(p, "size")!),
    printSexpr(child(p, "at")!),
  ]);
}

test("like: takes the footprint from the board when no library holds it", async () => {
  const dir = await vendorFootprints();
  const libraries = await openLibraries(dir);
  expect(() => libraries.resolveFootprint("vendor-footprints:R_0603_1608Metric")).toThrow(
    /No footprint library "vendor-footprints"/,
  );

  libraries.footprintFallback = boardFootprints(join(dir, "usb-led.kicad_pcb"), dir);
  const editor = SchematicEditor.open(join(dir, "usb-led.kicad_sch"), libraries);
  const added = editor.addComponent({ like: "R1" });
  editor.save();

  const schematic = loadSchematicProject(join(dir, "usb-led.kicad_sch"));
  const board = Board.load(join(dir, "usb-led.kicad_pcb"));
  const plan = planBoardSync({
    board,
    schematic,
    components: listComponents(schematic),
    netlist: buildNetlist(schematic),
    libraries,
  });
  expect(plan.added.map((a) => [a.ref, a.libId])).toEqual([[added.ref, "vendor-footprints:R_0603_1608Metric"]]);
  applyBoardSync(board, plan, libraries);
  const fps = board.footprints();
  const copy = fps.find((f) => f.ref === added.ref)!;
  const example = fps.find((f) => f.ref === "R1")!;
  expect(padsOf(libraryCopy(copy.node))).toEqual(padsOf(libraryCopy(example.node)));
  expect(localBounds(copy.node)).toEqual(localBounds(example.node));
  // Only the board's own fields and no pad nets of R1's came along.
  expect(children(libraryCopy(example.node), "property").map((p) => text(p, 1))).toEqual([
    "Reference",
    "Value",
    "Datasheet",
    "Description",
  ]);
  expect(children(libraryCopy(example.node), "pad").some((p) => child(p, "net"))).toBe(false);
});
