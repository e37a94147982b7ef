/**
 * The one rule for showing text from a repo, a model or a pull request to a person: characters
 * that act instead of print are spelled out as `\u001b`-style escapes. That is C0 and C1
 * controls (ESC and CSI start terminal sequences that repaint the screen, set the window title
 * or write the clipboard; CR overwrites a line), bidirectional overrides, embeddings, isolates
 * and marks (`R\u202e1 (10k)` reads as something else than it is), zero-width characters and
 * line or paragraph separators. Newlines and tabs are kept: they are layout.
 *
 * Applied where text leaves the process for a person, always through `shown`, which redacts
 * secrets first: stdout (cli/output.ts; inside JSON the escapes are JSON's own, so values are
 * unchanged), every log line (log.ts), and the records a run writes (commit message, CHANGELOG
 * and DECISIONS lines, summary.md, the diff's words).
 */
import { redactSecrets } from "./redact.ts";

/** Every character the rule spells out. */
const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;
const HIDDEN_ONE = new RegExp(HIDDEN.source);

/** A character spelled as a visible `\u001b`-style escape. */
export function spellOut(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `text` with every control, bidi and invisible character spelled out; newlines and tabs kept. */
export function visible(text: string): string {
  return text.replace(HIDDEN, spellOut);
}

/**
 * `text` as it may leave the process for a person: secrets redacted (redact.ts), then hidden
 * characters spelled out. Never the other way round: a key holding U+2028 or a zero-width
 * space, once spelled out, is no longer the key the redactor looks for, and would be shown.
 */
export function shown(text: string, redact: (text: string) => string = redactSecrets): string {
  return visible(redact(text));
}

/** The first control, bidi or invisible character in `text`, spelled out, or undefined. */
export function hiddenCharacter(text: string): string | undefined {
  const found = HIDDEN_ONE.exec(text);
  return found ? spellOut(found[0]) : undefined;
}
