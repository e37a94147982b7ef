/**
 * Builders for the items of a KiCad 9 schematic — wires, junctions, no-connect flags, labels and
 * placed symbols — in exactly the shape eeschema saves them, so a tree edited with them (the
 * schematic editor) or built from them (the fixture generator) reads back in KiCad unchanged
 * and diffs like a KiCad save. Coordinates are millimetres, snapped to eeschema's 100 nm unit;
 * layout (tabs, line breaks) is applied when a node is inserted with `insertChild`.
 */
import { child, children, cloneNode, head, list, q, text, type SList } from "../sexpr/index.ts";

export type MmPoint = readonly [number, number];
export type LabelShape = "input" | "output" | "bidirectional" | "tri_state" | "passive";

/** Schematic coordinates snap to eeschema's internal unit, 100 nm: at most 4 decimals. */
export function mm(value: number): number {
  return Math.round(value * 10000) / 10000;
}

export function atNode(x: number, y: number, angle?: number): SList {
  return angle === undefined ? list("at", mm(x), mm(y)) : list("at", mm(x), mm(y), angle);
}

// Fresh nodes on every call: layout rewrites a node's whitespace, so nodes are never shared.
const font = () => list("font", list("size", 1.27, 1.27));
const stroke = () => list("stroke", list("width", 0), list("type", "default"));

export function uuidNode(uuid: string): SList {
  return list("uuid", q(uuid));
}

/** `(effects (font (size 1.27 1.27)) (justify …) (hide yes))` with the default font. */
export function effectsNode(justify?: string, hidden = false): SList {
  const out = list("effects", font());
  if (justify) out.items.push(list("justify", ...justify.split(" ")));
  if (hidden) out.items.push(list("hide", "yes"));
  return out;
}

/**
 * Where eeschema puts an item among a sheet's top-level items: it saves them grouped by type in
 * KICAD_T order, each group sorted by UUID. Unknown heads (headers, lib_symbols, instances)
 * have no rank.
 */
export function itemRank(head: string): number | undefined {
  return ITEM_RANK.get(head);
}

const ITEM_RANK = new Map<string, number>(
  [
    ["junction"],
    ["no_connect"],
    ["bus_entry"],
    ["wire", "bus", "polyline"],
    ["arc", "circle", "rectangle", "bezier"],
    ["image"],
    ["text"],
    ["text_box"],
    ["table"],
    ["label"],
    ["global_label"],
    ["hierarchical_label"],
    ["rule_area"],
    ["netclass_flag"],
    ["symbol"],
    ["sheet"],
  ].flatMap((heads, rank) => heads.map((h): [string, number] => [h, rank])),
);

/** One straight wire (or bus) segment. */
export function lineNode(kind: "wire" | "bus", a: MmPoint, b: MmPoint, uuid: string): SList {
  return list(
    kind,
    list("pts", list("xy", mm(a[0]), mm(a[1])), list("xy", mm(b[0]), mm(b[1]))),
    stroke(),
    uuidNode(uuid),
  );
}

export function junctionNode(p: MmPoint, uuid: string): SList {
  return list("junction", atNode(p[0], p[1]), list("diameter", 0), list("color", 0, 0, 0, 0), uuidNode(uuid));
}

export function noConnectNode(p: MmPoint, uuid: string): SList {
  return list("no_connect", atNode(p[0], p[1]), uuidNode(uuid));
}

/** Labels read away from their anchor; eeschema justifies them by the angle. */
function labelJustify(angle: number, base: string): string {
  return angle === 180 || angle === 270 ? `right${base}` : `left${base}`;
}

export function labelNode(name: string, p: MmPoint, angle: number, uuid: string): SList {
  return list("label", q(name), atNode(p[0], p[1], angle), effectsNode(labelJustify(angle, " bottom")), uuidNode(uuid));
}

export function globalLabelNode(name: string, p: MmPoint, shape: LabelShape, angle: number, uuid: string): SList {
  const justify = labelJustify(angle, "");
  return list(
    "global_label",
    q(name),
    list("shape", shape),
    atNode(p[0], p[1], angle),
    effectsNode(justify),
    uuidNode(uuid),
    list(
      "property",
      q("Intersheetrefs"),
      q("${INTERSHEET_REFS}"),
      atNode(p[0], p[1], angle),
      effectsNode(justify, true),
    ),
  );
}

export function hierLabelNode(name: string, p: MmPoint, shape: LabelShape, angle: number, uuid: string): SList {
  return list(
    "hierarchical_label",
    q(name),
    list("shape", shape),
    atNode(p[0], p[1], angle),
    effectsNode(labelJustify(angle, "")),
    uuidNode(uuid),
  );
}

/** A field of a library symbol, in library coordinates (mm, Y up). */
export interface LibraryField {
  name: string;
  value: string;
  at: MmPoint;
  angle: number;
  /** Everything after `(at)`: effects, show_name, … */
  rest: SList[];
}

/**
 * The fields a freshly placed symbol copies from its library symbol, in library order.
 * `ki_*` properties (keywords, footprint filters) stay in the library, as in eeschema.
 */
export function libraryFields(def: SList): LibraryField[] {
  const out: LibraryField[] = [];
  for (const prop of children(def, "property")) {
    const name = text(prop, 1) ?? "";
    if (name.startsWith("ki_")) continue;
    const at = child(prop, "at");
    out.push({
      name,
      value: text(prop, 2) ?? "",
      at: [Number(at ? text(at, 1) : 0), Number(at ? text(at, 2) : 0)],
      angle: Number((at && text(at, 3)) ?? 0),
      // What follows the value and `(at)`; a KiCad 6 library's `(id N)` field number is not copied.
      rest: prop.items.slice(3).filter((n): n is SList => n.type === "list" && head(n) !== "at" && head(n) !== "id"),
    });
  }
  return out;
}

/** `(property "name" "value" (at x y angle) …rest)`; `rest` is copied, never shared. */
export function propertyNode(name: string, value: string, at: MmPoint, angle: number, rest: SList[]): SList {
  return list("property", q(name), q(value), atNode(at[0], at[1], angle), ...rest.map(cloneNode));
}

/** A field the library lacks (an MPN, say): hidden, anchored at the symbol's origin. */
export function hiddenPropertyNode(name: string, value: string, at: MmPoint): SList {
  return propertyNode(name, value, at, 0, [effectsNode(undefined, true)]);
}

export interface PlacedSymbolSpec {
  libId: string;
  /** The `lib_symbols` entry when it is not named by `libId` (see `lib_name`). */
  libName?: string;
  /** The embedded library symbol; its exclude_from_sim/in_bom/on_board flags are copied. */
  def: SList;
  at: MmPoint;
  rotation?: number;
  mirror?: "x" | "y";
  unit: number;
  bodyStyle?: number;
  uuid: string;
  fields: SList[];
  /** Every pin of the package, in eeschema's order, each with its own uuid. */
  pins: { number: string; uuid: string }[];
  project: string;
  /** One reference per instance of the sheet holding the symbol. */
  instances: { path: string; reference: string }[];
}

/** A placed symbol as eeschema saves it, with its instance data for every sheet instance. */
export function placedSymbolNode(spec: PlacedSymbolSpec): SList {
  const libFlag = (name: string, fallback: string) => text(child(spec.def, name) ?? list(name, fallback), 1)!;
  const node = list(
    "symbol",
    ...(spec.libName ? [list("lib_name", q(spec.libName))] : []),
    list("lib_id", q(spec.libId)),
    atNode(spec.at[0], spec.at[1], spec.rotation ?? 0),
  );
  if (spec.mirror) node.items.push(list("mirror", spec.mirror));
  node.items.push(list("unit", spec.unit));
  if ((spec.bodyStyle ?? 1) !== 1) node.items.push(list("convert", spec.bodyStyle!));
  node.items.push(
    list("exclude_from_sim", libFlag("exclude_from_sim", "no")),
    list("in_bom", libFlag("in_bom", "yes")),
    list("on_board", libFlag("on_board", "yes")),
    list("dnp", "no"),
    uuidNode(spec.uuid),
    ...spec.fields,
    ...spec.pins.map((p) => list("pin", q(p.number), uuidNode(p.uuid))),
    list(
      "instances",
      list(
        "project",
        q(spec.project),
        // eeschema writes a symbol's instance paths sorted.
        ...[...spec.instances]
          .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
          .map((p) => list("path", q(p.path), list("reference", q(p.reference)), list("unit", spec.unit))),
      ),
    ),
  );
  return node;
}
