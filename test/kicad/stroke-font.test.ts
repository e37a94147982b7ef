/**
 * A label's measured run against what kicad-cli draws: local labels of names narrow and wide,
 * with KiCad's markup and escapes and outside ASCII, are plotted by the real kicad-cli, and each label's box
 * (`labelBox`, from the stroke font's glyph advances) must reach past the drawn text, and an
 * ASCII name's by less than a font size, at 1.27 mm and at 2.54 mm.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportSvg } from "../../src/kicad/cli/kicad-cli.ts";
import { toIU } from "../../src/kicad/schematic/geometry.ts";
import { labelBox } from "../../src/kicad/schematic/space.ts";
import { textAdvance } from "../../src/kicad/stroke-font.ts";
import { textBoxes } from "../../src/diff/svg.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const NAMES = [
  "GPIO22\\EMAC_TXD1(RMII)",
  "IIII1111iiii____",
  "MMMMWWWW++==",
  "~{RESET}",
  "V_{OUT}^{2}",
  "µC_Ω°",
  "FPGA-PS_CLKREF",
  "a b c",
  "SDI{slash}out0",
];

/** How kicad-cli writes a name it draws, where that differs from the name as written. */
const DRAWN: Record<string, string> = { "SDI{slash}out0": "SDI/out0" };

/** A KiCad 9 sheet with each name as a local label at `size` mm on its own wire. */
function sheetWithLabels(size: number): string {
  const quoted = (s: string) => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  const items = NAMES.flatMap((name, i) => {
    const y = 20 + i * 10;
    return [
      `(wire (pts (xy 10 ${y}) (xy 120 ${y})) (stroke (width 0) (type default)) (uuid "00000000-0000-0000-0000-${String(2 * i).padStart(12, "0")}"))`,
      `(label ${quoted(name)} (at 20 ${y} 0) (effects (font (size ${size} ${size})) (justify left bottom)) (uuid "00000000-0000-0000-0000-${String(2 * i + 1).padStart(12, "0")}"))`,
    ];
  });
  return `(kicad_sch (version 20250114) (generator "eeschema") (generator_version "9.0") (uuid "00000000-0000-0000-0000-100000000000") (paper "A3") (lib_symbols)\n${items.join("\n")}\n(sheet_instances (path "/" (page "1"))) (embedded_fonts no))\n`;
}

for (const size of [1.27, 2.54]) {
  test(`a label's box reaches just past the text kicad-cli draws, at ${size} mm`, async () => {
    const cli = await requireKicadCli();
    const dir = await makeTempDir();
    const path = join(dir, "labels.kicad_sch");
    writeFileSync(path, sheetWithLabels(size));
    const [svgPath] = await exportSvg(path, dir, { cli });
    const svg = readFileSync(svgPath!, "utf8");
    for (const name of NAMES) {
      const [drawn] = textBoxes(svg, DRAWN[name] ?? name);
      expect(drawn, `${name} is drawn`).toBeDefined();
      const box = labelBox({ x: toIU(20), y: 0 }, name, 0, false, toIU(size));
      const reach = box.x1 / 10_000;
      expect(reach, name).toBeGreaterThanOrEqual(drawn!.x1);
      // Glyphs outside ASCII are measured as the widest letters, so only ASCII runs are held close.
      if (/^[\x20-\x7e]*$/.test(name)) expect(reach - drawn!.x1, name).toBeLessThan(size);
    }
  });
}

test("markup and escapes are measured as drawn: an overbar's braces take no room, scripts are smaller, {slash} is /", () => {
  expect(textAdvance("SDI{slash}out0")).toBeCloseTo(textAdvance("SDI/out0"), 6);
  expect(textAdvance("{brl}")).toBeCloseTo(textAdvance("{") + textAdvance("brl") + textAdvance("}"), 6);
  expect(textAdvance("~{RESET}")).toBeCloseTo(textAdvance("RESET"), 6);
  expect(textAdvance("V_{OUT}")).toBeCloseTo(textAdvance("V") + 0.8 * textAdvance("OUT"), 6);
  expect(textAdvance("IIII")).toBeLessThan(textAdvance("MMMM") / 2);
});
