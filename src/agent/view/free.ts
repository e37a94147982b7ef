/**
 * The largest empty rectangles of a region, for the `view` legend: the region is cut into grid
 * cells, every cell an obstacle touches is taken, and the largest all-free rectangle is found
 * (the classic histogram sweep), taken, and the search repeated. Good enough to tell a model
 * "there is a 30 × 20 mm gap at (120, 45)", which is what it needs to place something.
 */

/** Axis-aligned box in the caller's unit. */
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface MmRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface FreeOptions {
  /** Cell size, in the boxes' unit. */
  cell: number;
  /** Units per millimetre. */
  perMm: number;
  /** How many rectangles to report. */
  count?: number;
  /** Smallest side worth reporting, in cells. */
  minCells?: number;
}

/**
 * Up to `count` free rectangles of `region`, largest first, in millimetres. `within`, when
 * given, is the only usable area (the page inside its frame, the board outline's box).
 */
export function freeRectangles(obstacles: Rect[], region: Rect, options: FreeOptions, within?: Rect): MmRect[] {
  const { cell, perMm } = options;
  const cols = Math.max(1, Math.floor((region.x1 - region.x0) / cell));
  const rows = Math.max(1, Math.floor((region.y1 - region.y0) / cell));
  const taken = new Uint8Array(cols * rows);
  const mark = (b: Rect) => {
    const c0 = Math.max(0, Math.floor((b.x0 - region.x0) / cell));
    const c1 = Math.min(cols - 1, Math.ceil((b.x1 - region.x0) / cell) - 1);
    const r0 = Math.max(0, Math.floor((b.y0 - region.y0) / cell));
    const r1 = Math.min(rows - 1, Math.ceil((b.y1 - region.y0) / cell) - 1);
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) taken[r * cols + c] = 1;
  };
  for (const b of obstacles)
    if (b.x1 >= region.x0 && b.x0 <= region.x1 && b.y1 >= region.y0 && b.y0 <= region.y1) mark(b);
  if (within) {
    mark({ x0: region.x0 - cell, y0: region.y0 - cell, x1: within.x0, y1: region.y1 + cell });
    mark({ x0: within.x1, y0: region.y0 - cell, x1: region.x1 + cell, y1: region.y1 + cell });
    mark({ x0: region.x0 - cell, y0: region.y0 - cell, x1: region.x1 + cell, y1: within.y0 });
    mark({ x0: region.x0 - cell, y0: within.y1, x1: region.x1 + cell, y1: region.y1 + cell });
  }
  const out: MmRect[] = [];
  const round = (v: number) => Math.round((v / perMm) * 100) / 100;
  for (let i = 0; i < (options.count ?? 4); i++) {
    const best = largest(taken, cols, rows);
    if (!best || Math.min(best.w, best.h) < (options.minCells ?? 2)) break;
    for (let r = best.r; r < best.r + best.h; r++) taken.fill(1, r * cols + best.c, r * cols + best.c + best.w);
    out.push({
      x: round(region.x0 + best.c * cell),
      y: round(region.y0 + best.r * cell),
      width: round(best.w * cell),
      height: round(best.h * cell),
    });
  }
  return out;
}

/** The largest all-free rectangle of the grid (by area), in cells. */
function largest(
  taken: Uint8Array,
  cols: number,
  rows: number,
): { c: number; r: number; w: number; h: number } | undefined {
  const heights = new Int32Array(cols);
  let best: { c: number; r: number; w: number; h: number } | undefined;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) heights[c] = taken[r * cols + c] ? 0 : heights[c]! + 1;
    const stack: number[] = [];
    for (let c = 0; c <= cols; c++) {
      const h = c < cols ? heights[c]! : 0;
      while (stack.length > 0 && heights[stack[stack.length - 1]!]! >= h) {
        const top = stack.pop()!;
        const height = heights[top]!;
        const left = stack.length > 0 ? stack[stack.length - 1]! + 1 : 0;
        const width = c - left;
        if (height > 0 && (!best || width * height > best.w * best.h))
          best = { c: left, r: r - height + 1, w: width, h: height };
      }
      stack.push(c);
    }
  }
  return best;
}
