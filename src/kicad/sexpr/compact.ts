/**
 * The compact tree: a parsed file is its bytes plus one `Uint32Array` with an entry per token,
 * and node objects are made only when something asks for them.
 *
 * The token table holds, in file order, one entry for every `(`, atom and `)`:
 *
 * - an atom or a `)`: the byte offset where it starts (which of the two it is, is the byte
 *   there);
 * - a `(`: `OPEN` (plus `IMPLICIT` for a list whose `(` the file lacks) and the index of the
 *   token of its `)`, so a list's subtree is skipped in one step. Its own offset follows from
 *   the token before it (`Source.offset`).
 *
 * Whitespace is not stored: what precedes a token is the whitespace just before it, found by
 * scanning back. An atom's text is decoded from its bytes when read. For a 70 MB board that is
 * about 40 MB of token table next to the 70 MB of bytes, against some 700 MB for one object
 * per node.
 *
 * A list's `items` are made on first access, each child once, so a node keeps its identity;
 * reads that need no node (`head`, `text`, `num` on a list nobody opened) go to the table
 * directly. Edits set a node's `pre`, `raw`, `post` or `items`; the printer copies the bytes
 * of everything else.
 */
import { decodeLossless } from "./bytes.ts";
import { BACKSLASH, INDENTS, LF, LPAREN, QUOTE, RPAREN, SPACE, TAB, WHITESPACE } from "./chars.ts";
import { atomValue } from "./escapes.ts";
import type { SAtom, SDocument, SList, SNode } from "./tree.ts";

export const OPEN = 0x80000000;
export const IMPLICIT = 0x40000000;
const CLOSE_INDEX = 0x3fffffff;
/** Files up to this size fit the table (offsets stay below the `OPEN` bit). */
export const MAX_BYTES = 0x7fffffff;

/** A parsed file: its bytes and token table, shared by every node made from it. */
export class Source {
  constructor(
    readonly bytes: Buffer,
    readonly tokens: Uint32Array,
    /** Offset of the root list's `(` (the root is token 0). */
    readonly rootStart: number,
  ) {}

  isOpen(t: number): boolean {
    return this.tokens[t]! >= OPEN;
  }

  isImplicit(t: number): boolean {
    return (this.tokens[t]! & IMPLICIT) !== 0 && this.isOpen(t);
  }

  /** Token index of the `)` of the list opened at `t`. */
  closeOf(t: number): number {
    return this.tokens[t]! & CLOSE_INDEX;
  }

  /** Byte offset where token `t` starts (for a `(`: the `(`; for an implicit list: its head). */
  offset(t: number): number {
    if (!this.isOpen(t)) return this.tokens[t]!;
    // A run of `(` follows a token that is not one (or the file start): walk back to it, then
    // forward over the whitespace before each `(`.
    let k = t;
    while (k > 0 && this.isOpen(k - 1)) k--;
    let at = k === 0 ? this.rootStart : this.skipWhitespace(this.endOf(k - 1));
    for (let j = k + 1; j <= t; j++) at = this.skipWhitespace(at + 1);
    return at;
  }

  /** Byte offset just past an atom or `)` token. */
  endOf(t: number): number {
    const at = this.tokens[t]!;
    return this.bytes[at] === RPAREN ? at + 1 : atomEnd(this.bytes, at);
  }

  /** Offset of the first byte of the whitespace before `offset`. */
  whitespaceStart(offset: number): number {
    let at = offset;
    while (at > 0 && WHITESPACE[this.bytes[at - 1]!]) at--;
    return at;
  }

  skipWhitespace(offset: number): number {
    let at = offset;
    while (WHITESPACE[this.bytes[at]!]) at++;
    return at;
  }

  /** Start of the text before token `t`: the whitespace before it (for the root: from the file start). */
  preStart(t: number, offset = this.offset(t)): number {
    return t === 0 ? 0 : this.whitespaceStart(offset);
  }

  /** The whitespace before token `t`, as text. */
  preOf(t: number): string {
    const offset = this.offset(t);
    return whitespaceText(this.bytes, this.preStart(t, offset), offset);
  }

  /** The whitespace before the `)` of the list opened at `t`. */
  postOf(t: number): string {
    const close = this.tokens[this.closeOf(t)]!;
    return whitespaceText(this.bytes, this.whitespaceStart(close), close);
  }

  /** An atom's exact text (a lossless string). */
  rawOf(t: number): string {
    const at = this.tokens[t]!;
    return decodeRange(this.bytes, at, atomEnd(this.bytes, at));
  }

  isAtom(t: number): boolean {
    return !this.isOpen(t) && this.bytes[this.tokens[t]!] !== RPAREN;
  }

  /** True when the atom at `t` is a symbol, not a quoted string. */
  isSymbol(t: number): boolean {
    return this.bytes[this.tokens[t]!] !== QUOTE;
  }

  /** True when the symbol atom at `t` is exactly the ASCII text `name`. */
  atomIs(t: number, name: string): boolean {
    const at = this.tokens[t]!;
    const bytes = this.bytes;
    for (let i = 0; i < name.length; i++) if (bytes[at + i] !== name.charCodeAt(i)) return false;
    const after = bytes[at + name.length];
    return after === undefined || WHITESPACE[after] === 1 || after === LPAREN || after === RPAREN;
  }

  /** Token index of the child at `index` of the list opened at `t`, or -1. */
  childToken(t: number, index: number): number {
    const close = this.closeOf(t);
    let k = t + 1;
    for (let i = 0; i < index && k < close; i++) k = this.isOpen(k) ? this.closeOf(k) + 1 : k + 1;
    return k < close ? k : -1;
  }
}

/** Offset just past the atom that starts at `at`: a quoted string to its closing quote, a symbol to the next separator. */
export function atomEnd(bytes: Uint8Array, at: number): number {
  if (bytes[at] === QUOTE) {
    for (let i = at + 1; ; ) {
      const quote = bytes.indexOf(QUOTE, i);
      let backslashes = 0;
      for (let k = quote - 1; k > at && bytes[k] === BACKSLASH; k--) backslashes++;
      if ((backslashes & 1) === 0) return quote + 1;
      i = quote + 1;
    }
  }
  let i = at + 1;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (WHITESPACE[c] || c === LPAREN || c === RPAREN) break;
    i++;
  }
  return i;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** An atom's value (see `atomValue`), straight from the bytes when it is plain ASCII. */
function atomTextAt(source: Source, t: number): string {
  const bytes = source.bytes;
  const at = source.tokens[t]!;
  const end = atomEnd(bytes, at);
  const [from, to] = bytes[at] === QUOTE ? [at + 1, end - 1] : [at, end];
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c >= 0x80 || c === BACKSLASH) return atomValue(decodeRange(bytes, at, end));
  }
  return bytes.toString("latin1", from, to);
}

/** Decodes a byte range, with a fast path for ASCII (nearly every atom). */
export function decodeRange(bytes: Buffer, from: number, to: number): string {
  for (let i = from; i < to; i++) if (bytes[i]! >= 0x80) return decodeLossless(bytes.subarray(from, to));
  return bytes.toString("latin1", from, to);
}

/** Whitespace as text; the common runs (" ", newline + tabs) are shared strings. */
function whitespaceText(bytes: Buffer, from: number, to: number): string {
  const len = to - from;
  if (len === 0) return "";
  if (len === 1 && bytes[from] === SPACE) return " ";
  if (bytes[from] === LF && len <= INDENTS.length) {
    let tabs = true;
    for (let i = from + 1; i < to; i++) {
      if (bytes[i] !== TAB) {
        tabs = false;
        break;
      }
    }
    if (tabs) return INDENTS[len - 1]!;
  }
  return decodeRange(bytes, from, to);
}

/** Where the printer puts bytes: ranges of a file's bytes, and text. */
export interface Sink {
  range(bytes: Buffer, from: number, to: number): void;
  text(text: string): void;
}

/** A list read from a file; its `items` are made on first access. */
export class ParsedList implements SList {
  declare readonly type: "list";
  readonly #source: Source;
  readonly #open: number;
  #items: SNode[] | undefined;
  #pre: string | undefined;
  #post: string | undefined;

  constructor(source: Source, open: number) {
    this.#source = source;
    this.#open = open;
  }

  get items(): SNode[] {
    return (this.#items ??= this.#materialise());
  }

  set items(items: SNode[]) {
    this.#items = items;
  }

  get pre(): string {
    return this.#pre ?? this.#source.preOf(this.#open);
  }

  set pre(pre: string) {
    this.#pre = pre;
  }

  get post(): string {
    return this.#post ?? this.#source.postOf(this.#open);
  }

  set post(post: string) {
    this.#post = post;
  }

  get start(): number {
    return this.#source.offset(this.#open);
  }

  get implicit(): boolean {
    return this.#source.isImplicit(this.#open);
  }

  /** True once `items` was made: from then on the items, not the table, are the truth. */
  get opened(): boolean {
    return this.#items !== undefined;
  }

  /** The head atom's text read from the table (call only while not `opened`). */
  tableHead(): string | undefined {
    const t = this.#open + 1;
    return this.#source.isAtom(t) ? atomTextAt(this.#source, t) : undefined;
  }

  /** True when the head atom is `name`, read from the table (only while not `opened`). */
  tableHeadIs(name: string): boolean {
    const t = this.#open + 1;
    if (!this.#source.isAtom(t)) return false;
    return this.#source.isSymbol(t) && isAscii(name)
      ? this.#source.atomIs(t, name)
      : atomTextAt(this.#source, t) === name;
  }

  /** Decoded text of the atom at `index`, read from the table (only while not `opened`). */
  tableText(index: number): string | undefined {
    const t = this.#source.childToken(this.#open, index);
    return t >= 0 && this.#source.isAtom(t) ? atomTextAt(this.#source, t) : undefined;
  }

  /**
   * Prints what comes before the items: the whitespace and `(`. A list whose items were never
   * made prints whole here (and returns false: there is nothing more to print).
   */
  printOpen(sink: Sink, withPre: boolean): boolean {
    const source = this.#source;
    const offset = source.offset(this.#open);
    if (withPre) {
      if (this.#pre !== undefined) sink.text(this.#pre);
      else sink.range(source.bytes, source.preStart(this.#open, offset), offset);
    }
    if (this.#pristine()) {
      sink.range(source.bytes, offset, source.tokens[source.closeOf(this.#open)]! + 1);
      return false;
    }
    if (!source.isImplicit(this.#open)) sink.range(source.bytes, offset, offset + 1);
    return true;
  }

  /** Prints what follows the items: the whitespace and `)`. */
  printClose(sink: Sink): void {
    const source = this.#source;
    const close = source.tokens[source.closeOf(this.#open)]!;
    if (this.#post !== undefined) sink.text(this.#post);
    else sink.range(source.bytes, source.whitespaceStart(close), close);
    sink.range(source.bytes, close, close + 1);
  }

  /**
   * True when the list would print exactly as it is in the file: nothing under it was edited,
   * added, removed or moved. Checks only the nodes that were made.
   */
  #pristine(): boolean {
    const pending: ParsedList[] = [this];
    while (pending.length > 0) if (!pending.pop()!.#pristineItems(pending)) return false;
    return true;
  }

  /** Checks this list's own items (their lists go on `pending`). */
  #pristineItems(pending: ParsedList[]): boolean {
    if (this.#post !== undefined) return false;
    const items = this.#items;
    if (items === undefined) return true;
    const source = this.#source;
    const close = source.closeOf(this.#open);
    let t = this.#open + 1;
    for (const item of items) {
      if (t >= close) return false;
      if (item instanceof ParsedList) {
        if (item.#source !== source || item.#open !== t || item.#pre !== undefined) return false;
        pending.push(item);
        t = source.closeOf(t) + 1;
      } else if (item instanceof ParsedAtom && item.pristineAt(source, t)) t++;
      else return false;
    }
    return t === close;
  }

  #materialise(): SNode[] {
    const source = this.#source;
    const close = source.closeOf(this.#open);
    const items: SNode[] = [];
    for (let t = this.#open + 1; t < close; ) {
      if (source.isOpen(t)) {
        items.push(new ParsedList(source, t));
        t = source.closeOf(t) + 1;
      } else {
        items.push(new ParsedAtom(source, t));
        t++;
      }
    }
    return items;
  }
}
Object.defineProperty(ParsedList.prototype, "type", { value: "list" });

/** An atom read from a file; its text is decoded when read. */
export class ParsedAtom implements SAtom {
  declare readonly type: "atom";
  readonly #source: Source;
  readonly #token: number;
  #raw: string | undefined;
  #pre: string | undefined;

  constructor(source: Source, token: number) {
    this.#source = source;
    this.#token = token;
  }

  get raw(): string {
    return this.#raw ?? this.#source.rawOf(this.#token);
  }

  set raw(raw: string) {
    this.#raw = raw;
  }

  get pre(): string {
    return this.#pre ?? this.#source.preOf(this.#token);
  }

  set pre(pre: string) {
    this.#pre = pre;
  }

  /** Decoded text read from the bytes, or undefined once `raw` was set. */
  tableText(): string | undefined {
    return this.#raw === undefined ? atomTextAt(this.#source, this.#token) : undefined;
  }

  /** True when this is token `t` of `source`, unedited. */
  pristineAt(source: Source, t: number): boolean {
    return this.#source === source && this.#token === t && this.#raw === undefined && this.#pre === undefined;
  }

  print(sink: Sink, withPre: boolean): void {
    const source = this.#source;
    const offset = source.tokens[this.#token]!;
    if (withPre) {
      if (this.#pre !== undefined) sink.text(this.#pre);
      else sink.range(source.bytes, source.whitespaceStart(offset), offset);
    }
    if (this.#raw !== undefined) sink.text(this.#raw);
    else sink.range(source.bytes, offset, atomEnd(source.bytes, offset));
  }
}
Object.defineProperty(ParsedAtom.prototype, "type", { value: "atom" });

/** A parsed file: the root list and whatever follows it. */
export class ParsedDocument implements SDocument {
  declare readonly type: "document";
  root: SList;
  readonly bytes: Uint8Array;
  readonly file: string | undefined;
  readonly #source: Source;
  readonly #trailingStart: number;
  #trailing: string | undefined;

  constructor(source: Source, trailingStart: number, file: string | undefined) {
    this.root = new ParsedList(source, 0);
    this.bytes = source.bytes;
    this.file = file;
    this.#source = source;
    this.#trailingStart = trailingStart;
  }

  get trailing(): string {
    return this.#trailing ?? decodeLossless(this.bytes.subarray(this.#trailingStart));
  }

  set trailing(trailing: string) {
    this.#trailing = trailing;
  }

  printTrailing(sink: Sink): void {
    if (this.#trailing !== undefined) sink.text(this.#trailing);
    else sink.range(this.#source.bytes, this.#trailingStart, this.#source.bytes.length);
  }
}
Object.defineProperty(ParsedDocument.prototype, "type", { value: "document" });
