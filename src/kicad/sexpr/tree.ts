/**
 * The lossless tree. Every node keeps the exact text that precedes it (`pre`) and, for lists,
 * the text before the closing paren (`post`); atoms keep their exact source text (`raw`).
 * Printing is therefore the concatenation of what was read.
 *
 * Text fields are "lossless strings" (see `bytes.ts`): a byte of the file that is not UTF-8
 * appears as a lone surrogate, so the printed bytes equal the parsed bytes even then. Read
 * values through `atomText`/`text`, which show such bytes as Latin-1.
 *
 * Parsed nodes are held compactly (`compact.ts`) and made on first access; nodes that edits
 * create are plain objects of these shapes. Copy a node with `cloneNode`, not by spreading it:
 * a parsed node's fields are accessors.
 */

export interface SAtom {
  readonly type: "atom";
  /** Whitespace before the token, exactly as read (empty for a new head atom). */
  pre: string;
  /** The token's exact text; quoted strings keep their quotes and escapes. */
  raw: string;
}

export interface SList {
  readonly type: "list";
  /** Whitespace before `(` (for the root: also any `#` comment lines KiCad skips). */
  pre: string;
  items: SNode[];
  /** Whitespace before the closing paren. */
  post: string;
  /** Byte offset of `(` in the file; -1 for nodes created by edits. */
  start: number;
  /**
   * True for a list whose `(` the file lacks: KiCad 9.0.0 wrote teardrop settings as
   * `(curved_edges no)filter_ratio 0.9)`, and KiCad's parsers, which take a list's `(` as
   * optional, read `filter_ratio 0.9)` as `(filter_ratio 0.9)`. It prints without the `(`.
   */
  implicit?: boolean;
}

export type SNode = SAtom | SList;

/** A parsed file: exactly one root list, plus the text around it. */
export interface SDocument {
  readonly type: "document";
  root: SList;
  /**
   * Everything after the root list's closing paren (normally one newline), kept verbatim and
   * never interpreted: KiCad's parsers stop reading at the end of the root list, so whatever
   * follows (a stray `)`, a second list) does not belong to the design.
   */
  trailing: string;
  /** The exact bytes the document was parsed from. */
  readonly bytes: Uint8Array;
  readonly file?: string;
}
