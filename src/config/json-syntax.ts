/**
 * Where a JSON text stops being valid. Bun's `JSON.parse` errors carry no position, and "line 7,
 * column 3" is what a person needs to fix a hand-edited config, so a text `JSON.parse` refuses
 * is parsed again with `jsonc-parser` (comments and trailing commas disallowed: plain JSON),
 * which reports every error with its offset.
 *
 * Nesting is capped first, by a flat pass of jsonc-parser's scanner: parsers descend one call
 * per level, so 300,000 unclosed `[` would overflow the stack instead of being reported.
 */
import { createScanner, parse, printParseErrorCode, type ParseError } from "jsonc-parser";

export interface JsonSyntaxError {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
  message: string;
}

/** Deeper nesting than any config or recorded session needs; well inside the call stack. */
export const MAX_JSON_DEPTH = 512;

/**
 * `JSON.parse` of a hand-edited file's text (a leading byte-order mark dropped). When it is not
 * JSON, `invalid` gets where it stops being valid — "line 7, column 3: …", or "not valid JSON"
 * when no position is known — and the error it returns is thrown.
 */
export function parseJsonText(
  text: string,
  invalid: (where: string, at: JsonSyntaxError | undefined) => Error,
): unknown {
  const source = text.replace(/^\uFEFF/, "");
  const fail = (at: JsonSyntaxError | undefined) =>
    invalid(at ? `line ${at.line}, column ${at.column}: ${at.message}` : "not valid JSON", at);
  const deep = tooDeep(source);
  if (deep) throw fail(deep);
  try {
    return JSON.parse(source);
  } catch {
    throw fail(findJsonSyntaxError(source));
  }
}

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const deep = tooDeep(text);
  if (deep) return deep;
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  return first && { ...lineColumn(text, first.offset), message: describe(text, first) };
}

/** The first `[` or `{` nested deeper than `MAX_JSON_DEPTH`, as an error there. */
function tooDeep(text: string): JsonSyntaxError | undefined {
  const scanner = createScanner(text, true);
  let depth = 0;
  while (scanner.getPosition() < text.length) {
    scanner.scan();
    // A token that starts with a bracket is that bracket: strings start with a quote.
    const ch = text[scanner.getTokenOffset()];
    if (ch === "[" || ch === "{") {
      if (++depth > MAX_JSON_DEPTH)
        return {
          ...lineColumn(text, scanner.getTokenOffset()),
          message: `nested more than ${MAX_JSON_DEPTH} levels deep`,
        };
    } else if (ch === "]" || ch === "}") depth--;
  }
  return undefined;
}

/** What went wrong at a parse error, in the words of a person fixing the file. */
function describe(text: string, error: ParseError): string {
  const found = error.offset >= text.length ? "end of file" : JSON.stringify(text[error.offset]);
  const before = text.slice(0, error.offset).trimEnd();
  switch (printParseErrorCode(error.error)) {
    case "PropertyNameExpected":
    case "ValueExpected":
      if (before.endsWith(",") && (found === '"}"' || found === '"]"'))
        return `trailing comma before ${text[error.offset]}`;
      return printParseErrorCode(error.error) === "PropertyNameExpected"
        ? `expected a quoted key but found ${found}`
        : `expected a value but found ${found}`;
    case "InvalidSymbol":
      return `expected a value but found ${found}`;
    case "ColonExpected":
      return `expected ":" but found ${found}`;
    case "CommaExpected":
      return `expected "," but found ${found}`;
    case "CloseBraceExpected":
      return `expected "," or "}" but found ${found}`;
    case "CloseBracketExpected":
      return `expected "," or "]" but found ${found}`;
    case "EndOfFileExpected":
      return `unexpected ${found} after the end of the JSON value`;
    case "InvalidCommentToken":
    case "UnexpectedEndOfComment":
      return "comments are not allowed in JSON";
    case "UnexpectedEndOfString":
      // jsonc-parser ends a string at a line break, as at the end of the file.
      return error.offset + error.length >= text.length
        ? "unterminated string"
        : "line break inside a string (close the quotes, or write \\n)";
    case "InvalidUnicode":
      return "invalid \\u escape in string";
    case "InvalidEscapeCharacter":
      return "invalid escape in string";
    case "InvalidCharacter":
      return "unescaped control character in string";
    default:
      return "invalid number";
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}
