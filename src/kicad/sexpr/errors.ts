/** Parse errors that point at the file, line and column. */
import { CopperheadError } from "../../errors.ts";

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

/**
 * 1-based line and column of an offset into a lossless string. Columns count characters
 * (Unicode code points, as editors show them); a byte that is not UTF-8 counts as one
 * character. CRLF counts as one line break.
 */
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
  let column = 1;
  for (let i = lineStart; i < end; i++) {
    const c = source.charCodeAt(i);
    // The second half of a surrogate pair belongs to the character before it.
    if (c >= 0xdc00 && c <= 0xdfff && i > lineStart) {
      const prev = source.charCodeAt(i - 1);
      if (prev >= 0xd800 && prev <= 0xdbff) continue;
    }
    column++;
  }
  return { line, column };
}
