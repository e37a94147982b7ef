/**
 * The `view` tool's picture: a region of a sheet or of the board, cut out of kicad-cli's SVG
 * plot through the SVG's viewBox and rasterised in-process (util/png.ts), with a legend of what
 * is in it. Answers are cached by content (view-cache.ts): an unchanged design re-views without
 * loading it or starting kicad-cli, and a new region of an unchanged design is cut from the
 * plot already made.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Design } from "../../design/design.ts";
import { cropped, withoutTimestamp, type MmBox } from "../../diff/svg.ts";
import { boardLayers, plotBoardUnfilled } from "../../kicad/board/plot.ts";
import { exportSvg, findKicadCli } from "../../kicad/cli/kicad-cli.ts";
import { IU_PER_MM } from "../../kicad/schematic/geometry.ts";
import type { KicadProject } from "../../repo/project.ts";
import { svgToPng } from "../../util/png.ts";
import { ToolError } from "../tools/tool.ts";
import {
  boardLegend,
  boardRegion,
  drawingOrder,
  questionSide,
  ratsnest,
  ratsnestSvg,
  zoneFillsSvg,
  type BoardQuestion,
} from "./board-view.ts";
import { documentKey, plotFolder, readView, viewKey, writeView, type CachedView } from "./view-cache.ts";
import { sheetLegend, sheetRegion, type SheetQuestion } from "./sheet-view.ts";

export type ViewQuestion =
  | ({ document: "schematic" } & SheetQuestion)
  | ({ document: "board"; layers?: string[] } & BoardQuestion);

/** Pixels per millimetre of a region, within what a model takes in comfortably. */
const PX_PER_MM = 16;
const MAX_PX = 1568;
const MIN_PX = 480;

/** Layers a board view shows unless the question names others. */
const DEFAULT_BOARD_LAYERS = ["F.Cu", "B.Cu", "F.SilkS", "F.CrtYd", "B.CrtYd", "Edge.Cuts"];

/**
 * The view a question asks for. `design` is called only when the answer is not cached, so an
 * unchanged design is never loaded for it.
 */
export async function viewRegion(
  project: KicadProject,
  design: () => Design,
  question: ViewQuestion,
): Promise<CachedView> {
  if (question.document === "board" && !project.board) throw new ToolError("the project has no board (.kicad_pcb)");
  const docKey = documentKey(project, question.document);
  const key = viewKey(docKey, question);
  const cached = readView(project.repoRoot, key);
  if (cached) return cached;
  const view =
    question.document === "board"
      ? await boardView(project, design(), docKey, question)
      : await sheetView(project, design, docKey, question);
  writeView(project.repoRoot, key, view);
  return view;
}

async function sheetView(
  project: KicadProject,
  loadDesign: () => Design,
  docKey: string,
  question: SheetQuestion,
): Promise<CachedView> {
  // kicad-cli plots in its own process while the design loads here.
  const plotting = plotFolder(project.repoRoot, "schematic", docKey, async (scratch) => {
    const cli = await findKicadCli();
    const files = await exportSvg(project.schematic, scratch, { cli });
    writeFileSync(join(scratch, "pages.json"), JSON.stringify(files.map((f) => f.replace(/^.*[\\/]/, ""))));
  });
  plotting.catch(() => {});
  // Loading is synchronous: give the export its few asynchronous steps up to the spawn first.
  await Promise.race([plotting, Bun.sleep(100)]);
  const design = loadDesign();
  const region = sheetRegion(design, question);
  const legend = sheetLegend(design, region);
  const dir = await plotting;
  const pages = JSON.parse(readFileSync(join(dir, "pages.json"), "utf8")) as string[];
  if (pages.length !== design.schematic.instances.length) {
    throw new ToolError(
      `kicad-cli plotted ${pages.length} sheets, the design has ${design.schematic.instances.length}; view cannot tell which plot is which sheet`,
    );
  }
  const svg = withoutTimestamp(readFileSync(join(dir, pages[region.page]!), "utf8"));
  const box = {
    x0: region.box.x0 / IU_PER_MM,
    y0: region.box.y0 / IU_PER_MM,
    x1: region.box.x1 / IU_PER_MM,
    y1: region.box.y1 / IU_PER_MM,
  };
  return { legend, png: await rasterise(cropped(svg, box), box) };
}

async function boardView(
  project: KicadProject,
  design: Design,
  docKey: string,
  question: BoardQuestion & { layers?: string[] },
): Promise<CachedView> {
  const board = design.board!;
  const known = boardLayers(board);
  const asked = question.layers ?? DEFAULT_BOARD_LAYERS.filter((l) => known.has(l));
  const unknown = asked.filter((l) => !known.has(l));
  if (unknown.length > 0)
    throw new ToolError(`the board has no layer ${unknown.join(", ")}; its layers: ${[...known].join(", ")}`);
  const region = boardRegion(board, question);
  // kicad-cli draws the layers in the order given, the last on top.
  const layers = drawingOrder(asked, questionSide(board, question));
  const name = `board-${layers.join("+").replace(/[^A-Za-z0-9_.+-]/g, "_")}.svg`;
  const dir = await plotFolder(project.repoRoot, "board", `${docKey}`, async () => {});
  const file = join(dir, name);
  if (!existsSync(file)) await plotBoardUnfilled(project.board!, file, await findKicadCli(), layers);
  const lines = ratsnest(board, region);
  const plot = withoutTimestamp(readFileSync(file, "utf8"));
  // The pours go under everything kicad-cli drew; the ratsnest over it.
  const svg = afterOpeningTag(plot, zoneFillsSvg(board, region, layers)).replace(
    /<\/svg>\s*$/,
    `${ratsnestSvg(lines)}</svg>\n`,
  );
  return { legend: boardLegend(design, region, lines, layers), png: await rasterise(cropped(svg, region), region) };
}

/** `svg` with `content` inserted right after its root element's opening tag (drawn first, so beneath). */
function afterOpeningTag(svg: string, content: string): string {
  if (!content) return svg;
  const open = svg.search(/<svg[\s>]/);
  const end = open < 0 ? -1 : svg.indexOf(">", open);
  return end < 0 ? svg : `${svg.slice(0, end + 1)}${content}${svg.slice(end + 1)}`;
}

async function rasterise(svg: string, box: MmBox): Promise<string> {
  const w = box.x1 - box.x0;
  const h = box.y1 - box.y0;
  const scale = Math.min(PX_PER_MM, MAX_PX / Math.max(w, h));
  const width = Math.max(Math.min(MIN_PX, MAX_PX * (w / Math.max(w, h))), Math.round(w * scale));
  const png = await svgToPng(svg, { width });
  return Buffer.from(png.png).toString("base64");
}
