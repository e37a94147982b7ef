/**
 * Bytes ↔ text without loss.
 *
 * KiCad writes UTF-8, but a file can still hold bytes that are not (a Latin-1 `é` typed by an
 * older tool, a hand edit). Such a byte must come back out exactly as it went in, so text is
 * decoded "surrogate-escaped": every byte that is not part of a valid UTF-8 sequence becomes
 * the lone surrogate U+DC80–U+DCFF (U+DC00 + the byte), a code point valid UTF-8 can never
 * encode. Encoding turns those surrogates back into their bytes, so
 * `encodeLossless(decodeLossless(b))` equals `b` for any `b`.
 *
 * What a reader sees is `displayText`: escaped bytes read as Latin-1, which is what KiCad's
 * `From_UTF8` falls back to for text that is not UTF-8.
 */

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8 = new TextEncoder();

const ESCAPE_BASE = 0xdc00;

/** Decodes bytes to a string that re-encodes to the same bytes (see the module comment). */
export function decodeLossless(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return decodeEscaping(bytes);
  }
}

/** Encodes a string from `decodeLossless` (or any string) back to its exact bytes. */
export function encodeLossless(text: string): Uint8Array {
  if (text.isWellFormed()) return utf8.encode(text);
  return encodeEscaping(text);
}

/** UTF-8 length of a string as `encodeLossless` writes it. */
export function byteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else if (isEscapedByte(c)) bytes += 1;
    else bytes += 3;
  }
  return bytes;
}

/** Text as a reader should see it: escaped bytes read as Latin-1 (é for a lone 0xE9). */
export function displayText(text: string): string {
  if (text.isWellFormed()) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      out += text[i]! + text[i + 1]!;
      i++;
    } else if (isEscapedByte(c)) out += String.fromCharCode(c - ESCAPE_BASE);
    else if (c >= 0xd800 && c <= 0xdfff) out += "\ufffd";
    else out += text[i]!;
  }
  return out;
}

/** True when two byte arrays hold the same bytes; a file absent in both states counts as the same. */
export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function isEscapedByte(c: number): boolean {
  return c >= ESCAPE_BASE + 0x80 && c <= ESCAPE_BASE + 0xff;
}

/**
 * The slow path of `decodeLossless`, for bytes that are not all UTF-8: valid sequences decode
 * as usual (the WHATWG rules: no overlong forms, no encoded surrogates, nothing past
 * U+10FFFF), every other byte becomes its escape.
 */
function decodeEscaping(bytes: Uint8Array): string {
  const parts: string[] = [];
  const units: number[] = [];
  const flush = () => {
    parts.push(String.fromCharCode(...units));
    units.length = 0;
  };
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    const length = sequenceLength(bytes, i);
    if (length === 0) {
      units.push(b < 0x80 ? b : ESCAPE_BASE + b);
      i++;
    } else if (length === 1) {
      units.push(b);
      i++;
    } else {
      let cp = b & (0xff >> (length + 1));
      for (let k = 1; k < length; k++) cp = (cp << 6) | (bytes[i + k]! & 0x3f);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else units.push(cp);
      i += length;
    }
    if (units.length >= 8192) flush();
  }
  flush();
  return parts.join("");
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!;
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const c = bytes[i + k];
    return c !== undefined && c >= lo && c <= hi;
  };
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (b === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b >= 0xe1 && b <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b >= 0xf1 && b <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

function encodeEscaping(text: string): Uint8Array {
  const out = new Uint8Array(byteLength(text));
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (isEscapedByte(c)) {
      out[at++] = c - ESCAPE_BASE;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out[at++] = c;
    else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      out[at++] = 0xf0 | (c >> 18);
      out[at++] = 0x80 | ((c >> 12) & 0x3f);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    }
  }
  return out;
}
