/**
 * Reading the tree: heads, children, atom values. On a list whose items nobody has opened,
 * heads and atom values come straight from the token table, without making nodes.
 */
import { ParsedAtom, ParsedList } from "./compact.ts";
import { atomValue } from "./escapes.ts";
import type { SAtom, SList, SNode } from "./tree.ts";

/** The head symbol of a list, e.g. `"symbol"` for `(symbol ...)`. */
export function head(list: SList): string | undefined {
  if (list instanceof ParsedList && !list.opened) return list.tableHead();
  const first = list.items[0];
  return first?.type === "atom" ? atomText(first) : undefined;
}

/** True when the list's head is `name`. */
function headIs(list: SList, name: string): boolean {
  if (list instanceof ParsedList && !list.opened) return list.tableHeadIs(name);
  return head(list) === name;
}

/** True when `node` is a list whose head is `name`. */
export function isList(node: SNode | undefined, name?: string): node is SList {
  return node?.type === "list" && (name === undefined || headIs(node, name));
}

/** First child list with the given head. */
export function child(list: SList, name: string): SList | undefined {
  for (const item of list.items) if (item.type === "list" && headIs(item, name)) return item;
  return undefined;
}

/** All child lists with the given head, in order. */
export function children(list: SList, name: string): SList[] {
  const out: SList[] = [];
  for (const item of list.items) if (item.type === "list" && headIs(item, name)) out.push(item);
  return out;
}

/**
 * Decoded text of an atom: quotes removed and escapes resolved for strings, and bytes that
 * are not UTF-8 read as Latin-1 (KiCad's own fallback), so `"Caf\xe9"` reads as `Café`.
 */
export function atomText(atom: SAtom): string {
  return (atom instanceof ParsedAtom ? atom.tableText() : undefined) ?? atomValue(atom.raw);
}

/** Text of the atom at `index` (0 is the head), or undefined when absent or a list. */
export function text(list: SList, index: number): string | undefined {
  if (list instanceof ParsedList && !list.opened) return list.tableText(index);
  const item = list.items[index];
  return item?.type === "atom" ? atomText(item) : undefined;
}

/** Number at `index`, or undefined when absent or not numeric. */
export function num(list: SList, index: number): number | undefined {
  const t = text(list, index);
  if (t === undefined || t === "") return undefined;
  const value = Number(t);
  return Number.isFinite(value) ? value : undefined;
}

/** Text of the first atom of the child list `name`: `(name value)` → value. */
export function childText(list: SList, name: string): string | undefined {
  const c = child(list, name);
  return c ? text(c, 1) : undefined;
}

/** True for `(flag yes)` and for a bare `flag` atom among the items (older KiCad style). */
export function flag(list: SList, name: string): boolean | undefined {
  const c = child(list, name);
  if (c) {
    const v = text(c, 1);
    return v === undefined || v === "yes";
  }
  for (const item of list.items) if (item.type === "atom" && item.raw === name) return true;
  return undefined;
}

/**
 * Depth-first walk without recursion. Return `false` from `visit` to skip a list's children.
 */
export function walk(node: SNode, visit: (list: SList) => boolean | void): void {
  const stack: SNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.type !== "list") continue;
    if (visit(current) === false) continue;
    for (let i = current.items.length - 1; i >= 0; i--) {
      const item = current.items[i]!;
      if (item.type === "list") stack.push(item);
    }
  }
}
