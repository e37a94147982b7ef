/**
 * Characters a human-facing format (text, JUnit) cannot carry are spelled out rather than lost.
 */

/**
 * A character a format cannot carry, spelled as a visible `\u001b`-style escape, so the reader
 * sees that something was there instead of losing it silently.
 */
export function spellOut(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
