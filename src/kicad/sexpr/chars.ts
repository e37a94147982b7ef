/** Bytes and byte classes shared by the parser, the token table and the printer. */

export const TAB = 9;
export const LF = 10;
export const SPACE = 32;
export const QUOTE = 34;
export const HASH = 35;
export const LPAREN = 40;
export const RPAREN = 41;
export const BACKSLASH = 92;

/** Whitespace as KiCad's `DSNLEXER::isSpace` has it: space, tab, LF, CR and NUL. */
export const WHITESPACE = new Uint8Array(256).map((_, c) =>
  c === 32 || c === 9 || c === 10 || c === 13 || c === 0 ? 1 : 0,
);

/** Interned whitespace: KiCad files repeat " " and "\n" + tabs millions of times. */
export const INDENTS: string[] = Array.from({ length: 64 }, (_, n) => "\n" + "\t".repeat(n));
