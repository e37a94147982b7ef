/**
 * How wide KiCad's stroke font draws a text, glyph by glyph. Every glyph of the font sits on a
 * 21-unit em, and each printable ASCII glyph advances by a whole number of those units; the
 * table below is those advances as kicad-cli draws them (measured from its SVG plots: a glyph
 * drawn once and twenty-one times, at 1.27 mm). A uniform width per character is either too
 * wide for names full of I, 1, _ and parentheses or too narrow for M, W and +; a label that
 * must fit a tight run between a pin and a bus is judged by its true width.
 */

/** Advance of each glyph from space (32) to tilde (126), in 21sts of the font size. */
const ADVANCE_21 = [
  16, 10, 16, 21, 20, 24, 26, 10, 14, 14, 16, 26, 10, 26, 10, 22, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 10, 10, 26,
  26, 26, 18, 27, 18, 21, 21, 21, 19, 18, 21, 22, 10, 16, 21, 17, 24, 22, 22, 21, 22, 21, 20, 16, 22, 18, 24, 20, 18,
  20, 14, 14, 14, 12, 16, 8, 19, 19, 18, 19, 18, 12, 19, 19, 10, 10, 17, 11, 28, 19, 19, 19, 19, 13, 17, 12, 19, 16, 22,
  17, 16, 17, 14, 20, 14, 15,
];

/** Advance of a glyph outside printable ASCII, in font sizes: the widest letters' (Ω runs 1.14), rounded up. */
const OTHER_ADVANCE = 1.2;

/** Sub- and superscripts (`_{…}`, `^{…}`) are drawn at this share of the font size. */
const SCRIPT_SCALE = 0.8;

/**
 * The characters KiCad escapes in a name (`{slash}` for the `/` that would read as a sheet
 * path), drawn as the character itself; other braced words are drawn as written.
 */
const ESCAPES: Record<string, string> = {
  slash: "/",
  backslash: "\\",
  lt: "<",
  gt: ">",
  colon: ":",
  dblquote: '"',
  quote: "'",
  comma: ",",
  bar: "|",
  space: " ",
  tab: " ",
};

/** A glyph's advance in font sizes. */
function glyphAdvance(char: string): number {
  const units = ADVANCE_21[char.charCodeAt(0) - 32];
  return units === undefined || char.length !== 1 ? OTHER_ADVANCE : units / 21;
}

/**
 * How far `text` runs, in font sizes, as KiCad draws it: the sum of its glyphs' advances, with
 * its escapes drawn as the characters they stand for and KiCad's markup read as it draws it:
 * `~{…}` (overbar), `_{…}` and `^{…}` (sub- and superscript, smaller) draw their contents and
 * not the markup itself. The ink of the last glyph ends a
 * little short of its advance, so the run is never short of what is drawn.
 */
export function textAdvance(text: string): number {
  let width = 0;
  const scales: number[] = [];
  const chars = [...text.replace(/\{(\w+)\}/g, (written, word: string) => ESCAPES[word] ?? written)];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if ((char === "~" || char === "_" || char === "^") && chars[i + 1] === "{") {
      scales.push(char === "~" ? 1 : SCRIPT_SCALE);
      i++;
      continue;
    }
    if (char === "}" && scales.length > 0) {
      scales.pop();
      continue;
    }
    width += glyphAdvance(char) * scales.reduce((a, b) => a * b, 1);
  }
  return width;
}
