/**
 * Placing a new part so that a pin meets its net with a short wire, the way a designer draws
 * parts that belong together (an LED beside its series resistor, joined pin to pin), rather
 * than two parts far apart each ending in a label of the same name.
 *
 * When a net the part will reach by a label already has a connection point near where the part
 * goes (another part's pin, or the label a part added just before ends its stub in), the spot
 * chosen is the one from which that pin reaches the point with the shortest wire `connect`
 * would draw (`joinRoutes`: straight, or out of the pin and across), with the part's drawing,
 * fields and its other pins' wiring in free space and the wire crossing none of them.
 */
import { toIU, type PointIu } from "../geometry.ts";
import { distance, grow, inside, intersects, pointBox, translate, union, type Box } from "../space.ts";
import type { SheetWiring } from "../wiring.ts";
import { type ShapeIu, type SheetSpace, type Spot } from "./placement.ts";
import { JOIN_REACH, joinRoutes, routeBoxes, routeUsable } from "./routing.ts";

/** A pin of a candidate shape, relative to the symbol's origin, with the room its wiring will take. */
export interface PlannedPin {
  number: string;
  tip: PointIu;
  outward: PointIu;
  /** The stub and power symbol or label it gets when it does not join its net by a wire. */
  wiring: Box[];
}

/** A candidate orientation of a new unit, its occupied boxes split into what is fixed and what each wired pin adds. */
export interface UnitShape extends ShapeIu {
  /** Drawing, fields and the room kept beyond pins left unconnected. */
  fixed: Box[];
  pins: PlannedPin[];
}

/** Connection points of the net a pin will be wired to, where the part should meet it. */
export interface JoinTarget {
  pin: string;
  points: PointIu[];
}

/** Room kept beyond a pin that starts a net, for the partner that will meet it: this deep, this wide either side. */
const PARTNER_DEPTH = toIU(12.7);
const PARTNER_SIDE = toIU(6.35);

/**
 * The room a pin starting a new net keeps in front of it (beyond its stub and label) for the
 * part that will join it there, so a partner added next finds a spot beside it.
 */
export function partnerRoom(tip: PointIu, outward: PointIu): Box {
  const from = { x: tip.x + outward.x * toIU(2.54), y: tip.y + outward.y * toIU(2.54) };
  const to = { x: from.x + outward.x * PARTNER_DEPTH, y: from.y + outward.y * PARTNER_DEPTH };
  return grow(union(pointBox(from), pointBox(to)), PARTNER_SIDE);
}

/** How far from the anchor a net point may be to be met by a wire (beyond it, the part goes near the anchor as usual). */
const TARGET_REACH = 2 * JOIN_REACH;

/**
 * The spot from which one of `targets`' pins reaches its net by the shortest free wire (ties:
 * nearest the anchor), over every shape; undefined when no pin can meet its net that way.
 */
export function joinSpot(
  space: SheetSpace,
  wiring: SheetWiring,
  shapes: UnitShape[],
  targets: JoinTarget[],
  anchor: Box,
): Spot | undefined {
  const grid = space.grid;
  const steps = Math.floor(JOIN_REACH / grid);
  const near = grow(anchor, TARGET_REACH);
  let best: { spot: Spot; score: number } | undefined;
  for (const shape of shapes) {
    for (const target of targets) {
      const pin = shape.pins.find((p) => p.number === target.pin);
      if (!pin) continue;
      const others = [...shape.fixed, ...shape.pins.filter((p) => p !== pin).flatMap((p) => p.wiring)];
      for (const point of target.points.filter((p) => inside({ x0: p.x, y0: p.y, x1: p.x, y1: p.y }, near))) {
        const base = {
          x: Math.round((point.x - pin.tip.x) / grid) * grid,
          y: Math.round((point.y - pin.tip.y) / grid) * grid,
        };
        for (let i = -steps; i <= steps; i++) {
          for (let j = -steps; j <= steps; j++) {
            const at = { x: base.x + i * grid, y: base.y + j * grid };
            const route = joinRoutes({ x: at.x + pin.tip.x, y: at.y + pin.tip.y }, pin.outward, [point])[0];
            if (!route) continue;
            const gap = distance(translate(shape.body, at), anchor);
            const score = routeLength(route.points) + shape.penalty + gap / 4;
            if (best && score >= best.score) continue;
            const placed = others.map((b) => translate(b, at));
            const wire = routeBoxes(route.points);
            if (!placed.every((b) => space.free(b)) || placed.some((b) => wire.some((w) => intersects(b, w)))) continue;
            if (!routeUsable(route, wiring, space, undefined)) continue;
            best = { spot: { at, shape, distance: gap }, score };
          }
        }
      }
    }
  }
  return best?.spot;
}

function routeLength(points: PointIu[]): number {
  let length = 0;
  for (let i = 1; i < points.length; i++)
    length += Math.abs(points[i]!.x - points[i - 1]!.x) + Math.abs(points[i]!.y - points[i - 1]!.y);
  return length;
}
