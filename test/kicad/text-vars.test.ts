/**
 * Text is measured as eeschema draws it, its text variables expanded: on real projects, a field
 * written as `${SIM.PARAMS}` is boxed as the parameters kicad-cli draws (checked against its
 * SVG), and so when a part is placed, laid out `like` one or moved; a sheet resolves its title
 * block through the project's own text variables, and a global label's `${INTERSHEET_REFS}` is
 * boxed as the page list kicad-cli draws, in the project's style.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { exportSvg } from "../../src/kicad/cli/kicad-cli.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { fieldBoxes } from "../../src/kicad/schematic/edit/field-layout.ts";
import { fieldBox, freshFieldBoxes, occupiedItems } from "../../src/kicad/schematic/space.ts";
import { expandText, sheetResolver } from "../../src/kicad/schematic/text-vars.ts";
import { copyCorpusProject, corpusProjects, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { textOverlaps } from "../support/svg-text.ts";

afterAll(cleanupTempDirs);

const mm = (iu: number) => iu / 10_000;

/**
 * `box` (IU) holds the glyphs kicad-cli drew (mm), to within half a pen's width, 0.05 mm: the
 * glyph strokes' own centre lines are measured.
 */
function expectHolds(box: { x0: number; y0: number; x1: number; y1: number }, glyphs: typeof box): void {
  const pen = 0.05;
  expect(mm(box.x0)).toBeLessThanOrEqual(glyphs.x0 + pen);
  expect(mm(box.x1)).toBeGreaterThanOrEqual(glyphs.x1 - pen);
  expect(mm(box.y0)).toBeLessThanOrEqual(glyphs.y0 + pen);
  expect(mm(box.y1)).toBeGreaterThanOrEqual(glyphs.y1 - pen);
}

async function copiedRoot(id: string): Promise<string> {
  const project = [...demoProjects(), ...corpusProjects()].find((p) => p.id === id);
  if (!project?.schematic) throw new Error(`project ${id} is missing`);
  return (await copyCorpusProject(project)).schematic!;
}

test("demos/sallen_key: a Value written ${SIM.PARAMS} is boxed as the parameters kicad-cli draws", async () => {
  const cli = await requireKicadCli();
  const root = await copiedRoot("demos/simulation/sallen_key/sallen_key");
  const file = loadSchematicProject(root).root.file;
  const v1 = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "V1"))!;
  expect(v1.fields.find((f) => f.name === "Value")!.value).toBe("${SIM.PARAMS}");

  const box = occupiedItems(file).find((i) => i.what === "V1's Value field")!.box;
  const out = await makeTempDir();
  const [svg] = await exportSvg(root, out, { cli });
  const drawn = textOverlaps(svg!, "ac=1");
  expect(drawn.length).toBe(1);
  const glyphs = drawn[0]!.box;
  // The box holds what is drawn, and is sized by it: "${SIM.PARAMS}" would be three times as wide.
  expectHolds(box, glyphs);
  expect(mm(box.x1 - box.x0)).toBeLessThan((glyphs.x1 - glyphs.x0) * 2);
});

test("demos/sallen_key: a new or moved symbol's fields are measured expanded too, as they will be drawn", async () => {
  const root = await copiedRoot("demos/simulation/sallen_key/sallen_key");
  const file = loadSchematicProject(root).root.file;
  const v1 = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "V1"))!;
  const value = v1.fields.find((f) => f.name === "Value")!;
  const drawn = occupiedItems(file).find((i) => i.what === "V1's Value field")!.box;
  const width = (b: { x0: number; x1: number }) => b.x1 - b.x0;
  // As written, "${SIM.PARAMS}" is three times as wide as the "ac=1" eeschema draws.
  expect(width(fieldBox(value.node, v1.placement)!)).toBeGreaterThan(width(drawn) * 2);
  // A part placed `like` V1, or V1 moved, is laid out with its fields as drawn.
  expect(fieldBoxes(v1, sheetResolver(file)).find((f) => f.node === value.node)!.box).toEqual(drawn);
  // Fields about to be written resolve one another the same way.
  const fresh = freshFieldBoxes(
    v1.fields.map((f) => f.node),
    v1.placement,
  );
  expect(fresh).toContainEqual(drawn);
});

test("corpus/antenna-eval: a sheet's title block resolves through the project's text variables", async () => {
  const root = await copiedRoot("corpus/antenna-eval");
  const file = loadSchematicProject(root).root.file;
  // The title block is written `(title "${title}")`, and the .kicad_pro says what ${title} is.
  expect(expandText("${TITLE}, rev ${REVISION}; ${COMMENT1}", sheetResolver(file))).toBe(
    "Antenna Evaluation Board, rev 0.1.0; author: marble",
  );
  expect(expandText("${pid} ${FILENAME} ${NOT_A_VARIABLE}", sheetResolver(file))).toBe(
    "n/a antenna-evaluation-board.kicad_sch ${NOT_A_VARIABLE}",
  );
});

test("corpus/antenna-eval: a field written ${TITLE} is boxed, placed, moved and laid out as the title kicad-cli draws", async () => {
  const cli = await requireKicadCli();
  const root = await copiedRoot("corpus/antenna-eval");
  const written = readFileSync(root, "utf8");
  // H11's Value, centred: kicad-cli plots a left-justified field showing a sheet's variable
  // centred on its anchor (a field showing its own symbol's variable it plots as justified).
  const h11 =
    /\(property "Value" "MountingHole_Pad" \(at 104\.14 136\.525 0\)\s*\(effects \(font \(size 1\.27 1\.27\)\) \(justify left\)\)/;
  expect(written).toMatch(h11);
  writeFileSync(
    root,
    written.replace(h11, '(property "Value" "${TITLE}" (at 104.14 136.525 0) (effects (font (size 1.27 1.27)))'),
  );
  const file = loadSchematicProject(root).root.file;
  const hole = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "H11"))!;
  const value = hole.fields.find((f) => f.name === "Value")!;
  const drawn = occupiedItems(file).find((i) => i.what === "H11's Value field")!.box;

  const [svg] = await exportSvg(root, await makeTempDir(), { cli });
  const title = textOverlaps(svg!, "Antenna Evaluation Board");
  expect(title.length).toBe(1);
  expectHolds(drawn, title[0]!.box);
  // "${TITLE}" as written is a third as wide as the title drawn.
  const width = (b: { x0: number; x1: number }) => b.x1 - b.x0;
  expect(width(drawn)).toBeGreaterThan(width(fieldBox(value.node, hole.placement)!) * 2);
  // Moving H11, placing a part `like` it and writing fresh fields resolve the sheet the same way.
  expect(fieldBoxes(hole, sheetResolver(file)).find((f) => f.node === value.node)!.box).toEqual(drawn);
  const fresh = freshFieldBoxes(
    hole.fields.map((f) => f.node),
    hole.placement,
    sheetResolver(file),
  );
  expect(fresh).toContainEqual(drawn);
});

test("demos/flat_hierarchy: a global label's page references are boxed as kicad-cli draws them, in the project's style", async () => {
  const cli = await requireKicadCli();
  const root = await copiedRoot("demos/flat_hierarchy/flat_hierarchy");
  const project = loadSchematicProject(root);
  const programmer = project.instances.find((i) => i.file.path.endsWith("pic_programmer.kicad_sch"))!;
  expect(programmer.page).toBe("2");
  // VCC_PIC is on pages 2 and 3; the project lists the other pages only, with no brackets.
  expect(programmer.file.intersheetRefs("VCC_PIC")).toBe("3");
  const box = occupiedItems(programmer.file).find((i) => i.what === "global label VCC_PIC's page references")!.box;

  const [svg] = (await exportSvg(root, await makeTempDir(), { cli })).filter((f) => f.endsWith("pic_programmer.svg"));
  // The field is written at (238.1307, 96.52), past the label's flag.
  const drawn = textOverlaps(svg!, "3").filter(
    ({ box: b }) => Math.hypot(b.x0 - 238.13, (b.y0 + b.y1) / 2 - 96.52) < 2,
  );
  expect(drawn.length).toBe(1);
  expectHolds(box, drawn[0]!.box);
  // It spans where the file puts the field and where eeschema lays it out again past the flag
  // (0.8 mm on), a few millimetres; "${INTERSHEET_REFS}" as written would take about twenty.
  expect(mm(box.x1 - box.x0)).toBeLessThan(5);

  // eeschema's own defaults where the project says nothing, its own page listed, and the short form.
  const pro = root.replace(/\.kicad_sch$/, ".kicad_pro");
  const settings = JSON.parse(readFileSync(pro, "utf8"));
  const drawing = settings.schematic.drawing;
  delete drawing.intersheets_ref_prefix;
  delete drawing.intersheets_ref_suffix;
  drawing.intersheets_ref_own_page = true;
  writeFileSync(pro, JSON.stringify(settings));
  const own = loadSchematicProject(root).instances.find((i) => i.page === "2")!.file;
  expect(own.intersheetRefs("VCC_PIC")).toBe("[2,3]");
  expect(own.intersheetRefs("NOT_A_LABEL")).toBe("[]");
  drawing.intersheets_ref_show = false;
  writeFileSync(pro, JSON.stringify(settings));
  const hidden = loadSchematicProject(root).instances.find((i) => i.page === "2")!.file;
  expect(hidden.intersheetRefs("VCC_PIC")).toBeUndefined();
  expect(occupiedItems(hidden).some((i) => i.what.endsWith("'s page references"))).toBe(false);
});
