/**
 * Square grids of cells over a window of the board, and the one way shapes are drawn into them:
 * a cell is marked when its centre lies inside the shape (even-odd over its paths), so every
 * marked centre is a point of the shape. The routing grid (`route/grid.ts`) and the occupancy
 * raster of placement (`occupancy.ts`) both draw this way.
 */
import type { PointMm } from "../model.ts";
import type { ShapeMm } from "./geometry.ts";

export interface CellWindow {
  /** Centre of the middle cell. */
  origin: PointMm;
  /** Cells from the origin to each side: columns -half..half, rows likewise. */
  half: number;
  step: number;
}

/** Cells from `col0` to `col1` and `row0` to `row1`, inclusive. */
export interface CellRect {
  col0: number;
  col1: number;
  row0: number;
  row1: number;
}

/**
 * Marks every cell of `plane` (row-major, `2·half + 1` cells a side) within `clip` whose
 * centre lies inside `shape`. Each edge is taken to the rows it spans only: a grown outline has
 * many short edges (its round corners) and a grid is drawn from hundreds of them.
 */
export function fillCells(plane: Uint8Array, window: CellWindow, shape: ShapeMm, clip?: CellRect): void {
  const { origin, half, step } = window;
  const size = 2 * half + 1;
  const { col0, col1, row0: clipRow0, row1: clipRow1 } = clip ?? { col0: 0, col1: size - 1, row0: 0, row1: size - 1 };
  const row0 = Math.max(clipRow0, Math.ceil((shape.box.minY - origin.y) / step + half));
  const row1 = Math.min(clipRow1, Math.floor((shape.box.maxY - origin.y) / step + half));
  if (row1 < row0) return;
  const rows: number[][] = Array.from({ length: row1 - row0 + 1 }, () => []);
  for (const path of shape.paths) {
    for (let i = 0, j = path.length - 1; i < path.length; j = i++) {
      const a = path[i]!;
      const b = path[j]!;
      const first = Math.max(row0, Math.floor((Math.min(a.y, b.y) - origin.y) / step + half));
      const last = Math.min(row1, Math.ceil((Math.max(a.y, b.y) - origin.y) / step + half));
      for (let row = first; row <= last; row++) {
        const y = origin.y + (row - half) * step;
        if (a.y > y !== b.y > y) rows[row - row0]!.push(a.x + ((y - a.y) * (b.x - a.x)) / (b.y - a.y));
      }
    }
  }
  for (let row = row0; row <= row1; row++) {
    const crossings = rows[row - row0]!;
    // Most rows cross a grown outline twice: two numbers need no sort.
    if (crossings.length === 2) {
      if (crossings[0]! > crossings[1]!) crossings.reverse();
    } else crossings.sort((p, q) => p - q);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const c0 = Math.max(col0, Math.ceil((crossings[k]! - origin.x) / step + half));
      const c1 = Math.min(col1, Math.floor((crossings[k + 1]! - origin.x) / step + half));
      for (let col = c0; col <= c1; col++) plane[row * size + col] = 1;
    }
  }
}
