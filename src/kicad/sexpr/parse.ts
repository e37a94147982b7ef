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
 * Parsing is iterative (an explicit stack), so 100,000 levels of nesting neither overflow the
 * call stack nor need special cases.
 */
import { decodeLossless, encodeLossless } from "./bytes.ts";
import { SexprError, positionAt } from "./errors.ts";
import type { SDocument, SList } from "./tree.ts";

const LPAREN = 40;
const RPAREN = 41;
const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;
const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const NUL = 0;

/** Interned whitespace: KiCad files repeat " " and "\n" + tabs millions of times. */
export const INDENTS: string[] = Array.from({ length: 64 }, (_, n) => "\n" + "\t".repeat(n));

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

/** Character classes: atom text, whitespace, `(`, `)`, `"`, and control characters. */
const [ATOM, SPACE_CLASS, OPEN, CLOSE, STRING, CONTROL] = [0, 1, 2, 3, 4, 5] as const;

/** ASCII character classes; a table lookup keeps the hot loop branch-light. */
const CHAR_CLASS = new Uint8Array(128).map((_, c) => {
  if (c === SPACE || c === TAB || c === LF || c === CR || c === NUL) return SPACE_CLASS;
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
 * Parses a KiCad S-expression file. Give it the file's bytes (any bytes: see `bytes.ts`), or
 * a lossless string such as `printSexpr` returns. Throws `SexprError` (with file, line and
 * column) for truncated, unbalanced or binary input.
 */
export function parseSexpr(input: Uint8Array | string, options: ParseOptions = {}): SDocument {
  const text = typeof input === "string" ? input : decodeLossless(input);
  const bytes = typeof input === "string" ? encodeLossless(input) : input;
  const parsed = parseText(text, options.file, true) ?? parseText(text, options.file, false)!;
  return { type: "document", root: parsed.root, trailing: parsed.trailing, bytes, file: options.file };
}

/**
 * One reading of `text`. With `implicitLists`, returns undefined when a list whose `(` is
 * missing was assumed and the input then ends with lists still open.
 */
function parseText(text: string, file: string | undefined, implicitLists: boolean): { root: SList; trailing: string } | undefined {
  const fail = (reason: string, offset: number): never => {
    throw new SexprError(reason, text, offset, file);
  };
  let implicitSeen = false;
  const n = text.length;
  const stack: SList[] = [];
  let top: SList | undefined;
  let root: SList | undefined;
  let i = skipLeading(text);
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
      if (!top) {
        wsStart = i;
        break;
      }
    } else {
      if (!top) fail("expected '(' at the start of the file", i);
      const start = i;
      if (implicitLists && cls === ATOM && pre === "" && text.charCodeAt(i - 1) === RPAREN) {
        const created: SList = { type: "list", pre, items: [], post: "", start: i, implicit: true };
        top!.items.push(created);
        stack.push(created);
        top = created;
        implicitSeen = true;
      }
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
    if (implicitSeen) return undefined;
    const opened = positionAt(text, top.start);
    fail(`unexpected end of input: ${stack.length} list(s) still open (innermost opened at line ${opened.line}, column ${opened.column})`, n);
  }
  if (!root) fail("no S-expression found (the file is empty)", n);
  return { root: root!, trailing: text.slice(wsStart) };
}

/** Offset of the first character after the leading whitespace and `#` comment lines. */
function skipLeading(text: string): number {
  let i = 0;
  let lineStart = true;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === LF) lineStart = true;
    else if (c === HASH && lineStart) {
      const nl = text.indexOf("\n", i);
      if (nl < 0) return text.length;
      i = nl;
      continue;
    } else if (c >= 128 || CHAR_CLASS[c] !== SPACE_CLASS) return i;
    i++;
  }
  return i;
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
