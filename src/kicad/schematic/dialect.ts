/**
 * Writing into a schematic in its own format version: the syntax of every version KiCad 9
 * reads, applied to nodes before they are inserted, so an edit never upgrades a file.
 *
 * New nodes are built in today's syntax (kicad/schematic/item-nodes.ts, or copied from a symbol library of
 * any version); `adaptSyntax` rewrites such a node into the syntax of the file it goes into,
 * following the table in format.ts. The structural difference, where instance data lives, is
 * handled by the `symbol_instances` helpers below: KiCad 6 keeps every placed symbol's reference
 * in one root-level list, later versions inside each symbol.
 */
import { has, SCHEMATIC } from "../format-versions.ts";
import {
  child,
  children,
  childText,
  head,
  insertChild,
  isList,
  list,
  q,
  removeChild,
  setAtom,
  sym,
  text,
  type SList,
} from "../sexpr/index.ts";

/** Field numbers of the mandatory fields, written as `(id N)` before `SCHEMATIC.propertyIdsDropped`. */
const MANDATORY_FIELD_IDS: Record<string, number> = { Reference: 0, Value: 1, Footprint: 2, Datasheet: 3 };

/**
 * Rewrites `node` (and everything in it) into the syntax of schematic format `version`, in
 * place, and returns it. Only syntax changes: what the node means stays the same, in either
 * direction (a KiCad 9 library symbol going into a KiCad 6 file, or a KiCad 6 library symbol
 * going into a KiCad 9 one).
 */
export function adaptSyntax(node: SList, version: number): SList {
  const v8 = has(version, SCHEMATIC.v8Syntax);
  const visit = (list: SList, parent: SList | undefined) => {
    const name = head(list);
    // A visit may drop the child it visits, so walk a copy.
    for (const item of list.items.slice(1)) if (item.type === "list") visit(item, list);
    switch (name) {
      case "uuid":
        quoteAtom(list, 1, v8);
        break;
      case "effects":
        booleanFlag(list, "hide", v8);
        break;
      case "font":
        booleanFlag(list, "bold", v8);
        booleanFlag(list, "italic", v8);
        break;
      case "pin_names":
      case "pin_numbers":
        booleanFlag(list, "hide", has(version, SCHEMATIC.pinHideBoolean));
        break;
      case "pin":
        // Library pins (`(pin passive line …)`), not a placed symbol's `(pin "1" (uuid))`.
        if (list.items[1]?.type === "atom" && !list.items[1].raw.startsWith('"'))
          booleanFlag(list, "hide", has(version, SCHEMATIC.pinHideBoolean));
        break;
      case "fields_autoplaced":
        if (v8 && list.items.length === 1) list.items.push(sym("yes"));
        else if (!v8 && text(list, 1) === "yes") list.items.length = 1;
        break;
      case "stroke": {
        const color = child(list, "color");
        const oldStroke = !has(version, SCHEMATIC.strokeWithoutColor);
        if (oldStroke && !color) list.items.push(listOf("color", 0, 0, 0, 0));
        else if (!oldStroke && color && color.items.slice(1).every((a) => a.type === "atom" && a.raw === "0"))
          removeChild(list, color);
        break;
      }
      case "symbol":
      case "global_label":
        fieldSyntax(list, version);
        break;
    }
    if (parent) dropUnknown(list, parent, version);
  };
  visit(node, undefined);
  return node;
}

/**
 * A field about to be added to `owner` (a placed symbol), in the syntax of format `version`:
 * before `SCHEMATIC.propertyIdsDropped` it gets the next free field number.
 */
export function adaptNewField(owner: SList, prop: SList, version: number): SList {
  adaptSyntax(prop, version);
  if (has(version, SCHEMATIC.propertyIdsDropped)) return prop;
  const used = children(owner, "property").map((p) =>
    Number(childText(p, "id") ?? MANDATORY_FIELD_IDS[text(p, 1) ?? ""] ?? -1),
  );
  prop.items.splice(3, 0, listOf("id", Math.max(3, ...used) + 1));
  return prop;
}

/** Removes attributes a version does not know yet (they all default to what KiCad assumed before). */
function dropUnknown(list: SList, parent: SList, version: number): void {
  const name = head(list);
  const drop =
    (name === "exclude_from_sim" && !has(version, SCHEMATIC.excludeFromSim)) ||
    (name === "dnp" && !has(version, SCHEMATIC.dnp)) ||
    (name === "embedded_fonts" && !has(version, SCHEMATIC.embeddedFiles));
  if (drop) removeChild(parent, list);
}

/**
 * Properties of a symbol or global label: field numbers before `SCHEMATIC.propertyIdsDropped`,
 * the intersheet-reference field's name, and the description (a `Description` field, or the
 * library-only `ki_description` before `SCHEMATIC.descriptionField`).
 */
function fieldSyntax(owner: SList, version: number): void {
  const placed = child(owner, "lib_id") !== undefined;
  const withIds = !has(version, SCHEMATIC.propertyIdsDropped);
  let nextUserId = 4;
  for (const prop of children(owner, "property")) {
    let name = text(prop, 1) ?? "";
    if (head(owner) === "global_label") {
      const renamed = has(version, SCHEMATIC.intersheetRefsName) ? "Intersheetrefs" : "Intersheet References";
      if (name === "Intersheetrefs" || name === "Intersheet References") setAtom(prop, 1, q((name = renamed)));
    } else if (!has(version, SCHEMATIC.descriptionField) && name === "Description") {
      if (placed) {
        removeChild(owner, prop);
        continue;
      }
      setAtom(prop, 1, q((name = "ki_description")));
    } else if (has(version, SCHEMATIC.descriptionField) && name === "ki_description" && !placed) {
      setAtom(prop, 1, q((name = "Description")));
    }
    const id = child(prop, "id");
    if (!withIds) {
      if (id) removeChild(prop, id);
      continue;
    }
    if (id) continue;
    const number = head(owner) === "global_label" ? 0 : (MANDATORY_FIELD_IDS[name] ?? nextUserId++);
    // `(property "name" "value" (id N) (at …) …)`: the id follows the value.
    prop.items.splice(3, 0, listOf("id", number));
  }
}

/** `(name yes)` (newer) or a bare `name` atom (older) for a true flag; a false one is dropped in the older form. */
function booleanFlag(list: SList, name: string, asList: boolean): void {
  for (let i = 1; i < list.items.length; i++) {
    const item = list.items[i]!;
    if (asList && item.type === "atom" && item.raw === name) list.items[i] = listOf(name, "yes");
    else if (!asList && isList(item, name)) {
      if (text(item, 1) === "no") list.items.splice(i--, 1);
      else list.items[i] = sym(name);
    }
  }
}

/** Quotes (or unquotes) the atom at `index`: KiCad 8 quotes uuids, KiCad 6 and 7 do not. */
function quoteAtom(list: SList, index: number, quoted: boolean): void {
  const value = text(list, index);
  if (value === undefined) return;
  setAtom(list, index, quoted || !/^[0-9A-Za-z-]+$/.test(value) ? q(value) : sym(value));
}

function listOf(name: string, ...values: (string | number)[]): SList {
  return list(name, ...values);
}

// --- KiCad 6 instance data ------------------------------------------------------------------

/** True when symbols of a project whose root has format `rootVersion` keep their references in the root's `symbol_instances`. */
export function instancesInRoot(rootVersion: number): boolean {
  return !has(rootVersion, SCHEMATIC.symbolInstancesInSymbols);
}

/** A KiCad 6 instance path: the full path without the root's uuid (`/sheet…/symbol`). */
export function legacyInstancePath(sheetPath: string, rootPath: string, symbolUuid: string): string {
  return `${sheetPath.slice(rootPath.length)}/${symbolUuid}`;
}

export interface LegacyInstanceRow {
  /** As `legacyInstancePath` gives it. */
  path: string;
  reference: string;
  unit: number;
  value: string;
  footprint: string;
}

/**
 * Adds rows to the root's `symbol_instances` (creating the list before `sheet_instances`'s
 * end when missing), keeping KiCad's order: sorted by path. Values and footprints are written
 * only by versions that keep them there (`SCHEMATIC.instanceValueDropped`).
 */
export function addLegacyInstances(root: SList, version: number, rows: LegacyInstanceRow[]): void {
  let table = child(root, "symbol_instances");
  if (!table) {
    const sheets = child(root, "sheet_instances");
    table = insertChild(
      root,
      list("symbol_instances"),
      sheets ? root.items.indexOf(sheets) + 1 : root.items.length,
    ) as SList;
    layOutInserted(root, table, 1, version);
  }
  for (const row of rows) {
    const node = list("path", q(row.path), list("reference", q(row.reference)), list("unit", row.unit));
    if (!has(version, SCHEMATIC.instanceValueDropped))
      node.items.push(list("value", q(row.value)), list("footprint", q(row.footprint)));
    const entries = children(table, "path");
    const next = entries.find((e) => (text(e, 1) ?? "") > row.path);
    insertChild(table, node, next ? table.items.indexOf(next) : table.items.length);
    layOutInserted(table, node, 2, version);
  }
}

/**
 * Adds a sheet's page to the root's `sheet_instances`, where KiCad 6 keeps every sheet's
 * (`SCHEMATIC.sheetInstancesInSheets`): `(path "/parent-uuid…/sheet-uuid/" (page "2"))`, the
 * full instance path (`parentPath`, from the root's uuid, then the sheet's) from
 * `SCHEMATIC.symbolInstancesInSymbols` on.
 */
export function addLegacySheetInstance(
  root: SList,
  version: number,
  rootPath: string,
  parentPath: string,
  sheetUuid: string,
  page: string,
): void {
  let table = child(root, "sheet_instances");
  if (!table) {
    // Before the symbols' list, where KiCad 6 writes it.
    const symbols = child(root, "symbol_instances");
    table = insertChild(
      root,
      list("sheet_instances"),
      symbols ? root.items.indexOf(symbols) : root.items.length,
    ) as SList;
    layOutInserted(root, table, 1, version);
  }
  const path = has(version, SCHEMATIC.symbolInstancesInSymbols)
    ? `${parentPath}/${sheetUuid}`
    : `${parentPath.slice(rootPath.length)}/${sheetUuid}/`;
  const node = list("path", q(path), list("page", q(page)));
  insertChild(table, node);
  layOutInserted(table, node, 2, version);
  // KiCad 6 keeps a page row on one line.
  if (!has(version, SCHEMATIC.v8Syntax)) {
    child(node, "page")!.pre = " ";
    node.post = "";
  }
}

/** Removes the root's `symbol_instances` rows of the placed symbols with these uuids. */
export function removeLegacyInstances(root: SList, symbolUuids: Set<string>): void {
  const table = child(root, "symbol_instances");
  if (!table) return;
  for (const row of children(table, "path")) {
    const path = text(row, 1) ?? "";
    if (symbolUuids.has(path.slice(path.lastIndexOf("/") + 1))) removeChild(table, row);
  }
}

/**
 * Sets `reference`, `value` or `footprint` in the rows of the placed symbol `symbolUuid`.
 * KiCad 6 reads a row's value and footprint over the symbol's own fields, so a field edit has to
 * land in both. `only` limits a rename to the rows that hold the old reference.
 */
export function setLegacyInstanceField(
  root: SList,
  symbolUuid: string,
  field: "reference" | "value" | "footprint",
  value: string,
  only?: string,
): void {
  const table = child(root, "symbol_instances");
  if (!table) return;
  for (const row of children(table, "path")) {
    const path = text(row, 1) ?? "";
    if (path.slice(path.lastIndexOf("/") + 1) !== symbolUuid) continue;
    const cell = child(row, field);
    if (!cell || (only !== undefined && childText(row, "reference") !== only)) continue;
    setAtom(cell, 1, q(value));
  }
}

// --- KiCad 6 and 7 layout ------------------------------------------------------------------

/**
 * How KiCad 6 and 7 place a child list: on its parent's line (`inline`), on a line of its own
 * (`line`), or on a line it shares with the following children of the same group (`group`, the
 * `(in_bom yes) (on_board yes)` line of a symbol). Their writer laid each item out by hand, two
 * spaces per level; KiCad 8 replaced it with one tab per level and a list per line.
 */
type Placement = "inline" | "line" | "group";

const DRAWING = new Set(["rectangle", "circle", "arc", "polyline", "bezier", "text", "text_box", "pin"]);
const FLAGS = new Set(["in_bom", "on_board", "dnp", "fields_autoplaced", "exclude_from_sim"]);
const INSTANCE_CELLS = new Set(["reference", "unit", "value", "footprint", "page"]);

function placement(parent: SList, item: SList): Placement {
  const parentHead = head(parent) ?? "";
  const name = head(item) ?? "";
  switch (parentHead) {
    case "wire":
    case "bus":
    case "bus_entry":
    case "junction":
      return name === "stroke" || name === "uuid" ? "line" : "inline";
    case "label":
    case "global_label":
    case "hierarchical_label":
      return name === "effects" || name === "uuid" || name === "property" ? "line" : "inline";
    case "property":
      return name === "effects" ? "line" : "inline";
    case "sheet":
      return ["stroke", "fill", "uuid", "property", "pin", "instances"].includes(name) ? "line" : "inline";
    case "symbol": {
      if (child(parent, "lib_id")) {
        // A placed symbol.
        if (FLAGS.has(name)) return "group";
        return name === "uuid" || name === "property" || name === "pin" || name === "instances" ? "line" : "inline";
      }
      // A library symbol or one of its unit sub-symbols.
      return name === "property" || name === "symbol" || DRAWING.has(name) ? "line" : "inline";
    }
    case "rectangle":
    case "circle":
    case "arc":
    case "bezier":
    case "text":
      return name === "stroke" || name === "fill" || name === "effects" ? "line" : "inline";
    case "polyline":
      return name === "pts" || name === "stroke" || name === "fill" ? "line" : "inline";
    case "pts":
      // A library polyline lists one point per line; a wire's points stay on its line.
      return "line";
    case "pin":
      // A sheet pin (`(pin "NAME" input (at …)`) puts its effects and uuid on lines of their own.
      if (parent.items[2]?.type === "atom" && (name === "effects" || name === "uuid")) return "line";
      return name === "name" || name === "number" || name === "alternate" ? "line" : "inline";
    case "instances":
    case "project":
    case "lib_symbols":
    case "symbol_instances":
    case "sheet_instances":
      return "line";
    case "path":
      return INSTANCE_CELLS.has(name) ? "group" : "inline";
    default:
      return "inline";
  }
}

/**
 * Re-lays a node just inserted into `parent` (at nesting `depth`) as KiCad 6 and 7 write it: its
 * own line (after a blank line when it starts a group of top-level items, and before every
 * top-level symbol and sheet) and its contents. Does nothing for KiCad 8 and later, whose
 * layout `insertChild` already applied.
 */
export function layOutInserted(parent: SList, node: SList, depth: number, version: number): void {
  if (has(version, SCHEMATIC.v8Syntax)) return;
  layOutLegacy(node, depth);
  const previous = parent.items[parent.items.indexOf(node) - 1];
  if (depth > 1) {
    // Inside an item, the node goes where KiCad 6 and 7 put that child: on the line of the
    // previous one, beside it in a group, or on a line of its own.
    const mode = placement(parent, node);
    const joins =
      mode === "inline" || (mode === "group" && previous?.type === "list" && placement(parent, previous) === "group");
    node.pre = joins ? " " : `\n${"  ".repeat(depth)}`;
    return;
  }
  const startsGroup = !(previous?.type === "list" && head(previous) === head(node));
  const blank = head(node) === "symbol" || head(node) === "sheet" || startsGroup;
  node.pre = `${blank ? "\n\n" : "\n"}${"  ".repeat(depth)}`;
}

/** Lays a node's contents out as KiCad 6 and 7 write them at nesting `depth`. */
function layOutLegacy(node: SList, depth: number): void {
  const indent = (d: number) => `\n${"  ".repeat(d)}`;
  const visit = (list: SList, d: number) => {
    let broken = false;
    let previous: Placement | undefined;
    // A wire's (pts …) keeps its points on one line.
    const pointsInline = head(list) === "pts" && ["wire", "bus"].includes(head(visitParent.get(list) ?? list) ?? "");
    list.items.forEach((item, i) => {
      if (i === 0) {
        item.pre = "";
        return;
      }
      if (item.type === "atom") {
        item.pre = " ";
        previous = "inline";
        return;
      }
      visitParent.set(item, list);
      let mode = placement(list, item);
      if (pointsInline) mode = "inline";
      if (mode === "group" && previous === "group") item.pre = " ";
      else if (mode === "inline") item.pre = " ";
      else {
        item.pre = indent(d + 1);
        broken = true;
      }
      previous = mode;
      visit(item, d + 1);
    });
    list.post = broken ? indent(d) : "";
  };
  const visitParent = new Map<SList, SList>();
  visit(node, depth);
}
