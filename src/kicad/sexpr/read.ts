/** Reading the tree: heads, children, atom values. */
import { decodeLossless, displayText, encodeLossless } from "./bytes.ts";
import type { SAtom, SList, SNode } from "./tree.ts";

const QUOTE = 34;

/** The head symbol of a list, e.g. `"symbol"` for `(symbol ...)`. */
export function head(list: SList): string | undefined {
  const first = list.items[0];
  return first?.type === "atom" ? atomText(first) : undefined;
}

/** True when `node` is a list whose head is `name`. */
export function isList(node: SNode | undefined, name?: string): node is SList {
  return node?.type === "list" && (name === undefined || head(node) === name);
}

/** First child list with the given head. */
export function child(list: SList, name: string): SList | undefined {
  for (const item of list.items) if (item.type === "list" && head(item) === name) return item;
  return undefined;
}

/** All child lists with the given head, in order. */
export function children(list: SList, name: string): SList[] {
  const out: SList[] = [];
  for (const item of list.items) if (item.type === "list" && head(item) === name) out.push(item);
  return out;
}

/**
 * Decoded text of an atom: quotes removed and escapes resolved for strings, and bytes that
 * are not UTF-8 read as Latin-1 (KiCad's own fallback), so `"Caf\xe9"` reads as `Café`.
 */
export function atomText(atom: SAtom): string {
  const raw = atom.raw;
  if (raw.charCodeAt(0) !== QUOTE) return displayText(raw);
  const body = raw.slice(1, -1);
  return displayText(body.includes("\\") ? unescapeString(body) : body);
}

/** Text of the atom at `index` (0 is the head), or undefined when absent or a list. */
export function text(list: SList, index: number): string | undefined {
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

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  '"': '"',
  "\\": "\\",
};

/**
 * Resolves the escapes KiCad's lexer understands: `\n`, `\"`, octal `\ooo` and hex `\xHH`.
 * Hex and octal escapes stand for bytes, so a run of them can spell one UTF-8 character.
 */
function unescapeString(body: string): string {
  let out = "";
  let bytes = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[++i]!;
    const simple = SIMPLE_ESCAPES[next];
    let code: number | undefined;
    if (simple !== undefined) out += simple;
    else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 1, i + 3))) {
      code = parseInt(body.slice(i + 1, i + 3), 16);
      i += 2;
    } else if (/^[0-7]{3}$/.test(body.slice(i, i + 3))) {
      code = parseInt(body.slice(i, i + 3), 8) & 0xff;
      i += 2;
    } else out += next;
    if (code === undefined) continue;
    if (code < 0x80) out += String.fromCharCode(code);
    else {
      // The escape form of a raw byte (see bytes.ts); decoded together below.
      out += String.fromCharCode(0xdc00 + code);
      bytes = true;
    }
  }
  return bytes ? decodeLossless(encodeLossless(out)) : out;
}
