/**
 * How far a new pad is from the existing copper of its net: the length of the ratsnest line
 * KiCad would draw for it. The copper is the board's pads, vias and track ends (zone fills are
 * refilled after an edit, so they do not count), bucketed per net for nearest-point lookups.
 */
import type { Point } from "./view.ts";
import type { BoardObstacles } from "./clearance/obstacles.ts";
import type { BoardItem } from "./clearance/items.ts";

const BUCKET = 2;
/** Past this a pad counts as this far: nothing nearer exists. */
const HORIZON = 100;

/** A net with at most this many points is searched point by point; bigger ones by buckets. */
const FEW = 64;

export class NetCopper {
  private readonly nets = new Map<string, Map<number, Point[]>>();
  private readonly points = new Map<string, Point[]>();
  private readonly known = new Map<string, Map<number, number>>();

  private readonly wanted: Set<string>;

  constructor(obstacles: BoardObstacles, nets: Iterable<string>) {
    this.wanted = new Set([...nets].filter((n) => n !== ""));
    for (const item of obstacles.all((i) => this.wanted.has(i.net))) this.add(item);
  }

  /** Counts `item` as copper of its net from now on: a part just placed is what the next one connects to (the LED its resistor goes beside). */
  add(item: BoardItem): void {
    if (!this.wanted.has(item.net) || !item.ends) return;
    let buckets = this.nets.get(item.net);
    if (!buckets) this.nets.set(item.net, (buckets = new Map()));
    let points = this.points.get(item.net);
    if (!points) this.points.set(item.net, (points = []));
    points.push(...item.ends);
    this.known.delete(item.net);
    for (const p of item.ends) {
      const key = keyOf(Math.floor(p.x / BUCKET), Math.floor(p.y / BUCKET));
      const bucket = buckets.get(key);
      if (bucket) bucket.push(p);
      else buckets.set(key, [p]);
    }
  }

  /** Whether the board has copper of `net` already (a new net's pads connect only to new parts). */
  has(net: string): boolean {
    return this.nets.has(net);
  }

  /** Distance from `p` to the nearest copper of `net`; 0 for a net with none. Candidates share pad positions, so answers are kept. */
  distance(net: string, p: Point): number {
    const buckets = this.nets.get(net);
    if (!buckets) return 0;
    let known = this.known.get(net);
    if (!known) this.known.set(net, (known = new Map()));
    const key = Math.round(p.x * 1000) * 4_194_304 + Math.round(p.y * 1000);
    let d = known.get(key);
    if (d === undefined) known.set(key, (d = this.nearest(net, buckets, p)));
    return d;
  }

  private nearest(net: string, buckets: Map<number, Point[]>, p: Point): number {
    const points = this.points.get(net)!;
    if (points.length <= FEW) {
      let best = HORIZON;
      for (const q of points) best = Math.min(best, Math.hypot(q.x - p.x, q.y - p.y));
      return best;
    }
    const cx = Math.floor(p.x / BUCKET);
    const cy = Math.floor(p.y / BUCKET);
    let best = Infinity;
    for (let ring = 0; ring * BUCKET <= HORIZON; ring++) {
      // Everything in this ring is at least (ring - 1) buckets away.
      if (best <= (ring - 1) * BUCKET) break;
      for (let x = cx - ring; x <= cx + ring; x++) {
        for (let y = cy - ring; y <= cy + ring; y++) {
          if (Math.max(Math.abs(x - cx), Math.abs(y - cy)) !== ring) continue;
          for (const q of buckets.get(keyOf(x, y)) ?? []) {
            const d = Math.hypot(q.x - p.x, q.y - p.y);
            if (d < best) best = d;
          }
        }
      }
    }
    return Math.min(best, HORIZON);
  }
}

function keyOf(x: number, y: number): number {
  return (x + 32768) * 65536 + (y + 32768);
}
