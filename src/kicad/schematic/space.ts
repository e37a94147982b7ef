/**
 * What is drawn where on a sheet: rough bounding boxes of everything already there (symbols and
 * their visible fields, wires, labels, sheets, text, graphics), the designer's blocks (the
 * rectangles drawn around functional groups), the usable page area, and an index that answers
 * "is this box free?" quickly on sheets with thousands of items.
 *
 * Boxes err on the generous side (text is estimated a little wider than KiCad's stroke font
 * draws it): a new part that lands a little far from the rest is harmless, one drawn over
 * another part is not. Graphic lines and rectangle outlines are strokes, not filled areas, so a
 * part may go inside a block but never across its border.
 */
import { child, children, flag, head, num, text, walk, type SList } from "../sexpr/index.ts";
import { placePoint, pointIuOf, toIU, type PlacementIu, type PointIu } from "./geometry.ts";
import type { SchematicFile } from "./model/schematic-file.ts";
import { unitPins, type LibPin, type PlacedSymbol } from "./model/symbols.ts";
import type { BusEntry, Label, Line, SheetSymbol } from "./model/sheet-items.ts";
import { textAdvance } from "../stroke-font.ts";
import { expandText, fieldsResolver, sheetResolver, symbolResolver, type Resolver } from "./text-vars.ts";

/** Axis-aligned box in sheet IU (Y down). */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const CHAR = toIU(1.27);

export function pointBox(p: PointIu, margin = 0): Box {
  return { x0: p.x - margin, y0: p.y - margin, x1: p.x + margin, y1: p.y + margin };
}

export function union(a: Box | undefined, b: Box): Box {
  if (!a) return { ...b };
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

export function grow(box: Box, by: number): Box {
  return { x0: box.x0 - by, y0: box.y0 - by, x1: box.x1 + by, y1: box.y1 + by };
}

export function translate(box: Box, d: PointIu): Box {
  return { x0: box.x0 + d.x, y0: box.y0 + d.y, x1: box.x1 + d.x, y1: box.y1 + d.y };
}

export function intersects(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

export function inside(a: Box, outer: Box): boolean {
  return a.x0 >= outer.x0 && a.y0 >= outer.y0 && a.x1 <= outer.x1 && a.y1 <= outer.y1;
}

/** Gap between two boxes (0 when they touch or overlap). */
export function distance(a: Box, b: Box): number {
  const dx = Math.max(0, b.x0 - a.x1, a.x0 - b.x1);
  const dy = Math.max(0, b.y0 - a.y1, a.y0 - b.y1);
  return Math.hypot(dx, dy);
}

/** Advance of one character of KiCad's stroke font, generously, as a share of the font size. */
const CHAR_ADVANCE = 0.9;

/**
 * A text of `chars` characters anchored at `at`, reading along `angle`, extending both ways
 * from the anchor (for text whose justification is not known on the sheet).
 */
export function textBox(at: PointIu, chars: number, angle: number, size = CHAR): Box {
  const along = Math.max(1, chars) * size * CHAR_ADVANCE;
  const across = size * 0.9;
  return angle % 180 === 0
    ? { x0: at.x - along, y0: at.y - across, x1: at.x + along, y1: at.y + across }
    : { x0: at.x - across, y0: at.y - along, x1: at.x + across, y1: at.y + along };
}

/**
 * A text drawn from `at` along the screen direction `angle` (0 right, 90 up, 180 left, 270
 * down), `length` IU long and `size` high, centred across its baseline: 0.75 of the size each
 * side, where eeschema draws a sheet or global label's flag half the size each side and its
 * glyphs about as high, so that two such labels of 1.524 mm text a grid step apart, as rows of
 * them are drawn, are not taken for overlapping.
 */
function runBox(at: PointIu, angle: number, length: number, size: number): Box {
  const a = ((angle % 360) + 360) % 360;
  const across = size * 0.75;
  if (a === 0) return { x0: at.x, y0: at.y - across, x1: at.x + length, y1: at.y + across };
  if (a === 180) return { x0: at.x - length, y0: at.y - across, x1: at.x, y1: at.y + across };
  if (a === 90) return { x0: at.x - across, y0: at.y - length, x1: at.x + across, y1: at.y };
  return { x0: at.x - across, y0: at.y, x1: at.x + across, y1: at.y + length };
}

/**
 * Box of a label: its text runs away from the anchor; global and sheet labels add their flag
 * shape, centred on the anchor's line. A local label's text stands on its wire, on the side its
 * letters' tops face: above a horizontal label, left of a vertical one (KiCad keeps text
 * readable), its glyphs from about 0.4 to 1.3 of its size off the wire (kicad-cli's SVG), so
 * its band is the wire's line to 1.5 sizes off it. Centred on the wire instead, two labels on
 * wires a grid step apart, as a bus's fan draws them, would be taken for crossing.
 */
export function labelBox(at: PointIu, content: string, angle: number, flagged: boolean, size = CHAR): Box {
  const length = Math.ceil((textAdvance(content) + (flagged ? 2.5 : 0.5)) * size);
  const run = runBox(at, angle, length, size);
  if (flagged) return run;
  const band = Math.round(size * LOCAL_LABEL_BAND);
  return ((angle % 180) + 180) % 180 === 0
    ? { ...run, y0: at.y - band, y1: at.y }
    : { ...run, x0: at.x - band, x1: at.x };
}

/** How far a local label's text reaches off its wire, in font sizes (see `labelBox`). */
const LOCAL_LABEL_BAND = 1.5;

/** Unit vector (IU) a library pin points out of its symbol, in library coordinates (Y up). */
export function pinOutwardLib(orientation: number): PointIu {
  const rad = (orientation * Math.PI) / 180;
  return { x: -Math.round(Math.cos(rad)), y: -Math.round(Math.sin(rad)) };
}

/** A library direction mapped onto the sheet by a placement (rotation and mirror only). */
export function placeDirection(d: PointIu, placement: PlacementIu): PointIu {
  const p = placePoint(d, { ...placement, at: { x: 0, y: 0 } });
  return { x: p.x + 0, y: p.y + 0 };
}

/**
 * Box of one unit's drawing and pins in library coordinates (IU, Y up), from the embedded
 * library symbol. Each pin is extended outward by `pinReach` so room is kept for the wire stub
 * and label a later `connect` puts there; with `"no pins"` the box holds the graphics alone.
 *
 * Kept per library symbol: every placement and check of an edit boxes the whole sheet afresh,
 * and no edit changes a library symbol's drawing in place (a different one goes in beside it as
 * a new node, see `ensureLibSymbol`).
 */
export function libUnitBox(
  libNode: SList,
  unit: number,
  bodyStyle: number,
  pinReach: number | "no pins" = 0,
): Box | undefined {
  const key = `${unit}:${bodyStyle}:${pinReach}`;
  let boxes = unitBoxes.get(libNode);
  if (!boxes) unitBoxes.set(libNode, (boxes = new Map()));
  if (!boxes.has(key)) boxes.set(key, traceUnitBox(libNode, unit, bodyStyle, pinReach));
  const box = boxes.get(key);
  return box && { ...box };
}

/** `libUnitBox`'s boxes by library symbol node, then by unit, body style and pin reach. */
const unitBoxes = new WeakMap<SList, Map<string, Box | undefined>>();

/** `libUnitBox`, worked out from the library symbol's graphics and pins. */
function traceUnitBox(libNode: SList, unit: number, bodyStyle: number, pinReach: number | "no pins"): Box | undefined {
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
        if (!at || pinReach === "no pins") return false;
        const tip = pointIuOf(at)!;
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
export function placeBox(box: Box, placement: PlacementIu): Box {
  const a = placePoint({ x: box.x0, y: box.y0 }, placement);
  const b = placePoint({ x: box.x1, y: box.y1 }, placement);
  return { x0: Math.min(a.x, b.x), y0: Math.min(a.y, b.y), x1: Math.max(a.x, b.x), y1: Math.max(a.y, b.y) };
}

/** Font height of a text's `(effects (font (size h w)))`, IU (KiCad's 1.27 mm default). */
export function fontSize(item: SList): number {
  const size = child(child(child(item, "effects") ?? item, "font") ?? item, "size");
  return size ? toIU(Math.max(num(size, 1) ?? 1.27, num(size, 2) ?? 1.27)) : CHAR;
}

function justification(item: SList): Set<string> {
  const justify = child(child(item, "effects") ?? item, "justify");
  return new Set(justify ? justify.items.slice(1).flatMap((a) => (a.type === "atom" ? [a.raw] : [])) : []);
}

/**
 * A text box from its anchor, honouring justification when the screen direction is known:
 * `horizontal` text reads left to right, `flipX` when a symbol transform mirrors its
 * justification (KiCad keeps field text readable, flipping left and right instead).
 */
function justifiedBox(
  at: PointIu,
  lines: string[],
  size: number,
  horizontal: boolean,
  justify: Set<string> | undefined,
  flipX = false,
): Box {
  const length = Math.max(1, ...lines.map((l) => l.length)) * size * CHAR_ADVANCE;
  const height = Math.max(1, lines.length) * size * 1.6;
  if (!horizontal || !justify) {
    const across = Math.max(size * 0.9, height / 2);
    return horizontal
      ? { x0: at.x - length, y0: at.y - across, x1: at.x + length, y1: at.y + across }
      : { x0: at.x - across, y0: at.y - length, x1: at.x + across, y1: at.y + length };
  }
  let left = justify.has("left");
  let right = justify.has("right");
  if (flipX) [left, right] = [right, left];
  const x0 = left ? at.x : right ? at.x - length : at.x - length / 2;
  const y0 = justify.has("bottom") ? at.y - height : justify.has("top") ? at.y : at.y - height / 2;
  return { x0: x0 - size * 0.2, y0: y0 - size * 0.2, x1: x0 + length + size * 0.2, y1: y0 + height + size * 0.2 };
}

/**
 * Box of a visible `(property …)`, or undefined when hidden or empty. With the placement of the
 * symbol it belongs to, the text is placed as KiCad draws it (justification mirrored with the
 * symbol for upright and upside-down symbols); otherwise it is assumed to spread both ways.
 * With `resolve`, its text variables are expanded first, as eeschema draws them (text-vars.ts).
 */
export function fieldBox(prop: SList, placement?: PlacementIu, resolve?: Resolver): Box | undefined {
  const effects = child(prop, "effects");
  if (flag(prop, "hide") || (effects && flag(effects, "hide"))) return undefined;
  const written = text(prop, 2) ?? "";
  const value = resolve ? expandText(written, resolve) : written;
  const at = child(prop, "at");
  if (!at || value === "") return undefined;
  // eeschema draws a sheet's file name after a "File: " caption.
  const shown = SHEET_FILE_FIELDS.has(text(prop, 1) ?? "") ? `File: ${value}` : value;
  const anchor = pointIuOf(at)!;
  // eeschema draws a field of a symbol turned by a quarter at the other angle than stored.
  const turned = placement !== undefined && placement.rotation % 180 !== 0;
  const horizontal = ((num(at, 3) ?? 0) % 180 === 0) !== turned;
  const known = placement !== undefined && !turned;
  const flipX = known && placeDirection({ x: 1, y: 0 }, placement!).x < 0;
  return justifiedBox(anchor, [shown], fontSize(prop), horizontal, known ? justification(prop) : undefined, flipX);
}

/**
 * The boxes of fields about to be written on a symbol placed at `placement`, each `${NAME}`
 * resolved among them, then by the sheet's variables (`sheet`), as eeschema will.
 */
export function freshFieldBoxes(props: SList[], placement: PlacementIu, sheet?: Resolver): Box[] {
  const own = fieldsResolver(props, sheet);
  return props.flatMap((p) => fieldBox(p, placement, own) ?? []);
}

/** A global label's page-reference field, as KiCad 9 and KiCad 8 and before name it. */
const PAGE_REFS_FIELDS = new Set(["Intersheetrefs", "Intersheet References"]);

/** A global label's page-reference field (`${INTERSHEET_REFS}`), if it has one. */
export function pageRefsField(label: SList): SList | undefined {
  return children(label, "property").find((p) => PAGE_REFS_FIELDS.has(text(p, 1) ?? ""));
}

/**
 * Where eeschema puts a global label's page references when it lays the label's fields out:
 * just past the far end of its flag, reading the label's way.
 */
export function pageRefsAnchor(at: PointIu, labelText: string, rotation: number, size: number): PointIu {
  const box = labelBox(at, labelText, rotation, true, size);
  return [
    { x: box.x1, y: at.y },
    { x: at.x, y: box.y0 },
    { x: box.x0, y: at.y },
    { x: at.x, y: box.y1 },
  ][(((rotation / 90) % 4) + 4) % 4]!;
}

/**
 * The box of a global label's page references, `refs` as drawn (none without the field). A label whose fields are laid
 * out by eeschema (`fields_autoplaced`) gets them laid out again when it is loaded, at its own
 * measure of the flag, which an older KiCad's file may not share (flat_hierarchy's are drawn
 * 0.8 mm past where the file puts them): such a box takes in both where the file puts them and
 * where `pageRefsAnchor` does, whose flag is measured generously.
 */
function pageRefsBox(label: Label, refs: string, vars: Resolver): Box | undefined {
  const field = pageRefsField(label.node);
  if (!field) return undefined;
  const written = fieldBox(field, SHEET_PLACEMENT, (name) => (name === "INTERSHEET_REFS" ? refs : vars(name)));
  if (!written || !flag(label.node, "fields_autoplaced")) return written;
  const anchor = pageRefsAnchor(label.at, label.text, label.rotation, fontSize(label.node));
  const backwards = label.rotation === 180 || label.rotation === 270;
  const laidOut = justifiedBox(
    anchor,
    [refs],
    fontSize(field),
    label.rotation % 180 === 0,
    new Set([backwards ? "right" : "left"]),
  );
  return union(written, laidOut);
}

/** What the page references of global label `name` are called among the drawn items. */
export function pageRefsWhat(name: string): string {
  return `global label ${name}'s page references`;
}

/** A sheet's file-name field, as KiCad 7 and later and KiCad 6 name it. */
const SHEET_FILE_FIELDS = new Set(["Sheetfile", "Sheet file"]);

/** Where a sheet's fields are placed from: the sheet itself, which never turns or mirrors, so their justification holds as written. */
const SHEET_PLACEMENT: PlacementIu = { at: { x: 0, y: 0 }, rotation: 0 };

/** Thin boxes along a polyline's segments (a closed one ends where it starts). */
function strokeBoxes(points: PointIu[]): Box[] {
  const out: Box[] = [];
  for (let i = 1; i < points.length; i++) out.push(union(pointBox(points[i - 1]!), pointBox(points[i]!)));
  return out;
}

function xyPoints(node: SList): PointIu[] {
  return children(child(node, "pts") ?? node, "xy").map((xy) => pointIuOf(xy)!);
}

/** The four edges of a rectangle item, as strokes. */
function rectangleEdges(item: SList): Box[] {
  const a = pointIuOf(child(item, "start"));
  const b = pointIuOf(child(item, "end"));
  if (!a || !b) return [];
  return strokeBoxes([a, { x: b.x, y: a.y }, b, { x: a.x, y: b.y }, a]);
}

/** Every point an item names (its `xy`, `start`, `end`, `at`, `center` and `mid`), in the order it names them. */
export function nodePoints(item: SList): PointIu[] {
  const points: PointIu[] = [];
  walk(item, (node) => {
    const name = head(node);
    if (name === "xy" || name === "start" || name === "end" || name === "at" || name === "center" || name === "mid") {
      points.push(pointIuOf(node)!);
      return false;
    }
    return true;
  });
  return points;
}

/** Every point an item names, as one box (for items drawn filled or too irregular to trace). */
function pointsBox(item: SList): Box | undefined {
  let box: Box | undefined;
  for (const p of nodePoints(item)) box = union(box, pointBox(p));
  return box;
}

/** The resolution eeschema draws a picture at (BITMAP_BASE; a PNG's own pHYs is not used). */
const IMAGE_PPI = 300;

/**
 * The area a pasted picture covers: its pixels at 300 ppi times its scale, centred on its
 * position, as eeschema draws it. A picture whose data cannot be read counts as a 10 mm square.
 */
function imageBox(item: SList): Box | undefined {
  const at = pointIuOf(child(item, "at"));
  if (!at) return undefined;
  const scale = num(child(item, "scale") ?? item, 1) ?? 1;
  const data = child(item, "data");
  // The width and height are in the PNG's header, within its first 24 bytes (32 base64 characters).
  const start = data
    ? data.items
        .slice(1, 3)
        .map((i) => (i.type === "atom" ? i.raw.replace(/"/g, "") : ""))
        .join("")
    : "";
  const header = Buffer.from(start.slice(0, 32), "base64");
  if (header.length < 24 || header.readUInt32BE(0) !== 0x89504e47 || header.toString("latin1", 12, 16) !== "IHDR")
    return pointBox(at, toIU(10));
  const mmPerPixel = (25.4 / IMAGE_PPI) * scale;
  const half = {
    x: toIU((header.readUInt32BE(16) * mmPerPixel) / 2),
    y: toIU((header.readUInt32BE(20) * mmPerPixel) / 2),
  };
  return { x0: at.x - half.x, y0: at.y - half.y, x1: at.x + half.x, y1: at.y + half.y };
}

/** A table's cells, each at its position with its size. */
function tableBox(item: SList): Box[] {
  let box: Box | undefined;
  for (const cell of children(child(item, "cells") ?? item, "table_cell")) {
    const at = pointIuOf(child(cell, "at"));
    const size = child(cell, "size");
    if (at)
      box = union(box, {
        x0: at.x,
        y0: at.y,
        x1: at.x + toIU(num(size ?? cell, 1) ?? 0),
        y1: at.y + toIU(num(size ?? cell, 2) ?? 0),
      });
  }
  return box ? [box] : [];
}

/** Boxes of a top-level graphic or text item: strokes for lines and outlines, areas for the rest. */
function graphicBoxes(item: SList, resolve?: Resolver): Box[] {
  switch (head(item)) {
    case "polyline":
    case "rule_area":
      return strokeBoxes(xyPoints(child(item, "polyline") ?? item));
    case "rectangle":
      return rectangleEdges(item);
    case "text": {
      const at = child(item, "at");
      if (!at) return [];
      const anchor = pointIuOf(at)!;
      return [
        justifiedBox(
          anchor,
          expandText(text(item, 1) ?? "", resolve ?? (() => undefined)).split("\n"),
          fontSize(item),
          (num(at, 3) ?? 0) % 180 === 0,
          justification(item),
        ),
      ];
    }
    case "text_box": {
      const at = pointIuOf(child(item, "at"));
      const size = child(item, "size");
      if (!at || !size) return [];
      return [{ x0: at.x, y0: at.y, x1: at.x + toIU(num(size, 1) ?? 0), y1: at.y + toIU(num(size, 2) ?? 0) }];
    }
    case "image": {
      const box = imageBox(item);
      return box ? [box] : [];
    }
    case "table":
      return tableBox(item);
    case "netclass_flag": {
      const at = pointIuOf(child(item, "at"));
      return at ? [grow(pointBox(at), toIU(3.81))] : [];
    }
    case "circle":
    case "arc":
    case "bezier": {
      const box = pointsBox(item);
      if (!box) return [];
      const radius = head(item) === "circle" ? toIU(num(child(item, "radius") ?? item, 1) ?? 0) : 0;
      return [grow(box, radius)];
    }
    default:
      return [];
  }
}

/** The box of a placed symbol's drawing and pins (a small square when its library symbol is missing). */
export function symbolBodyBox(symbol: PlacedSymbol): Box {
  const body = symbol.lib ? libUnitBox(symbol.lib.node, symbol.unit, symbol.bodyStyle) : undefined;
  return body ? placeBox(body, symbol.placement) : pointBox(symbol.placement.at, CHAR * 2);
}

/**
 * What a placed symbol draws, box by box, as eeschema draws it: its graphics, and each visible
 * pin's line with its number and name beside it. Finer than `symbolBodyBox`, which spans pin end
 * to pin end: a label just below a lone supply pin's end, or a wire past the corner beside it,
 * lies clear of the drawing though inside that span.
 */
export function symbolDrawingBoxes(symbol: PlacedSymbol): Box[] {
  const lib = symbol.lib;
  if (!lib) return [symbolBodyBox(symbol)];
  const body = libUnitBox(lib.node, symbol.unit, symbol.bodyStyle, "no pins");
  const names = child(lib.node, "pin_names");
  const numbers = child(lib.node, "pin_numbers");
  const shown: PinText = {
    nameOffset: toIU(num(child(names ?? lib.node, "offset") ?? lib.node, 1) ?? DEFAULT_PIN_NAME_OFFSET_MM),
    names: !(names && flag(names, "hide")),
    numbers: !(numbers && flag(numbers, "hide")),
  };
  const out = body ? [placeBox(body, symbol.placement)] : [];
  for (const pin of unitPins(symbol, symbol.unit)) if (!pin.hidden) out.push(...pinBoxes(pin, symbol.placement, shown));
  return out;
}

/** How a library symbol shows its pins' texts: `(pin_names (offset …) hide)`, `(pin_numbers hide)`. */
interface PinText {
  /** Gap between the body's edge and a name drawn inside it; 0 draws names outside, above the pin. */
  nameOffset: number;
  names: boolean;
  numbers: boolean;
}

/** How far off its pin's line a number or name drawn beside it reaches, beyond 1.2 of its size. */
const PIN_TEXT_MARGIN = toIU(0.3);

/** KiCad's pin name offset where a library symbol writes none (20 mils). */
const DEFAULT_PIN_NAME_OFFSET_MM = 0.508;

/**
 * A pin's line, and its number and name as eeschema places them (sch_painter): with a name
 * offset the name is drawn inside the body from that gap on, centred on the pin's line, and
 * the number above the line (left of a vertical pin) at its middle; without one the name goes
 * above and the number below, both at the middle. Such a text's glyphs stand about 0.4 mm off
 * the line and end 0.26 mm plus 1.17 of their size off it (kicad-cli's SVG, 0.762 and 1.27 mm
 * numbers), so its box is the band from the line to `PIN_TEXT_MARGIN` plus 1.2 sizes off it.
 */
function pinBoxes(pin: LibPin, placement: PlacementIu, shown: PinText): Box[] {
  const tip = placePoint(pin.at, placement);
  const outward = placeDirection(pinOutwardLib(pin.orientation), placement);
  const inward = { x: -outward.x, y: -outward.y };
  const base = { x: tip.x + inward.x * pin.length, y: tip.y + inward.y * pin.length };
  const line = union(pointBox(tip), pointBox(base));
  const out = [line];
  const middle = { x: (tip.x + base.x) / 2, y: (tip.y + base.y) / 2 };
  const beside = (content: string, item: SList | undefined, side: -1 | 1) => {
    const size = item ? fontSize(item) : CHAR;
    const half = (textAdvance(content) * size) / 2;
    const reach = (PIN_TEXT_MARGIN + size * 1.2) * side;
    const [a, b] = [0, reach].sort((p, q) => p - q) as [number, number];
    // Kept within the pin's length: what stands at its end (a label, a wire) meets the end first.
    out.push(
      inward.y === 0
        ? {
            x0: Math.max(line.x0, middle.x - half),
            y0: middle.y + a,
            x1: Math.min(line.x1, middle.x + half),
            y1: middle.y + b,
          }
        : {
            x0: middle.x + a,
            y0: Math.max(line.y0, middle.y - half),
            x1: middle.x + b,
            y1: Math.min(line.y1, middle.y + half),
          },
    );
  };
  const nameNode = child(pin.node, "name");
  const numberNode = child(pin.node, "number");
  const name = shown.names ? pin.name : "";
  const number = shown.numbers ? pin.number : "";
  if (shown.nameOffset > 0) {
    if (name) {
      const from = { x: base.x + inward.x * shown.nameOffset, y: base.y + inward.y * shown.nameOffset };
      const angle = inward.x > 0 ? 0 : inward.x < 0 ? 180 : inward.y < 0 ? 90 : 270;
      const size = nameNode ? fontSize(nameNode) : CHAR;
      out.push(runBox(from, angle, Math.ceil(textAdvance(name) * size), size));
    }
    if (number) beside(number, numberNode, -1);
  } else {
    if (name) beside(name, nameNode, -1);
    if (number) beside(number, numberNode, 1);
  }
  return out;
}

/** Half the width of a no-connect flag: KiCad draws its X 48 mils (1.2192 mm) across. */
const NO_CONNECT_HALF = toIU(0.6096);

/** The box of a no-connect flag at `at`, the X as KiCad draws it. */
export function noConnectBox(at: PointIu): Box {
  return pointBox(at, NO_CONNECT_HALF);
}

/**
 * Everything drawn on a sheet, as boxes (symbols with their visible fields, wires, labels,
 * sheets, text, graphics), but the symbols in `except`: where another part may go, each part
 * taking the whole span of its body and pins (see `SymbolShape`).
 */
export function occupiedBoxes(file: SchematicFile, except?: Set<PlacedSymbol>): Box[] {
  return occupiedItems(file, except, "span").map((item) => item.box);
}

/**
 * How a part's drawing is boxed. `drawn`: as eeschema strokes it (`symbolDrawingBoxes`), for
 * what a text may cross: a label may stand beside a lone pin. `span`: its body and pins as one
 * box (`symbolBodyBox`), for where another part may go: not into the room between its pins.
 */
export type SymbolShape = "drawn" | "span";

/** One box of something drawn, with what it is, as an error names it ("R5 Reference", "label DATA", "wire"). */
export interface DrawnBox {
  box: Box;
  what: string;
}

/**
 * One thing drawn on a sheet, as it moves: its node and every box it draws (a symbol's fields,
 * a global label's page references), with the model item when it is a symbol, sheet, label, bus
 * entry or line.
 */
export interface DrawnThing {
  node: SList;
  items: DrawnBox[];
  symbol?: PlacedSymbol;
  sheet?: SheetSymbol;
  label?: Label;
  entry?: BusEntry;
  /** A wire or bus. */
  line?: Line;
}

/** Everything drawn on a sheet, box by box with what each is, but the symbols in `except`. */
export function occupiedItems(file: SchematicFile, except?: Set<PlacedSymbol>, shape?: SymbolShape): DrawnBox[] {
  return drawnThings(file, except, shape).flatMap((thing) => thing.items);
}

/** Everything drawn on a sheet, thing by thing (see `DrawnThing`), but the symbols in `except`; things that draw nothing left out. */
export function drawnThings(
  file: SchematicFile,
  except?: Set<PlacedSymbol>,
  shape: SymbolShape = "drawn",
): DrawnThing[] {
  const out: DrawnThing[] = [];
  const push = (node: SList, box: Box | undefined, what: string) => {
    if (box) out.push({ node, items: [{ box, what }] });
  };
  const sheetVars = sheetResolver(file);
  for (const symbol of file.symbols)
    if (!except?.has(symbol)) out.push({ node: symbol.node, items: symbolItems(symbol, sheetVars, shape), symbol });
  for (const line of file.wires) out.push({ node: line.node, items: [{ box: lineBox(line), what: "wire" }], line });
  for (const line of file.buses) out.push({ node: line.node, items: [{ box: lineBox(line), what: "bus" }], line });
  for (const label of file.labels) {
    const items = [labelItem(label)];
    const refs = label.kind === "global" ? file.intersheetRefs(label.text) : undefined;
    const refsBox = refs !== undefined ? pageRefsBox(label, refs, sheetVars) : undefined;
    if (refsBox) items.push({ box: refsBox, what: pageRefsWhat(label.text) });
    out.push({ node: label.node, items, label });
  }
  for (const marker of file.junctions) push(marker.node, pointBox(marker.at, CHAR), "junction");
  for (const marker of file.noConnects) push(marker.node, noConnectBox(marker.at), "no-connect flag");
  for (const entry of file.busEntries)
    out.push({ node: entry.node, items: [{ box: lineBox({ a: entry.at, b: entry.end }), what: "bus entry" }], entry });
  for (const sheet of file.sheets) out.push({ node: sheet.node, items: sheetSymbolItems(sheet, sheetVars), sheet });
  for (const item of file.doc.root.items) {
    if (item.type !== "list") continue;
    const what = head(item) === "text" ? `text "${(text(item, 1) ?? "").slice(0, 20)}"` : (head(item) ?? "graphic");
    const boxes = graphicBoxes(item, sheetVars);
    if (boxes.length > 0) out.push({ node: item, items: boxes.map((box) => ({ box, what })) });
  }
  return out;
}

/** The box of a wire or bus: its two ends. */
export function lineBox(line: Pick<Line, "a" | "b">): Box {
  return union(pointBox(line.a), pointBox(line.b));
}

/** What a label draws: its text, and its flag unless it is a local label (a global label's page references aside). */
export function labelItem(label: Label): DrawnBox {
  return {
    box: labelBox(label.at, label.text, label.rotation, label.kind !== "local", fontSize(label.node)),
    what: `${label.kind === "local" ? "label" : `${label.kind} label`} ${label.text}`,
  };
}

/** What a placed symbol draws: its drawing and pins (boxed as `shape` says), and each visible field (text variables expanded with `sheetVars`). */
export function symbolItems(symbol: PlacedSymbol, sheetVars: Resolver, shape: SymbolShape = "drawn"): DrawnBox[] {
  const ref = symbol.fields.find((f) => f.name === "Reference")?.value ?? symbol.libId;
  const what = ref.startsWith("#") ? `power symbol ${symbol.value}` : `${ref}'s drawing`;
  const drawing = shape === "drawn" ? symbolDrawingBoxes(symbol) : [symbolBodyBox(symbol)];
  const out: DrawnBox[] = drawing.map((box) => ({ box, what }));
  const vars = symbolResolver(symbol, sheetVars);
  for (const field of symbol.fields) {
    const box = fieldBox(field.node, symbol.placement, vars);
    if (box) out.push({ box, what: `${ref}'s ${field.name} field` });
  }
  return out;
}

/**
 * What a sheet symbol draws: its box, its fields (text variables expanded with `vars`) and its
 * pins' names (one being planned too, before it is in a tree). eeschema draws a pin's shape and
 * name inside the box, from the edge the pin sits on; outside it is only the pin's wire.
 */
export function sheetSymbolItems(
  sheet: Pick<SheetSymbol, "name" | "at" | "size"> & {
    fields: { name: string; node: SList }[];
    pins: { name: string; at: PointIu }[];
  },
  vars?: Resolver,
): DrawnBox[] {
  const out: DrawnBox[] = [
    {
      box: grow({ x0: sheet.at.x, y0: sheet.at.y, x1: sheet.at.x + sheet.size.x, y1: sheet.at.y + sheet.size.y }, CHAR),
      what: `sheet ${sheet.name}`,
    },
  ];
  for (const field of sheet.fields) {
    const box = fieldBox(field.node, SHEET_PLACEMENT, vars);
    if (box) out.push({ box, what: `sheet ${sheet.name}'s ${field.name}` });
  }
  for (const pin of sheet.pins) {
    const inward =
      pin.at.x <= sheet.at.x ? 0 : pin.at.x >= sheet.at.x + sheet.size.x ? 180 : pin.at.y <= sheet.at.y ? 270 : 90;
    const length = (pin.name.length + 2) * CHAR * CHAR_ADVANCE;
    out.push({ box: runBox(pin.at, inward, length, CHAR), what: `sheet pin ${pin.name}` });
  }
  return out;
}

/** An item as errors name it: what it is and where its middle is, in sheet mm ("R1's Reference field at (12.7, 30.5)"). */
export function describeItem(item: DrawnBox): string {
  return `${item.what} at (${mmText((item.box.x0 + item.box.x1) / 2)}, ${mmText((item.box.y0 + item.box.y1) / 2)})`;
}

/** Millimetres as errors show them. */
function mmText(iu: number): string {
  return String(Math.round(iu / 1000) / 10);
}

/**
 * What stands in the way of `probes` on `file`, for an error to name: each item (by what it
 * is and where, in sheet mm), the page frame and the title block; at most `limit`, nearest
 * the first probe first. `except` is left out (the part being wired or moved). Parts are boxed
 * as `SheetSpace` boxes them for placing, each spanning its pins.
 */
export function blockersOf(
  file: SchematicFile,
  probes: Box[],
  clearance: number,
  except?: Set<PlacedSymbol>,
  limit = 6,
): string[] {
  const page = pageArea(file);
  const found = new Map<string, number>();
  const anchor = probes[0];
  const items = occupiedItems(file, except, "span");
  for (const probe of probes) {
    const grown = grow(probe, clearance);
    for (const item of items) {
      if (!intersects(grown, item.box)) continue;
      const where = describeItem(item);
      if (!found.has(where)) found.set(where, anchor ? distance(anchor, item.box) : 0);
    }
    if (!inside(probe, page.area)) found.set("the page frame", Infinity);
    if (intersects(probe, page.titleBlock)) found.set("the title block", Infinity);
  }
  return [...found]
    .sort((a, b) => a[1] - b[1])
    .slice(0, limit)
    .map(([what]) => what);
}

/** Blocks smaller than this (mm, either side) are decorations, not groups of parts. */
const MIN_BLOCK_MM = 15;

/**
 * The designer's blocks: rectangles and closed polylines drawn around a group of parts (a
 * "power" or "USB" box). A new part that belongs with an anchor inside one goes inside it too.
 */
export function blocks(file: SchematicFile): Box[] {
  const out: Box[] = [];
  for (const item of file.doc.root.items) {
    if (item.type !== "list") continue;
    let box: Box | undefined;
    if (head(item) === "rectangle") {
      const a = pointIuOf(child(item, "start"));
      const b = pointIuOf(child(item, "end"));
      if (a && b) box = union(pointBox(a), pointBox(b));
    } else if (head(item) === "polyline") {
      const points = xyPoints(item);
      const closed =
        points.length >= 4 &&
        points[0]!.x === points[points.length - 1]!.x &&
        points[0]!.y === points[points.length - 1]!.y;
      if (closed) for (const p of points) box = union(box, pointBox(p));
    }
    if (box && box.x1 - box.x0 >= toIU(MIN_BLOCK_MM) && box.y1 - box.y0 >= toIU(MIN_BLOCK_MM)) out.push(box);
  }
  return out;
}

/**
 * Boxes bucketed on a coarse grid, so "does this box hit anything?" looks at the few boxes
 * nearby instead of every item on the sheet. A box wider than `WIDE` cells (a frame drawn round
 * a large page) is kept apart and always looked at; a probe over more cells than there are boxes
 * (a large free area asked for) looks at every box instead, so neither costs more than the sheet
 * holds.
 */
export class BoxIndex {
  private readonly cells = new Map<string, Box[]>();
  private readonly wide: Box[] = [];
  private readonly all: Box[] = [];
  private static readonly CELL = toIU(12.7);
  /** A 1 m square. */
  private static readonly WIDE = 6_400;

  constructor(boxes: Iterable<Box> = []) {
    for (const box of boxes) this.add(box);
  }

  add(box: Box): void {
    this.all.push(box);
    if (BoxIndex.cellCount(box) > BoxIndex.WIDE) {
      this.wide.push(box);
      return;
    }
    for (const key of BoxIndex.keys(box)) {
      const cell = this.cells.get(key);
      if (cell) cell.push(box);
      else this.cells.set(key, [box]);
    }
  }

  /** True when `box` overlaps any indexed box grown by `clearance`. */
  hits(box: Box, clearance = 0): boolean {
    const probe = grow(box, clearance);
    if (BoxIndex.cellCount(probe) > this.all.length) return this.all.some((other) => intersects(probe, other));
    if (this.wide.some((other) => intersects(probe, other))) return true;
    for (const key of BoxIndex.keys(probe)) {
      for (const other of this.cells.get(key) ?? []) if (intersects(probe, other)) return true;
    }
    return false;
  }

  private static cellCount(box: Box): number {
    const c = BoxIndex.CELL;
    return (
      (Math.floor(box.x1 / c) - Math.floor(box.x0 / c) + 1) * (Math.floor(box.y1 / c) - Math.floor(box.y0 / c) + 1)
    );
  }

  private static *keys(box: Box): Generator<string> {
    const c = BoxIndex.CELL;
    for (let i = Math.floor(box.x0 / c); i <= Math.floor(box.x1 / c); i++) {
      for (let j = Math.floor(box.y0 / c); j <= Math.floor(box.y1 / c); j++) yield `${i},${j}`;
    }
  }
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

/** A user page size is clamped to these, mm, as eeschema clamps it when it reads the file. */
const USER_PAGE_MM = { min: 25.4, max: 3048 };
/** The drawing frame's border, mm: KiCad's default drawing sheet draws its inner frame 12 mm in, kept a little clear of. */
const BORDER_MM = 12.7;
/**
 * Where the title block of KiCad's default drawing sheet starts, mm from the page's right and
 * bottom edges: a 110 × 34 mm box whose far corner is the 10 mm margin's.
 */
const TITLE_BLOCK_MM: [number, number] = [120, 44];

/**
 * Where new items may go on a sheet: the page inside its frame, and beyond the frame as far as
 * the design already draws there (connectors drawn off the page), given what is `drawn`.
 */
export function drawingArea(page: Box, drawn: Iterable<Box>): Box {
  let area = page;
  for (const box of drawn) area = union(area, box);
  return area;
}

/** The page inside its frame, and the title block to keep clear of. */
export function pageArea(file: SchematicFile): { area: Box; titleBlock: Box } {
  const paper = child(file.doc.root, "paper");
  const name = paper ? (text(paper, 1) ?? "A4") : "A4";
  const user = (v: number | undefined, otherwise: number) =>
    v !== undefined && Number.isFinite(v) ? Math.min(USER_PAGE_MM.max, Math.max(USER_PAGE_MM.min, v)) : otherwise;
  let [w, h] =
    name === "User" && paper ? [user(num(paper, 2), 297), user(num(paper, 3), 210)] : (PAPER[name] ?? PAPER.A4!);
  if (paper && paper.items.some((i) => i.type === "atom" && i.raw === "portrait")) [w, h] = [h, w];
  const area = { x0: toIU(BORDER_MM), y0: toIU(BORDER_MM), x1: toIU(w - BORDER_MM), y1: toIU(h - BORDER_MM) };
  const titleBlock = {
    x0: toIU(w - TITLE_BLOCK_MM[0]),
    y0: toIU(h - TITLE_BLOCK_MM[1]),
    x1: area.x1,
    y1: area.y1,
  };
  return { area, titleBlock };
}
