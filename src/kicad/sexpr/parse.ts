/**
 * The parser. It reads what KiCad's `DSNLEXER` reads and keeps everything else:
 *
 * - whitespace is space, tab, CR, LF and NUL (`DSNLEXER::isSpace`; PCAD exports contain NULs);
 * - before the root list, lines whose first non-blank character is `#` are comments, as
 *   `ReadCommentLines` skips them ahead of a footprint;
 * - a bare atom glued to the `)` before it starts a list whose `(` is missing (see
 *   `SList.implicit`), the way KiCad reads the teardrop settings KiCad 9.0.0 wrote; when that
 *   reading leaves lists unclosed, the file is read with plain parens instead;
 * - after the root list nothing is read: KiCad's `Parse()` returns once the root closes, so a
 *   stray `)` or a second list there is tolerated, and kept verbatim as `trailing`.
 *
 * It builds the compact tree (`compact.ts`): one pass over the bytes writes one table entry per
 * token. Nesting is tracked on an explicit stack, so 100,000 levels need no special case.
 */
import { encodeLossless } from "./bytes.ts";
import { BACKSLASH, HASH, LF, LPAREN, QUOTE, RPAREN, WHITESPACE } from "./chars.ts";
import { IMPLICIT, MAX_BYTES, OPEN, ParsedDocument, Source } from "./compact.ts";
import { SexprError, positionAt } from "./syntax-error.ts";
import type { SDocument } from "./tree.ts";

/** Byte classes: atom text, whitespace, `(`, `)`, `"`, and control characters. */
const [ATOM, SPACE, OPEN_CLASS, CLOSE_CLASS, STRING, CONTROL] = [0, 1, 2, 3, 4, 5] as const;

/** A table lookup keeps the hot loop branch-light; every byte from 0x80 up is atom text. */
const BYTE_CLASS = new Uint8Array(256).map((_, c) => {
  if (WHITESPACE[c]) return SPACE;
  if (c === LPAREN) return OPEN_CLASS;
  if (c === RPAREN) return CLOSE_CLASS;
  if (c === QUOTE) return STRING;
  if (c < 32 || c === 127) return CONTROL;
  return ATOM;
});

export interface ParseOptions {
  /** File name used in error messages. */
  file?: string;
}

/**
 * Parses a KiCad S-expression file. Give it the file's bytes (any bytes: see `bytes.ts`), or
 * a lossless string such as `printSexpr` returns. Throws `SexprError` (with file, line and
 * column) for truncated, unbalanced or binary input.
 */
export function parseSexpr(input: Uint8Array | string, options: ParseOptions = {}): SDocument {
  const raw = typeof input === "string" ? encodeLossless(input) : input;
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (bytes.length > MAX_BYTES) {
    throw new SexprError(`the file is ${bytes.length} bytes; at most ${MAX_BYTES} can be read`, bytes, 0, options.file);
  }
  return parseBytes(bytes, options.file, true) ?? parseBytes(bytes, options.file, false)!;
}

/**
 * One reading of `bytes`. With `implicitLists`, returns undefined when a list whose `(` is
 * missing was assumed and the input then ends with lists still open.
 */
function parseBytes(bytes: Buffer, file: string | undefined, implicitLists: boolean): ParsedDocument | undefined {
  const fail = (reason: string, offset: number): never => {
    throw new SexprError(reason, bytes, offset, file);
  };
  const n = bytes.length;
  // Every token but an implicit `(` takes at least one byte: n + 1 entries nearly always
  // suffice, and the pages never written are never paid for.
  let tokens: Uint32Array = new Uint32Array(n + 1);
  let count = 0;
  const open: number[] = [];
  const openedAt: number[] = [];
  let implicitSeen = false;
  let rootStart = -1;
  let i = skipLeading(bytes);

  while (i < n) {
    const cls = BYTE_CLASS[bytes[i]!]!;
    if (cls === SPACE) {
      i++;
      continue;
    }
    if (count + 2 > tokens.length) tokens = grow(tokens);
    if (cls === OPEN_CLASS) {
      if (rootStart < 0) rootStart = i;
      open.push(count);
      openedAt.push(i);
      tokens[count++] = OPEN;
      i++;
      continue;
    }
    if (cls === CLOSE_CLASS) {
      if (open.length === 0) fail("unexpected ')' with no open list", i);
      const o = open.pop()!;
      openedAt.pop();
      tokens[o] = (tokens[o]! | count) >>> 0;
      tokens[count++] = i;
      i++;
      if (open.length === 0) break;
      continue;
    }
    if (open.length === 0) fail("expected '(' at the start of the file", i);
    if (implicitLists && cls === ATOM && bytes[i - 1] === RPAREN) {
      open.push(count);
      openedAt.push(i);
      tokens[count++] = (OPEN | IMPLICIT) >>> 0;
      implicitSeen = true;
    }
    tokens[count++] = i;
    if (cls === STRING) {
      const close = endOfString(bytes, i + 1);
      if (close < 0) fail("unterminated string", i);
      i = close + 1;
      if (i < n) {
        const next = BYTE_CLASS[bytes[i]!];
        if (next === ATOM || next === STRING || next === CONTROL) fail("expected whitespace or ')' after a string", i);
      }
      continue;
    }
    for (let c = cls; ; ) {
      if (c === CONTROL) fail(`unexpected control character U+${bytes[i]!.toString(16).padStart(4, "0")}`, i);
      if (++i >= n) break;
      c = BYTE_CLASS[bytes[i]!]!;
      if (c !== ATOM && c !== STRING && c !== CONTROL) break;
    }
  }
  if (open.length > 0) {
    if (implicitSeen) return undefined;
    fail(
      `unexpected end of input: ${open.length} list(s) still open (innermost opened at ${position(bytes, openedAt[openedAt.length - 1]!)})`,
      n,
    );
  }
  if (rootStart < 0) fail("no S-expression found (the file is empty)", n);
  return new ParsedDocument(new Source(bytes, tokens.subarray(0, count), rootStart), i, file);
}

function position(bytes: Uint8Array, offset: number): string {
  const { line, column } = positionAt(bytes, offset);
  return `line ${line}, column ${column}`;
}

/** A table with room for half as many tokens again. */
function grow(tokens: Uint32Array): Uint32Array {
  const larger = new Uint32Array(Math.ceil(tokens.length * 1.5) + 16);
  larger.set(tokens);
  return larger;
}

/** Offset of the first byte after the leading whitespace and `#` comment lines. */
function skipLeading(bytes: Uint8Array): number {
  let i = 0;
  let lineStart = true;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c === LF) lineStart = true;
    else if (c === HASH && lineStart) {
      const nl = bytes.indexOf(LF, i);
      if (nl < 0) return bytes.length;
      i = nl;
      continue;
    } else if (!WHITESPACE[c]) return i;
    i++;
  }
  return i;
}

/** Index of the closing quote of a string whose body starts at `from`, or -1. */
function endOfString(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let k = quote - 1; k >= from && bytes[k] === BACKSLASH; k--) backslashes++;
    if ((backslashes & 1) === 0) return quote;
    at = quote + 1;
  }
}
