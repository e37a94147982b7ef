/**
 * Where a JSON text stops being valid. Bun's `JSON.parse` errors carry no position, and "line 7,
 * column 3" is what a person needs to fix a hand-edited config, so this small recursive-descent
 * scanner (RFC 8259, no extensions) walks the text only after `JSON.parse` has already failed.
 */

export interface JsonSyntaxError {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
  message: string;
}

class SyntaxStop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/**
 * `JSON.parse` of a hand-edited file's text (a leading byte-order mark dropped). When it is not
 * JSON, `invalid` gets where it stops being valid — "line 7, column 3: …", or "not valid JSON"
 * when the scanner finds nothing — and the error it returns is thrown.
 */
export function parseJsonText(text: string, invalid: (where: string, at: JsonSyntaxError | undefined) => Error): unknown {
  const source = text.replace(/^\uFEFF/, "");
  try {
    return JSON.parse(source);
  } catch {
    const at = findJsonSyntaxError(source);
    throw invalid(at ? `line ${at.line}, column ${at.column}: ${at.message}` : "not valid JSON", at);
  }
}

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new SyntaxStop(at, message);
  };
  const describe = (): string => (i >= text.length ? "end of file" : JSON.stringify(text[i]));
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const expect = (ch: string, what: string) => {
    ws();
    if (text[i] !== ch) fail(`expected ${what} but found ${describe()}`);
    i++;
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length) {
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === "\\") {
        const esc = text[i + 1];
        if (esc === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("invalid \\u escape in string");
          i += 6;
        } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i += 2;
        else fail("invalid escape in string");
        continue;
      }
      if (ch < " ") fail("unescaped control character in string (a line break inside quotes?)");
      i++;
    }
    fail("unterminated string");
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a quoted key but found ${describe()}`);
        string();
        expect(":", '":"');
        value();
        ws();
        if (text[i] === ",") {
          i++;
          ws();
          if (text[i] === "}") fail("trailing comma before }");
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail(`expected "," or "}" but found ${describe()}`);
      }
    }
    if (ch === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") {
          i++;
          ws();
          if (text[i] === "]") fail("trailing comma before ]");
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail(`expected "," or "]" but found ${describe()}`);
      }
    }
    if (ch === '"') return string();
    const literal = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (literal) {
      i += literal[0].length;
      return;
    }
    fail(`expected a value but found ${describe()}`);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the JSON value`);
    return undefined;
  } catch (err) {
    if (!(err instanceof SyntaxStop)) throw err;
    return { ...lineColumn(text, err.offset), message: err.message };
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}
