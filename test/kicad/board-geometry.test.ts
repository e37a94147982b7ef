/**
 * Shape overlap (`board/clearance/geometry.ts`) answers two convex outlines by their edges and
 * anything else by a Clipper intersection: both must agree on every pair, clear, touching or
 * overlapping, including the grown outlines clearance checks make.
 */
import { describe, expect, test } from "bun:test";
import { Clipper, FillRule } from "clipper2-ts";
import { circle, inflate, overlap, rectangle, stroke, type ShapeMm } from "../../src/kicad/board/clearance/geometry.ts";

/** What Clipper says: the shapes' intersection has area. */
function clipperOverlap(a: ShapeMm, b: ShapeMm): boolean {
  const common = Clipper.intersectD(a.paths, b.paths, FillRule.NonZero, 6);
  return common.length > 0 && Math.abs(Clipper.areaPathsD(common)) > 1e-9;
}

describe("overlap", () => {
  // A fixed walk of pads, tracks and round pads at every distance from clear to deep inside.
  let seed = 7;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const shapeAt = (k: number): ShapeMm => {
    const at = { x: random() * 4, y: random() * 4 };
    if (k % 3 === 0) return rectangle(at, 0.3 + random(), 0.3 + random(), random() * 360);
    if (k % 3 === 1)
      return stroke([at, { x: at.x + random() * 2 - 1, y: at.y + random() * 2 - 1 }], 0.1 + random() * 0.4);
    return circle(at, 0.1 + random() * 0.6);
  };

  test("two convex outlines: the same answer as a Clipper intersection, grown or not", () => {
    let overlapping = 0;
    for (let k = 0; k < 600; k++) {
      const [a, b] = [shapeAt(k), shapeAt(k + 1)];
      const grown = inflate(a, random() * 0.5);
      expect(overlap(a, b)).toBe(clipperOverlap(a, b));
      expect(overlap(grown, b)).toBe(clipperOverlap(grown, b));
      if (overlap(grown, b)) overlapping++;
    }
    // The walk covers both answers.
    expect(overlapping).toBeGreaterThan(50);
    expect(overlapping).toBeLessThan(1150);
  });

  test("edges that only touch do not overlap; a nanometre apart or less counts as touching", () => {
    const a = rectangle({ x: 0, y: 0 }, 2, 2, 45);
    const b = rectangle({ x: Math.SQRT2 * 2, y: 0 }, 2, 2, 45);
    expect(overlap(a, b)).toBe(false);
    expect(overlap(a, rectangle({ x: Math.SQRT2 * 2 - 0.01, y: 0 }, 2, 2, 45))).toBe(true);
  });

  test("a concave outline goes to Clipper: an L's notch holds a pad clear of it", () => {
    const l: ShapeMm = {
      paths: [
        [
          { x: 0, y: 0 },
          { x: 4, y: 0 },
          { x: 4, y: 1 },
          { x: 1, y: 1 },
          { x: 1, y: 4 },
          { x: 0, y: 4 },
        ],
      ],
      box: { minX: 0, minY: 0, maxX: 4, maxY: 4 },
    };
    expect(overlap(l, circle({ x: 2.5, y: 2.5 }, 1))).toBe(false);
    expect(overlap(l, circle({ x: 2.5, y: 1.5 }, 1))).toBe(true);
  });
});
