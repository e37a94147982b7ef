/** Parse errors that point at the file, line and column. */
import { CopperheadError } from "../../errors.ts";
import { decodeLossless } from "./bytes.ts";

export interface SourcePosition {
  line: number;
  column: number;
}

export class SexprError extends CopperheadError {
  readonly file: string | undefined;
  readonly line: number;
  readonly column: number;

  /** `offset` is a byte offset into `bytes`. */
  constructor(reason: string, bytes: Uint8Array, offset: number, file?: string) {
    const { line, column } = positionAt(bytes, offset);
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
 * 1-based line and column of a byte offset. Columns count characters (Unicode code points,
 * as editors show them); a byte that is not UTF-8 counts as one character. CRLF counts as one
 * line break.
 */
export function positionAt(bytes: Uint8Array, offset: number): SourcePosition {
  const end = Math.min(offset, bytes.length);
  let line = 1;
  let lineStart = 0;
  for (let nl = bytes.indexOf(10); nl >= 0 && nl < end; nl = bytes.indexOf(10, nl + 1)) {
    line++;
    lineStart = nl + 1;
  }
  let column = 1;
  for (const _ of decodeLossless(bytes.subarray(lineStart, end))) column++;
  return { line, column };
}
