/**
 * How a pin reaches its net on a sheet, in the sheet's own style: a short wire to a pin or label
 * of the net nearby when one is in reach and the way is free; otherwise a stub ending in an
 * upright power symbol (supply up, ground down: the stub bends when the pin faces elsewhere) or
 * in a label reading away from the pin.
 *
 * Routes are polylines on the 2.54 mm grid starting at the pin tip. A route is usable when the
 * wire touches nothing on its way (see `SheetWiring.pathClear`), crosses no drawing, and what
 * it ends in (a power symbol, a label) lands in free space.
 */
import { onConnectionGrid, samePoint, toIU, type PointIu } from "../geometry.ts";
import type { SheetSpace } from "./placement.ts";
import { pointBox, translate, union, type Box } from "../space.ts";
import type { SheetWiring } from "../wiring.ts";

/** What a route ends in, relative to its last point: a power symbol or a label, or nothing (a join). */
export interface Landing {
  boxes: Box[];
  /** For power symbols: the direction the wire must arrive in (into the symbol's pin). */
  arrive?: PointIu;
}

export interface Route {
  points: PointIu[];
  /** True when the route ends on an existing connection point of the net. */
  join: boolean;
}

const STEP = toIU(2.54);
/** Wire stub lengths tried for labels, shortest first. */
const LABEL_STUBS = [1, 2, 3, 4, 5].map((n) => n * STEP);
/** A wire to the net's nearest point is drawn when it is at most this long (Manhattan). */
export const JOIN_REACH = toIU(10.16);

function add(p: PointIu, d: PointIu, length: number): PointIu {
  return { x: p.x + d.x * length, y: p.y + d.y * length };
}

function same(a: PointIu, b: PointIu): boolean {
  return a.x === b.x && a.y === b.y;
}

/**
 * Candidate stubs out of a pin facing `outward`, best first, for a landing that wants the wire
 * to arrive along `arrive` (power symbols) or along the stub itself (labels).
 */
export function stubRoutes(tip: PointIu, outward: PointIu, arrive: PointIu | undefined): Route[] {
  const routes: PointIu[][] = [];
  if (!arrive || same(arrive, outward)) {
    for (const length of arrive ? LABEL_STUBS.slice(0, 3) : LABEL_STUBS) routes.push([tip, add(tip, outward, length)]);
  } else if (arrive.x * outward.x + arrive.y * outward.y === 0) {
    for (const a of [1, 2])
      for (const b of [1, 2])
        routes.push([tip, add(tip, outward, a * STEP), add(add(tip, outward, a * STEP), arrive, b * STEP)]);
  } else {
    // The pin faces away from where the symbol must sit: out, aside, then back past the pin.
    for (const side of [
      { x: -outward.y, y: outward.x },
      { x: outward.y, y: -outward.x },
    ]) {
      for (const c of [2, 3]) {
        for (const d of [2, 3]) {
          const out = add(tip, outward, STEP);
          const aside = add(out, side, c * STEP);
          routes.push([tip, out, aside, add(aside, arrive, d * STEP)]);
        }
      }
    }
  }
  return routes.map((points) => ({ points, join: false }));
}

/**
 * Wires from a pin to a nearby point of its net: straight when the point lies ahead of the pin,
 * else out of the pin first and then across (never back over the symbol). Nearest first. A
 * point off the connection grid is not joined (the wire's end there would be ERC's
 * `endpoint_off_grid`): the pin reaches its net by a label instead.
 */
export function joinRoutes(tip: PointIu, outward: PointIu, targets: PointIu[]): Route[] {
  const routes: { points: PointIu[]; length: number }[] = [];
  for (const target of targets.filter(onConnectionGrid)) {
    const dx = target.x - tip.x;
    const dy = target.y - tip.y;
    const length = Math.abs(dx) + Math.abs(dy);
    if (length === 0 || length > JOIN_REACH) continue;
    const ahead = dx * outward.x + dy * outward.y;
    const aside = outward.x === 0 ? dx : dy;
    if (ahead <= 0) continue;
    if (aside === 0) routes.push({ points: [tip, target], length });
    else routes.push({ points: [tip, add(tip, outward, ahead), target], length });
  }
  return routes.sort((a, b) => a.length - b.length).map((r) => ({ points: r.points, join: true }));
}

/** Thin boxes along a route's segments (the first one starts just off the pin tip). */
export function routeBoxes(points: PointIu[]): Box[] {
  const boxes: Box[] = [];
  for (let i = 1; i < points.length; i++) boxes.push(union(pointBox(points[i - 1]!), pointBox(points[i]!)));
  return boxes;
}

/**
 * True when the route can be drawn: the wire touches nothing but its ends and crosses no
 * drawing (the part's own included), and what it ends in lands in free space.
 */
export function routeUsable(
  route: Route,
  wiring: SheetWiring,
  space: SheetSpace,
  landing: Landing | undefined,
): boolean {
  if (!wiring.pathClear(route.points, route.join)) return false;
  const segments = routeBoxes(route.points);
  const last = segments.length - 1;
  for (const [i, segment] of segments.entries()) {
    const a = route.points[i]!;
    const b = route.points[i + 1]!;
    const trimmed = trim(segment, a, b, i === 0, route.join && i === last);
    if (!space.free(trimmed, 0)) return false;
  }
  if (!landing) return true;
  const end = route.points[route.points.length - 1]!;
  return landing.boxes.every((box) => space.free(translate(box, end)));
}

/** A segment's box less one unit at the ends that touch something on purpose. */
function trim(box: Box, a: PointIu, b: PointIu, startTouches: boolean, endTouches: boolean): Box {
  const out = { ...box };
  const cut = (p: PointIu) => {
    if (box.x0 === box.x1) {
      if (p.y === box.y0) out.y0 += 1;
      else out.y1 -= 1;
    } else if (p.x === box.x0) out.x0 += 1;
    else out.x1 -= 1;
  };
  if (startTouches) cut(a);
  if (endTouches) cut(b);
  return out;
}

/** True when joining at `point` needs a junction dot: three or more items would meet there. */
export function needsJunction(wiring: SheetWiring, point: PointIu): boolean {
  return wiring.endsAt(point) + 1 >= 3 && !wiring.file.junctions.some((j) => samePoint(j.at, point));
}
