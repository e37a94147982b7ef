/**
 * The part of a generated doc that belongs to copperhead: the lines between
 *
 *     <!-- copperhead:<name>:begin sha256=<hex> -->
 *     <!-- copperhead:<name>:end -->
 *
 * Everything outside the markers is the human's and is never touched. The begin marker stores a
 * hash of the generated content, so a hand edit inside the region is detectable: regenerating
 * would silently undo it, so `init` refuses unless forced.
 */
import { createHash } from "node:crypto";
import { CopperheadError } from "../errors.ts";

export interface GeneratedRegion {
  /** 0-based indexes of the begin and end marker lines. */
  begin: number;
  end: number;
  /** The hash the begin marker stores; absent when the marker has none (written by hand). */
  storedHash?: string;
}

/**
 * Finds the `name` region in a doc's lines. Undefined without a begin marker; `parse_error`
 * (with the line) for a begin marker without an end.
 */
export function findGeneratedRegion(lines: readonly string[], name: string, file: string): GeneratedRegion | undefined {
  const beginRe = new RegExp(`^<!--\\s*copperhead:${name}:begin(?:\\s+sha256=([0-9a-f]*))?\\s*-->\\s*$`);
  const endRe = new RegExp(`^<!--\\s*copperhead:${name}:end\\s*-->\\s*$`);
  const begin = lines.findIndex((l) => beginRe.test(l.trim()));
  if (begin < 0) return undefined;
  const endOffset = lines.slice(begin + 1).findIndex((l) => endRe.test(l.trim()));
  if (endOffset < 0) {
    throw new CopperheadError(
      "parse_error",
      `${file}:${begin + 1}: ${name.toUpperCase()} begin marker without an end marker`,
      {
        file,
        line: begin + 1,
        fix: `Add "${endMarker(name)}" after the generated part of ${file}, or delete its begin marker.`,
      },
    );
  }
  return { begin, end: begin + 1 + endOffset, storedHash: beginRe.exec(lines[begin]!.trim())![1] || undefined };
}

export function beginMarker(name: string, hash: string): string {
  return `<!-- copperhead:${name}:begin sha256=${hash} -->`;
}

export function endMarker(name: string): string {
  return `<!-- copperhead:${name}:end -->`;
}

/** The hash a begin marker stores: of the generated cells, joined without ambiguity. */
export function contentHash(rows: readonly (readonly string[])[]): string {
  return createHash("sha256")
    .update(rows.map((cells) => cells.join("\u001f")).join("\n"))
    .digest("hex");
}

/**
 * `existing` with its `name` region replaced by `region` (marker lines included); a doc with no
 * region gets it appended after one blank line.
 */
export function replaceGeneratedRegion(
  existing: string,
  name: string,
  region: readonly string[],
  file: string,
): string {
  const eol = existing.includes("\r\n") ? "\r\n" : "\n";
  const old = existing.split(/\r?\n/);
  const found = findGeneratedRegion(old, name, file);
  if (!found) {
    while (old.length > 0 && old[old.length - 1] === "") old.pop();
    return [...old, "", ...region, ""].join(eol);
  }
  return [...old.slice(0, found.begin), ...region, ...old.slice(found.end + 1)].join(eol);
}
