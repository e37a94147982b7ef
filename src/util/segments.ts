/**
 * Line segments in the plane, in whatever unit the caller's coordinates use: the schematic's
 * integer IU (exact) and the board's millimetres both ask these questions.
 */

export interface XY {
  x: number;
  y: number;
}

/**
 * True when `p` lies on the segment a–b, endpoints included, within `accuracy` (in the
 * coordinates' unit). KiCad's TestSegmentHit with accuracy 1 IU is what attaches a label to the
 * wire it sits on.
 */
export function onSegment(p: XY, a: XY, b: XY, accuracy = 1): boolean {
  const minX = Math.min(a.x, b.x) - accuracy;
  const maxX = Math.max(a.x, b.x) + accuracy;
  const minY = Math.min(a.y, b.y) - accuracy;
  const maxY = Math.max(a.y, b.y) + accuracy;
  if (p.x < minX || p.x > maxX || p.y < minY || p.y > maxY) return false;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const lengthSq = dx * dx + dy * dy;
  if (lengthSq === 0) return Math.hypot(p.x - a.x, p.y - a.y) <= accuracy;
  const cross = (p.x - a.x) * dy - (p.y - a.y) * dx;
  return (cross * cross) / lengthSq <= accuracy * accuracy;
}

/** True when segments a–b and c–d share at least one point (a crossing, a touch, or a collinear overlap). */
export function segmentsTouch(a: XY, b: XY, c: XY, d: XY): boolean {
  const orient = (p: XY, q: XY, r: XY) => Math.sign((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x));
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (
    (o1 === 0 && onSegment(c, a, b, 0)) ||
    (o2 === 0 && onSegment(d, a, b, 0)) ||
    (o3 === 0 && onSegment(a, c, d, 0)) ||
    (o4 === 0 && onSegment(b, c, d, 0))
  );
}
