/**
 * `kicad/board/footprint/` owns footprints on a board: instances made from a library footprint,
 * their per-version dialect and fields, matching to symbols, sheet data, comparison and exchange.
 *
 * Footprint instances: turning a library `.kicad_mod` into the `(footprint …)` a board holds, and
 * the few geometric facts board sync needs about footprints already placed.
 *
 * The shape follows what pcbnew 9 writes when it adds a library footprint to a board (checked by
 * loading and re-saving with KiCad's own writer): the lib id as the name; `layer`, `uuid`, `at`
 * first; the library's `version`/`generator` dropped; Reference and Value from the symbol, then
 * the mandatory Datasheet and Description fields (hidden on Fab), then the symbol's other fields
 * styled the way the GUI updater styles new fields (hidden on Fab, at the footprint origin);
 * `path`, `sheetname`, `sheetfile`; then the library's attributes, graphics and pads, each with a
 * fresh uuid. Child positions stay footprint-relative and unrotated, while pad and text angles
 * are absolute, so placing at rotation `r` adds `r` to those angles only.
 *
 * A back-side instance is the library footprint flipped top-to-bottom, as `FOOTPRINT::Flip`
 * leaves it: local Y negated, front layers swapped with back ones, pad angles negated, text
 * angles mirrored to `180 - a` and text justified `mirror`.
 */
import { uuidSource } from "../../uuids.ts";
import { footprintToBoard, pointMmOf, textStringIndex, type BBox, type PlacementMm, type PointMm } from "../model.ts";
import {
  child,
  children,
  cloneNode,
  flag,
  formatNumber,
  head,
  insertChild,
  isList,
  list,
  num,
  q,
  removeChild,
  setAtom,
  sym,
  text,
  type SAtom,
  type SList,
} from "../../sexpr/index.ts";

export type Side = "front" | "back";

export interface FootprintField {
  name: string;
  value: string;
}

export interface InstanceOptions {
  libId: string;
  /** Seed for the deterministic uuids of the footprint and everything in it. */
  uuidSeed: string;
  at: PlacementMm;
  side: Side;
  reference: string;
  value: string;
  /** Symbol fields other than Reference, Value and Footprint, in symbol order. */
  fields: FootprintField[];
  path?: string;
  sheetname?: string;
  sheetfile?: string;
  /** Fabrication flags added to the library's `(attr …)`. */
  flags: string[];
  /** Keep this uuid for the footprint itself (a swapped footprint keeps its identity). */
  uuid?: string;
  locked?: boolean;
  /** The board's layer ids by name (its `(layers …)` table), for KiCad's drawing order. */
  layerIds?: Map<string, number>;
  /** The board's smallest silkscreen text (`SilkTextMinimum`); library text below it is raised to it. */
  silkText?: SilkTextMinimum;
  /** Hide the reference, as the board hides those of footprints like it. */
  hideReference?: boolean;
}

/**
 * The board setup's text constraints, mm: DRC warns about silkscreen text lower or thinner
 * (`text_height`, `text_thickness`). KiCad's library draws 1 mm text 0.15 mm thick, which a
 * board that asks for 0.19 mm (rvpc-revb) reports on every part it adds, so a new footprint's
 * silkscreen text is made to meet them, as a designer sets it in the footprint's properties.
 */
export interface SilkTextMinimum {
  height: number;
  thickness: number;
}

/**
 * Raises a silkscreen text's font to `min`: its height (`(size height width)`) and its stroke.
 * The library keeps the text clear of the part's own silkscreen by a hair (a 0603 LED's
 * reference, 1 mm tall and 0.15 mm thick, clears its outline by under 0.02 mm), so a text that
 * grows moves away from the footprint's origin by half its height's growth and its stroke's
 * whole growth, at least what its ink grew towards the part: it keeps the library's gap
 * (esp32-poe2's 0.19 mm minimum stroke put a new LED's reference over its outline).
 */
function meetSilkMinimum(item: SList, min: SilkTextMinimum): void {
  if (!TEXT_ITEMS.has(head(item) ?? "") || !/\.SilkS$/.test(text(child(item, "layer") ?? item, 1) ?? "")) return;
  const font = child(child(item, "effects") ?? item, "font");
  if (!font) return;
  let grown = 0;
  const size = child(font, "size");
  const height = size && num(size, 1);
  if (size && height !== undefined && height < min.height) {
    setAtom(size, 1, sym(formatNumber(min.height)));
    grown += (min.height - height) / 2;
  }
  const thickness = child(font, "thickness");
  const stroke = thickness && num(thickness, 1);
  if (thickness && stroke !== undefined && stroke < min.thickness) {
    setAtom(thickness, 1, sym(formatNumber(min.thickness)));
    grown += min.thickness - stroke;
  }
  const at = child(item, "at");
  if (!at || grown === 0) return;
  const [x, y] = [num(at, 1) ?? 0, num(at, 2) ?? 0];
  const off = Math.hypot(x, y);
  if (off === 0) return;
  setAtom(at, 1, sym(formatNumber(x + (x / off) * grown)));
  setAtom(at, 2, sym(formatNumber(y + (y / off) * grown)));
}

/** Heads a library footprint carries that a board instance does not. */
const LIBRARY_ONLY = new Set([
  "version",
  "generator",
  "generator_version",
  "tedit",
  "uuid",
  "tstamp",
  "at",
  "layer",
  "locked",
  "placed",
  "path",
  "sheetname",
  "sheetfile",
]);
/** Text items whose angle is absolute and always written. */
const TEXT_ITEMS = new Set(["property", "fp_text", "fp_text_box"]);
/** Footprint-level settings KiCad writes between the sheet data and `(attr …)`. */
const BEFORE_ATTR = new Set([
  "descr",
  "tags",
  "property",
  "path",
  "sheetname",
  "sheetfile",
  "private_layers",
  "net_tie_pad_groups",
  "solder_mask_margin",
  "solder_paste_margin",
  "solder_paste_margin_ratio",
  "solder_paste_ratio",
  "clearance",
  "zone_connect",
  "thermal_width",
  "thermal_gap",
]);
/** The `(attr …)` flags a footprint takes from its symbol's DNP and "exclude from BOM". */
export const SYMBOL_FLAGS: readonly string[] = ["dnp", "exclude_from_bom"];
/** Fabrication flags in the order KiCad's writer emits them after the mount type. */
const ATTR_ORDER = [
  "smd",
  "through_hole",
  "board_only",
  "exclude_from_pos_files",
  "exclude_from_bom",
  "allow_missing_courtyard",
  "dnp",
  "allow_soldermask_bridges",
];

/**
 * Builds a board footprint from the root list of a `.kicad_mod`. The library tree is copied,
 * never modified, and the result has no layout yet: `insertChild` lays it out KiCad's way.
 */
export function instantiateFootprint(library: SList, options: InstanceOptions): SList {
  const uuids = uuidSource(options.uuidSeed);
  const footprintUuid = options.uuid ?? uuids();
  const source = library.items
    .slice(2)
    .filter((item): item is SList => item.type === "list" && !LIBRARY_ONLY.has(head(item) ?? ""));
  const body = source.map((item) => cloneNode(item));
  const node = list("footprint", q(options.libId));
  if (options.locked) node.items.push(list("locked", sym("yes")));
  node.items.push(list("layer", q(options.side === "back" ? "B.Cu" : "F.Cu")));
  node.items.push(list("uuid", q(footprintUuid)));
  node.items.push(atNode(options.at.x, options.at.y, options.at.rotation, false));

  const properties = body.filter((item) => head(item) === "property");
  const propertyValue = (name: string, value: string) => {
    const existing = properties.find((p) => text(p, 1) === name);
    if (existing) setAtom(existing, 2, q(value));
    return existing;
  };
  const reference = propertyValue("Reference", options.reference);
  if (options.hideReference && reference) hideField(reference);
  propertyValue("Value", options.value);
  // KiCad 6 and 7 keep Reference and Value as `(fp_text reference|value …)`: so does a footprint
  // copied from such a board (`library-copy.ts`), whose texts still name the part it came from.
  for (const item of body) {
    if (head(item) !== "fp_text") continue;
    if (text(item, 1) === "reference") {
      setAtom(item, textStringIndex(item), q(options.reference));
      if (options.hideReference) hideField(item);
    } else if (text(item, 1) === "value") setAtom(item, textStringIndex(item), q(options.value));
  }
  const mandatory = new Map(
    options.fields.filter((f) => f.name === "Datasheet" || f.name === "Description").map((f) => [f.name, f.value]),
  );
  const added: SList[] = [];
  for (const name of ["Datasheet", "Description"]) {
    if (!propertyValue(name, mandatory.get(name) ?? "")) added.push(hiddenField(name, mandatory.get(name) ?? "", 1.27));
  }
  for (const field of options.fields) {
    if (mandatory.has(field.name)) continue;
    if (!propertyValue(field.name, field.value)) added.push(hiddenField(field.name, field.value, 1));
  }
  const sheet: SList[] = [];
  if (options.path !== undefined) sheet.push(list("path", q(options.path)));
  if (options.sheetname) sheet.push(list("sheetname", q(options.sheetname)));
  if (options.sheetfile) sheet.push(list("sheetfile", q(options.sheetfile)));

  const lastProperty = body.reduce((at, item, i) => (head(item) === "property" ? i : at), -1);
  const headerEnd = lastProperty >= 0 ? lastProperty + 1 : body.findIndex((item) => !BEFORE_ATTR.has(head(item) ?? ""));
  const split = headerEnd < 0 ? body.length : headerEnd;
  const ordered = [...body.slice(0, split), ...added, ...sheet, ...body.slice(split)];
  const attr = ordered.find((item) => head(item) === "attr");
  if (attr) {
    // The symbol decides DNP and BOM exclusion, whatever the library footprint says (KiCad's
    // updater copies them from the symbol); an `(attr)` left with no flag is not written.
    addAttrFlags(attr, options.flags);
    attr.items = attr.items.filter(
      (a, i) => i === 0 || !(a.type === "atom" && SYMBOL_FLAGS.includes(a.raw) && !options.flags.includes(a.raw)),
    );
    if (attr.items.length === 1) ordered.splice(ordered.indexOf(attr), 1);
  } else if (options.flags.length > 0) {
    const at = ordered.findIndex((item) => !BEFORE_ATTR.has(head(item) ?? ""));
    ordered.splice(at < 0 ? ordered.length : at, 0, list("attr", ...sortFlags(options.flags).map(sym)));
  }
  for (const item of ordered) {
    if (options.silkText) meetSilkMinimum(item, options.silkText);
    if (options.side === "back") flipItem(item);
    rotateItem(item, options.at.rotation);
    assignUuids(item, uuids);
    node.items.push(item);
  }
  sortLikeKicad(node, options.at, options.layerIds ?? new Map());
  return node;
}

/** Drawing kinds in KiCad's `KICAD_T` order, and shapes in `SHAPE_T` order. */
const DRAWING_TYPE: Record<string, number> = {
  fp_line: 0,
  fp_rect: 0,
  fp_arc: 0,
  fp_circle: 0,
  fp_poly: 0,
  fp_curve: 0,
  image: 1,
  fp_text: 2,
  fp_text_box: 3,
  table: 4,
  dimension: 5,
};
const SHAPE_KIND: Record<string, number> = { fp_line: 0, fp_rect: 1, fp_arc: 2, fp_circle: 3, fp_poly: 4, fp_curve: 5 };

/**
 * Orders drawings and pads the way KiCad's writer does (`FOOTPRINT::cmp_drawings` and
 * `cmp_pads`): drawings by kind, layer id, shape, then start and end point on the board; pads by
 * number, then footprint-relative position; uuids break ties. A library lists them in this order
 * for an unrotated front-side footprint, so only rotated and flipped instances move anything.
 */
function sortLikeKicad(node: SList, at: PlacementMm, layerIds: Map<string, number>): void {
  const slots = (test: (item: SList) => boolean) =>
    node.items.map((item, i) => (item.type === "list" && test(item) ? i : -1)).filter((i) => i >= 0);
  const iu = (v: number) => Math.round(v * 1e6);
  const boardPoint = (p: SList | undefined): [number, number] => {
    const b = footprintToBoard({ x: p ? (num(p, 1) ?? 0) : 0, y: p ? (num(p, 2) ?? 0) : 0 }, at);
    return [iu(b.x), iu(b.y)];
  };
  const uuidOf = (item: SList) => text(child(item, "uuid") ?? item, 1) ?? "";
  const drawingKey = (item: SList): (number | string)[] => {
    const h = head(item) ?? "";
    const layer = text(child(item, "layer") ?? item, 1) ?? "";
    const key: (number | string)[] = [DRAWING_TYPE[h] ?? 9, layerIds.get(layer) ?? 999];
    if (h in SHAPE_KIND) {
      key.push(SHAPE_KIND[h]!);
      if (h !== "fp_poly")
        key.push(...boardPoint(child(item, h === "fp_circle" ? "center" : "start")), ...boardPoint(child(item, "end")));
    }
    return [...key, uuidOf(item)];
  };
  const padKey = (item: SList): (number | string)[] => {
    const p = child(item, "at");
    return [text(item, 1) ?? "", iu(p ? (num(p, 1) ?? 0) : 0), iu(p ? (num(p, 2) ?? 0) : 0), uuidOf(item)];
  };
  const reorder = (
    indices: number[],
    key: (item: SList) => (number | string)[],
    compareFirst?: (a: string, b: string) => number,
  ) => {
    const items = indices.map((i) => node.items[i] as SList);
    const keys = new Map(items.map((item) => [item, key(item)]));
    items.sort((a, b) => compareKeys(keys.get(a)!, keys.get(b)!, compareFirst));
    indices.forEach((slot, i) => (node.items[slot] = items[i]!));
  };
  reorder(
    slots((item) => (head(item) ?? "") in DRAWING_TYPE),
    drawingKey,
  );
  reorder(
    slots((item) => head(item) === "pad"),
    padKey,
    padNumberCompare,
  );
}

function compareKeys(
  a: (number | string)[],
  b: (number | string)[],
  compareFirst?: (a: string, b: string) => number,
): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (i === 0 && compareFirst && typeof x === "string" && typeof y === "string") {
      const c = compareFirst(x, y);
      if (c !== 0) return c;
      continue;
    }
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** KiCad's `StrNumCmp`: digit runs compare as numbers ("2" < "10"), case-insensitively. */
function padNumberCompare(a: string, b: string): number {
  const parts = (s: string) => s.toUpperCase().match(/\d+|\D+/g) ?? [];
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    if (/^\d/.test(x) && /^\d/.test(y)) return Number(x) - Number(y) || (x < y ? -1 : 1);
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** Adds fabrication flags to an `(attr …)` list, keeping KiCad's order. */
export function addAttrFlags(attr: SList, flags: string[]): void {
  const present = attr.items.slice(1).flatMap((a) => (a.type === "atom" ? [a.raw] : []));
  const wanted = sortFlags([...new Set([...present, ...flags])]);
  attr.items.splice(
    1,
    attr.items.length - 1,
    ...wanted.map((f, i) => ({ ...sym(f), pre: i === 0 && attr.items[1] ? attr.items[1].pre : " " })),
  );
}

function sortFlags(flags: string[]): string[] {
  const rank = (f: string) => (ATTR_ORDER.indexOf(f) < 0 ? ATTR_ORDER.length : ATTR_ORDER.indexOf(f));
  return [...flags].sort((a, b) => rank(a) - rank(b));
}

/**
 * A new field as the GUI updater adds it (`updateFootprintParameters`): hidden, on the Fab layer
 * of the footprint's side, at the footprint origin. Mandatory fields use the 1.27 mm size KiCad
 * gives them; user fields the board's default Fab text (1 mm, 0.15 mm thick).
 */
export function hiddenField(name: string, value: string, size: number): SList {
  return list(
    "property",
    q(name),
    q(value),
    list("at", 0, 0, 0),
    list("layer", q("F.Fab")),
    list("hide", sym("yes")),
    list("effects", list("font", list("size", size, size), list("thickness", 0.15))),
  );
}

/**
 * Hides a field as KiCad writes a hidden one: `(hide yes)` after a property's layer, a bare
 * `hide` after a KiCad 6/7 `fp_text`'s layer.
 */
function hideField(field: SList): void {
  if (flag(field, "hide") || child(field, "hide")) return;
  const layer = field.items.findIndex((i) => i.type === "list" && head(i) === "layer");
  const at = layer < 0 ? field.items.length : layer + 1;
  field.items.splice(at, 0, head(field) === "fp_text" ? sym("hide") : list("hide", sym("yes")));
}

/** A new field for a footprint already on the board, on its side and at its rotation. */
export function fieldForFootprint(name: string, value: string, side: Side, rotation: number, uuid: string): SList {
  const field = hiddenField(name, value, name === "Datasheet" || name === "Description" ? 1.27 : 1);
  if (side === "back") flipItem(field);
  rotateItem(field, rotation);
  insertUuid(field, q(uuid));
  return field;
}

/** `(at x y [angle])`; the angle is written when non-zero or when `always`. */
function atNode(x: number, y: number, angle: number, always: boolean): SList {
  return angle !== 0 || always ? list("at", x, y, angle) : list("at", x, y);
}

/** Normalises an angle to [0, 360), as KiCad writes pad and text angles. */
export function normalizeAngle(angle: number): number {
  const a = ((angle % 360) + 360) % 360;
  return Math.abs(a - 360) < 1e-9 ? 0 : Number(formatNumber(a));
}

/**
 * Moves a footprint already on the board to `to` (same side): the footprint's `(at)`, and the
 * absolute angles of its pads and texts turned by the change in rotation, as pcbnew's move and
 * rotate leave them. Child positions are footprint-relative, so they stay.
 */
export function moveFootprint(node: SList, to: PlacementMm): void {
  const at = child(node, "at");
  if (!at) return;
  const from = num(at, 3) ?? 0;
  setAtom(at, 1, to.x);
  setAtom(at, 2, to.y);
  setAngleInPlace(at, normalizeAngle(to.rotation), false);
  const turn = to.rotation - from;
  if (turn === 0) return;
  for (const item of node.items) {
    if (item.type !== "list" || item === at) continue;
    const kind = head(item) ?? "";
    const itemAt = child(item, "at");
    if (itemAt && (kind === "pad" || TEXT_ITEMS.has(kind)))
      setAngleInPlace(itemAt, normalizeAngle((num(itemAt, 3) ?? 0) + turn), kind !== "pad");
  }
}

/** Sets the angle of a laid-out `(at x y [angle])`, keeping each atom's spacing; 0 is dropped unless `always`. */
function setAngleInPlace(at: SList, angle: number, always: boolean): void {
  const third = at.items[3];
  if (angle === 0 && !always) {
    if (third?.type === "atom") at.items.splice(3, 1);
  } else if (third?.type === "atom") setAtom(at, 3, angle);
  else at.items.splice(3, 0, { ...sym(formatNumber(angle)), pre: " " });
}

function rotateItem(item: SList, rotation: number): void {
  const kind = head(item) ?? "";
  if (kind === "pad") {
    const at = child(item, "at");
    if (!at) return;
    const angle = normalizeAngle((num(at, 3) ?? 0) + rotation);
    setAngle(at, angle, false);
  } else if (TEXT_ITEMS.has(kind)) {
    const at = child(item, "at");
    if (!at) return;
    setAngle(at, normalizeAngle((num(at, 3) ?? 0) + rotation), true);
  }
}

function setAngle(at: SList, angle: number, always: boolean): void {
  const x = num(at, 1) ?? 0;
  const y = num(at, 2) ?? 0;
  const rest = at.items.slice(4);
  const fresh = atNode(x, y, angle, always);
  at.items.splice(0, at.items.length, ...fresh.items, ...rest);
}

/** Geometry points whose Y a top-to-bottom flip negates. */
const POINT_HEADS = new Set(["at", "start", "end", "mid", "center", "xy", "offset"]);

/** Flips one footprint child to the back side (see the module comment). */
function flipItem(item: SList): void {
  const kind = head(item) ?? "";
  const stack: SList[] = [item];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const h = head(node) ?? "";
    if (h === "model") continue;
    if (POINT_HEADS.has(h)) {
      const y = num(node, 2);
      if (y !== undefined) setAtom(node, 2, y === 0 ? 0 : -y);
    }
    if (h === "layer" || h === "layers") {
      for (let i = 1; i < node.items.length; i++) {
        const atom = node.items[i]!;
        if (atom.type === "atom") atom.raw = swapSide(atom.raw);
      }
    }
    for (const c of node.items) if (c.type === "list") stack.push(c);
  }
  const at = child(item, "at");
  if (kind === "pad" && at) setAngleInPlace(at, normalizeAngle(-(num(at, 3) ?? 0)), false);
  if (TEXT_ITEMS.has(kind)) {
    if (at) setAngleInPlace(at, normalizeAngle(180 - (num(at, 3) ?? 0)), true);
    const effects = child(item, "effects");
    if (effects) toggleMirror(effects);
  }
}

/** Mirrors a text's `(justify …)`, or un-mirrors a mirrored one, as a flip does. */
function toggleMirror(effects: SList): void {
  const justify = child(effects, "justify");
  const at = justify ? justify.items.findIndex((a) => a.type === "atom" && a.raw === "mirror") : -1;
  if (!justify) insertChild(effects, list("justify", sym("mirror")));
  else if (at < 0) insertChild(justify, sym("mirror"));
  else if (justify.items.length > 2) justify.items.splice(at, 1);
  else removeChild(effects, justify);
}

/**
 * Flips a footprint on the board to the other side about its own position, as KiCad's
 * `FOOTPRINT::Flip` with `FLIP_DIRECTION::TOP_BOTTOM` does: its rotation negated, its layer and
 * every item's layers swapped front to back, positions mirrored in Y, pad angles negated, text
 * angles mirrored to 180 - a and texts mirrored.
 */
export function flipFootprint(node: SList): void {
  const layer = child(node, "layer");
  if (layer) for (const atom of layer.items.slice(1)) if (atom.type === "atom") atom.raw = swapSide(atom.raw);
  const at = child(node, "at");
  // KiCad keeps a footprint's orientation in (-180, 180].
  const turned = normalizeAngle(-(num(at ?? node, 3) ?? 0));
  if (at) setAngleInPlace(at, turned > 180 ? turned - 360 : turned, false);
  const y0 = at ? (num(at, 2) ?? 0) : 0;
  for (const item of node.items) {
    if (item.type !== "list" || item === at || item === layer) continue;
    const kind = head(item) ?? "";
    if (/^(fp_|pad$|property$)/.test(kind)) flipItem(item);
    else if (kind === "zone") flipZone(item, y0);
  }
}

/** A footprint's rule area, kept in board coordinates: mirrored about the footprint's Y, its layers swapped. */
function flipZone(zone: SList, y0: number): void {
  const stack: SList[] = [zone];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const h = head(node);
    if (h === "xy") setAtom(node, 2, Number(formatNumber(2 * y0 - (num(node, 2) ?? 0))));
    if (h === "layer" || h === "layers")
      for (const atom of node.items.slice(1)) if (atom.type === "atom") atom.raw = swapSide(atom.raw);
    for (const c of node.items) if (c.type === "list") stack.push(c);
  }
}

function swapSide(raw: string): string {
  return raw.replace(/^("?)(F|B)\./, (_, quote: string, side: string) => `${quote}${side === "F" ? "B" : "F"}.`);
}

/** Gives every item that carries a `(uuid …)` (or, in the library, would) a fresh one. */
function assignUuids(item: SList, uuids: () => string): void {
  const stack: SList[] = [item];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const h = head(node) ?? "";
    if (h === "model" || h === "effects" || h === "stroke") continue;
    const existing = child(node, "uuid") ?? child(node, "tstamp");
    if (existing) {
      existing.items.splice(0, existing.items.length, sym("uuid"), q(uuids()));
    } else if (NEEDS_UUID.has(h)) {
      insertUuid(node, q(uuids()));
    }
    for (const c of node.items) if (c.type === "list" && !TEXT_ITEMS.has(h)) stack.push(c);
  }
}

/** Board items KiCad 9 writes with a uuid; libraries written by generators often omit it. */
const NEEDS_UUID = new Set([
  "property",
  "fp_text",
  "fp_text_box",
  "fp_line",
  "fp_rect",
  "fp_circle",
  "fp_arc",
  "fp_poly",
  "fp_curve",
  "pad",
  "zone",
  "group",
  "dimension",
]);

/** Where the uuid goes: after `layer` for texts, last for pads and graphics (KiCad's order). */
function insertUuid(node: SList, id: SAtom): void {
  const uuid = list("uuid", id);
  const h = head(node);
  if (TEXT_ITEMS.has(h ?? "")) {
    const after = ["hide", "layer", "unlocked", "at"]
      .map((name) => node.items.findIndex((i) => isList(i, name)))
      .find((i) => i >= 0);
    node.items.splice((after ?? node.items.length - 1) + 1, 0, uuid);
    return;
  }
  node.items.push(uuid);
}

// ---------------------------------------------------------------------------------------------
// Geometry

/**
 * Bounding box of a footprint in its own (unrotated) frame: its courtyard when it has one (the
 * area KiCad keeps other parts out of), otherwise every graphic and pad.
 */
export function localBounds(footprint: SList): BBox | undefined {
  const courtyard = footprint.items.filter(
    (i): i is SList => i.type === "list" && /^(F|B)\.CrtYd$/.test(layerOf(i) ?? ""),
  );
  const items =
    courtyard.length > 0
      ? courtyard
      : footprint.items.filter((i): i is SList => i.type === "list" && /^(fp_|pad$)/.test(head(i) ?? ""));
  const box: BBox = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  const add = (p: PointMm) => {
    box.minX = Math.min(box.minX, p.x);
    box.minY = Math.min(box.minY, p.y);
    box.maxX = Math.max(box.maxX, p.x);
    box.maxY = Math.max(box.maxY, p.y);
  };
  for (const item of items) {
    if (head(item) === "pad") {
      const at = child(item, "at");
      const size = child(item, "size");
      if (!at) continue;
      const r = Math.max(num(size ?? at, 1) ?? 0, num(size ?? at, 2) ?? 0) / 2;
      const x = num(at, 1) ?? 0;
      const y = num(at, 2) ?? 0;
      add({ x: x - r, y: y - r });
      add({ x: x + r, y: y + r });
      continue;
    }
    if (head(item) === "fp_circle") {
      const c = pointMmOf(child(item, "center"));
      const e = pointMmOf(child(item, "end"));
      if (c && e) {
        const r = Math.hypot(e.x - c.x, e.y - c.y);
        add({ x: c.x - r, y: c.y - r });
        add({ x: c.x + r, y: c.y + r });
      }
      continue;
    }
    for (const name of ["start", "end", "mid"]) {
      const p = pointMmOf(child(item, name));
      if (p) add(p);
    }
    const pts = child(item, "pts");
    for (const xy of pts ? children(pts, "xy") : []) {
      const p = pointMmOf(xy);
      if (p) add(p);
    }
  }
  return box.minX <= box.maxX ? box : undefined;
}

/** Bounds of a placed footprint on the board: its local bounds rotated and moved. */
export function boardBounds(footprint: SList): BBox | undefined {
  const local = localBounds(footprint);
  if (!local) return undefined;
  const at = child(footprint, "at");
  const place: PlacementMm = {
    x: (at && num(at, 1)) ?? 0,
    y: (at && num(at, 2)) ?? 0,
    rotation: (at && num(at, 3)) ?? 0,
  };
  const box: BBox = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  for (const [x, y] of [
    [local.minX, local.minY],
    [local.maxX, local.minY],
    [local.minX, local.maxY],
    [local.maxX, local.maxY],
  ] as const) {
    const b = footprintToBoard({ x, y }, place);
    box.minX = Math.min(box.minX, b.x);
    box.minY = Math.min(box.minY, b.y);
    box.maxX = Math.max(box.maxX, b.x);
    box.maxY = Math.max(box.maxY, b.y);
  }
  return box;
}

function layerOf(item: SList): string | undefined {
  const layer = child(item, "layer");
  return layer ? text(layer, 1) : undefined;
}
