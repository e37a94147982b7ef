/**
 * Board comparisons for tests of edits that add copper: a board's text with every zone's fills
 * taken out (what a refill leaves alone), and with the given footprints, tracks and vias taken
 * out too (what an added part leaves alone); and its fills against KiCad's own refill of the
 * same board, around where parts are and were.
 */
import { Clipper, FillRule } from "clipper2-ts";
import { copyFileSync, existsSync } from "node:fs";
import { basename, join } from "node:path";
import { growBox } from "../../src/kicad/board/clearance/geometry.ts";
import { copperLayers, footprintItems } from "../../src/kicad/board/clearance/items.ts";
import { Board, textStringIndex, type BBox } from "../../src/kicad/board/model.ts";
import { fillWithKicad } from "../../src/kicad/board/zones/refill.ts";
import { boardZones, filledPolygons, insidePolygon, zoneFills, type Zone } from "../../src/kicad/board/zones/zones.ts";
import { children, head, parseSexpr, printSexpr, removeChild, text } from "../../src/kicad/sexpr/index.ts";
import { makeTempDir } from "./kicad.ts";

/**
 * The board's text without zone fills, without the footprints `refs`, without the tracks and
 * vias not in `keepCopper`, and without the net declarations `newNets` (the nets a change adds).
 */
export function withoutAdditions(
  bytes: Uint8Array | string,
  refs: string[] = [],
  keepCopper?: Set<string>,
  newNets: string[] = [],
): string {
  const doc = parseSexpr(bytes);
  for (const zone of children(doc.root, "zone"))
    for (const fill of children(zone, "filled_polygon")) removeChild(zone, fill);
  for (const item of [...doc.root.items]) {
    if (item.type !== "list") continue;
    const kind = head(item);
    if (kind === "footprint" && refs.includes(referenceOf(item))) removeChild(doc.root, item);
    else if (keepCopper && (kind === "segment" || kind === "via") && !keepCopper.has(printSexpr(item).trim()))
      removeChild(doc.root, item);
    else if (kind === "net" && newNets.includes(text(item, 2) ?? "")) removeChild(doc.root, item);
  }
  return printSexpr(doc);
}

/** The tracks and vias of a board, printed, to tell the new ones from those that were there. */
export function copperItems(bytes: Uint8Array | string): Set<string> {
  const doc = parseSexpr(bytes);
  return new Set(
    doc.root.items.flatMap((item) =>
      item.type === "list" && (head(item) === "segment" || head(item) === "via") ? [printSexpr(item).trim()] : [],
    ),
  );
}

function referenceOf(fp: import("../../src/kicad/sexpr/index.ts").SList): string {
  const property = children(fp, "property").find((p) => text(p, 1) === "Reference");
  if (property) return text(property, 2) ?? "";
  const fpText = children(fp, "fp_text").find((t) => text(t, 1) === "reference");
  return (fpText && text(fpText, textStringIndex(fpText))) ?? "";
}

/** The names of the nets a board declares at its top level (KiCad 9 boards declare none). */
export function declaredNets(bytes: Uint8Array | string): string[] {
  return children(parseSexpr(bytes).root, "net").map((n) => text(n, 2) ?? "");
}

type Polygon = { x: number; y: number }[];

/**
 * The area, mm², that lies in one set of fills but not in the other; with `within` (boxes),
 * only there: how far a refill is from KiCad's own refill of the same board.
 */
export function differingArea(
  a: Polygon[],
  b: Polygon[],
  within?: { minX: number; minY: number; maxX: number; maxY: number }[],
): number {
  let xor = Clipper.xorD(a, b, FillRule.NonZero, 6);
  if (within) {
    const boxes = within.map((w) => [
      { x: w.minX, y: w.minY },
      { x: w.maxX, y: w.minY },
      { x: w.maxX, y: w.maxY },
      { x: w.minX, y: w.maxY },
    ]);
    xor = Clipper.intersectD(xor, Clipper.unionD(boxes, FillRule.NonZero), FillRule.NonZero, 6);
  }
  return xor.reduce((sum, path) => sum + Math.abs(Clipper.areaD(path)), 0);
}

/** Area, mm², a zone may differ from KiCad's refill by inside the window: rounding, not copper. */
const SAME_FILL = 0.01;

/** Where to compare fills: a box on some copper layers. */
export interface Around {
  box: BBox;
  layers: ReadonlySet<string>;
}

/**
 * Where `ref`'s pads are on the board file, grown by 1 mm, on their layers: where the refill
 * reaches from them (`connect-added.ts`), so every pad connection there is KiCad's. Farther
 * away, or on a layer the pads are not on, a connection the change does not reach keeps its
 * saved fill, and KiCad 9 draws those of a board KiCad 6 filled otherwise.
 */
export function around(boardFile: string, ref: string): Around[] {
  const board = Board.load(boardFile);
  const fp = board.footprint(ref);
  if (!fp) return [];
  return footprintItems(fp.node, copperLayers(board))
    .filter((i) => i.kind === "pad")
    .map((p) => ({ box: growBox(p.box, 1), layers: p.layers }));
}

/**
 * A copy of the board file (its project and rules beside it) with every fillable zone refilled
 * by KiCad's own filler: the file's path. `board`, when given, is refilled in the file's place
 * (the base of a change, beside the changed file's project).
 */
export async function kicadRefill(boardFile: string, board = Board.load(boardFile)): Promise<string> {
  const whole = join(await makeTempDir(), basename(boardFile));
  for (const ext of [".kicad_pro", ".kicad_dru"]) {
    const beside = boardFile.replace(/\.kicad_pcb$/, ext);
    if (existsSync(beside)) copyFileSync(beside, whole.replace(/\.kicad_pcb$/, ext));
  }
  await fillWithKicad(
    board,
    boardFile,
    boardZones(board.root)
      .filter((z) => z.filled && !z.ruleArea)
      .map((z) => z.id),
    whole,
  );
  return whole;
}

/**
 * Every zone of the board file against KiCad's refill of every zone of the same file (`refilled`,
 * from {@link kicadRefill}; made when absent), inside `within` on its layers: the zones that
 * differ, with by how much.
 */
export async function differingFromKicad(boardFile: string, within: Around[], refilled?: string): Promise<string[]> {
  const board = Board.load(boardFile);
  const theirs = boardZones(Board.load(refilled ?? (await kicadRefill(boardFile))).root);
  return boardZones(board.root)
    .filter((z) => z.filled && !z.ruleArea)
    .flatMap((zone) => {
      const kicad = theirs.find((t) => t.id === zone.id)!;
      return copperLayers(board).flatMap((layer) => {
        const boxes = within.filter((w) => w.layers.has(layer)).map((w) => w.box);
        if (boxes.length === 0) return [];
        const area = differingArea(filledPolygons(zone, layer), filledPolygons(kicad, layer), boxes);
        return area > SAME_FILL ? [`${zone.net} on ${layer}: ${area.toFixed(4)} mm²`] : [];
      });
    });
}

/** A point with a millimetre of `layer`'s fill on every side, in one of `zones`, if there is one. */
export function deepInside(zones: Zone[], layer: string): { x: number; y: number } | undefined {
  for (const zone of zones) {
    const fills = zoneFills(zone)
      .filter((f) => f.layer === layer)
      .map((f) => f.points);
    if (fills.length === 0) continue;
    for (let x = Math.ceil(zone.box.minX); x < zone.box.maxX; x += 0.5) {
      for (let y = Math.ceil(zone.box.minY); y < zone.box.maxY; y += 0.5) {
        const around = [
          [0, 0],
          [1, 0],
          [-1, 0],
          [0, 1],
          [0, -1],
        ].map(([dx, dy]) => ({ x: x + dx!, y: y + dy! }));
        if (fills.some((f) => around.every((p) => insidePolygon(f, p)))) return { x, y };
      }
    }
  }
  return undefined;
}
