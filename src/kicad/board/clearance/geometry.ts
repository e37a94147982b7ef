/**
 * Polygon geometry for clearance checks, on Clipper2 (`clipper2-ts`): offsets and booleans are
 * the library's, so this module only turns KiCad primitives into polygons and asks whether two
 * shapes come closer than a distance. Coordinates are board millimetres.
 *
 * Every polygon here is drawn slightly outside the true curve (circles circumscribed, offsets
 * grown by the arc tolerance), so a shape found clear is clear in KiCad's own geometry too.
 */
import { Clipper, EndType, FillRule, JoinType, type PathD, type PathsD } from "clipper2-ts";
import type { BBox, PointMm } from "../model.ts";

/** A board item's outline as polygons, with its bounding box, in millimetres. */
export interface ShapeMm {
  paths: PathsD;
  box: BBox;
}

/** Decimal places Clipper keeps (its integer grid is 1 nm). */
const PRECISION = 6;
/** Largest gap between an offset's arc and its chords, mm. */
const ARC_TOLERANCE = 0.002;
/** Segments of a full circle. */
const CIRCLE_STEPS = 32;

/** The area a closed path encloses, mm² (a fractured fill outline's slits enclose none). */
export function pathArea(path: readonly PointMm[]): number {
  return Math.abs(Clipper.areaD(path as PathD));
}

export function boxOf(paths: PathsD): BBox {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const path of paths) {
    for (const p of path) {
      if (p.x < minX) minX = p.x;
      if (p.y < minY) minY = p.y;
      if (p.x > maxX) maxX = p.x;
      if (p.y > maxY) maxY = p.y;
    }
  }
  return { minX, minY, maxX, maxY };
}

export function shapeOf(paths: PathsD): ShapeMm {
  return { paths, box: boxOf(paths) };
}

export function growBox(b: BBox, by: number): BBox {
  return { minX: b.minX - by, minY: b.minY - by, maxX: b.maxX + by, maxY: b.maxY + by };
}

export function boxesOverlap(a: BBox, b: BBox): boolean {
  return a.minX <= b.maxX && b.minX <= a.maxX && a.minY <= b.maxY && b.minY <= a.maxY;
}

/**
 * The parts of a polygon inside a box, each as its outline followed by its holes (a fill cut
 * at a window's edge falls apart into pieces, some with holes where pads stood).
 */
export function clipToBox(points: PointMm[], box: BBox): PathsD[] {
  const frame = [
    { x: box.minX, y: box.minY },
    { x: box.maxX, y: box.minY },
    { x: box.maxX, y: box.maxY },
    { x: box.minX, y: box.maxY },
  ];
  // A board-wide plane's fill has tens of thousands of points: a rectangle clip (linear, but
  // leaving edges along the rectangle) first cuts it to a margin round the box, and the exact
  // intersection then has only those few to sort out.
  const near = growBox(box, 1);
  const cut = Clipper.rectClip(
    { left: near.minX, top: near.minY, right: near.maxX, bottom: near.maxY },
    [points],
    PRECISION,
  );
  const paths = Clipper.intersectD(cut, [frame], FillRule.NonZero, PRECISION);
  if (paths.length === 0) return [];
  // Outlines turn one way and holes the other: the largest path is an outline.
  const sign = Math.sign(
    Clipper.areaD(paths.reduce((a, b) => (Math.abs(Clipper.areaD(b)) > Math.abs(Clipper.areaD(a)) ? b : a))),
  );
  const outlines = paths.filter((p) => Math.sign(Clipper.areaD(p)) === sign).map((p) => [p]);
  for (const hole of paths.filter((p) => Math.sign(Clipper.areaD(p)) !== sign)) {
    const around = outlines
      .filter(([outline]) => insidePath(hole[0]!, outline!))
      .sort((a, b) => Math.abs(Clipper.areaD(a[0]!)) - Math.abs(Clipper.areaD(b[0]!)))[0];
    around?.push(hole);
  }
  return outlines;
}

/** A point turned by `angle` degrees (KiCad's sense: counter-clockwise on screen, Y down) about `about`. */
export function turn(p: PointMm, angle: number, about: PointMm = { x: 0, y: 0 }): PointMm {
  if (angle === 0) return { x: about.x + p.x, y: about.y + p.y };
  const rad = (-angle * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  return { x: about.x + p.x * cos - p.y * sin, y: about.y + p.x * sin + p.y * cos };
}

/** A `w`×`h` rectangle centred on `at`, turned by `angle`. */
export function rectangle(at: PointMm, w: number, h: number, angle: number): ShapeMm {
  const corners = [
    { x: -w / 2, y: -h / 2 },
    { x: w / 2, y: -h / 2 },
    { x: w / 2, y: h / 2 },
    { x: -w / 2, y: h / 2 },
  ].map((p) => turn(p, angle, at));
  return shapeOf([corners]);
}

/** A circle, drawn around (not inside) the true one. */
export function circle(at: PointMm, r: number): ShapeMm {
  const outer = r / Math.cos(Math.PI / CIRCLE_STEPS);
  const path: PathD = Array.from({ length: CIRCLE_STEPS }, (_, i) => ({
    x: at.x + outer * Math.cos((2 * Math.PI * i) / CIRCLE_STEPS),
    y: at.y + outer * Math.sin((2 * Math.PI * i) / CIRCLE_STEPS),
  }));
  return shapeOf([path]);
}

/** A stroke of `width` along a polyline, round-ended (a track, an oval pad, a drawn line). */
export function stroke(points: PointMm[], width: number): ShapeMm {
  if (points.length === 1) return circle(points[0]!, width / 2);
  const paths = Clipper.inflatePathsD(
    [points],
    width / 2 + ARC_TOLERANCE,
    JoinType.Round,
    EndType.Round,
    2,
    PRECISION,
    ARC_TOLERANCE,
  );
  return shapeOf(paths);
}

/** A closed polygon (a courtyard, a rule area, a filled drawing). */
export function polygon(points: PointMm[]): ShapeMm {
  return shapeOf([points]);
}

/** The area of all `shapes`, each filled non-zero on its own (so a ring's hole stays a hole). */
export function union(shapes: ShapeMm[]): ShapeMm {
  let paths: PathsD = shapes[0]?.paths ?? [];
  for (const shape of shapes.slice(1)) paths = Clipper.unionD(paths, shape.paths, FillRule.NonZero, PRECISION);
  return shapeOf(paths);
}

/** An outline and its cut-outs (holes wound the other way, so non-zero filling leaves them out). */
export function withHoles(paths: PointMm[][]): ShapeMm {
  const [outer, ...holes] = paths;
  const sign = Math.sign(Clipper.areaD(outer!));
  return shapeOf([outer!, ...holes.map((h) => (Math.sign(Clipper.areaD(h)) === sign ? [...h].reverse() : h))]);
}

/**
 * Offsets already made, by shape and distance: a board item's shape is drawn once and grown by
 * the same clearances for every route grid and spot that meets it, and the offset is the
 * costliest step of both. Held weakly, so a shape's offsets go with it.
 */
const grownBy = new WeakMap<ShapeMm, Map<number, ShapeMm>>();

/** `shape` grown by `by` mm with round corners. */
export function inflate(shape: ShapeMm, by: number): ShapeMm {
  if (by <= 0) return shape;
  let made = grownBy.get(shape);
  if (!made) grownBy.set(shape, (made = new Map()));
  let grown = made.get(by);
  if (!grown)
    made.set(
      by,
      (grown = shapeOf(
        Clipper.inflatePathsD(
          shape.paths,
          by + ARC_TOLERANCE,
          JoinType.Round,
          EndType.Polygon,
          2,
          PRECISION,
          ARC_TOLERANCE,
        ),
      )),
    );
  return grown;
}

export function translate(shape: ShapeMm, dx: number, dy: number): ShapeMm {
  return {
    paths: shape.paths.map((path) => path.map((p) => ({ x: p.x + dx, y: p.y + dy }))),
    box: { minX: shape.box.minX + dx, minY: shape.box.minY + dy, maxX: shape.box.maxX + dx, maxY: shape.box.maxY + dy },
  };
}

/** True when the shape is one rectangle along the axes: its box is its outline. */
function isBox(shape: ShapeMm): boolean {
  if (shape.paths.length !== 1 || shape.paths[0]!.length !== 4) return false;
  const { minX, minY, maxX, maxY } = shape.box;
  return shape.paths[0]!.every(
    (p) =>
      (Math.abs(p.x - minX) < 1e-9 || Math.abs(p.x - maxX) < 1e-9) &&
      (Math.abs(p.y - minY) < 1e-9 || Math.abs(p.y - maxY) < 1e-9),
  );
}

/** True when the two shapes share area (touching edges do not count). */
export function overlap(a: ShapeMm, b: ShapeMm): boolean {
  if (!boxesOverlap(a.box, b.box)) return false;
  if (isBox(a) && isBox(b))
    return (
      Math.min(a.box.maxX, b.box.maxX) - Math.max(a.box.minX, b.box.minX) > 1e-6 &&
      Math.min(a.box.maxY, b.box.maxY) - Math.max(a.box.minY, b.box.minY) > 1e-6
    );
  // Pads, tracks and their offsets are mostly convex outlines: two of those overlap unless an
  // edge of one separates them, which is cheaper to ask than a Clipper intersection.
  if (a.paths.length === 1 && b.paths.length === 1 && convex(a.paths[0]!) && convex(b.paths[0]!)) {
    return !apartAlongCentres(a, b) && !separated(a.paths[0]!, b.paths[0]!) && !separated(b.paths[0]!, a.paths[0]!);
  }
  const common = Clipper.intersectD(a.paths, b.paths, FillRule.NonZero, PRECISION);
  return common.length > 0 && Math.abs(Clipper.areaPathsD(common)) > 1e-9;
}

/**
 * An axis-aligned box inside `shape` with every point of it at least `depth` mm from the
 * shape's edge: the shape's own box when it is one, else that box shrunk evenly toward its
 * centre until its corners are inside (a few halvings). Undefined for a shape of more than one
 * path or not convex, where corners inside do not make the box inside, or too small for `depth`.
 */
export function innerBox(shape: ShapeMm, depth: number): BBox | undefined {
  const { minX, minY, maxX, maxY } = shape.box;
  const shrunk = (by: number) => ({ minX: minX + by, minY: minY + by, maxX: maxX - by, maxY: maxY - by });
  let by = 0;
  if (!isBox(shape)) {
    const path = shape.paths[0]!;
    if (shape.paths.length !== 1 || !convex(path)) return undefined;
    const fits = (b: BBox) =>
      [
        { x: b.minX, y: b.minY },
        { x: b.maxX, y: b.minY },
        { x: b.maxX, y: b.maxY },
        { x: b.minX, y: b.maxY },
      ].every((p) => insidePath(p, path));
    let [lo, hi] = [0, Math.min(maxX - minX, maxY - minY) / 2];
    if (!fits(shrunk(hi - 1e-9))) return undefined;
    for (let i = 0; i < 16; i++) {
      const mid = (lo + hi) / 2;
      if (fits(shrunk(mid))) hi = mid;
      else lo = mid;
    }
    by = hi;
  }
  const box = shrunk(by + depth);
  return box.maxX > box.minX && box.maxY > box.minY ? box : undefined;
}

/** Whether a closed path turns one way only (collinear points allowed). */
function convex(path: PathD): boolean {
  if (path.length < 3) return false;
  let sign = 0;
  for (let i = 0; i < path.length; i++) {
    const [p, q, r] = [path[i]!, path[(i + 1) % path.length]!, path[(i + 2) % path.length]!];
    const cross = (q.x - p.x) * (r.y - q.y) - (q.y - p.y) * (r.x - q.x);
    if (Math.abs(cross) < 1e-12) continue;
    if (sign === 0) sign = Math.sign(cross);
    else if (Math.sign(cross) !== sign) return false;
  }
  return sign !== 0;
}

/**
 * Whether the line through the two boxes' centres shows a gap between the shapes: most pairs a
 * clearance check asks about are apart that way, which one projection of each shows. When it
 * does, an edge separates them too, so the answer is the edges' (`separated`).
 */
function apartAlongCentres(a: ShapeMm, b: ShapeMm): boolean {
  const dx = (b.box.minX + b.box.maxX - a.box.minX - a.box.maxX) / 2;
  const dy = (b.box.minY + b.box.maxY - a.box.minY - a.box.maxY) / 2;
  if (dx === 0 && dy === 0) return false;
  let reachA = -Infinity;
  for (const p of a.paths[0]!) reachA = Math.max(reachA, p.x * dx + p.y * dy);
  let startB = Infinity;
  for (const p of b.paths[0]!) startB = Math.min(startB, p.x * dx + p.y * dy);
  return startB > reachA;
}

/**
 * Whether an edge of convex `a` has all of convex `b` on its outer side, or reaching in by at
 * most 1 nm (Clipper's grid: the box test above lets such touching pass too).
 */
function separated(a: PathD, b: PathD): boolean {
  let area = 0;
  for (let i = 0; i < a.length; i++) {
    const [p, q] = [a[i]!, a[(i + 1) % a.length]!];
    area += p.x * q.y - q.x * p.y;
  }
  // The inside of `a` is to the left of each edge when it winds counter-clockwise.
  const inward = Math.sign(area);
  for (let i = 0; i < a.length; i++) {
    const [p, q] = [a[i]!, a[(i + 1) % a.length]!];
    const [nx, ny] = [p.y - q.y, q.x - p.x];
    const length = Math.hypot(nx, ny);
    if (length < 1e-12) continue;
    let deepest = -Infinity;
    for (const v of b) deepest = Math.max(deepest, (inward * ((v.x - p.x) * nx + (v.y - p.y) * ny)) / length);
    if (deepest <= 1e-6) return true;
  }
  return false;
}

/** The straight gap between two boxes, mm; 0 where they touch or overlap. */
export function boxGap(a: BBox, b: BBox): number {
  return Math.hypot(Math.max(0, b.minX - a.maxX, a.minX - b.maxX), Math.max(0, b.minY - a.maxY, a.minY - b.maxY));
}

/** Whether two boxes come closer than `distance`, with the margin `inflate` adds: asked before any shape is drawn or grown. */
export function boxesWithin(a: BBox, b: BBox, distance: number): boolean {
  return boxesOverlap(growBox(a, distance + ARC_TOLERANCE), b);
}

/** Even-odd point in polygon over a closed path, as `insideSegments` over its edges, without making them. */
export function insidePath(p: PointMm, path: readonly PointMm[]): boolean {
  let inside = false;
  for (let i = 0; i < path.length; i++) {
    const a = path[i]!;
    const b = path[(i + 1) % path.length]!;
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

/** Even-odd point in polygon over a set of segments (an outline that may hold cut-outs). */
export function insideSegments(p: PointMm, segments: [PointMm, PointMm][]): boolean {
  let inside = false;
  for (const [a, b] of segments) {
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}
