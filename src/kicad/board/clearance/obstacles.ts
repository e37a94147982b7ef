/**
 * What new copper and new footprints must keep clear of on a board, indexed in grid buckets so
 * a check looks only at the items near it. Built once per board state (the run keeps it while
 * only placement changes the board, agent/context.ts); a footprint placed or moved is taken out
 * with `remove` and put back with `add` once its tree is where it goes.
 *
 * The checks are KiCad's DRC tests that a new item can fail: copper clearance to other nets'
 * copper (net class, board minimum and custom rules), hole clearance, hole to hole, copper to
 * the board edge, courtyard overlap on the same side, rule areas, and, so the part is legible,
 * silkscreen over pads and over other silkscreen. Each check answers with the item in the way,
 * named for a person.
 */
import type { BBox, Board, Point } from "../view.ts";
import { boardItems, copperLayers, footprintItems, outlineSegments, type BoardItem } from "./items.ts";
import { boxesOverlap, growBox, inflate, insideSegments, overlap, type Shape } from "./geometry.ts";
import type { BoardRules } from "./rules.ts";
import { children, type SList } from "../../sexpr/index.ts";

/** Edge length of a grid bucket, mm. */
const BUCKET = 2.5;

/** The item that stops a new one, and why. */
export interface Blocker {
  item: BoardItem;
  /** "clearance", "hole clearance", "edge clearance", "courtyard", "keepout", "silkscreen", "outside the outline". */
  reason: string;
}

/** A copper shape to check: a pad, a track or a via of `net` on `layers`. */
export interface CopperShape {
  shape: Shape;
  net: string;
  layers: ReadonlySet<string>;
  /** What it is, for the keepout rules: pads, tracks and vias are kept out separately. */
  kind: "pad" | "track" | "via";
}

export class BoardObstacles {
  readonly copper: string[];
  readonly outline: [Point, Point][];
  private readonly items: BoardItem[] = [];
  private readonly buckets = new Map<number, number[]>();
  private readonly removed = new Set<number>();
  private seen = new Uint32Array(0);
  private query = 0;

  constructor(
    board: Board,
    readonly rules: BoardRules,
  ) {
    this.copper = copperLayers(board);
    this.outline = outlineSegments(board);
    for (const item of boardItems(board, this.copper)) this.insert(item);
    for (const fp of children(board.root, "footprint")) this.add(fp);
  }

  /** Adds a footprint's items (a footprint just placed). */
  add(fp: SList): void {
    for (const item of footprintItems(fp, this.copper)) this.insert(item);
  }

  /** Takes a footprint's items out (the footprint about to move). */
  remove(ref: string): void {
    this.items.forEach((item, index) => {
      if (item.ref === ref && item.kind !== "keepout") this.removed.add(index);
    });
  }

  private insert(item: BoardItem): void {
    const index = this.items.push(item) - 1;
    for (const key of this.keys(item.box)) {
      const bucket = this.buckets.get(key);
      if (bucket) bucket.push(index);
      else this.buckets.set(key, [index]);
    }
  }

  private *keys(box: BBox): Generator<number> {
    const [x0, x1] = [Math.floor(box.minX / BUCKET), Math.floor(box.maxX / BUCKET)];
    const [y0, y1] = [Math.floor(box.minY / BUCKET), Math.floor(box.maxY / BUCKET)];
    for (let x = x0; x <= x1; x++) for (let y = y0; y <= y1; y++) yield (x + 32768) * 65536 + (y + 32768);
  }

  /** Items whose box meets `box` and that `keep` accepts, each once. */
  near(box: BBox, keep: (item: BoardItem) => boolean = () => true): BoardItem[] {
    // Each query stamps the items it saw, so an item in several buckets is looked at once.
    if (this.seen.length < this.items.length) this.seen = new Uint32Array(this.items.length * 2);
    const query = ++this.query;
    const out: BoardItem[] = [];
    for (const key of this.keys(box)) {
      for (const index of this.buckets.get(key) ?? []) {
        if (this.seen[index] === query || this.removed.has(index)) continue;
        this.seen[index] = query;
        const item = this.items[index]!;
        if (boxesOverlap(item.box, box) && keep(item)) out.push(item);
      }
    }
    return out;
  }

  /** Every item `keep` accepts (footprints taken out with `remove` left out). */
  all(keep: (item: BoardItem) => boolean): BoardItem[] {
    return this.items.filter((item, index) => !this.removed.has(index) && keep(item));
  }

  /** True when `p` lies inside the board outline (an outline with cut-outs counts them out). */
  inside(p: Point): boolean {
    return insideSegments(p, this.outline);
  }

  /**
   * The first item new copper would come too close to: other nets' copper (and copper of no
   * net) on a shared layer, holes of other nets, the board edge, a rule area that keeps such
   * copper out. Undefined when it is clear. `holes` are the new item's own drills.
   */
  copperBlocker(copper: CopperShape, holes: Shape[] = []): Blocker | undefined {
    const spokes = copper.kind === "pad" ? this.spokeRoom(copper) : 0;
    const reach = Math.max(this.rules.clearance(copper.net, ""), this.rules.edgeClearance(copper.net), this.rules.holeClearance(copper.net, ""), spokes, 1);
    const grown = new Map<number, Shape>();
    const tooClose = (target: Shape, distance: number) => {
      let g = grown.get(distance);
      if (!g) grown.set(distance, (g = inflate(copper.shape, distance)));
      return overlap(g, target);
    };
    const candidates = this.near(growBox(copper.shape.box, reach * 2));
    for (const item of candidates) {
      const shared = [...copper.layers].some((l) => item.layers.has(l));
      if (item.kind === "edge") {
        if (tooClose(item.shape(), this.rules.edgeClearance(copper.net))) return { item, reason: "edge clearance" };
      } else if (item.kind === "keepout") {
        const rules = item.keepout!;
        const forbidden = copper.kind === "pad" ? rules.pads : copper.kind === "via" ? rules.vias : rules.tracks;
        if (forbidden && shared && overlap(copper.shape, item.shape())) return { item, reason: "keepout" };
      } else if (item.kind === "hole") {
        if ((item.net === "" || item.net !== copper.net) && tooClose(item.shape(), this.rules.holeClearance(copper.net, item.net))) return { item, reason: "hole clearance" };
      } else if (item.kind === "pad" || item.kind === "track" || item.kind === "via" || item.kind === "copper") {
        if (!shared) continue;
        // Copper of its own net may touch a new pad, not run under it: a pad on a via or over a
        // track end is not where a designer puts a part (and the part would count as routed).
        // A new track or via is meant to end on it.
        const sameNet = item.net !== "" && item.net === copper.net;
        if (sameNet) {
          if (copper.kind === "pad" && overlap(copper.shape, item.shape())) return { item, reason: "on its own net's copper" };
        } else if (tooClose(item.shape(), this.rules.clearance(copper.net, item.net))) {
          return { item, reason: "clearance" };
        } else if (spokes > 0 && tooClose(item.shape(), spokes)) {
          return { item, reason: "room for thermal spokes" };
        } else if (item.kind === "pad" && tooClose(item.shape(), this.spokeRoom({ shape: item.shape(), net: item.net, layers: item.layers, kind: "pad" }))) {
          // And an existing pad's spokes into its own pour keep theirs.
          return { item, reason: "room for its thermal spokes" };
        }
      }
    }
    for (const hole of holes) {
      for (const item of candidates) {
        if (item.kind === "hole" && overlap(inflate(hole, this.rules.holeToHole()), item.shape())) return { item, reason: "hole to hole" };
      }
    }
    return undefined;
  }

  /**
   * Room a new pad needs around it for thermal spokes: a zone of its own net on one of its
   * layers around its centre will join it with spokes, and KiCad's DRC counts a pad whose spokes
   * other copper cuts off as starved. 0 when no pour of its net is there.
   */
  private spokeRoom(copper: CopperShape): number {
    const box = copper.shape.box;
    const centre = { x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2 };
    let room = 0;
    for (const item of this.near({ minX: centre.x, minY: centre.y, maxX: centre.x, maxY: centre.y })) {
      if (item.kind !== "pour" || item.net !== copper.net || ![...copper.layers].some((l) => item.layers.has(l))) continue;
      if (insideSegments(centre, item.shape().paths[0]!.map((p, i, path) => [p, path[(i + 1) % path.length]!] as [Point, Point]))) room = Math.max(room, item.spokeRoom ?? 0);
    }
    return room;
  }

  /**
   * The first item a new footprint's courtyard (on `side`'s courtyard layer) would overlap: a
   * courtyard on the same side, a rule area that keeps footprints out, the board edge; or
   * "outside the outline" when its centre is off the board.
   */
  courtyardBlocker(courtyard: Shape, layer: string): Blocker | undefined {
    const copperLayer = layer.startsWith("B.") ? "B.Cu" : "F.Cu";
    const centre = { x: (courtyard.box.minX + courtyard.box.maxX) / 2, y: (courtyard.box.minY + courtyard.box.maxY) / 2 };
    if (!this.inside(centre)) return { item: { kind: "edge", what: "the board edge", net: "", layers: new Set(), box: courtyard.box, shape: () => courtyard }, reason: "outside the outline" };
    const margin = this.rules.courtyardClearance();
    const grown = margin > 0 ? inflate(courtyard, margin) : courtyard;
    const near = this.near(growBox(courtyard.box, margin));
    // Another part's courtyard is the likeliest cause and the clearest to name: it goes first.
    const court = near.find((item) => item.kind === "courtyard" && item.layers.has(layer) && overlap(grown, item.shape()));
    if (court) return { item: court, reason: "courtyard" };
    for (const item of near) {
      if (item.kind === "keepout" && item.keepout!.footprints && item.layers.has(copperLayer) && overlap(courtyard, item.shape())) return { item, reason: "keepout" };
      if (item.kind === "edge" && overlap(courtyard, item.shape())) return { item, reason: "edge" };
    }
    return undefined;
  }

  /** The first silkscreen or pad a new silkscreen item on `layer` would print over. */
  silkBlocker(silk: Shape, layer: string): Blocker | undefined {
    const copperLayer = layer.startsWith("B.") ? "B.Cu" : "F.Cu";
    for (const item of this.near(silk.box)) {
      if (item.kind === "silk" && item.layers.has(layer) && overlap(silk, item.shape())) return { item, reason: "silkscreen" };
      if (item.kind === "pad" && item.layers.has(copperLayer) && overlap(silk, item.shape())) return { item, reason: "silkscreen over a pad" };
    }
    return undefined;
  }

  /** The first silkscreen a new pad on `copperLayer` would sit under. */
  padUnderSilk(pad: Shape, copperLayer: string): Blocker | undefined {
    const layer = copperLayer === "B.Cu" ? "B.SilkS" : "F.SilkS";
    for (const item of this.near(pad.box)) {
      if (item.kind === "silk" && item.layers.has(layer) && overlap(pad, item.shape())) return { item, reason: "silkscreen over a pad" };
    }
    return undefined;
  }

  /** Whether any footprint's courtyard is on `layer` (does the board carry parts on the back?). */
  hasCourtyardOn(layer: string): boolean {
    return this.items.some((item, index) => item.kind === "courtyard" && item.layers.has(layer) && !this.removed.has(index));
  }
}
