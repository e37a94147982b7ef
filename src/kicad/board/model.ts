/**
 * `kicad/board/` holds the board document: this model, nets, the outline, footprint instances
 * (`footprint/`), placement and staging, and board sync (`sync/`). It reads the schematic's
 * views and the netlist, never the schematic editor (ARCHITECTURE.md).
 *
 * Typed model of a `.kicad_pcb` tree: footprints, pads and nets, and the Edge.Cuts outline.
 *
 * The model reads the parsed tree in place and hands out the underlying nodes, so edits made
 * through it (board sync, parity fixes) change only the tokens they must and the file stays
 * byte-identical elsewhere. Both net encodings are understood: KiCad 8/9's numbered table with
 * `(net 3 "GND")` on pads, and KiCad 10's name-only `(net "GND")`.
 */
import { CopperheadError } from "../../errors.ts";
import {
  child,
  children,
  childText,
  flag,
  head,
  num,
  parseSexpr,
  readSexprFile,
  text,
  type SDocument,
  type SList,
} from "../sexpr/index.ts";

/** A point on the board, in millimetres as the file stores them (Y down). */
export interface PointMm {
  x: number;
  y: number;
}

export interface PlacementMm extends PointMm {
  /** Rotation in degrees, counter-clockwise as KiCad stores it. */
  rotation: number;
}

export interface BBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface BoardNet {
  /** Net code in the numbered (KiCad 8/9) form; undefined in the name-only form. */
  code?: number;
  name: string;
}

export interface Pad {
  node: SList;
  /** Pad number; empty for unnumbered mechanical pads. */
  number: string;
  net?: BoardNet;
  pinfunction?: string;
  pintype?: string;
}

export interface Footprint {
  node: SList;
  /** Library id, e.g. `Resistor_SMD:R_0603_1608Metric`. */
  libId: string;
  ref: string;
  value: string;
  /** Every `(property name value)`, Reference and Value included. */
  fields: Record<string, string>;
  /** Symbol path, `/<sheet uuids>/<symbol uuid>`, linking it to the schematic. */
  path?: string;
  sheetname?: string;
  sheetfile?: string;
  layer: string;
  at: PlacementMm;
  locked: boolean;
  /** `(attr ...)` flags such as `smd`, `through_hole`, `board_only`, `exclude_from_bom`, `dnp`. */
  attributes: string[];
  pads: Pad[];
}

export type NetFormat = "numbered" | "named";

export class Board {
  readonly doc: SDocument;

  constructor(doc: SDocument) {
    if (head(doc.root) !== "kicad_pcb") {
      throw new CopperheadError("parse_error", `${doc.file ?? "<input>"} is not a KiCad board (no kicad_pcb root)`, {
        file: doc.file,
        fix: "Pass the project's .kicad_pcb file.",
      });
    }
    this.doc = doc;
  }

  static parse(source: Uint8Array | string, file?: string): Board {
    return new Board(parseSexpr(source, { file }));
  }

  /** Reads the board through the confined reader: inside `within` (default: its folder), a regular file, capped. */
  static load(file: string, options: { within?: string } = {}): Board {
    return new Board(readSexprFile(file, options.within === undefined ? undefined : { within: options.within }));
  }

  get root(): SList {
    return this.doc.root;
  }

  /** File-format version, e.g. 20241229 for KiCad 9. */
  get version(): number | undefined {
    const v = child(this.root, "version");
    return v ? num(v, 1) : undefined;
  }

  /** Numbered table (KiCad 8/9) when the board has top-level `(net N "name")` entries. */
  get netFormat(): NetFormat {
    return children(this.root, "net").length > 0 ? "numbered" : "named";
  }

  /** The nets the board knows, without the unnamed net 0. */
  nets(): BoardNet[] {
    if (this.netFormat === "numbered") {
      return children(this.root, "net")
        .map((n) => ({ code: num(n, 1), name: text(n, 2) ?? "" }))
        .filter((n) => n.name !== "");
    }
    const names = new Set<string>();
    for (const fp of this.footprints()) for (const pad of fp.pads) if (pad.net?.name) names.add(pad.net.name);
    return [...names].sort().map((name) => ({ name }));
  }

  footprints(): Footprint[] {
    return children(this.root, "footprint").map(readFootprint);
  }

  /** The footprint `ref`, reading no other: a big board has thousands, and a tool call names one. */
  footprint(ref: string): Footprint | undefined {
    const node = children(this.root, "footprint").find((fp) => referenceOf(fp) === ref);
    return node && readFootprint(node);
  }

  /** The footprints whose anchor lies in `box`, reading no other (a look at one corner of a big board). */
  footprintsAt(box: BBox): Footprint[] {
    return children(this.root, "footprint")
      .filter((fp) => {
        const { x, y } = placementOf(fp);
        return x >= box.minX && x <= box.maxX && y >= box.minY && y <= box.maxY;
      })
      .map(readFootprint);
  }

  /** Bounding box of everything on Edge.Cuts (board graphics and footprint graphics). */
  edgeCutsBBox(): BBox | undefined {
    const box = emptyBox();
    for (const item of this.root.items) {
      if (item.type === "list" && onEdgeCuts(item)) addGraphic(box, item, identity);
    }
    for (const fp of children(this.root, "footprint")) {
      const at = placementOf(fp);
      const transform = (p: PointMm) => footprintToBoard(p, at);
      for (const item of fp.items) if (item.type === "list" && onEdgeCuts(item)) addGraphic(box, item, transform);
    }
    return box.minX <= box.maxX ? box : undefined;
  }
}

/**
 * Where a board text keeps its string: `(fp_text reference "U1" …)` at 2, `(gr_text "…" …)` at 1,
 * and one further where KiCad 6 wrote the text's lock flag first (`(fp_text reference locked "U1" …)`).
 */
export function textStringIndex(node: SList): number {
  const at = head(node) === "gr_text" ? 1 : 2;
  const item = node.items[at];
  return item?.type === "atom" && item.raw === "locked" ? at + 1 : at;
}

/** A footprint's Reference field: its Reference property, or (KiCad 7 and older) its reference fp_text. */
export function referenceField(node: SList): SList | undefined {
  return (
    children(node, "property").find((p) => text(p, 1) === "Reference") ??
    children(node, "fp_text").find((t) => text(t, 1) === "reference")
  );
}

/** A footprint's reference, as its Reference field says it. */
function referenceOf(node: SList): string | undefined {
  const field = referenceField(node);
  if (!field) return undefined;
  return (head(field) === "property" ? text(field, 2) : text(field, textStringIndex(field))) ?? "";
}

function readFootprint(node: SList): Footprint {
  const fields: Record<string, string> = {};
  for (const p of children(node, "property")) {
    const name = text(p, 1);
    if (name !== undefined) fields[name] = text(p, 2) ?? "";
  }
  // KiCad 7 and older kept reference and value in fp_text; keep reading them for old boards.
  for (const t of children(node, "fp_text")) {
    const kind = text(t, 1);
    if (kind === "reference" && fields.Reference === undefined) fields.Reference = text(t, textStringIndex(t)) ?? "";
    if (kind === "value" && fields.Value === undefined) fields.Value = text(t, textStringIndex(t)) ?? "";
  }
  // KiCad 7 and older kept the sheet as two key/value properties rather than fields.
  const sheetname = childText(node, "sheetname") ?? fields.Sheetname;
  const sheetfile = childText(node, "sheetfile") ?? fields.Sheetfile;
  if (!child(node, "sheetname") && !child(node, "sheetfile")) {
    delete fields.Sheetname;
    delete fields.Sheetfile;
  }
  const attr = child(node, "attr");
  return {
    node,
    libId: text(node, 1) ?? "",
    ref: fields.Reference ?? "",
    value: fields.Value ?? "",
    fields,
    path: childText(node, "path"),
    sheetname,
    sheetfile,
    layer: childText(node, "layer") ?? "F.Cu",
    at: placementOf(node),
    locked: flag(node, "locked") === true,
    attributes: attr ? attr.items.slice(1).flatMap((a) => (a.type === "atom" ? [a.raw] : [])) : [],
    pads: children(node, "pad").map(readPad),
  };
}

function readPad(node: SList): Pad {
  return {
    node,
    number: text(node, 1) ?? "",
    net: readNetRef(child(node, "net")),
    pinfunction: childText(node, "pinfunction"),
    pintype: childText(node, "pintype"),
  };
}

/** `(net 3 "GND")` (KiCad 8/9) or `(net "GND")` (KiCad 10). */
export function readNetRef(node: SList | undefined): BoardNet | undefined {
  if (!node) return undefined;
  const first = text(node, 1);
  const second = text(node, 2);
  if (second !== undefined) return { code: num(node, 1), name: second };
  if (first === undefined) return undefined;
  return /^\d+$/.test(first) && node.items[1]?.type === "atom" && !node.items[1].raw.startsWith('"')
    ? { code: Number(first), name: "" }
    : { name: first };
}

function placementOf(node: SList): PlacementMm {
  const at = child(node, "at");
  return { x: (at && num(at, 1)) ?? 0, y: (at && num(at, 2)) ?? 0, rotation: (at && num(at, 3)) ?? 0 };
}

const identity = (p: PointMm) => p;

/** Footprint-local coordinates to board coordinates (KiCad rotates clockwise on screen). */
export function footprintToBoard(p: PointMm, at: PlacementMm): PointMm {
  const rad = (-at.rotation * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  return { x: at.x + p.x * cos - p.y * sin, y: at.y + p.x * sin + p.y * cos };
}

function onEdgeCuts(item: SList): boolean {
  const h = head(item);
  if (!h || !/^(gr|fp)_(line|rect|arc|circle|poly|curve)$/.test(h)) return false;
  return childText(item, "layer") === "Edge.Cuts";
}

function emptyBox(): BBox {
  return { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
}

function include(box: BBox, p: PointMm): void {
  box.minX = Math.min(box.minX, p.x);
  box.minY = Math.min(box.minY, p.y);
  box.maxX = Math.max(box.maxX, p.x);
  box.maxY = Math.max(box.maxY, p.y);
}

/** The point a list such as `(at x y)`, `(start x y)` or `(xy x y)` gives; undefined when it gives none. */
export function pointMmOf(node: SList | undefined): PointMm | undefined {
  if (!node) return undefined;
  const x = num(node, 1);
  const y = num(node, 2);
  return x === undefined || y === undefined ? undefined : { x, y };
}

function addGraphic(box: BBox, item: SList, transform: (p: PointMm) => PointMm): void {
  const kind = head(item)!.slice(3);
  const start = pointMmOf(child(item, "start"));
  const end = pointMmOf(child(item, "end"));
  switch (kind) {
    case "line":
      if (start) include(box, transform(start));
      if (end) include(box, transform(end));
      return;
    case "rect":
      if (start && end) {
        for (const p of [start, end, { x: start.x, y: end.y }, { x: end.x, y: start.y }]) include(box, transform(p));
      }
      return;
    case "circle": {
      const center = pointMmOf(child(item, "center"));
      if (!center || !end) return;
      const c = transform(center);
      const r = Math.hypot(end.x - center.x, end.y - center.y);
      include(box, { x: c.x - r, y: c.y - r });
      include(box, { x: c.x + r, y: c.y + r });
      return;
    }
    case "arc": {
      const mid = pointMmOf(child(item, "mid"));
      if (!start || !mid || !end) return;
      for (const p of arcExtremes(transform(start), transform(mid), transform(end))) include(box, p);
      return;
    }
    case "poly":
    case "curve": {
      for (const p of ptsPoints(child(item, "pts"))) include(box, transform(p));
      return;
    }
  }
}

/** Segments a three-point arc is traced with. */
export const ARC_SEGMENTS = 16;

/** Points along a three-point arc, ends included. */
export function arcPoints(a: PointMm, m: PointMm, b: PointMm): PointMm[] {
  const c = arcCircle(a, m, b);
  if (!c) return [a, b];
  const angle = (p: PointMm) => Math.atan2(p.y - c.cy, p.x - c.cx);
  const norm = (t: number) => ((t % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
  const toEnd = norm(angle(b) - angle(a));
  const sweep = norm(angle(m) - angle(a)) <= toEnd ? toEnd : toEnd - 2 * Math.PI;
  return Array.from({ length: ARC_SEGMENTS + 1 }, (_, i) => {
    const t = angle(a) + (sweep * i) / ARC_SEGMENTS;
    return { x: c.cx + c.r * Math.cos(t), y: c.cy + c.r * Math.sin(t) };
  });
}

/**
 * The points of a `(pts …)` list in order: its `(xy …)` corners and, traced, its `(arc (start)
 * (mid) (end))` pieces, which KiCad writes in zone outlines and polygons with rounded corners
 * (RoyalBlue54L's VSYS pour under its charger was read as no outline at all, so a part put on it
 * never had it refilled).
 */
export function ptsPoints(pts: SList | undefined): PointMm[] {
  const out: PointMm[] = [];
  for (const item of pts?.items ?? []) {
    if (item.type !== "list") continue;
    if (head(item) === "xy") {
      const p = pointMmOf(item);
      if (p) out.push(p);
    } else if (head(item) === "arc") {
      const [a, m, b] = ["start", "mid", "end"].map((k) => pointMmOf(child(item, k)));
      if (!a || !m || !b) continue;
      const last = out.at(-1);
      const traced = arcPoints(a, m, b);
      out.push(...(last && last.x === a.x && last.y === a.y ? traced.slice(1) : traced));
    }
  }
  return out;
}

/** Centre and radius of the circle through three points; undefined when they are collinear. */
export function arcCircle(a: PointMm, m: PointMm, b: PointMm): { cx: number; cy: number; r: number } | undefined {
  const d = 2 * (a.x * (m.y - b.y) + m.x * (b.y - a.y) + b.x * (a.y - m.y));
  if (Math.abs(d) < 1e-12) return undefined;
  const sq = (p: PointMm) => p.x * p.x + p.y * p.y;
  const cx = (sq(a) * (m.y - b.y) + sq(m) * (b.y - a.y) + sq(b) * (a.y - m.y)) / d;
  const cy = (sq(a) * (b.x - m.x) + sq(m) * (a.x - b.x) + sq(b) * (m.x - a.x)) / d;
  return { cx, cy, r: Math.hypot(a.x - cx, a.y - cy) };
}

/** End points of a three-point arc plus the axis extremes its sweep passes through. */
function arcExtremes(a: PointMm, m: PointMm, b: PointMm): PointMm[] {
  const circle = arcCircle(a, m, b);
  if (!circle) return [a, m, b];
  const { cx, cy, r } = circle;
  const angle = (p: PointMm) => Math.atan2(p.y - cy, p.x - cx);
  const norm = (t: number) => ((t % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
  const sweepToEnd = norm(angle(b) - angle(a));
  const clockwise = norm(angle(m) - angle(a)) > sweepToEnd;
  const within = (t: number) => {
    const s = clockwise ? norm(angle(a) - t) : norm(t - angle(a));
    return s <= (clockwise ? norm(angle(a) - angle(b)) : sweepToEnd);
  };
  const out = [a, b];
  for (const t of [0, Math.PI / 2, Math.PI, (3 * Math.PI) / 2]) {
    if (within(t)) out.push({ x: cx + r * Math.cos(t), y: cy + r * Math.sin(t) });
  }
  return out;
}
