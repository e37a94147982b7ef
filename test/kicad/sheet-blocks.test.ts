/**
 * How a sheet is organised, on copies of real designs: a part added near an anchor inside a
 * block the designer drew (a rectangle round a group of parts) lands inside that block, and
 * says so (and, when none fits, says that and where the block is); pasted pictures are occupied as far as KiCad draws them (checked against kicad-cli's
 * own SVG); an anchor the design draws beyond the page frame gets its new part beside it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportSvg } from "../../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { symbolInstance } from "../../src/kicad/schematic/model/symbols.ts";
import { occupiedItems } from "../../src/kicad/schematic/space.ts";
import { child, head, num, parseSexpr, type SList } from "../../src/kicad/sexpr/index.ts";
import { copyCorpusProject, corpusProjects, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, type MmBox } from "../support/sheet-boxes.ts";

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;

async function copiedRoot(id: string): Promise<string> {
  const project = [...demoProjects(), ...corpusProjects()].find((p) => p.id === id);
  if (!project?.schematic) throw new Error(`project ${id} is missing`);
  return (await copyCorpusProject(project)).schematic!;
}

/** The top-level rectangles of a sheet, mm, read straight from its file. */
function rectangles(file: string): MmBox[] {
  const root = parseSexpr(readFileSync(file, "utf8")).root;
  return root.items.flatMap((item) => {
    if (item.type !== "list" || head(item) !== "rectangle") return [];
    const [a, b] = [child(item, "start")!, child(item, "end")!];
    const [x0, y0, x1, y1] = [num(a, 1)!, num(a, 2)!, num(b, 1)!, num(b, 2)!];
    return [{ x0: Math.min(x0, x1), y0: Math.min(y0, y1), x1: Math.max(x0, x1), y1: Math.max(y0, y1) }];
  });
}

const within = (a: MmBox, b: MmBox) => a.x0 >= b.x0 && a.y0 >= b.y0 && a.x1 <= b.x1 && a.y1 <= b.y1;

describe("a part added near an anchor inside a drawn block lands inside it", () => {
  const CASES = [
    { id: "demos/tiny_tapeout/tinytapeout-demo", near: "C1" },
    { id: "corpus/rvpc-revb", near: "R2" },
  ];
  for (const c of CASES) {
    test(
      `${c.id}: a capacitor near ${c.near}`,
      async () => {
        const root = await copiedRoot(c.id);
        const items = () => drawnItems(root);
        const symbolBox = (ref: string) => items().find((i) => i.kind === "symbol" && i.symbol?.reference === ref)!.box;
        // The smallest drawn rectangle round the anchor is its block.
        const block = rectangles(root)
          .filter((r) => within(symbolBox(c.near), r))
          .sort((a, b) => (a.x1 - a.x0) * (a.y1 - a.y0) - (b.x1 - b.x0) * (b.y1 - b.y0))[0]!;
        expect(block).toBeDefined();

        const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
        const added = editor.addComponent({ libId: "Device:C", value: "100n", near: c.near, connect: { "2": "GND" } });
        editor.save();

        const box = symbolBox(added.ref);
        console.log(
          `${c.id}: ${added.ref} at ${added.at.join(", ")}, ${added.distance} mm from ${c.near}, block ${JSON.stringify(added.block)}`,
        );
        expect(within(box, block)).toBe(true);
        expect(added.block?.inside).toBe(true);
        expect(added.note).toBeUndefined();
      },
      TIMEOUT,
    );
  }
});

test(
  "demos/tiny_tapeout: a part near an anchor whose block has no room goes outside it, and the result says so and where the block is",
  async () => {
    const root = await copiedRoot("demos/tiny_tapeout/tinytapeout-demo");
    const items = drawnItems(root);
    const c1Item = items.find((i) => i.kind === "symbol" && i.symbol?.reference === "C1")!;
    // C1 with its fields, the box its block must hold.
    const c1 = items
      .filter((i) => i.uuid === c1Item.uuid)
      .map((i) => i.box)
      .reduce((a, b) => ({
        x0: Math.min(a.x0, b.x0),
        y0: Math.min(a.y0, b.y0),
        x1: Math.max(a.x1, b.x1),
        y1: Math.max(a.y1, b.y1),
      }));
    // Shrink the block drawn round C1 to the smallest a block can be, 15.24 mm square round C1's
    // middle: a ten-pin connector, 25 mm long, fits nowhere in it.
    const block = rectangles(root)
      .filter((r) => within(c1, r))
      .sort((a, b) => (a.x1 - a.x0) * (a.y1 - a.y0) - (b.x1 - b.x0) * (b.y1 - b.y0))[0]!;
    const [cx, cy] = [(c1.x0 + c1.x1) / 2, (c1.y0 + c1.y1) / 2].map((v) => Math.round(v / 1.27) * 1.27) as [
      number,
      number,
    ];
    const tight = { x0: cx - 7.62, y0: cy - 7.62, x1: cx + 7.62, y1: cy + 7.62 };
    const mm = (v: number) => Math.round(v * 100) / 100;
    const source = readFileSync(root, "utf8");
    const node = parseSexpr(source)
      .root.items.filter((i): i is SList => i.type === "list" && head(i) === "rectangle")
      .find((i) => {
        const [a, b] = [child(i, "start")!, child(i, "end")!];
        return Math.min(num(a, 1)!, num(b, 1)!) === block.x0 && Math.min(num(a, 2)!, num(b, 2)!) === block.y0;
      })!;
    const end = source.indexOf("\n\t)", node.start);
    const shrunk = source
      .slice(node.start, end)
      .replace(/\(start [^)]*\)/, `(start ${mm(tight.x0)} ${mm(tight.y0)})`)
      .replace(/\(end [^)]*\)/, `(end ${mm(tight.x1)} ${mm(tight.y1)})`);
    writeFileSync(root, source.slice(0, node.start) + shrunk + source.slice(end));

    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    const added = editor.addComponent({ libId: "Connector_Generic:Conn_01x10", value: "TEST", near: "C1" });
    editor.save();
    console.log(`${added.ref} at ${added.at.join(", ")}, ${added.distance} mm from C1: ${added.note}`);
    expect(added.block).toEqual({
      from: [mm(tight.x0), mm(tight.y0)],
      to: [mm(tight.x1), mm(tight.y1)],
      inside: false,
    });
    expect(added.note).toContain("No free spot inside the block drawn around C1");
    expect(added.note).toContain(`(${mm(tight.x0)}, ${mm(tight.y0)} to ${mm(tight.x1)}, ${mm(tight.y1)} mm)`);
    // It is placed outside the block, clear of it, and still near C1 (not off across the sheet).
    const box = drawnItems(root).find((i) => i.kind === "symbol" && i.symbol?.reference === added.ref)!.box;
    const overlaps = box.x0 < tight.x1 && tight.x0 < box.x1 && box.y0 < tight.y1 && tight.y0 < box.y1;
    expect(overlaps).toBe(false);
    expect(added.distance!).toBeLessThanOrEqual(30);
  },
  TIMEOUT,
);

test(
  "corpus/rvpc-revb: pictures are occupied where kicad-cli draws them",
  async () => {
    const cli = await requireKicadCli();
    const root = await copiedRoot("corpus/rvpc-revb");
    const out = await makeTempDir();
    const files = await exportSvg(root, out, { cli });
    const svg = readFileSync(files[0]!, "utf8");
    const drawn = [
      ...svg.matchAll(/<image[^>]*?\bx="([\d.]+)" y="([\d.]+)"[^>]*?width="([\d.]+)" height="([\d.]+)"/g),
    ].map((m) => [m[1], m[2], m[3], m[4]].map(Number));
    expect(drawn.length).toBeGreaterThan(0);
    const project = loadSchematicProject(root);
    const images = occupiedItems(project.root.file)
      .filter((i) => i.what === "image")
      .map(({ box }) => [box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0].map((v) => v / 10_000));
    const sorted = (rows: number[][]) =>
      rows.map((r) => r.map((v) => Math.round(v * 10) / 10)).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    expect(sorted(images)).toEqual(sorted(drawn));
  },
  TIMEOUT,
);

test(
  "demos/pic_programmer: a part near a connector drawn beyond the page frame goes beside it",
  async () => {
    const root = await copiedRoot("demos/pic_programmer/pic_programmer");
    // Move J1, with its fields, 80 mm right of where it is, past the A4 frame (297 mm wide).
    const project = loadSchematicProject(root);
    const j1 = project.root.file.symbols.find(
      (s) => symbolInstance(s, project.root.path, project.projectName).reference === "J1",
    )!;
    const dx = 300 - j1.placement.at.x / 10_000 + 20;
    const source = readFileSync(root, "utf8");
    const start = j1.node.start;
    const end = source.indexOf("\n\t)", start);
    const moved = source
      .slice(start, end)
      .replace(
        /\(at ([\d.-]+) ([\d.-]+)/g,
        (_, x: string, y: string) => `(at ${Math.round((Number(x) + dx) * 100) / 100} ${y}`,
      );
    writeFileSync(root, source.slice(0, start) + moved + source.slice(end));

    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    const added = editor.addComponent({ libId: "Device:R", value: "1k", near: "J1" });
    editor.save();
    console.log(
      `R ${added.ref} at ${added.at.join(", ")}, ${added.distance} mm from J1 (moved to x ${(j1.placement.at.x / 10_000 + dx).toFixed(2)})`,
    );
    expect(added.distance!).toBeLessThanOrEqual(15);
  },
  TIMEOUT,
);
