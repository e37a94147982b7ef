/**
 * Schematic geometry in KiCad's own integer units.
 *
 * Files store millimetres as decimals, but KiCad compares positions as integers (1 IU = 100 nm
 * in eeschema), so two points are "the same" exactly when their rounded IU values are equal.
 * Doing the same here keeps float noise (0.1 + 0.2) from splitting a net KiCad considers whole.
 */
import { num, type SList } from "../sexpr/index.ts";
import { onSegment } from "../../util/segments.ts";

/** Eeschema internal units per millimetre (schIUScale.IU_PER_MM). */
export const IU_PER_MM = 10_000;

/** A point on a sheet, in eeschema's integer units (Y down). */
export interface PointIu {
  x: number;
  y: number;
}

export function toIU(mm: number): number {
  return Math.round(mm * IU_PER_MM);
}

/**
 * KiCad's connection grid: the project's `connection_grid_size`, 50 mil by default and in every
 * project the tests know. ERC flags a pin or wire end off it (`endpoint_off_grid`), so what
 * copperhead draws keeps its ends on it, however finely the sheet around was drawn.
 */
export const CONNECTION_GRID = toIU(1.27);

export function onConnectionGrid(p: PointIu): boolean {
  return p.x % CONNECTION_GRID === 0 && p.y % CONNECTION_GRID === 0;
}

/** The point a list such as `(at x y)` or `(xy x y)` gives, in IU (a missing coordinate reads 0); undefined without the list. */
export function pointIuOf(node: SList | undefined): PointIu | undefined {
  if (!node) return undefined;
  return { x: toIU(num(node, 1) ?? 0), y: toIU(num(node, 2) ?? 0) };
}

export function pointKey(p: PointIu): string {
  return `${p.x},${p.y}`;
}

export function samePoint(a: PointIu, b: PointIu): boolean {
  return a.x === b.x && a.y === b.y;
}

/** How a placed symbol maps library coordinates into the sheet. */
export interface PlacementIu {
  /** Symbol origin in the sheet, IU. */
  at: PointIu;
  /** Rotation in degrees as written in `(at x y rot)`: 0, 90, 180 or 270, counter-clockwise. */
  rotation: number;
  /** `(mirror x)` flips across the X axis (negates y), `(mirror y)` across the Y axis. */
  mirror?: "x" | "y";
}

/**
 * Maps a library point (Y up) to the sheet (Y down).
 *
 * KiCad builds the symbol TRANSFORM as: start from the identity with Y negated, compose the
 * rotation, then compose the mirror (the parser applies `(mirror)` after `(at … rot)`), and
 * each composition applies the new step after the old ones. So: negate y, rotate, mirror,
 * translate.
 */
export function placePoint(lib: PointIu, placement: PlacementIu): PointIu {
  let x = lib.x;
  let y = -lib.y;
  const turns = (((Math.round(placement.rotation / 90) % 4) + 4) % 4) as 0 | 1 | 2 | 3;
  for (let i = 0; i < turns; i++) {
    // One counter-clockwise quarter turn on screen (Y down): (x, y) -> (y, -x).
    const nx = y;
    const ny = -x;
    x = nx;
    y = ny;
  }
  if (placement.mirror === "x") y = -y;
  else if (placement.mirror === "y") x = -x;
  return { x: placement.at.x + x + 0, y: placement.at.y + y + 0 };
}

/** True when `p` lies on the segment a–b, endpoints included, within `accuracy` IU (see `util/segments.ts`). */
export { onSegment };

/** True when `p` is strictly inside segment a–b (on it, and not at either end). */
export function insideSegment(p: PointIu, a: PointIu, b: PointIu): boolean {
  return onSegment(p, a, b, 0) && !samePoint(p, a) && !samePoint(p, b);
}

/**
 * Segments bucketed by grid cell, so "which segments pass through this point" looks at the few
 * segments near it instead of every wire of the sheet. Queries return segment numbers in the
 * order the segments were added, which callers rely on to pick the first match as a scan would.
 */
export class SegmentIndex {
  private readonly cells = new Map<number, number[]>();

  /** 5.08 mm × 10: most schematic wires span one or two cells. */
  private static readonly CELL = 508_000;

  /** One number per cell; sheet coordinates stay far below 2^20 cells either way. */
  private static key(x: number, y: number): number {
    return x * 2_097_152 + y;
  }

  constructor(segments: readonly { a: PointIu; b: PointIu }[]) {
    const cell = SegmentIndex.CELL;
    segments.forEach(({ a, b }, n) => {
      const x0 = Math.floor((Math.min(a.x, b.x) - 1) / cell);
      const x1 = Math.floor((Math.max(a.x, b.x) + 1) / cell);
      const y0 = Math.floor((Math.min(a.y, b.y) - 1) / cell);
      const y1 = Math.floor((Math.max(a.y, b.y) + 1) / cell);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const key = SegmentIndex.key(x, y);
          const list = this.cells.get(key);
          if (list) list.push(n);
          else this.cells.set(key, [n]);
        }
      }
    });
  }

  /** Numbers of the segments whose bounding box (grown by 1 IU) may hold `p`, ascending. */
  near(p: PointIu): readonly number[] {
    const cell = SegmentIndex.CELL;
    return this.cells.get(SegmentIndex.key(Math.floor(p.x / cell), Math.floor(p.y / cell))) ?? [];
  }
}
