/**
 * String trimming for text from a repo or a model, without regular expressions that backtrack:
 * a pattern like "whitespace, newline, whitespace" or "slashes at the end" retries every
 * position of a long run of spaces or slashes, which is quadratic in the run's length (seconds
 * for a few hundred thousand characters).
 */

/** Text squeezed onto one line: each line trimmed, blank lines dropped, joined with spaces. */
export function oneLine(text: string): string {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" ");
}

/** `text` without the run of `chars` it ends with (`trimEndOf("a//", "/")` is `"a"`). */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/** `text` without the run of `chars` it starts with. */
export function trimStartOf(text: string, chars: string): string {
  let start = 0;
  while (start < text.length && chars.includes(text[start]!)) start++;
  return text.slice(start);
}
