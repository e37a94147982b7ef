/**
 * Where the board's copper and courtyards certainly are, for turning down a candidate spot
 * without the exact check. Each layer is a grid of cells, marked where the cell's centre lies
 * inside an item (`cells.ts`), with a summed-area table so a box is asked in four lookups.
 *
 * A marked centre strictly inside a new pad is a point the pad shares with a board item: they
 * overlap, and an overlap is a blocker in the exact check (`obstacles.ts`) unless the copper is
 * of the pad's own net: another net's copper inside its clearance, a courtyard over another.
 * The copper of the new pads' nets is left out of the raster (`sparing`), so "covered" is
 * certain; "not covered" says nothing, and the exact check decides.
 * On a dense board most spots near a part are turned down this way (glasgow's FPGA fan-out).
 */
import type { BBox } from "../model.ts";
import { fillCells, type CellWindow } from "./cells.ts";
import type { BoardItem } from "./items.ts";
import type { BoardObstacles } from "./obstacles.ts";

/** Finest cell, mm: a 0402 pad still holds a few centres. */
const FINEST = 0.05;
/** At most this many cells a side: a whole-board raster of a large board gets coarser cells. */
const MOST_CELLS_A_SIDE = 1_000;

/** Item kinds drawn on a layer: courtyards on courtyard layers, copper on copper layers but that of the nets `sparing` holds. */
function drawnOn(layer: string, sparing: ReadonlySet<string>): (item: BoardItem) => boolean {
  if (layer.endsWith("CrtYd")) return (item) => item.kind === "courtyard" && item.layers.has(layer);
  return (item) =>
    (item.kind === "pad" || item.kind === "track" || item.kind === "via" || item.kind === "copper") &&
    item.layers.has(layer) &&
    !(item.net !== "" && sparing.has(item.net));
}

export class Occupancy {
  private readonly size: number;

  private constructor(
    private readonly window: CellWindow,
    /** Per layer, the summed-area table of its marked cells, `size + 1` a side. */
    private readonly sums: Map<string, Int32Array>,
  ) {
    this.size = 2 * window.half + 1;
  }

  /** The items on `layers` within `area` as they stand in `obstacles` now, but the copper of the nets `sparing` holds. */
  static of(
    obstacles: BoardObstacles,
    area: BBox,
    layers: string[],
    sparing: ReadonlySet<string> = new Set(),
  ): Occupancy {
    // A square window over the area's longer side.
    const side = Math.max(area.maxX - area.minX, area.maxY - area.minY);
    const step = Math.max(FINEST, side / MOST_CELLS_A_SIDE);
    const window = {
      origin: { x: (area.minX + area.maxX) / 2, y: (area.minY + area.maxY) / 2 },
      half: Math.ceil(side / 2 / step),
      step,
    };
    const size = 2 * window.half + 1;
    const sums = new Map<string, Int32Array>();
    for (const layer of layers) {
      const plane = new Uint8Array(size * size);
      for (const item of obstacles.near(area, drawnOn(layer, sparing))) fillCells(plane, window, item.shape());
      sums.set(layer, summedArea(plane, size));
    }
    return new Occupancy(window, sums);
  }

  /** Whether a marked cell of `layer` has its centre strictly inside `box`. */
  covers(layer: string, box: BBox): boolean {
    const sums = this.sums.get(layer);
    if (!sums) return false;
    const { origin, half, step } = this.window;
    const last = this.size - 1;
    const c0 = Math.max(0, Math.floor((box.minX - origin.x) / step + half) + 1);
    const c1 = Math.min(last, Math.ceil((box.maxX - origin.x) / step + half) - 1);
    const r0 = Math.max(0, Math.floor((box.minY - origin.y) / step + half) + 1);
    const r1 = Math.min(last, Math.ceil((box.maxY - origin.y) / step + half) - 1);
    if (c1 < c0 || r1 < r0) return false;
    const w = this.size + 1;
    return sums[(r1 + 1) * w + c1 + 1]! - sums[r0 * w + c1 + 1]! - sums[(r1 + 1) * w + c0]! + sums[r0 * w + c0]! > 0;
  }
}

/** Table `t` with t[(r + 1)·(size + 1) + c + 1] = the marked cells in rows ≤ r and columns ≤ c. */
function summedArea(plane: Uint8Array, size: number): Int32Array {
  const w = size + 1;
  const sums = new Int32Array(w * w);
  for (let r = 0; r < size; r++) {
    let row = 0;
    for (let c = 0; c < size; c++) {
      row += plane[r * size + c]!;
      sums[(r + 1) * w + c + 1] = sums[r * w + c + 1]! + row;
    }
  }
  return sums;
}
