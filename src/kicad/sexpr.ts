/**
 * Lossless S-expression engine for KiCad files.
 *
 * Every node keeps the exact whitespace that precedes it (`pre`) and, for lists, the whitespace
 * before the closing paren (`post`); atoms keep their exact source text (`raw`). Printing is
 * therefore the concatenation of what was read, so `printSexpr(parseSexpr(t)) === t` holds for
 * any input that parses — CRLF, spaces, odd escapes included. Edits touch only the nodes they
 * change, and new nodes are laid out the way KiCad 9's `KICAD_FORMAT::Prettify` writes them, so
 * a diff after an edit shows exactly the lines KiCad itself would have changed.
 *
 * Parsing and printing are iterative (explicit stacks) so 100,000 levels of nesting neither
 * overflow the call stack nor need special cases.
 */
import { CopperheadError } from "../errors.ts";

export interface SAtom {
  readonly type: "atom";
  /** Whitespace before the token, exactly as read (empty for a new head atom). */
  pre: string;
  /** The token's exact text; quoted strings keep their quotes and escapes. */
  raw: string;
}

export interface SList {
  readonly type: "list";
  pre: string;
  items: SNode[];
  /** Whitespace before the closing paren. */
  post: string;
  /** Offset of `(` in the source text; -1 for nodes created by edits. */
  start: number;
}

export type SNode = SAtom | SList;

/** A parsed file: exactly one root list, plus the text around it. */
export interface SDocument {
  readonly type: "document";
  root: SList;
  /** Whatever follows the root list (normally one newline). */
  trailing: string;
  /** Source text the document was parsed from, for offset → line/column lookups. */
  readonly source: string;
  readonly file?: string;
}

export interface SourcePosition {
  line: number;
  column: number;
}

export class SexprError extends CopperheadError {
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;

  constructor(reason: string, source: string, offset: number, file?: string) {
    const { line, column } = positionAt(source, offset);
    const where = `${file ?? "<input>"}:${line}:${column}`;
    super("parse_error", `${where}: ${reason}`, {
      file,
      line,
      column,
      fix: "The file is not a valid KiCad S-expression; restore it from git or re-save it in KiCad.",
    });
    this.file = file;
    this.line = line;
    this.column = column;
  }
}

/** 1-based line and column (in UTF-16 code units) of an offset; CRLF counts as one break. */
export function positionAt(source: string, offset: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, source.length);
  for (let i = 0; i < end; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

const LPAREN = 40;
const RPAREN = 41;
const QUOTE = 34;
const BACKSLASH = 92;
const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;

/** Interned whitespace: KiCad files repeat " " and "\n" + tabs millions of times. */
const INDENTS: string[] = Array.from({ length: 64 }, (_, n) => "\n" + "\t".repeat(n));

function internWhitespace(text: string, from: number, to: number): string {
  const len = to - from;
  if (len === 0) return "";
  if (len === 1 && text.charCodeAt(from) === SPACE) return " ";
  if (text.charCodeAt(from) === LF && len <= INDENTS.length) {
    let tabs = true;
    for (let i = from + 1; i < to; i++) {
      if (text.charCodeAt(i) !== TAB) {
        tabs = false;
        break;
      }
    }
    if (tabs) return INDENTS[len - 1]!;
  }
  return text.slice(from, to);
}

const ATOM = 0;
const SPACE_CLASS = 1;
const OPEN = 2;
const CLOSE = 3;
const STRING = 4;
const CONTROL = 5;

/** ASCII character classes; a table lookup keeps the hot loop branch-light. */
const CHAR_CLASS = new Uint8Array(128).map((_, c) => {
  if (c === SPACE || c === TAB || c === LF || c === CR) return SPACE_CLASS;
  if (c === LPAREN) return OPEN;
  if (c === RPAREN) return CLOSE;
  if (c === QUOTE) return STRING;
  if (c < 32 || c === 127) return CONTROL;
  return ATOM;
});

export interface ParseOptions {
  /** File name used in error messages. */
  file?: string;
}

/**
 * Parses KiCad S-expression text. Throws `SexprError` (with file, line and column) for
 * truncated, unbalanced or binary input; never recurses, so depth is bounded only by memory.
 */
export function parseSexpr(text: string, options: ParseOptions = {}): SDocument {
  const file = options.file;
  const fail = (reason: string, offset: number): never => {
    throw new SexprError(reason, text, offset, file);
  };
  const n = text.length;
  const stack: SList[] = [];
  let top: SList | undefined;
  let root: SList | undefined;
  let i = 0;
  let wsStart = 0;

  while (i < n) {
    const c = text.charCodeAt(i);
    const cls = c < 128 ? CHAR_CLASS[c]! : ATOM;
    if (cls === SPACE_CLASS) {
      i++;
      continue;
    }
    const pre = wsStart === i ? "" : internWhitespace(text, wsStart, i);
    if (cls === OPEN) {
      if (!top && root) fail("unexpected content after the root list", i);
      const created: SList = { type: "list", pre, items: [], post: "", start: i };
      if (top) top.items.push(created);
      else root = created;
      stack.push(created);
      top = created;
      i++;
    } else if (cls === CLOSE) {
      if (!top) fail("unexpected ')' with no open list", i);
      top!.post = pre;
      stack.pop();
      top = stack[stack.length - 1];
      i++;
    } else {
      if (!top) fail(root ? "unexpected content after the root list" : "expected '(' at the start of the file", i);
      const start = i;
      if (cls === STRING) {
        i = endOfString(text, i + 1);
        if (i < 0) fail("unterminated string", start);
        i++;
        if (i < n) {
          const d = text.charCodeAt(i);
          if (d >= 128 || CHAR_CLASS[d] === ATOM || CHAR_CLASS[d] === STRING || CHAR_CLASS[d] === CONTROL) {
            fail("expected whitespace or ')' after a string", i);
          }
        }
      } else {
        for (;;) {
          if (cls === CONTROL) fail(`unexpected control character U+${c.toString(16).padStart(4, "0")}`, i);
          i++;
          if (i >= n) break;
          const d = text.charCodeAt(i);
          if (d >= 128) continue;
          const dc = CHAR_CLASS[d]!;
          if (dc === ATOM || dc === STRING) continue;
          if (dc === CONTROL) fail(`unexpected control character U+${d.toString(16).padStart(4, "0")}`, i);
          break;
        }
      }
      top!.items.push({ type: "atom", pre, raw: text.slice(start, i) });
    }
    wsStart = i;
  }
  if (top) {
    const opened = positionAt(text, top.start);
    fail(`unexpected end of input: ${stack.length} list(s) still open (innermost opened at line ${opened.line}, column ${opened.column})`, n);
  }
  if (!root) fail("no S-expression found (the file is empty)", n);
  return { type: "document", root: root!, trailing: text.slice(wsStart), source: text, file };
}

/** Index of the closing quote of a string whose body starts at `from`, or -1. */
function endOfString(text: string, from: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let k = quote - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if ((backslashes & 1) === 0) return quote;
    at = quote + 1;
  }
}

/** Prints a document or node back to text; unchanged input prints byte-identically. */
export function printSexpr(node: SDocument | SNode): string {
  if (node.type === "document") return printNode(node.root) + node.trailing;
  return printNode(node);
}

function printNode(node: SNode): string {
  if (node.type === "atom") return node.pre + node.raw;
  let out = "";
  // Each frame is a list and the index of the next child to print.
  const lists: SList[] = [node];
  const next: number[] = [0];
  out += node.pre + "(";
  while (lists.length > 0) {
    const depth = lists.length - 1;
    const list = lists[depth]!;
    const index = next[depth]!;
    if (index >= list.items.length) {
      out += list.post + ")";
      lists.pop();
      next.pop();
      continue;
    }
    next[depth] = index + 1;
    const child = list.items[index]!;
    if (child.type === "atom") {
      out += child.pre + child.raw;
    } else {
      out += child.pre + "(";
      lists.push(child);
      next.push(0);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading

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

/** Decoded text of an atom: quotes removed and escapes resolved for strings. */
export function atomText(atom: SAtom): string {
  const raw = atom.raw;
  if (raw.charCodeAt(0) !== QUOTE) return raw;
  const body = raw.slice(1, -1);
  return body.includes("\\") ? unescapeString(body) : body;
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

// ---------------------------------------------------------------------------------------------
// Building and editing

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

/**
 * Sets `(name value)` inside `target`: updates the existing child or inserts a new one at the
 * end. Returns the child list.
 */
export function setChildValue(target: SList, name: string, ...values: SValue[]): SList {
  const existing = child(target, name);
  if (existing) {
    existing.items.splice(1, existing.items.length - 1, ...values.map(toNode));
    layoutItems(existing, depthOf(existing));
    return existing;
  }
  const created = list(name, ...values);
  insertChild(target, created);
  return created;
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
 * sub-lists or wrapped atoms.
 */
function layoutItems(target: SList, depth: number): void {
  let column = depth + 1;
  let multiline = false;
  let previous: SNode | undefined;
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
      column += utf8Length(item.raw);
    } else {
      const packXY = isList(previous, "xy") && head(item) === "xy" && column < XY_COLUMN_LIMIT;
      item.pre = packXY ? " " : indent(depth + 1);
      layoutItems(item, depth + 1);
      column = packXY ? column + 1 + printedWidth(item) : depth + 1 + printedWidth(item);
    }
    previous = item;
  }
  target.post = previous?.type === "list" || multiline ? indent(depth) : "";
}

/** Width of a freshly laid-out list's last line (only exact for single-line lists). */
function printedWidth(node: SList): number {
  const printed = printNode({ ...node, pre: "" });
  const nl = printed.lastIndexOf("\n");
  return nl < 0 ? utf8Length(printed) : printed.length - nl - 1;
}

function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// String escapes

/** Quotes a string as KiCad writes it: backslash, quote, CR and LF are escaped. */
export function quoteString(value: string): string {
  let out = '"';
  for (const ch of value) {
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else out += ch;
  }
  return out + '"';
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

/** Resolves the escapes KiCad's lexer understands: `\n`, `\"`, octal `\ooo` and hex `\xHH`. */
function unescapeString(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[++i]!;
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) out += simple;
    else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/^[0-7]{3}$/.test(body.slice(i, i + 3))) {
      out += String.fromCharCode(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else out += next;
  }
  return out;
}
