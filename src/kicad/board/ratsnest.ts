/**
 * How far a new pad is from the existing copper of its net: the length of the ratsnest line
 * KiCad would draw for it. The copper is the board's pads, vias and track ends (zone fills are
 * refilled after an edit, so they do not count), in a static R-tree per net (`flatbush`) for
 * nearest-point lookups: a ground net on a big board has tens of thousands of points, and
 * placement asks for the nearest one from every candidate spot.
 */
import Flatbush from "flatbush";
import type { PointMm } from "./model.ts";
import type { BoardObstacles } from "./clearance/obstacles.ts";
import type { BoardItem } from "./clearance/items.ts";

/** Past this a pad counts as this far: nothing nearer exists. */
const HORIZON = 100;

interface NetPoints {
  points: PointMm[];
  /** Built on the first lookup after a change. */
  index?: Flatbush;
  /** The last answer: the next spot is a grid step away, so its answer is within a step of this one and the search can stop there. */
  last?: { p: PointMm; d: number };
}

export class NetCopper {
  private readonly nets = new Map<string, NetPoints>();
  private readonly wanted: Set<string>;

  constructor(obstacles: BoardObstacles, nets: Iterable<string>) {
    this.wanted = new Set([...nets].filter((n) => n !== ""));
    for (const item of obstacles.all((i) => this.wanted.has(i.net))) this.add(item);
  }

  /** Counts `item` as copper of its net from now on: a part just placed is what the next one connects to (the LED its resistor goes beside). */
  add(item: BoardItem): void {
    if (!this.wanted.has(item.net) || !item.ends) return;
    let net = this.nets.get(item.net);
    if (!net) this.nets.set(item.net, (net = { points: [] }));
    net.points.push(...item.ends);
    net.index = undefined;
    net.last = undefined;
  }

  /** Whether the board has copper of `net` already (a new net's pads connect only to new parts). */
  has(net: string): boolean {
    return this.nets.has(net);
  }

  /** Distance from `p` to the nearest copper of `net`, at most `HORIZON`; 0 for a net with none. */
  distance(name: string, p: PointMm): number {
    const net = this.nets.get(name);
    return net ? nearest(net, p) : 0;
  }
}

function nearest(net: NetPoints, p: PointMm): number {
  if (net.points.length === 0) return HORIZON;
  if (!net.index) {
    net.index = new Flatbush(net.points.length);
    for (const q of net.points) net.index.add(q.x, q.y, q.x, q.y);
    net.index.finish();
  }
  const bound = net.last
    ? Math.min(HORIZON, net.last.d + Math.hypot(p.x - net.last.p.x, p.y - net.last.p.y)) + 1e-6
    : HORIZON;
  const [found] = net.index.neighbors(p.x, p.y, 1, bound);
  const q = found === undefined ? undefined : net.points[found]!;
  const d = q ? Math.min(Math.hypot(q.x - p.x, q.y - p.y), HORIZON) : HORIZON;
  net.last = { p, d };
  return d;
}
