/**
 * The items of a board as clearance sees them: each pad, track, via, hole, courtyard, rule area,
 * board-edge stroke, silkscreen drawing and solder-mask opening (a logo or text with its mask
 * removed, exposed copper that silkscreen is clipped by) with the layers it is on, its net and its outline
 * (drawn lazily: a big board has a hundred thousand tracks and a check looks at a handful).
 *
 * Zone fills are not items here: they are refilled after an edit, so they follow new copper
 * rather than block it. Rule areas (keepouts) are.
 */
import {
  arcPoints,
  ARC_SEGMENTS,
  footprintToBoard,
  pointMmOf,
  ptsPoints,
  readNetRef,
  textStringIndex,
  type BBox,
  type Board,
  type PlacementMm,
  type PointMm,
} from "../model.ts";
import { localBounds } from "../footprint/instance.ts";
import { zoneFillRules } from "../zones/zones.ts";
import { child, children, childText, flag, head, num, text, type SList } from "../../sexpr/index.ts";
import {
  boxesOverlap,
  boxOf,
  circle,
  growBox,
  inflate,
  polygon,
  rectangle,
  stroke,
  turn,
  union,
  withHoles,
  type ShapeMm,
} from "./geometry.ts";

export type ItemKind =
  | "pad"
  | "track"
  | "via"
  | "copper"
  | "hole"
  | "courtyard"
  | "keepout"
  | "edge"
  | "silk"
  | "mask"
  | "pour";

/** What a rule area forbids inside it. */
export interface KeepoutRules {
  tracks: boolean;
  vias: boolean;
  pads: boolean;
  footprints: boolean;
}

export interface BoardItem {
  kind: ItemKind;
  /** For a person: "pad 2 of U3", "the courtyard of U3", "a track of GND on F.Cu", "the board edge". */
  what: string;
  /** "" for no net. */
  net: string;
  /** Copper layers for copper, holes and rule areas; `F.CrtYd`/`B.CrtYd` for courtyards; `F.SilkS`/`B.SilkS` for silkscreen; `F.Mask`/`B.Mask` for mask openings. */
  layers: ReadonlySet<string>;
  box: BBox;
  shape(): ShapeMm;
  /** The footprint it belongs to. */
  ref?: string;
  keepout?: KeepoutRules;
  /** A plated hole (its barrel is copper of its pad's net); false for NPTH and vias' own drills. */
  plated?: boolean;
  /** The pad number, for a pad and its hole. */
  pad?: string;
  /** Where the ratsnest can reach it: a pad's or via's centre, a track's ends. */
  ends?: PointMm[];
  /** A track's width, mm. */
  width?: number;
  /** A track's or via's own id (its uuid, or tstamp in older files): what `liftCopper` takes. A via's hole has its via's. */
  id?: string;
  /** A zone that will be refilled: how it joins a pad of its net by thermal spokes (`spokes.ts`). */
  thermal?: Thermal;
  /** A pad's own clearance (KiCad's local override), for its copper and its hole: no rule may bring other nets closer. */
  clearance?: number;
  /** A pad: the directions of the spokes a pour joins it by and its half size along them (`spokes.ts`). */
  spokeFrame?: SpokeFrame;
}

/**
 * A zone's thermal relief: the gap around a pad, the spoke width, its clearance to other nets and
 * its minimum fill width, mm; `throughHoleOnly` when it joins surface-mount pads solid
 * (`connect_pads thru_hole_only`), with no spokes to keep.
 */
export interface Thermal {
  gap: number;
  width: number;
  clearance: number;
  thickness: number;
  throughHoleOnly?: boolean;
}

/**
 * The first spoke's angle, degrees (the next three at 90° steps), and the pad's half width and
 * height along them; `through` for a through-hole pad, which a `thru_hole_only` zone joins by
 * spokes where it joins a surface-mount pad solid.
 */
export interface SpokeFrame {
  angle: number;
  half: [number, number];
  through: boolean;
}

/**
 * A pad's or footprint's own zone connection (`zone_connect`): 0 none and 2 solid join it with
 * no spokes, 3 spokes only for a through-hole pad; undefined when it follows the zone.
 */
function zoneConnectOf(node: SList): number | undefined {
  const own = child(node, "zone_connect");
  return own ? num(own, 1) : undefined;
}

/** A pad's or footprint's own `solder_mask_margin`, mm. */
function maskMarginOf(node: SList): number | undefined {
  const own = child(node, "solder_mask_margin");
  return own ? num(own, 1) : undefined;
}

function placementOf(node: SList): PlacementMm {
  const at = child(node, "at");
  return { x: (at && num(at, 1)) ?? 0, y: (at && num(at, 2)) ?? 0, rotation: (at && num(at, 3)) ?? 0 };
}

/** A lazily drawn item: `draw` runs once, on the first check that needs the outline. */
function lazy(item: Omit<BoardItem, "shape">, draw: () => ShapeMm): BoardItem {
  let shape: ShapeMm | undefined;
  return { ...item, shape: () => (shape ??= draw()) };
}

/** Whether two layer sets have a layer in common (a loop: checks run by the hundred thousand). */
export function sharesLayer(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const layer of a) if (b.has(layer)) return true;
  return false;
}

/** An item whose outline is drawn already. */
export function drawn(item: Omit<BoardItem, "shape" | "box">, shape: ShapeMm): BoardItem {
  return { ...item, box: shape.box, shape: () => shape };
}

/** The board's copper layer names, front to back. */
export function copperLayers(board: Board): string[] {
  const table = child(board.root, "layers");
  const names = table
    ? table.items.flatMap((i) => (i.type === "list" ? [text(i, 1) ?? ""] : [])).filter((n) => /\.Cu$/.test(n))
    : [];
  return names.length > 0 ? names : ["F.Cu", "B.Cu"];
}

/** A `(layer …)`/`(layers …)` list with its wildcards (`*.Cu`, `F&B.Cu`) spelled out as copper layer names. */
export function expandLayers(names: string[], copper: string[]): Set<string> {
  const out = new Set<string>();
  for (const name of names) {
    if (name === "*.Cu") for (const c of copper) out.add(c);
    else if (name === "F&B.Cu") ["F.Cu", "B.Cu"].forEach((c) => out.add(c));
    else if (name.startsWith("*.")) ["F", "B"].forEach((s) => out.add(`${s}.${name.slice(2)}`));
    else out.add(name);
  }
  return out;
}

/** Layer names of a `(layers …)` or `(layer …)` child (read raw: layer names hold no escapes). */
function layerNames(node: SList): string[] {
  const layers = child(node, "layers") ?? child(node, "layer");
  return layers ? layers.items.slice(1).flatMap((a) => (a.type === "atom" ? [a.raw.replace(/^"|"$/g, "")] : [])) : [];
}

/**
 * A drawing (`gr_*`/`fp_*` line, rect, arc, circle, poly, curve) as the polylines of its stroke,
 * in board coordinates, and whether it is filled.
 */
export function drawingPolylines(
  item: SList,
  toBoard: (p: PointMm) => PointMm,
): { lines: PointMm[][]; filled: boolean } {
  const kind = (head(item) ?? "").slice(3);
  const start = pointMmOf(child(item, "start"));
  const end = pointMmOf(child(item, "end"));
  const fill = childText(item, "fill");
  const filled = fill === "solid" || fill === "yes";
  switch (kind) {
    case "line":
      return { lines: start && end ? [[start, end].map(toBoard)] : [], filled: false };
    case "rect":
      return {
        lines:
          start && end ? [[start, { x: end.x, y: start.y }, end, { x: start.x, y: end.y }, start].map(toBoard)] : [],
        filled,
      };
    case "arc": {
      const mid = pointMmOf(child(item, "mid"));
      return { lines: start && mid && end ? [arcPoints(start, mid, end).map(toBoard)] : [], filled: false };
    }
    case "circle": {
      const center = pointMmOf(child(item, "center"));
      if (!center || !end) return { lines: [], filled };
      const r = Math.hypot(end.x - center.x, end.y - center.y);
      const n = ARC_SEGMENTS * 2;
      return {
        lines: [
          Array.from({ length: n + 1 }, (_, i) =>
            toBoard({
              x: center.x + r * Math.cos((2 * Math.PI * i) / n),
              y: center.y + r * Math.sin((2 * Math.PI * i) / n),
            }),
          ),
        ],
        filled,
      };
    }
    case "poly":
    case "curve": {
      const pts = ptsPoints(child(item, "pts"));
      if (kind === "poly" && pts.length > 2) pts.push(pts[0]!);
      return { lines: pts.length > 1 ? [pts.map(toBoard)] : [], filled: kind === "poly" && filled };
    }
  }
  return { lines: [], filled: false };
}

function strokeWidth(item: SList): number {
  return num(child(child(item, "stroke") ?? item, "width") ?? item, 1) ?? 0.1;
}

/** A drawing's box and, drawn on demand, its outline: its stroke, and its inside when filled. */
function drawingShape(item: SList, toBoard: (p: PointMm) => PointMm): { box: BBox; draw: () => ShapeMm } | undefined {
  const { lines, filled } = drawingPolylines(item, toBoard);
  if (lines.length === 0) return undefined;
  const width = Math.max(strokeWidth(item), 0.001);
  const draw = () => {
    const paths = lines.flatMap((line) => stroke(line, width).paths);
    if (filled) paths.push(...lines);
    return { paths, box: boxOf(paths) };
  };
  return { box: growBox(boxOf(lines), width / 2 + 0.01), draw };
}

/** The Edge.Cuts outline as segments (outer edge and cut-outs alike), board coordinates. */
export function outlineSegments(board: Board): [PointMm, PointMm][] {
  const segments: [PointMm, PointMm][] = [];
  const visit = (item: SList, toBoard: (p: PointMm) => PointMm) => {
    if (childText(item, "layer") !== "Edge.Cuts" || !/^(gr|fp)_/.test(head(item) ?? "")) return;
    for (const line of drawingPolylines(item, toBoard).lines)
      for (let i = 1; i < line.length; i++) segments.push([line[i - 1]!, line[i]!]);
  };
  for (const item of board.root.items) if (item.type === "list") visit(item, (p) => p);
  for (const fp of children(board.root, "footprint")) {
    const at = placementOf(fp);
    for (const item of fp.items) if (item.type === "list") visit(item, (p) => footprintToBoard(p, at));
  }
  return segments;
}

/**
 * KiCad's stroke font, in text heights, measured on its own glyph outlines: a line reaches 0.6
 * above its anchor (a 4, an i's dot) and 0.46 below it, 0.8 with a descender, a slash or a
 * bracket (g, p, Q's tail, /, parentheses); lines are 1.62 apart; a character is at most 0.95
 * wide, and a left- or right-justified line's ink starts up to 0.15 past its anchor.
 */
const FONT = { above: 0.6, below: 0.46, descending: 0.8, pitch: 1.62, width: 0.95, bearing: 0.15 };
const DESCENDING = /[gjpqyQ,;()[\]{}|_/\\@$]/;

/**
 * Whether a board text or footprint field is hidden: `(hide yes)` from KiCad 8 on, a bare `hide`
 * in a KiCad 6/7 `fp_text` (`(fp_text reference "R1" (at 0 0) (layer "F.SilkS") hide …)`), or
 * `hide` among its effects.
 */
export function textHidden(item: SList): boolean {
  const effects = child(item, "effects");
  return !!flag(item, "hide") || (!!effects && !!flag(effects, "hide"));
}

/**
 * A text's box, as KiCad's stroke font fills it at most (`FONT`, plus the stroke), or undefined
 * for a hidden or empty one. A box of the height alone missed Glasgow's back URL by 0.4 mm of
 * descenders, and a new part's reference put just under it was silk over silk.
 * `rotation` is what the text's own angle is relative to
 * (its footprint's rotation; 0 on the board); `toBoard` places the box.
 */
export function textShape(item: SList, rotation: number, toBoard: (p: PointMm) => PointMm): ShapeMm | undefined {
  const effects = child(item, "effects");
  const value = text(item, textStringIndex(item)) ?? "";
  const at = child(item, "at");
  if (textHidden(item) || !at || value === "") return undefined;
  const font = child(effects ?? item, "font") ?? item;
  const size = child(font, "size");
  const h = size ? (num(size, 1) ?? 1) : 1;
  const stroke = num(child(font, "thickness") ?? font, 1) ?? h * 0.15;
  const lines = value.split("\n");
  // Left- or right-justified text runs from its anchor along its direction (mirrored: against it).
  const justify = child(effects ?? item, "justify")?.items.flatMap((a) => (a.type === "atom" ? [a.raw] : [])) ?? [];
  const justified = justify.includes("left") || justify.includes("right");
  const chars = Math.max(...lines.map((line) => (line.startsWith("${") ? 4 : line.length)));
  const w = (chars * FONT.width + (justified ? FONT.bearing : 0)) * h + stroke;
  const below = DESCENDING.test(lines.at(-1)!) ? FONT.descending : FONT.below;
  const tall = (lines.length - 1) * h * FONT.pitch + (FONT.above + below) * h + stroke;
  const angle = (num(at, 3) ?? 0) - rotation;
  const along =
    (justify.includes("left") ? w / 2 : justify.includes("right") ? -w / 2 : 0) * (justify.includes("mirror") ? -1 : 1);
  const centre = turn({ x: along, y: ((below - FONT.above) * h) / 2 }, angle, pointMmOf(at)!);
  const corners = rectangle(centre, w, tall, angle).paths[0]!.map(toBoard);
  return polygon(corners);
}

/** Every item of a footprint instance, in board coordinates. */
export function footprintItems(fp: SList, copper: string[]): BoardItem[] {
  const at = placementOf(fp);
  const toBoard = (p: PointMm) => footprintToBoard(p, at);
  const ref = referenceOf(fp);
  const side = (childText(fp, "layer") ?? "F.Cu").startsWith("B.") ? "B" : "F";
  const netTie = child(fp, "net_tie_pad_groups") !== undefined;
  const items: BoardItem[] = [];
  for (const [layer, local] of courtyards(fp, side)) {
    const centre = toBoard({ x: (local.minX + local.maxX) / 2, y: (local.minY + local.maxY) / 2 });
    items.push(
      drawn(
        { kind: "courtyard", what: `the courtyard of ${ref}`, net: "", layers: new Set([layer]), ref },
        rectangle(centre, local.maxX - local.minX, local.maxY - local.minY, at.rotation),
      ),
    );
  }
  for (const pad of children(fp, "pad"))
    items.push(...padItems(pad, toBoard, ref, copper, zoneConnectOf(fp), maskMarginOf(fp)));
  for (const item of fp.items) {
    if (item.type !== "list") continue;
    const kind = head(item) ?? "";
    const layer = childText(item, "layer") ?? "";
    // A footprint's own drawings: its silkscreen, and a logo's copper and mask opening (a net
    // tie's copper joins its pads, which DRC allows).
    const silk = /^[FB]\.SilkS$/.test(layer);
    const onCopper = copper.includes(layer);
    if (onCopper && netTie) continue;
    if (!silk && !onCopper && !/^[FB]\.Mask$/.test(layer)) continue;
    const base = silk
      ? { kind: "silk" as const, what: `the silkscreen of ${ref}`, net: "", layers: new Set([layer]), ref }
      : onCopper
        ? { kind: "copper" as const, what: `a drawing of ${ref} on ${layer}`, net: "", layers: new Set([layer]), ref }
        : {
            kind: "mask" as const,
            what: `a mask opening of ${ref} on ${layer}`,
            net: "",
            layers: new Set([layer]),
            ref,
          };
    if (kind === "property" || kind === "fp_text") {
      const shape = textShape(item, at.rotation, toBoard);
      if (shape) items.push(drawn(base, shape));
    } else if (/^fp_/.test(kind)) {
      const shape = drawingShape(item, toBoard);
      if (shape) items.push(lazy({ ...base, box: shape.box }, shape.draw));
    }
  }
  return items;
}

/**
 * A footprint's courtyards in its own frame, each as its bounding rectangle, by layer (a
 * through-hole part may draw one on each side); a footprint without one is kept out by its
 * whole drawing on its own side. A mounting hole (`isHole`) keeps its courtyard on both sides,
 * drawn there or not: the screw's head or nut sits on either, and no part goes under it. A
 * through-hole part's courtyard stays on the side it is drawn on, as DRC checks courtyards per
 * side: its pads and drills already keep other copper clear on every layer, and a small part may
 * sit on the other side between its pins.
 */
function courtyards(fp: SList, side: "F" | "B"): Map<string, BBox> {
  const out = new Map<string, BBox>();
  for (const item of fp.items) {
    if (item.type !== "list" || !/^fp_/.test(head(item) ?? "")) continue;
    const layer = childText(item, "layer") ?? "";
    if (layer !== "F.CrtYd" && layer !== "B.CrtYd") continue;
    const lines = drawingPolylines(item, (p) => p).lines;
    if (lines.length === 0) continue;
    const b = boxOf(lines);
    const seen = out.get(layer);
    out.set(
      layer,
      seen
        ? {
            minX: Math.min(seen.minX, b.minX),
            minY: Math.min(seen.minY, b.minY),
            maxX: Math.max(seen.maxX, b.maxX),
            maxY: Math.max(seen.maxY, b.maxY),
          }
        : b,
    );
  }
  if (out.size === 0) {
    const local = localBounds(fp);
    if (local) out.set(`${side}.CrtYd`, local);
  }
  if (out.size === 1 && isHole(fp)) {
    const [layer, box] = [...out][0]!;
    out.set(layer.startsWith("F.") ? "B.CrtYd" : "F.CrtYd", box);
  }
  return out;
}

/**
 * A footprint that is a hole in the board rather than a part: every pad goes through it and
 * all share one number or none (a bare or plated mounting hole, its ring of stitching vias).
 */
function isHole(fp: SList): boolean {
  const pads = children(fp, "pad");
  return (
    pads.length > 0 &&
    pads.every((p) => /^(np_)?thru_hole$/.test(text(p, 2) ?? "")) &&
    new Set(pads.map((p) => text(p, 1) ?? "")).size === 1
  );
}

function referenceOf(fp: SList): string {
  const property = children(fp, "property").find((p) => text(p, 1) === "Reference");
  if (property) return text(property, 2) ?? "";
  const fpText = children(fp, "fp_text").find((t) => text(t, 1) === "reference");
  return (fpText && text(fpText, textStringIndex(fpText))) ?? "";
}

/** A pad's copper and its hole; `footprintConnect` is its footprint's own zone connection. */
function padItems(
  pad: SList,
  toBoard: (p: PointMm) => PointMm,
  ref: string,
  copper: string[],
  footprintConnect: number | undefined,
  footprintMaskMargin?: number,
): BoardItem[] {
  const at = child(pad, "at");
  const size = child(pad, "size");
  if (!at || !size) return [];
  const centre = toBoard(pointMmOf(at)!);
  const angle = num(at, 3) ?? 0;
  const [w, h] = [num(size, 1) ?? 0, num(size, 2) ?? num(size, 1) ?? 0];
  const type = text(pad, 2) ?? "";
  const form = text(pad, 3) ?? "rect";
  const number = text(pad, 1) ?? "";
  const net = readNetRef(child(pad, "net"))?.name ?? "";
  const local = child(pad, "clearance");
  const clearance = local ? num(local, 1) : undefined;
  const name = number ? `pad ${number} of ${ref}` : `a mechanical pad of ${ref}`;
  const items: BoardItem[] = [];
  const padLayers = [...expandLayers(layerNames(pad), copper)];
  const layers = new Set(padLayers.filter((l) => /\.Cu$/.test(l)));
  if (layers.size > 0 && type !== "np_thru_hole") {
    const box = growBox({ minX: centre.x, minY: centre.y, maxX: centre.x, maxY: centre.y }, padReach(pad, w, h));
    // KiCad joins a round pad by spokes at 45°, any other along its axes (where the half size
    // along them is exact). A pad joined solid or not at all, by its own setting or its
    // footprint's, has no spokes to keep.
    const connect = zoneConnectOf(pad) ?? footprintConnect;
    const through = type === "thru_hole";
    const spoked = connect === undefined || connect === 1 || (connect === 3 && through);
    const spokeFrame = !spoked
      ? undefined
      : form === "circle"
        ? { angle: angle + 45, half: [w / 2, w / 2] as [number, number], through }
        : { angle, half: [w / 2, h / 2] as [number, number], through };
    items.push(
      lazy({ kind: "pad", what: name, net, layers, box, ref, pad: number, ends: [centre], spokeFrame, clearance }, () =>
        padShape(pad, form, centre, w, h, angle),
      ),
    );
    // A mask opening set wider than its pad (a fiducial's, 0.375 mm round it on pico-ice) clips
    // silkscreen beyond the copper: KiCad's "silkscreen clipped by solder mask".
    const margin = maskMarginOf(pad) ?? footprintMaskMargin ?? 0;
    if (margin > 0)
      for (const mask of padLayers.filter((l) => /^[FB]\.Mask$/.test(l)))
        items.push(
          lazy(
            {
              kind: "mask",
              what: `the mask opening of ${name}`,
              net: "",
              layers: new Set([mask]),
              box: growBox(box, margin),
              ref,
            },
            () => inflate(padShape(pad, form, centre, w, h, angle), margin),
          ),
        );
  }
  const drill = child(pad, "drill");
  if (drill) {
    const oval = text(drill, 1) === "oval";
    const dw = num(drill, oval ? 2 : 1) ?? 0;
    const dh = oval ? (num(drill, 3) ?? dw) : dw;
    const offset = pointMmOf(child(drill, "offset")) ?? { x: 0, y: 0 };
    const hc = turn(offset, angle, centre);
    // An NPTH pad drawn bigger than its drill is still only a hole: its pad has no copper.
    const [hw, hh] = type === "np_thru_hole" ? [Math.max(dw, w), Math.max(dh, h)] : [dw, dh];
    if (hw > 0) {
      const shape = Math.abs(hw - hh) < 1e-9 ? circle(hc, hw / 2) : oblong(hc, hw, hh, angle);
      // A mounting hole's pad has no copper, but its mask opening clips silkscreen as a pad's does.
      if (type === "np_thru_hole")
        for (const mask of padLayers.filter((l) => /^[FB]\.Mask$/.test(l)))
          items.push(
            drawn(
              {
                kind: "mask",
                what: `the mask opening of a mounting hole of ${ref}`,
                net: "",
                layers: new Set([mask]),
                ref,
              },
              shape,
            ),
          );
      items.push(
        drawn(
          {
            kind: "hole",
            what: type === "np_thru_hole" ? `a mounting hole of ${ref}` : `the hole of ${name}`,
            net: type === "np_thru_hole" ? "" : net,
            layers: new Set(copper),
            ref,
            plated: type !== "np_thru_hole",
            pad: number,
            clearance,
          },
          shape,
        ),
      );
    }
  }
  return items;
}

/** How far a pad's copper can reach from its centre (custom pads: their primitives too). */
function padReach(pad: SList, w: number, h: number): number {
  let reach = Math.hypot(w, h) / 2;
  const primitives = child(pad, "primitives");
  if (primitives) {
    for (const p of primitives.items) {
      if (p.type !== "list") continue;
      const pts = [
        child(p, "start"),
        child(p, "end"),
        child(p, "center"),
        child(p, "mid"),
        ...children(child(p, "pts") ?? p, "xy"),
      ].flatMap((n) => pointMmOf(n) ?? []);
      const width = num(child(p, "width") ?? p, 1) ?? 0;
      for (const q of pts) reach = Math.max(reach, Math.hypot(q.x, q.y) + width / 2);
      if (head(p) === "gr_circle" && pts.length === 2)
        reach = Math.max(
          reach,
          Math.hypot(pts[0]!.x, pts[0]!.y) + Math.hypot(pts[1]!.x - pts[0]!.x, pts[1]!.y - pts[0]!.y),
        );
    }
  }
  return reach;
}

/** A pad's copper: circles, ovals and custom shapes as they are, every other form as its bounding rectangle. */
function padShape(pad: SList, form: string, centre: PointMm, w: number, h: number, angle: number): ShapeMm {
  if (form === "circle") return circle(centre, w / 2);
  if (form === "oval") return oblong(centre, w, h, angle);
  if (form === "custom") return customPadShape(pad, centre, w, h, angle);
  if (form === "trapezoid") {
    const delta = child(pad, "rect_delta");
    const [dx, dy] = delta ? [Math.abs(num(delta, 1) ?? 0), Math.abs(num(delta, 2) ?? 0)] : [0, 0];
    return rectangle(centre, w + dy, h + dx, angle);
  }
  return rectangle(centre, w, h, angle);
}

/**
 * A custom pad's copper: its anchor and every primitive, turned with the pad. Its square of
 * reach would do as an obstacle but not as a target: a route ending on the square's edge may
 * end nowhere near the copper (custom_pads_test's ring pad on /PAD2).
 */
function customPadShape(pad: SList, centre: PointMm, w: number, h: number, angle: number): ShapeMm {
  const anchor = childText(child(pad, "options") ?? pad, "anchor");
  const parts = [anchor === "circle" ? circle(centre, w / 2) : rectangle(centre, w, h, angle)];
  const toBoard = (p: PointMm) => turn(p, angle, centre);
  for (const primitive of child(pad, "primitives")?.items ?? []) {
    if (primitive.type !== "list") continue;
    const { lines, filled } = drawingPolylines(primitive, toBoard);
    const width =
      num(child(primitive, "width") ?? child(child(primitive, "stroke") ?? primitive, "width") ?? primitive, 1) ?? 0;
    for (const line of lines) {
      if (width > 0) parts.push(stroke(line, width));
      // A pad's polygon is copper inside, whatever its fill says, as pcbnew merges the primitives.
      if (filled || head(primitive) === "gr_poly") parts.push(polygon(line));
    }
  }
  return union(parts);
}

/** A stadium `w`×`h` turned by `angle`. */
function oblong(centre: PointMm, w: number, h: number, angle: number): ShapeMm {
  const half = Math.abs(w - h) / 2;
  const axis = w >= h ? { x: half, y: 0 } : { x: 0, y: half };
  return stroke([turn({ x: -axis.x, y: -axis.y }, angle, centre), turn(axis, angle, centre)], Math.min(w, h));
}

/** The board's own items (not footprints'): tracks, vias, rule areas, drawings and texts on copper, silkscreen and Edge.Cuts. */
export function boardItems(board: Board, copper: string[]): BoardItem[] {
  const netOf = netNames(board);
  const items: BoardItem[] = [];
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const kind = head(item) ?? "";
    if (kind === "segment" || kind === "arc" || kind === "via") items.push(...copperItems(item, netOf(item), copper));
    else if (kind === "zone") items.push(...keepoutItems(item, copper, undefined, netOf(item)));
    else if (kind.startsWith("gr_")) items.push(...drawingItems(item, copper));
  }
  for (const fp of children(board.root, "footprint")) items.push(...footprintBoardItems(fp, copper));
  return items;
}

/** What a footprint adds to the board's own items: its rule areas, and its graphics on Edge.Cuts (a cut-out). */
export function footprintBoardItems(fp: SList, copper: string[]): BoardItem[] {
  const items = children(fp, "zone").flatMap((zone) => keepoutItems(zone, copper, referenceOf(fp)));
  const at = placementOf(fp);
  for (const item of fp.items) {
    if (item.type === "list" && childText(item, "layer") === "Edge.Cuts" && /^fp_/.test(head(item) ?? ""))
      items.push(...edgeItems(item, (p) => footprintToBoard(p, at)));
  }
  return items;
}

/**
 * The board's tracks, arcs and vias; with `within`, only those whose ends lie in or across the
 * box (the copper near a change, without building every item of a big board).
 */
export function trackItems(board: Board, copper: string[], within?: BBox): BoardItem[] {
  const netOf = netNames(board);
  const items: BoardItem[] = [];
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const kind = head(item) ?? "";
    if (kind !== "segment" && kind !== "arc" && kind !== "via") continue;
    if (within) {
      const ends = ["start", "mid", "end", "at"].flatMap((name) => pointMmOf(child(item, name)) ?? []);
      if (ends.length === 0 || !boxesOverlap(boxOf([ends]), within)) continue;
    }
    if (kind === "via") items.push(...viaItems(item, netOf(item), copper).filter((i) => i.kind === "via"));
    else items.push(trackItem(item, netOf(item)));
  }
  return items;
}

/**
 * The items of the board's tracks, arcs and vias with these ids, as `boardItems` has them (a via
 * and its hole): copper just laid, for an index of the board to take in.
 */
export function laidItems(board: Board, copper: string[], ids: ReadonlySet<string>): BoardItem[] {
  if (ids.size === 0) return [];
  const netOf = netNames(board);
  return board.root.items.flatMap((node) => {
    if (node.type !== "list") return [];
    const id = ownId(node);
    return id !== undefined && ids.has(id) ? copperItems(node, netOf(node), copper) : [];
  });
}

/** The items of one track, arc or via (a via's hole too); none for anything else. */
function copperItems(node: SList, net: string, copper: string[]): BoardItem[] {
  const kind = head(node);
  if (kind === "segment" || kind === "arc") return [trackItem(node, net)];
  return kind === "via" ? viaItems(node, net, copper) : [];
}

/** How a board item names its net: by name, by code in numbered boards, or by its `net_name`. */
function netNames(board: Board): (node: SList) => string {
  const names = new Map(
    board.nets().flatMap((n) => (n.code !== undefined ? [[n.code, n.name] as [number, string]] : [])),
  );
  return (node) => {
    const ref = readNetRef(child(node, "net"));
    return (
      ref?.name || (ref?.code !== undefined ? (names.get(ref.code) ?? "") : "") || (childText(node, "net_name") ?? "")
    );
  };
}

/** A track's or via's id: `(uuid …)` from KiCad 8 on, `(tstamp …)` before. */
export function ownId(item: SList): string | undefined {
  return childText(item, "uuid") ?? childText(item, "tstamp");
}

function trackItem(item: SList, net: string): BoardItem {
  const width = num(child(item, "width") ?? item, 1) ?? 0.2;
  const [start, mid, end] = [
    pointMmOf(child(item, "start")),
    pointMmOf(child(item, "mid")),
    pointMmOf(child(item, "end")),
  ];
  const pts = [start, mid, end].flatMap((p) => p ?? []);
  const layer = childText(item, "layer") ?? "";
  const box = growBox(boxOf([pts]), width / 2);
  const line = start && mid && end ? arcPoints(start, mid, end) : pts;
  return lazy(
    {
      kind: "track",
      what: `a track of ${net || "no net"} on ${layer}`,
      id: ownId(item),
      net,
      layers: new Set([layer]),
      box,
      ends: [pts[0]!, pts[pts.length - 1]!],
      width,
    },
    () => stroke(line, width),
  );
}

function viaItems(item: SList, net: string, copper: string[]): BoardItem[] {
  const at = pointMmOf(child(item, "at"));
  if (!at) return [];
  const size = num(child(item, "size") ?? item, 1) ?? 0.6;
  const drill = num(child(item, "drill") ?? item, 1) ?? 0.3;
  // A blind or buried via spans only part of the stack; taking every layer keeps the check on the safe side.
  const all = new Set(copper);
  return [
    drawn(
      {
        kind: "via",
        what: `a via of ${net || "no net"} at ${at.x}, ${at.y}`,
        net,
        layers: all,
        ends: [at],
        id: ownId(item),
      },
      circle(at, size / 2),
    ),
    drawn(
      {
        kind: "hole",
        what: `the hole of a via of ${net || "no net"} at ${at.x}, ${at.y}`,
        net,
        layers: all,
        plated: false,
        id: ownId(item),
      },
      circle(at, drill / 2),
    ),
  ];
}

/**
 * A copper zone's outline as a "pour": never an obstacle (its fill is refilled), but a pad of its
 * net inside it is joined by thermal spokes, which need room clear of other nets (`spokes.ts`).
 */
function pourItems(zone: SList, net: string, copper: string[]): BoardItem[] {
  const connect = child(zone, "connect_pads");
  const mode = connect?.items[1]?.type === "atom" ? connect.items[1].raw : "thermal";
  if (!net || mode === "yes" || mode === "no") return [];
  // A spoke crosses the thermal gap and must meet fill, which keeps the zone's clearance from
  // other nets and is at least its minimum thickness wide.
  const { clearance, minThickness: thickness, thermalGap: gap, thermalBridgeWidth: width } = zoneFillRules(zone);
  const throughHoleOnly = mode === "thru_hole_only";
  const layers = new Set([...expandLayers(layerNames(zone), copper)].filter((l) => copper.includes(l)));
  return children(zone, "polygon").flatMap((p) => {
    const pts = ptsPoints(child(p, "pts"));
    return pts.length > 2
      ? [
          drawn(
            {
              kind: "pour",
              what: `a zone of ${net}`,
              net,
              layers,
              thermal: { gap, width, clearance, thickness, throughHoleOnly },
            },
            polygon(pts),
          ),
        ]
      : [];
  });
}

/** A rule area with what it keeps out; a copper zone is a pour (see `pourItems`). */
function keepoutItems(zone: SList, copper: string[], ref?: string, net = ""): BoardItem[] {
  const keepout = child(zone, "keepout");
  if (!keepout) return pourItems(zone, net, copper);
  const forbids = (what: string) => childText(keepout, what) === "not_allowed";
  const rules: KeepoutRules = {
    tracks: forbids("tracks"),
    vias: forbids("vias"),
    pads: forbids("pads"),
    footprints: forbids("footprints"),
  };
  if (!rules.tracks && !rules.vias && !rules.pads && !rules.footprints) return [];
  const name = childText(zone, "name");
  const layers = expandLayers(layerNames(zone), copper);
  // The first polygon is the outline; KiCad writes any further ones as its cut-outs.
  const paths = children(zone, "polygon")
    .map((p) => children(child(p, "pts") ?? p, "xy").flatMap((xy) => pointMmOf(xy) ?? []))
    .filter((pts) => pts.length > 2);
  if (paths.length === 0) return [];
  return [
    drawn(
      {
        kind: "keepout",
        what: name ? `the rule area "${name}"` : ref ? `a rule area of ${ref}` : "a rule area",
        net: "",
        layers,
        keepout: rules,
        ref,
      },
      withHoles(paths),
    ),
  ];
}

function drawingItems(item: SList, copper: string[]): BoardItem[] {
  const layer = childText(item, "layer") ?? "";
  if (layer === "Edge.Cuts") return edgeItems(item, (p) => p);
  const onCopper = copper.includes(layer);
  const mask = /^[FB]\.Mask$/.test(layer);
  if (!onCopper && !mask && !/^[FB]\.SilkS$/.test(layer)) return [];
  const kind = head(item);
  const base = {
    kind: onCopper ? ("copper" as const) : mask ? ("mask" as const) : ("silk" as const),
    net: "",
    layers: new Set([layer]),
  };
  if (kind === "gr_text") {
    const shape = textShape(item, 0, (p) => p);
    return shape
      ? [drawn({ ...base, what: `the board text "${text(item, 1) ?? ""}"${mask ? ` on ${layer}` : ""}` }, shape)]
      : [];
  }
  const shape = kind === "gr_text_box" ? undefined : drawingShape(item, (p) => p);
  return shape ? [lazy({ ...base, what: `a board drawing on ${layer}`, box: shape.box }, shape.draw)] : [];
}

/** An Edge.Cuts drawing, a hair wide: copper keeps the edge clearance from it, courtyards stay off it. */
function edgeItems(item: SList, toBoard: (p: PointMm) => PointMm): BoardItem[] {
  return drawingPolylines(item, toBoard).lines.map((line) =>
    drawn({ kind: "edge", what: "the board edge", net: "", layers: new Set(["Edge.Cuts"]) }, stroke(line, 0.002)),
  );
}
