/**
 * Lossless S-expression engine for KiCad files: `print(parse(bytes))` returns the same bytes
 * for any file KiCad reads (CRLF, odd escapes, bytes that are not UTF-8, content after the
 * root list included), and edits change only the nodes they touch.
 *
 * - `sexpr/tree.ts`: the node types;
 * - `sexpr/compact.ts`: how a parsed file is held (its bytes and a token table; nodes made on
 *   first access), within about twice the file's size;
 * - `sexpr/parse.ts`, `sexpr/print.ts`: bytes (or lossless strings) in and out;
 * - `sexpr/accessors.ts`, `sexpr/construct.ts`: reading values, building and editing nodes;
 * - `sexpr/bytes.ts`, `sexpr/escapes.ts`: how bytes that are not UTF-8 survive as text, and
 *   KiCad's string quoting;
 * - `sexpr/file.ts`: reading and writing design files, the only way they touch the disk.
 */
export type { SAtom, SDocument, SList, SNode } from "./tree.ts";
export { parseSexpr, type ParseOptions } from "./parse.ts";
export { printBare, printSexpr, printSexprBytes } from "./print.ts";
export { SexprError, positionAt, type SourcePosition } from "./syntax-error.ts";
export { atomText, child, children, childText, flag, head, isList, num, text, walk } from "./accessors.ts";
export { cloneNode, formatNumber, insertChild, list, q, removeChild, setAtom, sym, type SValue } from "./construct.ts";
export { quoteString } from "./escapes.ts";
export { decodeLossless, displayText, encodeLossless, sameBytes } from "./bytes.ts";
export { readDesignBytes, readDesignText, readSexprFile, writeSexprFile } from "./file.ts";
