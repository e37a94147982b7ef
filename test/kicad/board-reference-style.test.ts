/**
 * A footprint a board sync adds shows its reference on the silkscreen as the board shows those
 * of footprints like it (sync/reference-style.ts), judged by KiCad's own reading of the board
 * written: on pico-ice (KiCad 8), which hides 84 of its 101 references, and on the antenna
 * board (KiCad 7, `fp_text`), which hides all 189, the new resistor hides its own; on the RP2040
 * design guide (KiCad 6), which shows most of them, it shows its own.
 */
import { afterAll, expect, test } from "bun:test";
import { dirname } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { syncBoard } from "../../src/kicad/board/sync/sync-board.ts";
import { hidesReferencesLike } from "../../src/kicad/board/sync/reference-style.ts";
import { runKicadPython } from "../../src/kicad/cli/python.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const RESISTOR = "Resistor_SMD:R_0402_1005Metric";

/** What KiCad's pcbnew reads of a footprint's reference: shown or not, and on which layer. */
const READ_REFERENCE = `import sys, pcbnew
fp = pcbnew.LoadBoard(sys.argv[1]).FindFootprintByReference(sys.argv[2])
print(fp.Reference().IsVisible(), fp.Reference().GetLayerName())`;

for (const { id, shown } of [
  { id: "fixtures/pico-ice-rev3", shown: false },
  { id: "corpus/antenna-eval", shown: false },
  { id: "corpus/rp2040-designguide", shown: true },
]) {
  test(`${id}: a new ${RESISTOR.split(":")[1]} ${shown ? "shows" : "hides"} its reference, as the board's like footprints do`, async () => {
    await requireKicadCli();
    const copy = await copyCorpusProject(everyProject().find((p) => p.id === id)!);
    const library = (await openLibraries(dirname(copy.schematic!))).resolveFootprint(RESISTOR).doc.root;
    expect(hidesReferencesLike(Board.load(copy.board!).footprints(), RESISTOR, library)).toBe(!shown);
    const editor = SchematicEditor.open(copy.schematic!, await openLibraries(dirname(copy.schematic!)));
    const { ref } = editor.addComponent({ libId: "Device:R", value: "1k", footprint: RESISTOR, ref: "R900" });
    editor.save();

    const { plan, written } = await syncBoard(discoverProject(copy.root));

    expect(written).toBe(true);
    expect(plan.added.map((a) => [a.ref, a.hideReference ?? false])).toEqual([[ref, !shown]]);
    const read = await runKicadPython(READ_REFERENCE, "reading the board", {
      timeoutMs: 120_000,
      args: [copy.board!, ref],
    });
    expect(read.trim()).toBe(`${shown ? "True" : "False"} F.Silkscreen`);
  }, 180_000);
}
