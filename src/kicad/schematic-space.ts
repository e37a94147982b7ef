/**
 * Where a new symbol can go on a sheet: rough bounding boxes of everything already drawn, the
 * usable page area, and a grid search for the nearest spot that overlaps nothing.
 *
 * Boxes are deliberately generous (text is estimated at one character height per character,
 * in both directions from its anchor, since justification varies): a new part that lands a
 * little far from the rest is harmless, one drawn over another part is not.
 */
import { child, children, flag, head, num, text, walk, type SList } from "./sexpr.ts";
import { placePoint, toIU, type Placement, type Point } from "./schematic-geometry.ts";
import type { SchematicFile } from "./schematic.ts";

/** Axis-aligned box in sheet IU (Y down). */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const CHAR = toIU(1.27);

export function pointBox(p: Point, margin = 0): Box {
  return { x0: p.x - margin, y0: p.y - margin, x1: p.x + margin, y1: p.y + margin };
}

export function union(a: Box | undefined, b: Box): Box {
  if (!a) return { ...b };
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

export function grow(box: Box, by: number): Box {
  return { x0: box.x0 - by, y0: box.y0 - by, x1: box.x1 + by, y1: box.y1 + by };
}

function translate(box: Box, d: Point): Box {
  return { x0: box.x0 + d.x, y0: box.y0 + d.y, x1: box.x1 + d.x, y1: box.y1 + d.y };
}

function intersects(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

function inside(a: Box, outer: Box): boolean {
  return a.x0 >= outer.x0 && a.y0 >= outer.y0 && a.x1 <= outer.x1 && a.y1 <= outer.y1;
}

function distance(a: Box, b: Box): number {
  const dx = Math.max(0, b.x0 - a.x1, a.x0 - b.x1);
  const dy = Math.max(0, b.y0 - a.y1, a.y0 - b.y1);
  return Math.hypot(dx, dy);
}

/** A text of `chars` characters anchored at `at`, reading along `angle`. */
export function textBox(at: Point, chars: number, angle: number): Box {
  const along = Math.max(1, chars) * CHAR;
  const across = CHAR * 1.5;
  return angle % 180 === 0 ? { x0: at.x - along, y0: at.y - across, x1: at.x + along, y1: at.y + across } : { x0: at.x - across, y0: at.y - along, x1: at.x + across, y1: at.y + along };
}

/** Unit vector (IU) a library pin points out of its symbol, in library coordinates (Y up). */
export function pinOutwardLib(orientation: number): Point {
  const rad = (orientation * Math.PI) / 180;
  return { x: -Math.round(Math.cos(rad)), y: -Math.round(Math.sin(rad)) };
}

/** A library direction mapped onto the sheet by a placement (rotation and mirror only). */
export function placeDirection(d: Point, placement: Placement): Point {
  const p = placePoint(d, { ...placement, at: { x: 0, y: 0 } });
  return { x: p.x + 0, y: p.y + 0 };
}

/**
 * Box of one unit's drawing and pins in library coordinates (IU, Y up), from the embedded
 * library symbol. Each pin is extended outward by `pinReach` so room is kept for the wire stub
 * and label a later `connect` puts there.
 */
export function libUnitBox(libNode: SList, unit: number, bodyStyle: number, pinReach = 0): Box | undefined {
  let box: Box | undefined;
  const add = (x: number, y: number, r = 0) => {
    box = union(box, { x0: x - r, y0: y - r, x1: x + r, y1: y + r });
  };
  const libName = text(libNode, 1) ?? "";
  for (const sub of children(libNode, "symbol")) {
    const match = /_(\d+)_(\d+)$/.exec((text(sub, 1) ?? "").slice(libName.split(":").pop()!.length));
    const u = match ? Number(match[1]) : 0;
    const b = match ? Number(match[2]) : 0;
    if ((u !== 0 && u !== unit) || (b !== 0 && b !== bodyStyle)) continue;
    walk(sub, (node) => {
      const name = head(node);
      if (name === "pin") {
        const at = child(node, "at");
        if (!at) return false;
        const tip = { x: toIU(num(at, 1) ?? 0), y: toIU(num(at, 2) ?? 0) };
        const length = toIU(num(child(node, "length") ?? node, 1) ?? 0);
        const out = pinOutwardLib(num(at, 3) ?? 0);
        add(tip.x - out.x * length, tip.y - out.y * length);
        add(tip.x + out.x * pinReach, tip.y + out.y * pinReach);
        add(tip.x, tip.y);
        return false;
      }
      if (name === "circle") {
        const center = child(node, "center");
        const radius = toIU(num(child(node, "radius") ?? node, 1) ?? 0);
        if (center) add(toIU(num(center, 1) ?? 0), toIU(num(center, 2) ?? 0), radius);
        return false;
      }
      if (name === "xy" || name === "start" || name === "end" || name === "mid" || name === "center" || name === "at") {
        add(toIU(num(node, 1) ?? 0), toIU(num(node, 2) ?? 0));
        return false;
      }
      return true;
    });
  }
  return box;
}

/** A library-coordinate box placed on the sheet. */
export function placeBox(box: Box, placement: Placement): Box {
  const a = placePoint({ x: box.x0, y: box.y0 }, placement);
  const b = placePoint({ x: box.x1, y: box.y1 }, placement);
  return { x0: Math.min(a.x, b.x), y0: Math.min(a.y, b.y), x1: Math.max(a.x, b.x), y1: Math.max(a.y, b.y) };
}

/** Box of a visible `(property …)` of a placed item, or undefined when hidden or empty. */
export function fieldBox(prop: SList): Box | undefined {
  const effects = child(prop, "effects");
  if (flag(prop, "hide") || (effects && flag(effects, "hide"))) return undefined;
  const value = text(prop, 2) ?? "";
  const at = child(prop, "at");
  if (!at || value === "") return undefined;
  return textBox({ x: toIU(num(at, 1) ?? 0), y: toIU(num(at, 2) ?? 0) }, value.length, num(at, 3) ?? 0);
}

/** Everything drawn on a sheet, as boxes (symbols with their visible fields, wires, labels, sheets, text, graphics). */
export function occupiedBoxes(file: SchematicFile): Box[] {
  const boxes: Box[] = [];
  for (const symbol of file.symbols) {
    const body = symbol.lib ? libUnitBox(symbol.lib.node, symbol.unit, symbol.bodyStyle) : undefined;
    boxes.push(body ? placeBox(body, symbol.placement) : pointBox(symbol.placement.at, CHAR * 2));
    for (const field of symbol.fields) {
      const box = fieldBox(field.node);
      if (box) boxes.push(box);
    }
  }
  for (const line of [...file.wires, ...file.buses]) boxes.push(union(pointBox(line.a), pointBox(line.b)));
  for (const label of file.labels) {
    const box = textBox(label.at, label.text.length + 2, label.rotation);
    boxes.push(box);
  }
  for (const marker of [...file.junctions, ...file.noConnects]) boxes.push(pointBox(marker.at, CHAR));
  for (const entry of file.busEntries) boxes.push(union(pointBox(entry.at), pointBox(entry.end)));
  for (const sheet of file.sheets) {
    boxes.push(grow({ x0: sheet.at.x, y0: sheet.at.y, x1: sheet.at.x + sheet.size.x, y1: sheet.at.y + sheet.size.y }, CHAR * 2));
    for (const pin of sheet.pins) boxes.push(textBox(pin.at, pin.name.length + 2, 0));
  }
  const drawn = new Set(["text", "text_box", "polyline", "rectangle", "circle", "arc", "bezier", "image", "table", "rule_area", "netclass_flag"]);
  for (const item of file.doc.root.items) {
    if (item.type !== "list" || !drawn.has(head(item) ?? "")) continue;
    let box: Box | undefined;
    walk(item, (node) => {
      const name = head(node);
      if (name === "xy" || name === "start" || name === "end" || name === "at" || name === "center") {
        box = union(box, pointBox({ x: toIU(num(node, 1) ?? 0), y: toIU(num(node, 2) ?? 0) }));
        return false;
      }
      return true;
    });
    if (!box) continue;
    const body = head(item) === "text" ? text(item, 1) ?? "" : "";
    boxes.push(body ? union(box, textBox({ x: box.x0, y: box.y0 }, body.length, 0)) : box);
  }
  return boxes;
}

/** Paper sizes in mm (landscape), as KiCad's PAGE_INFO knows them. */
const PAPER: Record<string, [number, number]> = {
  A5: [210, 148],
  A4: [297, 210],
  A3: [420, 297],
  A2: [594, 420],
  A1: [841, 594],
  A0: [1189, 841],
  A: [279.4, 215.9],
  B: [431.8, 279.4],
  C: [558.8, 431.8],
  D: [863.6, 558.8],
  E: [1117.6, 863.6],
  USLetter: [279.4, 215.9],
  USLegal: [355.6, 215.9],
  USLedger: [431.8, 279.4],
};

/** The drawing frame's border and the default title block (bottom right), in mm. */
const BORDER_MM = 12.7;
const TITLE_BLOCK_MM: [number, number] = [115, 40];

/** The page inside its frame, and the title block to keep clear of. */
export function pageArea(file: SchematicFile): { area: Box; titleBlock: Box } {
  const paper = child(file.doc.root, "paper");
  const name = paper ? (text(paper, 1) ?? "A4") : "A4";
  let [w, h] = name === "User" && paper ? [num(paper, 2) ?? 297, num(paper, 3) ?? 210] : (PAPER[name] ?? PAPER.A4!);
  if (paper && paper.items.some((i) => i.type === "atom" && i.raw === "portrait")) [w, h] = [h, w];
  const area = { x0: toIU(BORDER_MM), y0: toIU(BORDER_MM), x1: toIU(w - BORDER_MM), y1: toIU(h - BORDER_MM) };
  const titleBlock = { x0: area.x1 - toIU(TITLE_BLOCK_MM[0]), y0: area.y1 - toIU(TITLE_BLOCK_MM[1]), x1: area.x1, y1: area.y1 };
  return { area, titleBlock };
}

/** Origins are searched on this grid (a multiple of KiCad's 1.27 mm connection grid). */
const SEARCH_GRID = toIU(2.54);
/** Clearance kept between the new symbol's box and anything drawn. */
const CLEARANCE = toIU(1.27);

/**
 * The on-grid origin nearest the existing content where `footprint` (a box relative to the
 * origin) fits inside the page, off the title block, and clear of every `occupied` box; ties
 * go to the top-left. Undefined when the page is full.
 */
export function findFreeOrigin(page: { area: Box; titleBlock: Box }, occupied: Box[], footprint: Box): Point | undefined {
  const blocked = [...occupied.map((b) => grow(b, CLEARANCE)), page.titleBlock];
  let content: Box | undefined;
  for (const b of occupied) content = union(content, b);
  const target = content ?? page.area;
  const center = { x: (target.x0 + target.x1) / 2, y: (target.y0 + target.y1) / 2 };
  let best: { at: Point; near: number; centre: number } | undefined;
  const start = (v: number) => Math.ceil(v / SEARCH_GRID) * SEARCH_GRID;
  for (let y = start(page.area.y0 - footprint.y0); y + footprint.y1 <= page.area.y1; y += SEARCH_GRID) {
    for (let x = start(page.area.x0 - footprint.x0); x + footprint.x1 <= page.area.x1; x += SEARCH_GRID) {
      const box = translate(footprint, { x, y });
      if (!inside(box, page.area) || blocked.some((b) => intersects(box, b))) continue;
      const near = content ? distance(box, content) : 0;
      const centre = Math.hypot((box.x0 + box.x1) / 2 - center.x, (box.y0 + box.y1) / 2 - center.y);
      if (!best || near < best.near || (near === best.near && centre < best.centre)) best = { at: { x, y }, near, centre };
    }
  }
  return best?.at;
}
