/**
 * Whether a box lies inside a board's Edge.Cuts outline: points along its edges every 0.25 mm
 * (corners included) all inside, by the even-odd rule, so a cut-out or a notch counts.
 */
import { insideSegments } from "../../src/kicad/board/clearance/geometry.ts";
import { outlineSegments } from "../../src/kicad/board/clearance/items.ts";
import type { BBox, Board } from "../../src/kicad/board/model.ts";

export function insideOutline(board: Board, b: BBox): boolean {
  const segments = outlineSegments(board);
  const along = (from: number, to: number) => {
    const n = Math.max(1, Math.ceil((to - from) / 0.25));
    return Array.from({ length: n + 1 }, (_, i) => from + ((to - from) * i) / n);
  };
  const points = [
    ...along(b.minX, b.maxX).flatMap((x) => [
      { x, y: b.minY },
      { x, y: b.maxY },
    ]),
    ...along(b.minY, b.maxY).flatMap((y) => [
      { x: b.minX, y },
      { x: b.maxX, y },
    ]),
  ];
  return points.every((p) => insideSegments(p, segments));
}
