/**
 * Building and editing. Edits touch only the nodes they change, and new nodes are laid out the
 * way KiCad 9's `KICAD_FORMAT::Prettify` writes them, so a diff after an edit shows exactly the
 * lines KiCad itself would have changed.
 */
import { byteLength } from "./bytes.ts";
import { INDENTS } from "./chars.ts";
import { quoteString } from "./escapes.ts";
import { printBare } from "./print.ts";
import { head, isList } from "./accessors.ts";
import type { SAtom, SList, SNode } from "./tree.ts";

/** A value a builder accepts: a node, a number, or a bare symbol. Use `q()` for strings. */
export type SValue = SNode | number | string;

/** A quoted string atom, escaped the way KiCad's `Quotew` does. */
export function q(value: string): SAtom {
  return { type: "atom", pre: "", raw: quoteString(value) };
}

/** A bare symbol atom such as `yes`, `hide` or a head name. */
export function sym(value: string): SAtom {
  return { type: "atom", pre: "", raw: value };
}

/** Formats a number the way KiCad writes coordinates: no exponent, no trailing zeros. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`cannot write ${value} into a KiCad file`);
  const rounded = Math.round(value * 1e6) / 1e6;
  if (rounded === 0) return "0";
  let s = rounded.toFixed(6);
  s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s;
}

/** A deep copy made of plain nodes, tied to no file, for inserting elsewhere (insertion lays it out). */
export function cloneNode<T extends SNode>(node: T): T {
  if (node.type === "atom") return { type: "atom", pre: node.pre, raw: node.raw } as T;
  const copy: SList = { type: "list", pre: node.pre, items: node.items.map(cloneNode), post: node.post, start: -1 };
  if (node.implicit) copy.implicit = true;
  return copy as T;
}

function toNode(value: SValue): SNode {
  if (typeof value === "number") return { type: "atom", pre: "", raw: formatNumber(value) };
  if (typeof value === "string") return sym(value);
  return value;
}

/** Builds a new list `(name ...items)`; layout is applied when it is inserted. */
export function list(name: string, ...items: SValue[]): SList {
  return { type: "list", pre: "", items: [sym(name), ...items.map(toNode)], post: "", start: -1 };
}

/** Replaces the atom at `index` (keeping its leading whitespace). */
export function setAtom(target: SList, index: number, value: SValue): void {
  const current = target.items[index];
  if (current?.type !== "atom") throw new RangeError(`no atom at index ${index} of (${head(target) ?? "?"})`);
  const next = toNode(value);
  if (next.type !== "atom") throw new TypeError("setAtom needs an atom value");
  current.raw = next.raw;
}

/** Indentation depth of a list, read from the whitespace KiCad put before it. */
function depthOf(node: SList): number {
  const nl = node.pre.lastIndexOf("\n");
  if (nl < 0) return 0;
  return node.pre.length - nl - 1;
}

/**
 * Inserts `node` into `parent` at `index` (default: the end), laid out as KiCad 9 would write
 * it at that depth.
 */
export function insertChild(parent: SList, node: SValue, index = parent.items.length): SNode {
  const created = toNode(node);
  const depth = depthOf(parent) + 1;
  parent.items.splice(index, 0, created);
  if (created.type === "atom") {
    created.pre = index === 0 ? "" : " ";
  } else {
    const prev = parent.items[index - 1];
    const packXY = isList(prev, "xy") && head(created) === "xy";
    created.pre = packXY ? " " : indent(depth);
    layoutItems(created, depth);
    if (parent.post === "") parent.post = indent(depth - 1);
  }
  return created;
}

/** Removes a child (by node or index) together with its leading whitespace. */
export function removeChild(parent: SList, node: SNode | number): void {
  const index = typeof node === "number" ? node : parent.items.indexOf(node);
  if (index < 0 || index >= parent.items.length) throw new RangeError("node is not a child of this list");
  parent.items.splice(index, 1);
  if (!parent.items.some((item) => item.type === "list")) parent.post = "";
}

function indent(depth: number): string {
  return INDENTS[depth] ?? "\n" + "\t".repeat(depth);
}

/** Past this column KiCad breaks a run of atoms onto a new line (Prettify's wrap threshold). */
const TOKEN_WRAP_COLUMN = 72;
/** Consecutive `(xy …)` lists share a line until this column. */
const XY_COLUMN_LIMIT = 99;

/**
 * Lays out a new list's descendants following KiCad 9's Prettify rules: each sub-list on its
 * own line one tab deeper, atoms separated by one space (wrapping past column 72), `(xy …)`
 * runs packed up to column 99, and a closing paren on its own line only when the list holds
 * sub-lists or wrapped atoms. Returns the width of the list's last line as printed without
 * its leading whitespace (see `printedWidth`), and whether it spans lines, counted as it is
 * laid out: printing each of a fill's tens of thousands of points to measure it was most of a
 * refill's time on a big board.
 */
function layoutItems(target: SList, depth: number): { width: number; broken: boolean } {
  let column = depth + 1;
  let multiline = false;
  let previous: SNode | undefined;
  // The printed list's last line so far: its `(` first.
  let width = 1;
  let broken = false;
  for (let i = 0; i < target.items.length; i++) {
    const item = target.items[i]!;
    if (item.type === "atom") {
      if (i === 0) item.pre = "";
      else if (column < TOKEN_WRAP_COLUMN || head(target) === "xy") item.pre = " ";
      else {
        item.pre = indent(depth + 1);
        column = depth + 1;
        multiline = true;
      }
      column += item.pre === " " ? 1 : 0;
      column += byteLength(item.raw);
      if (item.pre === " ") width += 1;
      else if (item.pre !== "") [width, broken] = [depth + 1, true];
      width += byteLength(item.raw);
    } else {
      const packXY = isList(previous, "xy") && head(item) === "xy" && column < XY_COLUMN_LIMIT;
      item.pre = packXY ? " " : indent(depth + 1);
      const laid = layoutItems(item, depth + 1);
      // A list from a file prints its own bytes where it was not edited: it is measured printed.
      const itemWidth = item.start >= 0 || item.implicit ? printedWidth(item) : laid.width;
      const itemBroken = item.start >= 0 || item.implicit ? printBare(item).includes("\n") : laid.broken;
      column = packXY ? column + 1 + itemWidth : depth + 1 + itemWidth;
      if (itemBroken) width = itemWidth;
      else width = (packXY ? width + 1 : depth + 1) + itemWidth;
      broken ||= itemBroken || !packXY;
    }
    previous = item;
  }
  target.post = previous?.type === "list" || multiline ? indent(depth) : "";
  if (target.post === "") width += 1;
  else [width, broken] = [depth + 1, true];
  return { width, broken };
}

/** Width of a freshly laid-out list's last line (only exact for single-line lists). */
function printedWidth(node: SList): number {
  const printed = printBare(node);
  const nl = printed.lastIndexOf("\n");
  return nl < 0 ? byteLength(printed) : printed.length - nl - 1;
}
