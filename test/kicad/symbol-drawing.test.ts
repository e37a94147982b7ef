/**
 * A placed part's drawing as copperhead boxes it (`symbolDrawingBoxes`: its body, and each pin
 * with its number and name), held against KiCad's own render of real sheets: every pin number
 * and name kicad-cli draws lies within one of the part's boxes, and the room beside a lone pin
 * is left free, so a label there is not taken for running over the part.
 */
import { afterAll, expect, test } from "bun:test";
import { exportSvg } from "../../src/kicad/cli/kicad-cli.ts";
import { placePoint, toIU } from "../../src/kicad/schematic/geometry.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { LabelRoom } from "../../src/kicad/schematic/edit/label-room.ts";
import {
  inside,
  intersects,
  placeDirection,
  pinOutwardLib,
  symbolBodyBox,
  symbolDrawingBoxes,
  type Box,
} from "../../src/kicad/schematic/space.ts";
import { child, flag } from "../../src/kicad/sexpr/index.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { drawnTexts } from "../support/svg-text.ts";

afterAll(cleanupTempDirs);

async function rootOf(id: string): Promise<string> {
  const copy = await copyCorpusProject(everyProject().find((p) => p.id === id)!);
  return copy.schematic!;
}

const mm = (b: Box): Box => ({ x0: b.x0 / 10_000, y0: b.y0 / 10_000, x1: b.x1 / 10_000, y1: b.y1 / 10_000 });
const centre = (b: Box) => ({ x: (b.x0 + b.x1) / 2, y: (b.y0 + b.y1) / 2 });

// Single-sheet projects, so that the one SVG kicad-cli writes is the sheet's.
for (const id of [
  "demos/simulation/power_supplies/boost/smps-com",
  "corpus/rp2040-designguide",
  "corpus/uext-esp32-c3",
]) {
  test(`every pin number and name KiCad draws on ${id} lies within its part's boxes`, async () => {
    const cli = await requireKicadCli();
    const root = await rootOf(id);
    const svgs = await exportSvg(root, await makeTempDir(), { cli });
    expect(svgs).toHaveLength(1);
    const texts = drawnTexts(svgs[0]!);
    const file = loadSchematicProject(root).files.get(root)!;
    const matched = { number: 0, name: 0 };
    const outside: string[] = [];
    for (const symbol of file.symbols) {
      const boxes = symbolDrawingBoxes(symbol).map(mm);
      const ref = symbol.fields.find((f) => f.name === "Reference")?.value;
      const lib = symbol.lib?.node ?? symbol.node;
      const hidden = (what: string) => {
        const node = child(lib, what);
        return node !== undefined && flag(node, "hide") === true;
      };
      // The text of `content` KiCad drew nearest `near` (mm), within `within`, if any, checked against the boxes.
      const check = (kind: "number" | "name", content: string, near: { x: number; y: number }, within: number) => {
        const drawn = texts
          .filter((t) => t.text === content)
          .map((t) => ({ t, d: Math.hypot(centre(t.box).x - near.x, centre(t.box).y - near.y) }))
          .filter(({ d }) => d < within)
          .sort((a, b) => a.d - b.d)[0]?.t;
        if (!drawn) return;
        matched[kind]++;
        const glyphs = {
          x0: drawn.box.x0 + 0.05,
          y0: drawn.box.y0 + 0.05,
          x1: drawn.box.x1 - 0.05,
          y1: drawn.box.y1 - 0.05,
        };
        if (!boxes.some((b) => inside(glyphs, b)))
          outside.push(`${ref} pin ${kind} ${content}: ${JSON.stringify(glyphs)}`);
      };
      for (const pin of unitPins(symbol, symbol.unit)) {
        if (pin.hidden) continue;
        const tip = placePoint(pin.at, symbol.placement);
        const out = placeDirection(pinOutwardLib(pin.orientation), symbol.placement);
        const at = (share: number) => ({
          x: (tip.x - out.x * pin.length * share) / 10_000,
          y: (tip.y - out.y * pin.length * share) / 10_000,
        });
        // KiCad draws the number at the pin's middle, a little off its line; the name there too, or inside the body from its edge.
        if (pin.number && !hidden("pin_numbers")) check("number", pin.number, at(0.5), 2);
        if (pin.name && !/[{}]/.test(pin.name) && !hidden("pin_names"))
          check("name", pin.name, at(1), 3 + pin.name.length);
      }
    }
    expect(outside).toEqual([]);
    // Not vacuous: the sheets draw dozens of pin numbers and names.
    expect(matched.number).toBeGreaterThan(10);
    expect(matched.name).toBeGreaterThan(5);
  }, 120_000);
}

/**
 * smps-com's vee label sits on a short stub below the op-amp's lone V- pin: the part's pins span
 * a box that takes in the label's place, but its drawing does not, so read the other way from
 * the same point the longer name runs over nothing of U1's.
 */
test("a label below a part's lone supply pin is clear of the part's drawing", async () => {
  const root = await rootOf("demos/simulation/power_supplies/boost/smps-com");
  const file = loadSchematicProject(root).files.get(root)!;
  const label = file.labels.find((l) => l.text === "vee" && l.at.y === toIU(78.74))!;
  const u1 = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "U1"))!;
  const room = new LabelRoom(file, label);
  const longer = room.box(label.at, "veevee", 180);
  // The span of U1's pins takes the label's place in; the pins and body themselves do not.
  expect(intersects(longer, symbolBodyBox(u1))).toBe(true);
  expect(symbolDrawingBoxes(u1).filter((b) => intersects(longer, b))).toEqual([]);
  expect(room.blockers(label.at, "veevee", 180).filter((b) => b.startsWith("U1"))).toEqual([]);
});
