/**
 * Moving a whole design by an offset, for tests that need every coordinate to change while
 * nothing else does: connectivity, clearances and the grid stay as they were, so KiCad reports
 * the same violations at new positions.
 *
 * Works on the text: absolute coordinates are the first two numbers of `(at …)`, `(xy …)`,
 * `(start …)`, `(end …)`, `(center …)` and `(mid …)`. Coordinates inside a schematic's
 * `lib_symbols` and inside board footprints are relative to their owner and stay; a footprint's
 * own `(at …)` moves.
 */

const POINT = /\((at|xy|start|end|center|mid)\s+(-?[\d.]+)\s+(-?[\d.]+)/g;

/** Spans `[open, close]` of every list whose head is `name`, found outside strings. */
function listSpans(text: string, name: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const stack: number[] = [];
  const heads: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "(") {
      stack.push(i);
      heads.push(/^\(([^\s()"]*)/.exec(text.slice(i, i + 64))?.[1] ?? "");
    } else if (c === ")") {
      const open = stack.pop()!;
      if (heads.pop() === name) spans.push([open, i]);
    }
  }
  return spans;
}

function shift(value: string, by: number): string {
  return String(Number((Number(value) + by).toFixed(6)));
}

function translateOutside(
  text: string,
  dx: number,
  dy: number,
  fixed: Array<[number, number]>,
  moveOwnAt: boolean,
): string {
  const inside = (at: number) => fixed.find(([open, close]) => at > open && at < close);
  const ownAt = new Set<number>();
  if (moveOwnAt) {
    for (const [open] of fixed) {
      const match = /\(at\s/.exec(text.slice(open + 1));
      if (match) ownAt.add(open + 1 + match.index);
    }
  }
  return text.replace(POINT, (all, head: string, x: string, y: string, at: number) =>
    inside(at) && !ownAt.has(at) ? all : `(${head} ${shift(x, dx)} ${shift(y, dy)}`,
  );
}

/** A `.kicad_sch` with everything placed moved by (dx, dy) mm; keep both on the sheet's grid. */
export function translateSchematic(text: string, dx: number, dy: number): string {
  return translateOutside(text, dx, dy, listSpans(text, "lib_symbols"), false);
}

/** A `.kicad_pcb` with every footprint, track, zone and drawing moved by (dx, dy) mm. */
export function translateBoard(text: string, dx: number, dy: number): string {
  return translateOutside(text, dx, dy, listSpans(text, "footprint"), true);
}
