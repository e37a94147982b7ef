/**
 * Where a new footprint goes on a board: inside the outline, next to the footprint of the part
 * it belongs with, on that part's side, with its courtyard clear of every other courtyard and of
 * the board edge, and its pads clear of copper on other nets (tracks, vias, zone fills), so the
 * board stays DRC-clean until a person routes it. When no such spot is near, the footprint stays
 * where board sync staged it, beside the outline, for a person to place.
 *
 * Coordinates are board millimetres (Y down). Footprints are tried at their anchor's rotation
 * first, then the other quarter turns.
 */
import { arcCircle, footprintToBoard, readNetRef, type BBox, type Board, type Point } from "./view.ts";
import { CopperheadError } from "../../errors.ts";
import { readRepoText } from "../../repo/repo-files.ts";
import { copperOnPads } from "./nets.ts";
import type { BoardSyncPlan } from "./sync/sync.ts";
import { boardBounds, localBounds, moveFootprint, type Side } from "./footprint/instance.ts";
import type { Libraries } from "../library/libraries.ts";
import { child, children, childText, head, num, text, type SList } from "../sexpr/index.ts";

/** A footprint to place, in its own frame (unrotated, front side). */
export interface FootprintShape {
  /** Its courtyard (or drawing when it has none). */
  local: BBox;
  /** Its silkscreen (lines and visible texts), footprint frame. */
  silk: BBox[];
  /** True for a board instance on the back: its frame is flipped already. */
  flipped?: boolean;
  pads: { x: number; y: number; w: number; h: number; net?: string; throughHole: boolean }[];
}

export interface BoardSpot {
  x: number;
  y: number;
  rotation: number;
  side: Side;
  /** Gap between the courtyard and the anchor's, mm. */
  distance: number;
}

interface Copper {
  box: BBox;
  net: string;
  /** Copper layer names, or "all" for vias and through-hole pads. */
  layers: Set<string> | "all";
  polygon?: Point[];
}

/** Rules a spot keeps, mm: KiCad's defaults unless the project says otherwise. */
export interface PlacementRules {
  clearance: number;
  edgeClearance: number;
}

const STEP = 0.25;
const REACH = 25;
/** Each quarter turn away from the anchor's rotation costs this much distance (mm). */
const TURN_PENALTY = 1;
/** Arcs are traced with this many segments. */
const ARC_SEGMENTS = 16;

function box(minX: number, minY: number, maxX: number, maxY: number): BBox {
  return { minX, minY, maxX, maxY };
}

function grow(b: BBox, by: number): BBox {
  return box(b.minX - by, b.minY - by, b.maxX + by, b.maxY + by);
}

function overlaps(a: BBox, b: BBox): boolean {
  return a.minX < b.maxX && b.minX < a.maxX && a.minY < b.maxY && b.minY < a.maxY;
}

function gap(a: BBox, b: BBox): number {
  return Math.hypot(Math.max(0, b.minX - a.maxX, a.minX - b.maxX), Math.max(0, b.minY - a.maxY, a.minY - b.maxY));
}

function pointOf(node: SList | undefined): Point | undefined {
  const x = node ? num(node, 1) : undefined;
  const y = node ? num(node, 2) : undefined;
  return x === undefined || y === undefined ? undefined : { x, y };
}

function boundsOf(points: Point[]): BBox {
  return box(Math.min(...points.map((p) => p.x)), Math.min(...points.map((p) => p.y)), Math.max(...points.map((p) => p.x)), Math.max(...points.map((p) => p.y)));
}

/** Points along a three-point arc, ends included. */
function arcPoints(a: Point, m: Point, b: Point): Point[] {
  const circle = arcCircle(a, m, b);
  if (!circle) return [a, b];
  const { cx, cy, r } = circle;
  const angle = (p: Point) => Math.atan2(p.y - cy, p.x - cx);
  const norm = (t: number) => ((t % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
  const toEnd = norm(angle(b) - angle(a));
  const toMid = norm(angle(m) - angle(a));
  const sweep = toMid <= toEnd ? toEnd : toEnd - 2 * Math.PI;
  return Array.from({ length: ARC_SEGMENTS + 1 }, (_, i) => {
    const t = angle(a) + (sweep * i) / ARC_SEGMENTS;
    return { x: cx + r * Math.cos(t), y: cy + r * Math.sin(t) };
  });
}

/** The Edge.Cuts outline as segments (outer edge and cut-outs alike), board coordinates. */
export function outlineSegments(board: Board): [Point, Point][] {
  const segments: [Point, Point][] = [];
  const polyline = (points: Point[]) => {
    for (let i = 1; i < points.length; i++) segments.push([points[i - 1]!, points[i]!]);
  };
  const visit = (item: SList, toBoard: (p: Point) => Point) => {
    const kind = head(item) ?? "";
    if (childText(item, "layer") !== "Edge.Cuts" || !/^(gr|fp)_/.test(kind)) return;
    const start = pointOf(child(item, "start"));
    const end = pointOf(child(item, "end"));
    switch (kind.slice(3)) {
      case "line":
        if (start && end) polyline([start, end].map(toBoard));
        break;
      case "rect":
        if (start && end) polyline([start, { x: end.x, y: start.y }, end, { x: start.x, y: end.y }, start].map(toBoard));
        break;
      case "arc": {
        const mid = pointOf(child(item, "mid"));
        if (start && mid && end) polyline(arcPoints(start, mid, end).map(toBoard));
        break;
      }
      case "circle": {
        const center = pointOf(child(item, "center"));
        if (!center || !end) break;
        const r = Math.hypot(end.x - center.x, end.y - center.y);
        polyline(Array.from({ length: ARC_SEGMENTS * 2 + 1 }, (_, i) => toBoard({ x: center.x + r * Math.cos((Math.PI * i) / ARC_SEGMENTS), y: center.y + r * Math.sin((Math.PI * i) / ARC_SEGMENTS) })));
        break;
      }
      case "poly": {
        const pts = children(child(item, "pts") ?? item, "xy").flatMap((xy) => pointOf(xy) ?? []);
        if (pts.length > 1) polyline([...pts, pts[0]!].map(toBoard));
        break;
      }
    }
  };
  for (const item of board.root.items) if (item.type === "list") visit(item, (p) => p);
  for (const fp of board.footprints()) for (const item of fp.node.items) if (item.type === "list") visit(item, (p) => footprintToBoard(p, fp.at));
  return segments;
}

/** Even-odd point-in-polygon over a set of segments. */
function insideSegments(p: Point, segments: [Point, Point][]): boolean {
  let inside = false;
  for (const [a, b] of segments) {
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

function segmentHitsBox(a: Point, b: Point, r: BBox): boolean {
  if (Math.max(a.x, b.x) < r.minX || Math.min(a.x, b.x) > r.maxX || Math.max(a.y, b.y) < r.minY || Math.min(a.y, b.y) > r.maxY) return false;
  const inBox = (p: Point) => p.x >= r.minX && p.x <= r.maxX && p.y >= r.minY && p.y <= r.maxY;
  if (inBox(a) || inBox(b)) return true;
  const corners = [
    { x: r.minX, y: r.minY },
    { x: r.maxX, y: r.minY },
    { x: r.maxX, y: r.maxY },
    { x: r.minX, y: r.maxY },
  ];
  const side = (p: Point) => Math.sign((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x));
  const sides = new Set(corners.map(side));
  return sides.has(1) && sides.has(-1);
}

/** True when the box lies inside the outline: its corners inside, no outline edge through it. */
export function boxInsideOutline(b: BBox, segments: [Point, Point][]): boolean {
  const corners = [
    { x: b.minX, y: b.minY },
    { x: b.maxX, y: b.minY },
    { x: b.maxX, y: b.maxY },
    { x: b.minX, y: b.maxY },
  ];
  return corners.every((c) => insideSegments(c, segments)) && !segments.some(([a, c]) => segmentHitsBox(a, c, b));
}

/** A footprint's shape for placement, from the library tree: courtyard, and pads with the nets they will carry. */
export function footprintShape(library: SList, padNets: Map<string, string>, rotation = 0, flipped = false): FootprintShape {
  const local = localBounds(library) ?? box(-0.5, -0.5, 0.5, 0.5);
  const pads = children(library, "pad").flatMap((pad) => {
    const at = pointOf(child(pad, "at"));
    const size = child(pad, "size");
    if (!at || !size) return [];
    // A board instance writes pad angles absolute: its own rotation is not the pad's.
    const angle = (num(child(pad, "at")!, 3) ?? 0) - rotation;
    let [w, h] = [num(size, 1) ?? 0, num(size, 2) ?? 0];
    if (Math.round(angle / 90) % 2 !== 0) [w, h] = [h, w];
    const type = text(pad, 2) ?? "";
    return [{ x: at.x, y: at.y, w, h, net: padNets.get(text(pad, 1) ?? ""), throughHole: type === "thru_hole" || type === "np_thru_hole" }];
  });
  return { local, pads, silk: silkBoxes(library, rotation), flipped };
}

/**
 * The silkscreen of a footprint in its own frame: lines, shapes and visible texts on either
 * SilkS layer (text measured at 0.8 of its size per character). `rotation` is the instance's,
 * which board texts add to their angles.
 */
function silkBoxes(footprint: SList, rotation: number): BBox[] {
  const out: BBox[] = [];
  for (const item of footprint.items) {
    if (item.type !== "list" || !/^[FB]\.SilkS$/.test(childText(item, "layer") ?? "")) continue;
    const kind = head(item) ?? "";
    const b = kind === "property" || kind === "fp_text" ? textBounds(item, rotation) : /^fp_/.test(kind) ? shapeBounds(item) : undefined;
    if (b) out.push(b);
  }
  return out;
}

/**
 * A visible text's box (measured at 0.8 of its height per character, centred on its anchor as
 * KiCad's default justification is), or undefined for a hidden or empty one. `rotation` is
 * what the text's own angle is relative to (a footprint instance's rotation; 0 on the board).
 */
function textBounds(item: SList, rotation: number): BBox | undefined {
  const effects = child(item, "effects");
  const hidden = child(item, "hide") ? text(child(item, "hide")!, 1) !== "no" : !!effects && effects.items.some((a) => a.type === "atom" && a.raw === "hide");
  const value = text(item, head(item) === "gr_text" ? 1 : 2) ?? "";
  const at = child(item, "at");
  if (hidden || !at || value === "") return undefined;
  const size = child(child(effects ?? item, "font") ?? item, "size");
  const h = size ? (num(size, 1) ?? 1) : 1;
  const lines = value.split("\n");
  const w = Math.max(...lines.map((line) => (line.startsWith("${") ? 4 : line.length))) * h * 0.8;
  const tall = h + (lines.length - 1) * h * 1.4;
  const angle = (num(at, 3) ?? 0) - rotation;
  const upright = Math.round(angle / 90) % 2 === 0;
  const [hw, hh] = upright ? [w / 2, tall / 2 + 0.1] : [tall / 2 + 0.1, w / 2];
  // Left- or right-justified text runs from its anchor along its direction (mirrored: against it).
  const justify = child(effects ?? item, "justify")?.items.flatMap((a) => (a.type === "atom" ? [a.raw] : [])) ?? [];
  const along = (justify.includes("left") ? w / 2 : justify.includes("right") ? -w / 2 : 0) * (justify.includes("mirror") ? -1 : 1);
  const x = (num(at, 1) ?? 0) + along * Math.cos((angle * Math.PI) / 180);
  const y = (num(at, 2) ?? 0) - along * Math.sin((angle * Math.PI) / 180);
  return box(x - hw, y - hh, x + hw, y + hh);
}

/** A line, arc, circle, rectangle or polygon's box, grown by half its stroke. */
function shapeBounds(item: SList): BBox | undefined {
  const pts = [child(item, "start"), child(item, "mid"), child(item, "end"), child(item, "center")].flatMap((p) => pointOf(p) ?? []);
  pts.push(...children(child(item, "pts") ?? item, "xy").flatMap((xy) => pointOf(xy) ?? []));
  if (pts.length === 0) return undefined;
  let b = boundsOf(pts);
  if (/_circle$/.test(head(item) ?? "") && pts.length >= 2) {
    const r = Math.hypot(pts[pts.length - 1]!.x - pts[0]!.x, pts[pts.length - 1]!.y - pts[0]!.y);
    b = grow(boundsOf([pts[pts.length - 1]!]), r);
  }
  return grow(b, (num(child(child(item, "stroke") ?? item, "width") ?? item, 1) ?? 0.12) / 2);
}

/** The free space of a board for new footprints. */
export class BoardSpace {
  readonly outline: [Point, Point][];
  private readonly courtyards: { box: BBox; side: Side; throughHole: boolean }[] = [];
  private readonly copper: Copper[] = [];
  /** Silkscreen and pads already on each side: new silk stays off both, new pads off the silk. */
  private readonly silk: { box: BBox; side: Side }[] = [];
  private readonly pads: { box: BBox; side: Side | "both" }[] = [];

  /** `except`: a footprint to leave out (the one being moved), its copper included. */
  constructor(
    board: Board,
    readonly rules: PlacementRules,
    except?: SList,
  ) {
    this.outline = outlineSegments(board);
    for (const fp of board.footprints()) {
      if (fp.node === except) continue;
      const bounds = boardBounds(fp.node);
      if (!bounds) continue;
      const side: Side = fp.layer.startsWith("B.") ? "back" : "front";
      this.courtyards.push({ box: bounds, side, throughHole: fp.attributes.includes("through_hole") });
      const shape = footprintShape(fp.node, new Map(), fp.at.rotation);
      // A board instance is already flipped for its side: its frame only turns and moves.
      for (const b of shape.silk) this.silk.push({ box: this.onBoard(b, fp.at.x, fp.at.y, fp.at.rotation, "front"), side });
      for (const pad of shape.pads) {
        const local = box(pad.x - pad.w / 2, pad.y - pad.h / 2, pad.x + pad.w / 2, pad.y + pad.h / 2);
        this.pads.push({ box: this.onBoard(local, fp.at.x, fp.at.y, fp.at.rotation, "front"), side: pad.throughHole ? "both" : side });
      }
    }
    const names = new Map(board.nets().flatMap((n) => (n.code !== undefined ? [[n.code, n.name] as [number, string]] : [])));
    const netOf = (node: SList): string => {
      const ref = readNetRef(child(node, "net"));
      return ref?.name || (ref?.code !== undefined ? (names.get(ref.code) ?? "") : "") || (childText(node, "net_name") ?? "");
    };
    for (const item of board.root.items) {
      if (item.type !== "list") continue;
      const kind = head(item);
      if (kind === "segment" || kind === "arc") {
        const width = num(child(item, "width") ?? item, 1) ?? 0.2;
        const pts = [child(item, "start"), child(item, "mid"), child(item, "end")].flatMap((p) => pointOf(p) ?? []);
        if (pts.length < 2) continue;
        this.copper.push({ box: grow(boundsOf(pts), width / 2), net: netOf(item), layers: new Set([childText(item, "layer") ?? ""]) });
      } else if (kind === "via") {
        const at = pointOf(child(item, "at"));
        const size = num(child(item, "size") ?? item, 1) ?? 0.6;
        if (at) this.copper.push({ box: grow(boundsOf([at]), size / 2), net: netOf(item), layers: "all" });
      } else if (kind === "zone") {
        const net = netOf(item);
        for (const fill of children(item, "filled_polygon")) {
          const pts = children(child(fill, "pts") ?? fill, "xy").flatMap((xy) => pointOf(xy) ?? []);
          if (pts.length > 2) this.copper.push({ box: boundsOf(pts), net, layers: new Set([childText(fill, "layer") ?? ""]), polygon: pts });
        }
      } else if (kind?.startsWith("gr_")) {
        // Board text and drawings: copper ones (a title etched in copper) are copper of no net,
        // silkscreen ones keep new pads and silk off them like a footprint's silk does.
        const layer = childText(item, "layer") ?? "";
        const bounds = kind === "gr_text" ? textBounds(item, 0) : shapeBounds(item);
        if (!bounds) continue;
        if (/\.Cu$/.test(layer)) this.copper.push({ box: bounds, net: "", layers: new Set([layer]) });
        else if (/^[FB]\.SilkS$/.test(layer)) this.silk.push({ box: bounds, side: layer.startsWith("B.") ? "back" : "front" });
      }
    }
  }

  /**
   * The spot nearest `anchor` (a courtyard) where `shape` fits, on `side`, trying `rotation`
   * first and then the other quarter turns; undefined when nothing within reach fits.
   */
  findSpot(shape: FootprintShape, anchor: BBox, side: Side, rotation: number): BoardSpot | undefined {
    const candidates: { x: number; y: number; rotation: number; score: number; distance: number }[] = [];
    for (const [turn, r] of [0, 90, 180, 270].map((t) => [t, (rotation + t) % 360] as const)) {
      const local = this.placedLocal(shape.local, r, frame(shape, side));
      const penalty = (turn === 0 ? 0 : turn === 180 ? 1 : 2) * TURN_PENALTY;
      const steps = Math.ceil(REACH / STEP);
      const cx = Math.round((anchor.minX + anchor.maxX) / 2 / STEP) * STEP;
      const cy = Math.round((anchor.minY + anchor.maxY) / 2 / STEP) * STEP;
      for (let i = -steps; i <= steps; i++) {
        for (let j = -steps; j <= steps; j++) {
          const x = cx + i * STEP;
          const y = cy + j * STEP;
          const court = box(x + local.minX, y + local.minY, x + local.maxX, y + local.maxY);
          const distance = gap(court, anchor);
          if (distance > REACH) continue;
          candidates.push({ x, y, rotation: r, score: distance + penalty, distance });
        }
      }
    }
    candidates.sort((a, b) => a.score - b.score || a.y - b.y || a.x - b.x);
    for (const c of candidates) {
      if (this.fits(shape, c.x, c.y, c.rotation, side)) return { x: round(c.x), y: round(c.y), rotation: c.rotation, side, distance: c.distance };
    }
    return undefined;
  }

  /** True when `shape` at (x, y, rotation) on `side` is inside the outline and clear of courtyards and foreign copper. */
  fits(shape: FootprintShape, x: number, y: number, rotation: number, side: Side): boolean {
    const local = this.placedLocal(shape.local, rotation, frame(shape, side));
    const court = box(x + local.minX, y + local.minY, x + local.maxX, y + local.maxY);
    if (!boxInsideOutline(grow(court, this.rules.edgeClearance), this.outline)) return false;
    const throughHole = shape.pads.some((p) => p.throughHole);
    for (const other of this.courtyards) {
      if ((other.side === side || other.throughHole || throughHole) && overlaps(court, other.box)) return false;
    }
    const copperLayer = side === "back" ? "B.Cu" : "F.Cu";
    for (const pad of shape.pads) {
      const padBox = grow(this.placedLocal(box(pad.x - pad.w / 2, pad.y - pad.h / 2, pad.x + pad.w / 2, pad.y + pad.h / 2), rotation, frame(shape, side)), this.rules.clearance);
      const placed = box(x + padBox.minX, y + padBox.minY, x + padBox.maxX, y + padBox.maxY);
      for (const copper of this.copper) {
        if (pad.net !== undefined && copper.net === pad.net) continue;
        if (copper.layers !== "all" && !pad.throughHole && !copper.layers.has(copperLayer)) continue;
        if (!overlaps(placed, copper.box)) continue;
        if (!copper.polygon || polygonHitsBox(copper.polygon, placed)) return false;
      }
      const bare = this.onBoard(box(pad.x - pad.w / 2, pad.y - pad.h / 2, pad.x + pad.w / 2, pad.y + pad.h / 2), x, y, rotation, frame(shape, side));
      if (this.silk.some((s) => (pad.throughHole || s.side === side) && overlaps(bare, s.box))) return false;
    }
    for (const local of shape.silk) {
      const silk = this.onBoard(local, x, y, rotation, frame(shape, side));
      if (this.silk.some((s) => s.side === side && overlaps(silk, s.box))) return false;
      if (this.pads.some((p) => (p.side === "both" || p.side === side) && overlaps(silk, p.box))) return false;
    }
    return true;
  }

  /** A footprint-frame box placed on the board. */
  private onBoard(local: BBox, x: number, y: number, rotation: number, side: Side): BBox {
    const b = this.placedLocal(local, rotation, side);
    return box(x + b.minX, y + b.minY, x + b.maxX, y + b.maxY);
  }

  /** Marks a placed footprint's courtyard as taken. */
  occupy(shape: FootprintShape, spot: BoardSpot): void {
    const local = this.placedLocal(shape.local, spot.rotation, frame(shape, spot.side));
    this.courtyards.push({ box: box(spot.x + local.minX, spot.y + local.minY, spot.x + local.maxX, spot.y + local.maxY), side: spot.side, throughHole: shape.pads.some((p) => p.throughHole) });
    for (const b of shape.silk) this.silk.push({ box: this.onBoard(b, spot.x, spot.y, spot.rotation, frame(shape, spot.side)), side: spot.side });
    for (const pad of shape.pads) {
      const b = this.onBoard(box(pad.x - pad.w / 2, pad.y - pad.h / 2, pad.x + pad.w / 2, pad.y + pad.h / 2), spot.x, spot.y, spot.rotation, frame(shape, spot.side));
      this.pads.push({ box: b, side: pad.throughHole ? "both" : spot.side });
    }
  }

  /** A footprint-frame box turned by `rotation` and flipped for the back side, still about the origin. */
  private placedLocal(local: BBox, rotation: number, side: Side): BBox {
    const flipped = side === "back" ? box(local.minX, -local.maxY, local.maxX, -local.minY) : local;
    const corners = [
      { x: flipped.minX, y: flipped.minY },
      { x: flipped.maxX, y: flipped.minY },
      { x: flipped.minX, y: flipped.maxY },
      { x: flipped.maxX, y: flipped.maxY },
    ].map((p) => footprintToBoard(p, { x: 0, y: 0, rotation }));
    return boundsOf(corners);
  }
}

/** The side whose flip a shape still needs: none for an instance flipped already. */
function frame(shape: FootprintShape, side: Side): Side {
  return shape.flipped ? "front" : side;
}

function polygonHitsBox(polygon: Point[], b: BBox): boolean {
  const centre = { x: (b.minX + b.maxX) / 2, y: (b.minY + b.maxY) / 2 };
  const ring: [Point, Point][] = polygon.map((p, i) => [p, polygon[(i + 1) % polygon.length]!]);
  if (insideSegments(centre, ring)) return true;
  return ring.some(([a, c]) => segmentHitsBox(a, c, b));
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/**
 * The project's clearance and board-edge clearance (`.kicad_pro` JSON, read inside `within`),
 * KiCad's defaults when it sets none or cannot be read (the check reports a broken project).
 */
export function placementRules(projectFile: string | undefined, within: string | null): PlacementRules {
  const defaults: PlacementRules = { clearance: 0.2, edgeClearance: 0.5 };
  if (!projectFile) return defaults;
  try {
    const pro = JSON.parse(readRepoText(projectFile, { within })) as {
      board?: { design_settings?: { rules?: { min_copper_edge_clearance?: number } } };
      net_settings?: { classes?: { name?: string; clearance?: number }[] };
    };
    const edge = pro.board?.design_settings?.rules?.min_copper_edge_clearance;
    const clearance = pro.net_settings?.classes?.find((c) => c.name === "Default")?.clearance;
    return { clearance: typeof clearance === "number" ? clearance : defaults.clearance, edgeClearance: typeof edge === "number" ? edge : defaults.edgeClearance };
  } catch {
    return defaults;
  }
}

/**
 * Moves the footprints a sync plan adds from the staging row onto the board, each next to its
 * anchor's footprint (`anchorOf`) when a spot fits; returns the refs left staged beside the
 * outline. Footprints are placed one after the other, each an obstacle for the next.
 */
export function placeAdditions(board: Board, plan: BoardSyncPlan, libraries: Libraries, anchorOf: (ref: string) => string | undefined, rules: PlacementRules): string[] {
  const staged: string[] = [];
  if (plan.added.length === 0) return staged;
  const space = new BoardSpace(board, rules);
  const footprints = board.footprints();
  for (const add of plan.added) {
    const anchorRef = anchorOf(add.ref);
    const anchor = anchorRef ? footprints.find((f) => f.ref === anchorRef) : undefined;
    const anchorBox = anchor ? boardBounds(anchor.node) : undefined;
    if (!anchor || !anchorBox) {
      staged.push(add.ref);
      continue;
    }
    const library = libraries.resolveFootprint(add.libId).doc.root;
    const shape = footprintShape(library, new Map(add.pads.map((p) => [p.pad, p.net])));
    const side: Side = anchor.layer.startsWith("B.") ? "back" : "front";
    const spot = space.findSpot(shape, anchorBox, side, anchor.at.rotation);
    if (!spot) {
      staged.push(add.ref);
      continue;
    }
    add.at = { x: spot.x, y: spot.y, rotation: spot.rotation };
    add.side = spot.side;
    space.occupy(shape, spot);
  }
  return staged;
}

export interface FootprintMove {
  /** Place it next to this part's footprint. */
  near?: string;
  /** Or at these coordinates (mm). */
  x?: number;
  y?: number;
  rotation?: number;
  side?: Side;
}

/**
 * Moves a footprint that is not routed yet: next to another part's footprint (the nearest spot
 * that fits) or to given coordinates, checked for outline, courtyards and other nets' copper.
 * Flipping to the other side is left to KiCad (a flip rewrites every layer of the footprint).
 */
export function placeFootprint(board: Board, ref: string, move: FootprintMove, rules: PlacementRules): BoardSpot {
  const footprints = board.footprints();
  const fp = footprints.find((f) => f.ref === ref);
  if (!fp) throw new CopperheadError("not_found", `No footprint ${ref} on the board.`, { fix: "Call sync_board first so the board has the part, or check the reference.", ref });
  if (fp.locked) throw new CopperheadError("edit_conflict", `${ref} is locked on the board; a lock means "do not move".`, { fix: "Unlock it in KiCad if it really should move.", ref });
  if (copperOnPads(board, fp) > 0) {
    throw new CopperheadError("edit_conflict", `${ref} is routed: moving it would leave its tracks behind.`, { fix: "Move it in KiCad, where its tracks can follow.", ref });
  }
  const side: Side = fp.layer.startsWith("B.") ? "back" : "front";
  if (move.side !== undefined && move.side !== side) {
    throw new CopperheadError("edit_conflict", `${ref} is on the ${side}; copperhead does not flip footprints to the other side.`, { fix: "Flip it in KiCad, or place it on its own side.", ref });
  }
  const space = new BoardSpace(board, rules, fp.node);
  const shape = footprintShape(fp.node, new Map(fp.pads.flatMap((p) => (p.net?.name ? [[p.number, p.net.name] as [string, string]] : []))), fp.at.rotation, side === "back");
  let spot: BoardSpot | undefined;
  if (move.near !== undefined) {
    const anchor = footprints.find((f) => f.ref === move.near);
    const anchorBox = anchor && boardBounds(anchor.node);
    if (!anchor || !anchorBox) throw new CopperheadError("not_found", `No footprint ${move.near} on the board to place ${ref} next to.`, { fix: "Name a part that is on the board.", ref: move.near });
    if (!anchor.layer.startsWith(side === "back" ? "B." : "F.")) {
      throw new CopperheadError("edit_conflict", `${move.near} is on the other side of the board from ${ref}.`, { fix: "Name a part on the same side, or give coordinates.", ref });
    }
    spot = space.findSpot(shape, anchorBox, side, move.rotation ?? anchor.at.rotation);
    if (!spot) throw new CopperheadError("edit_conflict", `No free spot for ${ref} within ${REACH} mm of ${move.near}: courtyards, the outline or other nets' copper are in the way.`, { fix: "Give coordinates, or name another part.", ref });
  } else {
    if (move.x === undefined || move.y === undefined) throw new CopperheadError("usage", "place_footprint needs near, or both x and y.", { fix: "Pass near (a reference) or x and y in mm." });
    const rotation = move.rotation ?? fp.at.rotation;
    if (!space.fits(shape, move.x, move.y, rotation, side)) {
      throw new CopperheadError("edit_conflict", `${ref} does not fit at ${move.x}, ${move.y}: it would leave the outline, overlap a courtyard or touch another net's copper.`, {
        fix: "Pick another spot, or pass near to let copperhead find one.",
        ref,
      });
    }
    spot = { x: move.x, y: move.y, rotation, side, distance: 0 };
  }
  moveFootprint(fp.node, { x: spot.x, y: spot.y, rotation: spot.rotation });
  return spot;
}
