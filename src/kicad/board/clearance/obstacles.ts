/**
 * What new copper and new footprints must keep clear of on a board, indexed in grid buckets so
 * a check looks only at the items near it. Built once per board state (the run keeps it while
 * only placement changes the board, agent/context.ts); a footprint placed or moved is taken out
 * with `remove` and put back with `add` once its tree is where it goes.
 *
 * The checks are KiCad's DRC tests that a new item can fail: copper clearance to other nets'
 * copper (net class, board minimum and custom rules; a net's own copper is no obstacle to it),
 * hole clearance, hole to hole, copper to the board edge, courtyard overlap on the same side (a
 * mounting hole's on both, items.ts), rule areas, thermal spokes where a pour joins a pad by
 * them, and, so the part is legible, silkscreen on the board, off pads and exposed copper and
 * off other silkscreen. Each check answers with the item in the way, named for a person.
 */
import type { BBox, Board, PointMm } from "../model.ts";
import {
  boardItems,
  copperLayers,
  drawn,
  footprintBoardItems,
  footprintItems,
  outlineSegments,
  sharesLayer,
  type BoardItem,
  type SpokeFrame,
} from "./items.ts";
import { cutSpokes, MIN_SPOKES, spokeCorridors, spokeTips, type SpokedPad } from "./spokes.ts";
import {
  boxesOverlap,
  boxesWithin,
  boxOf,
  growBox,
  inflate,
  insidePath,
  insideSegments,
  overlap,
  type ShapeMm,
} from "./geometry.ts";
import type { BoardRules } from "./rules.ts";
import { children, type SList } from "../../sexpr/index.ts";

/** The clearance new copper of `net` keeps to another net's `item`: the rules', or the item's own when larger. */
export function clearanceTo(rules: BoardRules, net: string, item: BoardItem): number {
  return Math.max(rules.clearance(net, item.net), item.clearance ?? 0);
}

/** The clearance new copper of `net` keeps to the hole `item`: the rules', or its pad's own when larger. */
export function holeClearanceTo(rules: BoardRules, net: string, item: BoardItem): number {
  return Math.max(rules.holeClearance(net, item.net), item.clearance ?? 0);
}

/** The item that stops a new one, and why. */
export interface Blocker {
  item: BoardItem;
  /** "clearance", "hole clearance", "edge clearance", "courtyard", "keepout", "silkscreen", "outside the outline". */
  reason: string;
}

/** A copper shape to check: a pad, a track or a via of `net` on `layers`. */
export interface CopperShape {
  shape: ShapeMm;
  net: string;
  layers: ReadonlySet<string>;
  /** What it is, for the keepout rules: pads, tracks and vias are kept out separately. */
  kind: "pad" | "track" | "via";
  /** A pad's spoke directions, for the thermal spokes a pour of its net will join it by. */
  spokeFrame?: SpokeFrame;
  /**
   * `shape` grown by a distance, when the caller can make it cheaper than an offset of `shape`:
   * a spot search grows each pad once at the origin and moves the result to every spot.
   */
  grown?: (by: number) => ShapeMm;
}

/**
 * Another pad of `pad`'s net on its layers: a spoke running into it ends in that pad's own
 * clearance from the pour, not in fill, so KiCad does not count it (antenna-eval's mounting
 * holes, a ring of small via pads around a large one).
 */
function ownPad(pad: Pick<BoardItem, "net" | "layers">): (item: BoardItem) => boolean {
  return (i) => i !== pad && i.kind === "pad" && i.net === pad.net && sharesLayer(pad.layers, i.layers);
}

/** Copper that cuts the spokes of a pad of `net` on `layers`: other nets' pads, tracks, vias and copper there. */
function cutting(net: string, layers: ReadonlySet<string>): (item: BoardItem) => boolean {
  return (i) =>
    (i.kind === "pad" || i.kind === "track" || i.kind === "via" || i.kind === "copper") &&
    i.net !== net &&
    sharesLayer(layers, i.layers);
}

/** A pad joined to one pour by spokes, and their corridors (`spokes.ts`). */
interface PadSpokes {
  spoked: SpokedPad;
  corridors: ShapeMm[];
}

/** A copper shape grown by `by`: its own offset when it has one (`CopperShape.grown`). */
function grow(copper: CopperShape, by: number): ShapeMm {
  return copper.grown ? copper.grown(by) : inflate(copper.shape, by);
}

export class BoardObstacles {
  readonly copper: string[];
  readonly outline: [PointMm, PointMm][];
  private readonly items: BoardItem[] = [];
  private readonly removed = new Set<number>();
  /** The largest clearance an item of the board keeps of its own (a pad's override). */
  private largestOwnClearance = 0;
  /** Each pad's spokes as `spokesOf` found them (null: none). */
  private readonly spokes = new WeakMap<BoardItem, PadSpokes[]>();
  /** Every item. */
  private readonly every = new BucketIndex();
  /** What a courtyard can hit (courtyards, rule areas, the edge): most spots fail here, so it scans no tracks. */
  private readonly forCourtyards = new BucketIndex();
  /** What copper can hit: all but courtyards, silkscreen and mask openings. */
  private readonly forCopper = new BucketIndex();
  /**
   * What copper on one outer layer can hit: its items, holes and the edge. A new pad or track is
   * on one of these, and on a board of many layers most items near it are on the others.
   */
  private readonly forOuterCopper = new Map([
    ["F.Cu", new BucketIndex()],
    ["B.Cu", new BucketIndex()],
  ]);

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

  /**
   * Adds copper planned for a footprint that is not written yet (the routes its pads would
   * take), under its reference: `remove` takes it out with the footprint.
   */
  addPlanned(ref: string, copper: { net: string; layers: ReadonlySet<string>; shape: ShapeMm }[]): void {
    for (const { net, layers, shape } of copper) {
      const kind = layers.size > 1 ? "via" : "track";
      this.insert(drawn({ kind, what: `a planned ${kind} of ${ref} (${net})`, net, layers, ref }, shape));
    }
  }

  /**
   * Puts footprint `fp`, a part the change adds, in place of what the index holds under its
   * reference (the copy placement tried, with its planned routes): its items as a fresh index
   * of the board has them, so the index placement used serves the routing that follows.
   */
  replace(ref: string, fp: SList): void {
    this.remove(ref);
    for (const item of footprintBoardItems(fp, this.copper)) this.insert(item);
    this.add(fp);
  }

  /** Adds copper just laid (`laidItems`). */
  addCopper(items: BoardItem[]): void {
    for (const item of items) this.insert(item);
  }

  /** Takes out the tracks and vias with these ids (copper lifted). */
  removeCopper(ids: ReadonlySet<string>): void {
    this.items.forEach((item, index) => {
      if (item.id !== undefined && ids.has(item.id)) this.removed.add(index);
    });
  }

  /** Takes a footprint's items out (the footprint about to move). */
  remove(ref: string): void {
    this.items.forEach((item, index) => {
      if (item.ref === ref && item.kind !== "keepout") this.removed.add(index);
    });
  }

  private insert(item: BoardItem): void {
    const index = this.items.push(item) - 1;
    this.largestOwnClearance = Math.max(this.largestOwnClearance, item.clearance ?? 0);
    this.every.insert(index, item.box);
    if (item.kind === "courtyard" || item.kind === "keepout" || item.kind === "edge")
      this.forCourtyards.insert(index, item.box);
    if (item.kind === "courtyard" || item.kind === "silk" || item.kind === "mask") return;
    this.forCopper.insert(index, item.box);
    for (const [layer, outer] of this.forOuterCopper)
      if (item.kind === "edge" || item.kind === "hole" || item.layers.has(layer)) outer.insert(index, item.box);
  }

  /** Items whose box meets `box` and that `keep` accepts, each once, in the order they were added. */
  near(box: BBox, keep: (item: BoardItem) => boolean = () => true, index = this.every): BoardItem[] {
    const out: BoardItem[] = [];
    index.visit(box, (i) => {
      if (this.removed.size > 0 && this.removed.has(i)) return;
      const item = this.items[i]!;
      if (boxesOverlap(item.box, box) && keep(item)) out.push(item);
    });
    return out;
  }

  /** Every item `keep` accepts (footprints taken out with `remove` left out). */
  all(keep: (item: BoardItem) => boolean): BoardItem[] {
    return this.items.filter((item, index) => !this.removed.has(index) && keep(item));
  }

  /** True when `p` lies inside the board outline (an outline with cut-outs counts them out). */
  inside(p: PointMm): boolean {
    return insideSegments(p, this.outline);
  }

  /**
   * The first item new copper would come too close to: other nets' copper (and copper of no
   * net) on a shared layer, holes of other nets, the board edge, a rule area that keeps such
   * copper out. Undefined when it is clear. `holes` are the new item's own drills.
   */
  copperBlocker(copper: CopperShape, holes: ShapeMm[] = []): Blocker | undefined {
    // By the item's box first: most items near a spot are farther than their clearance, and
    // neither their shape nor the spot's offset need be drawn for them.
    const tooClose = (item: BoardItem, distance: number) =>
      boxesWithin(copper.shape.box, item.box, distance) && overlap(grow(copper, distance), item.shape());
    const [layer, ...more] = copper.layers;
    const index = (more.length === 0 && layer !== undefined && this.forOuterCopper.get(layer)) || this.forCopper;
    // Only items within the largest clearance can be too close; most spots are turned down by
    // one of them, and the wider look the thermal spokes need is left for the spots that are not.
    const candidates = this.near(
      growBox(copper.shape.box, Math.max(this.rules.largestClearance(), this.largestOwnClearance)),
      undefined,
      index,
    );
    for (const item of candidates) {
      const shared = sharesLayer(copper.layers, item.layers);
      if (item.kind === "edge") {
        if (tooClose(item, this.rules.edgeClearance(copper.net))) return { item, reason: "edge clearance" };
      } else if (item.kind === "keepout") {
        const rules = item.keepout!;
        const forbidden = copper.kind === "pad" ? rules.pads : copper.kind === "via" ? rules.vias : rules.tracks;
        if (forbidden && shared && overlap(copper.shape, item.shape())) return { item, reason: "keepout" };
      } else if (item.kind === "hole") {
        if (
          (item.net === "" || item.net !== copper.net) &&
          tooClose(item, holeClearanceTo(this.rules, copper.net, item))
        )
          return { item, reason: "hole clearance" };
      } else if (item.kind === "pad" || item.kind === "track" || item.kind === "via" || item.kind === "copper") {
        // Copper of its own net is no obstacle, as DRC has it: a capacitor may sit on the track
        // of the rail it decouples, its pad joined to it there.
        if (!shared || (item.net !== "" && item.net === copper.net)) continue;
        if (tooClose(item, clearanceTo(this.rules, copper.net, item))) return { item, reason: "clearance" };
      }
    }
    for (const hole of holes) {
      for (const item of candidates) {
        if (item.kind === "hole" && overlap(inflate(hole, this.rules.holeToHole()), item.shape()))
          return { item, reason: "hole to hole" };
      }
    }
    const spoked = this.spokedPads(copper);
    const spokeReach = Math.max(
      0,
      ...spoked.map(
        (s) => Math.max(...s.frame.half) + s.thermal.gap + s.thermal.thickness + s.thermal.clearance + s.thermal.width,
      ),
    );
    return this.spokeBlocker(
      copper,
      spoked,
      this.near(growBox(copper.shape.box, Math.max(spokeReach, 1) * 2), undefined, index),
    );
  }

  /**
   * What leaves a pad with too few thermal spokes (`spokes.ts`) in one of its pours: the new
   * pad's own, cut off by the copper around it, or an existing pad's, cut off by the new copper.
   */
  private spokeBlocker(copper: CopperShape, spoked: SpokedPad[], candidates: BoardItem[]): Blocker | undefined {
    for (const own of spoked) {
      // A new pad keeps its whole thermal ring clear: KiCad drops fill too thin to keep, and
      // a spoke the corridors count as free can still come out starved.
      const { gap, clearance, thickness } = own.thermal;
      const ring = grow(copper, gap + clearance + thickness);
      const item = candidates.find((i) => cutting(copper.net, own.layers)(i) && overlap(ring, i.shape()));
      if (item) return { item, reason: "room for thermal spokes" };
      // A spoke ending in the thermal gap of another pad of its net meets no fill (multichannel's
      // capacitor beside a ground pin); the part's own other pad cuts one more, as a 0603's does.
      const tips = spokeTips(own);
      const gapped = candidates
        .filter(ownPad({ net: copper.net, layers: own.layers }))
        .map((pad) => ({ pad, cuts: cutSpokes(tips, [{ ...pad, shape: () => inflate(pad.shape(), gap) }]) }));
      const dead = new Set(gapped.flatMap((g) => [...g.cuts]));
      if (dead.size > 0 && tips.length - dead.size - 1 < MIN_SPOKES)
        return { item: gapped.find((g) => g.cuts.size > 0)!.pad, reason: "room for thermal spokes" };
    }
    for (const pad of candidates.filter((i) => i.kind === "pad" && cutting(copper.net, copper.layers)(i))) {
      for (const theirs of this.spokesOf(pad)) {
        if (!sharesLayer(copper.layers, theirs.spoked.layers)) continue;
        const byNew = cutSpokes(theirs.corridors, [{ ...pad, shape: () => copper.shape }]);
        if (byNew.size === 0) continue;
        const before = this.cutBefore(pad, theirs);
        if (
          [...byNew].some((k) => !before.has(k)) &&
          theirs.corridors.length - new Set([...before, ...byNew]).size < MIN_SPOKES
        )
          return { item: pad, reason: "room for its thermal spokes" };
      }
    }
    return undefined;
  }

  /**
   * The spokes of `pad` (an item of the board) that no other net's copper cuts off yet, each
   * corridor grown by its zone's clearance (`spokes.ts`) and on the layers of its pour: where new
   * copper of another net keeps out so the pad keeps its spokes. Empty when no pour joins it by
   * spokes.
   */
  freeSpokes(pad: BoardItem): { corridor: ShapeMm; layers: ReadonlySet<string> }[] {
    return this.spokesOf(pad).flatMap((theirs) => {
      const cut = this.cutBefore(pad, theirs);
      return theirs.corridors.flatMap((corridor, k) =>
        cut.has(k) ? [] : [{ corridor, layers: theirs.spoked.layers }],
      );
    });
  }

  /** The spokes of `pad` into one of its pours that the board's copper already cuts off. */
  private cutBefore(pad: BoardItem, theirs: PadSpokes): Set<number> {
    const { gap, thickness, clearance, width } = theirs.spoked.thermal;
    const reach = growBox(pad.box, gap + thickness + clearance + width);
    const others = cutting(pad.net, theirs.spoked.layers);
    return new Set([
      ...cutSpokes(
        theirs.corridors,
        this.near(reach, (i) => i !== pad && others(i)),
      ),
      ...cutSpokes(
        spokeTips(theirs.spoked),
        this.near(reach, (i) => i !== pad && ownPad({ net: pad.net, layers: theirs.spoked.layers })(i)),
      ),
    ]);
  }

  /** The box the spoke corridors of `pad` (an item of the board) lie in; undefined when no pour joins it by spokes. */
  spokeBox(pad: BoardItem): BBox | undefined {
    const corridors = this.spokesOf(pad).flatMap((s) => s.corridors);
    return corridors.length > 0 ? boxOf(corridors.flatMap((c) => c.paths)) : undefined;
  }

  /**
   * A pad of the board with each pour that joins it by spokes and their corridors; empty when
   * none does. Kept per pad: the pours do not change while parts are placed and routed, and
   * every spot and route grid near the pad asks again.
   */
  private spokesOf(pad: BoardItem): PadSpokes[] {
    let known = this.spokes.get(pad);
    if (known === undefined) {
      known = this.spokedPads({
        shape: pad.shape(),
        net: pad.net,
        layers: pad.layers,
        kind: "pad",
        spokeFrame: pad.spokeFrame,
      }).map((spoked) => ({ spoked, corridors: spokeCorridors(spoked) }));
      this.spokes.set(pad, known);
    }
    return known;
  }

  /** A pad with each pour of its net that will join it by spokes, on the layers they share. */
  private spokedPads(copper: CopperShape): SpokedPad[] {
    if (copper.kind !== "pad" || !copper.spokeFrame || copper.net === "") return [];
    const box = copper.shape.box;
    const centre = { x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2 };
    const out: SpokedPad[] = [];
    for (const item of this.near({ minX: centre.x, minY: centre.y, maxX: centre.x, maxY: centre.y })) {
      if (item.kind !== "pour" || !item.thermal || item.net !== copper.net || !sharesLayer(copper.layers, item.layers))
        continue;
      if (item.thermal.throughHoleOnly && !copper.spokeFrame.through) continue;
      if (!insidePath(centre, item.shape().paths[0]!)) continue;
      out.push({
        shape: copper.shape,
        frame: copper.spokeFrame,
        layers: new Set([...copper.layers].filter((l) => item.layers.has(l))),
        // The fill keeps the net class's clearance too, where the zone's own is smaller (antenna-eval's is 0).
        thermal: { ...item.thermal, clearance: Math.max(item.thermal.clearance, this.rules.clearance(copper.net, "")) },
      });
    }
    return out;
  }

  /**
   * The first item a new footprint's courtyard (on `side`'s courtyard layer) would overlap: a
   * courtyard on the same side, a rule area that keeps footprints out, the board edge; or
   * "outside the outline" when its centre is off the board.
   */
  courtyardBlocker(courtyard: ShapeMm, layer: string): Blocker | undefined {
    const copperLayer = layer.startsWith("B.") ? "B.Cu" : "F.Cu";
    const centre = {
      x: (courtyard.box.minX + courtyard.box.maxX) / 2,
      y: (courtyard.box.minY + courtyard.box.maxY) / 2,
    };
    if (!this.inside(centre))
      return {
        item: {
          kind: "edge",
          what: "the board edge",
          net: "",
          layers: new Set(),
          box: courtyard.box,
          shape: () => courtyard,
        },
        reason: "outside the outline",
      };
    const margin = this.rules.courtyardClearance();
    const grown = margin > 0 ? inflate(courtyard, margin) : courtyard;
    const near = this.near(growBox(courtyard.box, margin), undefined, this.forCourtyards);
    // Another part's courtyard is the likeliest cause and the clearest to name: it goes first.
    const court = near.find(
      (item) => item.kind === "courtyard" && item.layers.has(layer) && overlap(grown, item.shape()),
    );
    if (court) return { item: court, reason: "courtyard" };
    for (const item of near) {
      if (
        item.kind === "keepout" &&
        item.keepout!.footprints &&
        item.layers.has(copperLayer) &&
        overlap(courtyard, item.shape())
      )
        return { item, reason: "keepout" };
      if (item.kind === "edge" && overlap(courtyard, item.shape())) return { item, reason: "edge" };
    }
    return undefined;
  }

  /**
   * The first thing a new silkscreen item on `layer` would print over or off: other silkscreen,
   * a pad or another mask opening (exposed copper clips it, KiCad's "silkscreen clipped by
   * solder mask"), or the board edge.
   */
  silkBlocker(silk: ShapeMm, layer: string): Blocker | undefined {
    const side = layer.startsWith("B.") ? "B" : "F";
    const centre = { x: (silk.box.minX + silk.box.maxX) / 2, y: (silk.box.minY + silk.box.maxY) / 2 };
    if (!this.inside(centre))
      return {
        item: { kind: "edge", what: "the board edge", net: "", layers: new Set(), box: silk.box, shape: () => silk },
        reason: "silkscreen off the board",
      };
    for (const item of this.near(silk.box)) {
      if (item.kind === "silk" && item.layers.has(layer) && overlap(silk, item.shape()))
        return { item, reason: "silkscreen" };
      if (item.kind === "pad" && item.layers.has(`${side}.Cu`) && overlap(silk, item.shape()))
        return { item, reason: "silkscreen over a pad" };
      if (item.kind === "mask" && item.layers.has(`${side}.Mask`) && overlap(silk, item.shape()))
        return { item, reason: "silkscreen over exposed copper" };
      if (item.kind === "edge" && overlap(silk, item.shape())) return { item, reason: "silkscreen off the board" };
    }
    return undefined;
  }

  /** The first silkscreen a new pad on `copperLayer` would sit under. */
  padUnderSilk(pad: ShapeMm, copperLayer: string): Blocker | undefined {
    const layer = copperLayer === "B.Cu" ? "B.SilkS" : "F.SilkS";
    for (const item of this.near(pad.box)) {
      if (item.kind === "silk" && item.layers.has(layer) && overlap(pad, item.shape()))
        return { item, reason: "silkscreen over a pad" };
    }
    return undefined;
  }
}

/** Edge length of a grid bucket, mm. */
const BUCKET = 2.5;
/**
 * An item whose box meets more buckets than this (a 640 mm square) is kept out of the buckets:
 * an outline drawn as one rectangle on a 2 m board would otherwise fill 640,000 of them in every
 * index, and every query would walk them. No board of ordinary size has one.
 */
const WIDE = 65_536;

/** The buckets a box meets, as inclusive bucket columns and rows. */
interface BucketRange {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** A bucket's key: sorting keys as numbers orders buckets by column, then row. */
const bucketKey = (x: number, y: number) => (x + 32768) * 65536 + (y + 32768);

/**
 * Item numbers in grid buckets. A query stamps the items it saw, so an item in several buckets
 * is visited once, and visits buckets in one fixed order, so what a query finds first does not
 * depend on which index holds it.
 */
class BucketIndex {
  private readonly buckets = new Map<number, number[]>();
  /** Items wider than `WIDE` buckets, each with its box, in the order they were added. */
  private readonly wide: { index: number; box: BBox }[] = [];
  /** The keys of `buckets` in visiting order; dropped when a bucket is added. */
  private sortedKeys: number[] | undefined;
  private seen = new Uint32Array(0);
  private query = 0;

  insert(index: number, box: BBox): void {
    const range = rangeOf(box);
    if ((range.x1 - range.x0 + 1) * (range.y1 - range.y0 + 1) > WIDE) {
      this.wide.push({ index, box });
      return;
    }
    if (this.seen.length <= index) {
      const seen = new Uint32Array((index + 1) * 2);
      seen.set(this.seen);
      this.seen = seen;
    }
    for (let x = range.x0; x <= range.x1; x++) {
      for (let y = range.y0; y <= range.y1; y++) {
        const key = bucketKey(x, y);
        const bucket = this.buckets.get(key);
        if (bucket) bucket.push(index);
        else {
          this.buckets.set(key, [index]);
          this.sortedKeys = undefined;
        }
      }
    }
  }

  /**
   * Calls `found` once with each item number in the buckets `box` meets, the wide items whose
   * box meets it first. A box wider than the buckets in use (a large area asked on a large
   * board) walks those buckets, in the same order, instead of every empty one it covers.
   */
  visit(box: BBox, found: (index: number) => void): void {
    for (const item of this.wide) if (boxesOverlap(item.box, box)) found(item.index);
    const query = ++this.query;
    const take = (key: number) => {
      const bucket = this.buckets.get(key);
      if (!bucket) return;
      for (const index of bucket) {
        if (this.seen[index] === query) continue;
        this.seen[index] = query;
        found(index);
      }
    };
    const { x0, x1, y0, y1 } = rangeOf(box);
    if ((x1 - x0 + 1) * (y1 - y0 + 1) <= this.buckets.size) {
      // A plain loop: queries run by the million.
      for (let x = x0; x <= x1; x++) for (let y = y0; y <= y1; y++) take(bucketKey(x, y));
      return;
    }
    this.sortedKeys ??= [...this.buckets.keys()].sort((a, b) => a - b);
    for (const key of this.sortedKeys) {
      const x = Math.floor(key / 65536) - 32768;
      const y = (key % 65536) - 32768;
      if (x >= x0 && x <= x1 && y >= y0 && y <= y1) take(key);
    }
  }
}

function rangeOf(box: BBox): BucketRange {
  return {
    x0: Math.floor(box.minX / BUCKET),
    x1: Math.floor(box.maxX / BUCKET),
    y0: Math.floor(box.minY / BUCKET),
    y1: Math.floor(box.maxY / BUCKET),
  };
}
