/**
 * A part whose own pads squeeze a pour of another net into a strip under the board's minimum
 * connection width is named at once, in its routing line, and raw DRC agrees: on KiCad's
 * multichannel demo (GND flooded on both sides, 0.3 mm minimum connection, 0.25 mm zone
 * minimum width) an 0603 resistor's pads leave a 0.25 mm strip, which kicad-cli reports as
 * connection_width; an 0805's pads sit too close for the fill to keep any copper between them.
 * Placement keeps clear of such spots when one that leaves none is near: an LED's resistor
 * there goes where other copper keeps the pour from between its pads, its LED moving with it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { BoardEditor } from "../../src/kicad/board/editor.ts";
import { reportLayout } from "../../src/kicad/board/route/layout-report.ts";
import { addIndicatorNextToMainIc, addNextToMainIc } from "../support/board-additions.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/** Raw DRC's connection-width warnings of the board file. */
async function necks(boardFile: string): Promise<number> {
  const { report } = await runDrc(boardFile, { cli: await requireKicadCli(), timeoutMs: 300_000 });
  return report.violations.filter((v) => v.type === "connection_width").length;
}

/** A copy of KiCad's multichannel demo open in a run's editor, with its board's raw DRC necks before any edit. */
async function multichannel() {
  const project = await demoRepo("multichannel/multichannel_mixer");
  const boardFile = join(project.root, "multichannel_mixer.kicad_pcb");
  const before = await necks(boardFile);
  const editor = BoardEditor.open(boardFile, {
    within: project.root,
    projectFile: join(project.root, "multichannel_mixer.kicad_pro"),
  });
  return { boardFile, before, editor };
}

describe("a part's own pads that leave a pour too narrow between them are named at once", () => {
  for (const [footprint, strip] of [
    ["Resistor_SMD:R_0603_1608Metric", true],
    ["Resistor_SMD:R_0805_2012Metric", false],
  ] as const) {
    test(`multichannel: ${footprint} on the back GND pour`, async () => {
      const { boardFile, before, editor } = await multichannel();
      await addNextToMainIc(editor, "R900", footprint, ["+12V", "vbias"]);
      // On the back, in the open GND pour below the last channel.
      const { vacated } = editor.place("R900", { x: 190, y: 120, rotation: 0, side: "back" });
      const layout = await editor.connect(["R900"], { vacated });
      editor.save(writeFileSync);
      const [line] = reportLayout(new Map(), layout, ["R900"]);
      if (strip) {
        expect(layout.narrow.map((n) => `${n.ref} ${n.pads.join("-")} ${n.net} ${n.width}`)).toEqual([
          "R900 1-2 GND 0.25",
        ]);
        expect(line).toContain("pads 1 and 2 leave the GND pour on B.Cu a strip 0.25 mm wide between them");
        expect(line).toContain("under the board's 0.3 mm minimum connection width (DRC: connection_width)");
        expect(await necks(boardFile)).toBeGreaterThan(before);
      } else {
        expect(layout.narrow).toEqual([]);
        expect(line).not.toContain("connection_width");
        expect(await necks(boardFile)).toBe(before);
      }
    }, 300_000);
  }
});

describe("placement keeps a part's pads from leaving a pour too narrow between them", () => {
  test("multichannel: an LED by the main IC and its 0603 resistor, both on the back GND pour", async () => {
    const { boardFile, before, editor } = await multichannel();
    // Beside the LED's first spot every clear one leaves the strip (the test above): the pair
    // moves to where the pour does not run between the resistor's pads.
    const layout = await addIndicatorNextToMainIc(editor);
    editor.save(writeFileSync);
    expect(layout.left.size).toBe(0);
    expect(layout.narrow).toEqual([]);
    const [led, resistor] = ["D900", "R900"].map((ref) => editor.board.footprint(ref)!);
    expect([led!.layer, resistor!.layer]).toEqual(["B.Cu", "B.Cu"]);
    expect(Math.hypot(led!.at.x - resistor!.at.x, led!.at.y - resistor!.at.y)).toBeLessThan(5);
    expect(await necks(boardFile)).toBe(before);
  }, 300_000);
});
