/**
 * Footprints in the board's own dialect (see `BoardDialect`). Board sync builds a new footprint
 * the way KiCad 9 writes it (kicad/board/footprint/instance.ts); on an older board it is rewritten here into
 * what that release wrote, so the file keeps its format: KiCad 8 has no embedded fonts; KiCad 6
 * and 7 keep Reference and Value as `fp_text`, other fields and the sheet as bare key/value
 * properties sorted by name, ids as bare `tstamp`s, yes/no flags as bare atoms, `none`/`solid`
 * fills, and lay the file out with two-space indents and most items on one line. KiCad 6 also
 * writes line widths without a stroke.
 */
import { BOARD, has, type BoardDialect, type FormatChange } from "../../format-versions.ts";
import { child, head, insertChild, isList, list, q, sym, text, type SList, type SNode } from "../../sexpr/index.ts";

/** Tokens KiCad 9 writes that no older release knows (dropped for older boards). */
const NEWER_THAN_8 = new Set(["embedded_fonts", "padstack", "tenting", "zone_layer_connections", "embedded_files"]);
const NEWER_THAN_7 = new Set(["teardrops", "unlocked", "solder_paste_margin_ratio"]);
const NEWER_THAN_6 = new Set(["thermal_bridge_angle", "fp_text_box", "table"]);

/** `(attr …)` flags and the board format that brought each (older boards drop them). */
const ATTR_FLAGS: Record<string, FormatChange> = {
  allow_soldermask_bridges: BOARD.soldermaskBridgesFlag,
  dnp: BOARD.footprintDnp,
};

const SHAPES = new Set(["fp_line", "fp_rect", "fp_circle", "fp_arc", "fp_poly", "fp_curve"]);
const GEOMETRY = new Set(["start", "mid", "end", "center", "pts"]);

/**
 * Rewrites a footprint built in KiCad 9's form into `dialect`, in place. For KiCad 6 and 7 the
 * layout is redone too (call after the footprint is inserted, with its depth in the file).
 */
export function footprintInDialect(node: SList, dialect: BoardDialect): void {
  if (dialect.release >= 9) return;
  dropTokens(node, dialect);
  dropAttrFlags(node, dialect);
  if (dialect.release >= 8) return;
  legacyTokens(node, dialect);
  legacyOrder(node);
}

function dropTokens(node: SList, dialect: BoardDialect): void {
  const drop = (h: string) =>
    (dialect.release < 9 && NEWER_THAN_8.has(h)) ||
    (dialect.release < 8 && NEWER_THAN_7.has(h)) ||
    (dialect.release < 7 && NEWER_THAN_6.has(h));
  const stack: SList[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    current.items = current.items.filter((item) => !(item.type === "list" && drop(head(item) ?? "")));
    for (const item of current.items) if (item.type === "list") stack.push(item);
  }
}

/**
 * Leaves out the `(attr …)` flags the board's format does not have, as a library footprint of
 * a newer KiCad may carry them; an `(attr)` left with no flag is not written.
 */
function dropAttrFlags(node: SList, dialect: BoardDialect): void {
  const attr = child(node, "attr");
  if (!attr) return;
  attr.items = attr.items.filter(
    (a, i) => i === 0 || a.type !== "atom" || !ATTR_FLAGS[a.raw] || has(dialect.version, ATTR_FLAGS[a.raw]!),
  );
  if (attr.items.length === 1) node.items = node.items.filter((item) => item !== attr);
}

/** KiCad 6/7 tokens: fp_text fields, bare properties, tstamps, atom flags, old fills and widths. */
function legacyTokens(node: SList, dialect: BoardDialect): void {
  const items: SNode[] = [node.items[0]!, node.items[1]!];
  const locked = child(node, "locked");
  if (locked) items.push(sym("locked"));
  for (const item of node.items.slice(2)) {
    if (item.type !== "list" || head(item) === "locked") continue;
    const h = head(item);
    if (h === "property") {
      // KiCad 6/7 footprints carry no Datasheet or Description field.
      if (text(item, 1) !== "Datasheet" && text(item, 1) !== "Description") items.push(legacyProperty(item));
    } else if (h === "sheetname" || h === "sheetfile")
      items.push(list("property", q(h === "sheetname" ? "Sheetname" : "Sheetfile"), q(text(item, 1) ?? "")));
    else items.push(item);
  }
  node.items = items;
  // A root-sheet footprint of KiCad 6/7 still says which sheet: `(property "Sheetname" "")`.
  if (
    !node.items.some((i) => isList(i, "property") && text(i, 1) === "Sheetname") &&
    node.items.some((i) => isList(i, "property") && text(i, 1) === "Sheetfile")
  ) {
    node.items.push(list("property", q("Sheetname"), q("")));
  }
  const stack: SList[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    current.items = current.items.flatMap((item): SNode[] => {
      if (item.type !== "list") return [item];
      const h = head(item) ?? "";
      if (h === "uuid") return [list("tstamp", sym(text(item, 1) ?? ""))];
      if (h === "hide" || h === "bold" || h === "italic") return text(item, 1) === "no" ? [] : [sym(h)];
      if (h === "fill" && SHAPES.has(head(current) ?? ""))
        return [list("fill", sym(text(item, 1) === "yes" || text(item, 1) === "solid" ? "solid" : "none"))];
      if (h === "stroke" && dialect.strokes === "width") {
        const width = child(item, "width");
        return width ? [width] : [];
      }
      if (h === "model") renameModelVariable(item, dialect);
      stack.push(item);
      return [item];
    });
    const h = head(current) ?? "";
    if (h === "pad" && dialect.release < 7) {
      const layers = child(current, "layers");
      if (layers)
        layers.items = layers.items.map((a, i) => (i > 0 && a.type === "atom" ? sym(text(layers, i) ?? "") : a));
    }
    // KiCad 6/7 write a text's id last, and KiCad 6 a shape's width after its layer.
    if (h === "fp_text") moveLast(current, ["tstamp"]);
    if (SHAPES.has(h) && dialect.release < 7) moveLast(current, ["width", "fill", "tstamp"]);
  }
}

/** Moves the children with these heads to the end, in this order. */
function moveLast(node: SList, heads: string[]): void {
  const moved = heads.flatMap((h) => node.items.filter((i) => isList(i, h)));
  node.items = [...node.items.filter((i) => !moved.includes(i as SList)), ...moved];
}

/**
 * A KiCad 9 field as KiCad 6/7 kept it: Reference and Value as `fp_text` (position, layer,
 * visibility and style), every other field as a bare `(property "name" "value")`.
 */
function legacyProperty(property: SList): SList {
  const name = text(property, 1) ?? "";
  const value = text(property, 2) ?? "";
  if (name !== "Reference" && name !== "Value") return list("property", q(name), q(value));
  const out = list("fp_text", sym(name === "Reference" ? "reference" : "value"), q(value));
  const at = child(property, "at");
  if (at)
    out.items.push(text(at, 3) === undefined || Number(text(at, 3)) === 0 ? list("at", ...at.items.slice(1, 3)) : at);
  const layer = child(property, "layer");
  if (layer) out.items.push(layer);
  if (child(property, "hide") && text(child(property, "hide")!, 1) !== "no") out.items.push(sym("hide"));
  const effects = child(property, "effects");
  if (effects) out.items.push(effects);
  const uuid = child(property, "uuid");
  if (uuid) out.items.push(uuid);
  return out;
}

function renameModelVariable(model: SList, dialect: BoardDialect): void {
  const path = model.items[1];
  if (path?.type !== "atom") return;
  const value = text(model, 1) ?? "";
  const renamed = value.replace(/\$\{KICAD\d+_3DMODEL_DIR\}/, `\${KICAD${dialect.release}_3DMODEL_DIR}`);
  if (renamed !== value) model.items[1] = { ...q(renamed), pre: path.pre };
}

/**
 * KiCad 6/7's order of a footprint's children: header, bare properties by name, path, attr,
 * then Reference and Value, every other text, the shapes, pads, zones, groups and 3D models.
 */
function legacyOrder(node: SList): void {
  const rank = (item: SNode): number => {
    if (item.type !== "list") return 0;
    const h = head(item) ?? "";
    if (["layer", "tedit", "tstamp", "at", "descr", "tags"].includes(h)) return 1;
    if (h === "property") return 2;
    if (h === "path") return 3;
    if (
      [
        "solder_mask_margin",
        "solder_paste_margin",
        "solder_paste_ratio",
        "clearance",
        "zone_connect",
        "thermal_width",
        "thermal_gap",
        "attr",
        "private_layers",
        "net_tie_pad_groups",
      ].includes(h)
    )
      return 4;
    if (h === "fp_text") return text(item, 1) === "reference" ? 5 : text(item, 1) === "value" ? 6 : 7;
    if (SHAPES.has(h)) return 8;
    if (h === "pad") return 9;
    if (h === "model") return 11;
    return 10;
  };
  const [name, id, ...rest] = node.items;
  const ranked = rest.map((item, i) => ({ item, rank: rank(item), i }));
  ranked.sort(
    (a, b) =>
      a.rank - b.rank ||
      (a.rank === 2 ? byteCompare(text(a.item as SList, 1) ?? "", text(b.item as SList, 1) ?? "") : 0) ||
      a.i - b.i,
  );
  node.items = [name!, id!, ...ranked.map((r) => r.item)];
}

function byteCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Layout

/**
 * Lays a footprint out as KiCad 6/7 wrote it, at `depth` (1 for a board's footprints): two-space
 * indents; the layer on the first line; fields with their effects below; shapes on one line
 * (KiCad 7 breaks before the stroke); pads with their geometry on the first line and the rest on
 * a second; 3D models with one transform per line.
 */
export function legacyLayout(node: SList, depth: number, dialect: BoardDialect): void {
  const line = (d: number) => `\n${"  ".repeat(d)}`;
  const [name, ...items] = node.items;
  name!.pre = "";
  let inlineHeader = true;
  for (const item of items) {
    if (item.type === "atom") {
      item.pre = " ";
      continue;
    }
    const h = head(item) ?? "";
    if (inlineHeader && h === "layer") {
      item.pre = " ";
      inline(item);
      continue;
    }
    inlineHeader = false;
    item.pre =
      dialect.release === 6 && h === "tstamp" && isList(items[items.indexOf(item) - 1], "tedit")
        ? " "
        : line(depth + 1);
    layoutChild(item, depth + 1, dialect);
  }
  node.post = line(depth);
}

/** Pad children KiCad 6/7 write on the pad's second line, from the first of them on. */
const PAD_SECOND_LINE = new Set([
  "net",
  "pinfunction",
  "pintype",
  "die_length",
  "solder_mask_margin",
  "solder_paste_margin",
  "solder_paste_margin_ratio",
  "clearance",
  "zone_connect",
  "thermal_width",
  "thermal_bridge_angle",
  "thermal_gap",
  "options",
  "primitives",
  "tstamp",
]);

function layoutChild(item: SList, depth: number, dialect: BoardDialect): void {
  const line = (d: number) => `\n${"  ".repeat(d)}`;
  const h = head(item) ?? "";
  inline(item);
  if (h === "fp_text") {
    for (const sub of item.items) {
      if (isList(sub, "effects")) sub.pre = line(dialect.release === 7 ? depth + 2 : depth + 1);
      if (isList(sub, "tstamp")) sub.pre = line(depth + 1);
    }
    item.post = line(depth);
  } else if (h === "fp_poly") {
    const pts = child(item, "pts");
    if (!pts) return;
    for (const xy of pts.items.slice(1)) xy.pre = line(depth + 2);
    pts.post = line(depth + 1);
    if (dialect.release === 7) {
      // KiCad 7 puts the points on their own line and leaves a blank line after them.
      pts.pre = line(depth + 1);
      const after = item.items[item.items.indexOf(pts) + 1];
      if (after) after.pre = `\n${line(depth + 1)}`;
    }
  } else if (SHAPES.has(h) && dialect.release === 7) {
    const first = item.items.findIndex((sub, i) => i > 0 && sub.type === "list" && !GEOMETRY.has(head(sub) ?? ""));
    if (first > 0) item.items[first]!.pre = line(depth + 1);
  } else if (h === "pad") {
    const next = item.items.find((sub) => sub.type === "list" && PAD_SECOND_LINE.has(head(sub) ?? ""));
    if (next) next.pre = line(depth + 1);
  } else if (h === "model") {
    for (const sub of item.items) if (sub.type === "list") sub.pre = line(depth + 1);
    item.post = line(depth);
  }
}

/** A list and everything in it on one line, one space apart. */
function inline(node: SList): void {
  node.items.forEach((item, i) => {
    item.pre = i === 0 ? "" : " ";
    if (item.type === "list") inline(item);
  });
  node.post = "";
}

/**
 * Inserts `node` into `parent` the way the board's release lays it out: KiCad 8+ through the
 * engine's layout; KiCad 6/7 like its neighbours (their leading whitespace, itself on one line).
 */
export function insertInDialect(parent: SList, node: SList, index: number, dialect: BoardDialect): void {
  if (dialect.release >= 8) {
    insertChild(parent, node, index);
    return;
  }
  const neighbour =
    [...parent.items.slice(0, index)].reverse().find((i): i is SList => i.type === "list") ??
    parent.items.slice(index).find((i): i is SList => i.type === "list");
  parent.items.splice(index, 0, node);
  inline(node);
  node.pre = neighbour?.pre ?? " ";
}
