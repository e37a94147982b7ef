/** String atoms: KiCad's quoting and the escapes its lexer resolves. */
import { decodeLossless, displayText, encodeLossless } from "./bytes.ts";
import { QUOTE } from "./chars.ts";

/** Quotes a string as KiCad writes it: backslash, quote, CR and LF are escaped. */
export function quoteString(value: string): string {
  let out = '"';
  for (const ch of value) {
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else out += ch;
  }
  return out + '"';
}

/**
 * The value of an atom's exact text: quotes removed and escapes resolved for strings, and
 * bytes that are not UTF-8 read as Latin-1 (KiCad's own fallback), so `"Caf\xe9"` is `Café`.
 */
export function atomValue(raw: string): string {
  if (raw.charCodeAt(0) !== QUOTE) return displayText(raw);
  const body = raw.slice(1, -1);
  return displayText(body.includes("\\") ? unescapeString(body) : body);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  r: "\r",
  t: "\t",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  '"': '"',
  "\\": "\\",
};

/**
 * Resolves the escapes KiCad's lexer understands: `\n`, `\"`, octal `\ooo` and hex `\xHH`.
 * Hex and octal escapes stand for bytes, so a run of them can spell one UTF-8 character.
 */
function unescapeString(body: string): string {
  let out = "";
  let bytes = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[++i]!;
    const simple = SIMPLE_ESCAPES[next];
    let code: number | undefined;
    if (simple !== undefined) out += simple;
    else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 1, i + 3))) {
      code = parseInt(body.slice(i + 1, i + 3), 16);
      i += 2;
    } else if (/^[0-7]{3}$/.test(body.slice(i, i + 3))) {
      code = parseInt(body.slice(i, i + 3), 8) & 0xff;
      i += 2;
    } else out += next;
    if (code === undefined) continue;
    if (code < 0x80) out += String.fromCharCode(code);
    else {
      // The escape form of a raw byte (see bytes.ts); decoded together below.
      out += String.fromCharCode(0xdc00 + code);
      bytes = true;
    }
  }
  return bytes ? decodeLossless(encodeLossless(out)) : out;
}
