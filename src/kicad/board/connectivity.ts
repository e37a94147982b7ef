/**
 * Which copper of a net is joined, as KiCad's connectivity joins it: pads, tracks, arcs and vias
 * whose copper meets on a layer they share (a track that ends anywhere on a pad, not only at its
 * centre), and zone fills, which join whatever copper of their net they touch on their layer (a
 * pad on a pour joins it by its thermal spokes). Each net's copper falls into islands; a net of
 * n islands needs n − 1 more connections, which is what KiCad's DRC lists as unconnected items
 * and its ratsnest draws. An island of pour alone is isolated copper, not an island here.
 *
 * The fills are the saved ones: what KiCad would show before it refills.
 */
import Flatbush from "flatbush";
import {
  boxesOverlap,
  boxOf,
  clipToBox,
  growBox,
  inflate,
  insidePath,
  overlap,
  pathArea,
  type ShapeMm,
} from "./clearance/geometry.ts";
import { segmentsTouch } from "../../util/segments.ts";
import { copperLayers, footprintItems, sharesLayer, trackItems, type BoardItem } from "./clearance/items.ts";
import { boardZones, zoneFills, type Zone } from "./zones/zones.ts";
import type { BBox, Board, PointMm } from "./model.ts";

/** One piece of a net's copper. */
export interface CopperPiece {
  kind: "pad" | "track" | "via" | "fill";
  /** "C3.2" for a pad; the item's description otherwise. */
  name: string;
  layers: ReadonlySet<string>;
  box: BBox;
  /** Where a ratsnest line can end on it: a pad's or via's centre, a track's ends, a fill's first point. */
  anchors: PointMm[];
  /** A fill's outline. */
  outline?: IndexedOutline;
  /** A pad's, track's or via's outline; a fill is tested by its `outline`'s edges instead. */
  shape?: () => ShapeMm;
  /** A whole fill's zone id and the index of its filled polygon in the zone. */
  fill?: { zone: string; index: number };
}

export interface NetIslands {
  net: string;
  /** The net's copper in islands: pieces joined among themselves, and to nothing else of the net. */
  islands: CopperPiece[][];
}

/** How much a fill is grown to meet copper that only touches it (a thermal spoke meets its pad at the pad's edge). */
const TOUCH = 0.005;

/** Which copper `netIslands` looks at, when not the whole board's. */
export interface IslandScope {
  /**
   * Only copper in this box, fills cut at its edges: a local view, cheap on a big board, in
   * which copper joined only outside the box is apart. Two views of one box compare.
   */
  within?: BBox;
  /** Footprints whose pads are left out: parts just placed, not yet the board's copper. */
  without?: ReadonlySet<string>;
  /** Tracks and vias left out, by id: routes just laid, to see the board as it was before them. */
  withoutCopper?: ReadonlySet<string>;
}

/** How far from a footprint's anchor its pads may reach, mm: farther footprints are not read for a box. */
export const FOOTPRINT_REACH = 25;

/** The islands of each net that has copper, for the nets `wanted` (every net when absent). */
export function netIslands(board: Board, wanted?: (net: string) => boolean, scope: IslandScope = {}): NetIslands[] {
  // A piece of pour that touches nothing else of its net is isolated copper (a DRC warning of
  // its own), not a connection left open: KiCad's ratsnest leaves it out, and so do these.
  return [...netCopper(board, wanted, scope)].map(([net, pieces]) => ({
    net,
    islands: islandsOf(pieces).filter((island) => island.some((piece) => piece.kind !== "fill")),
  }));
}

/**
 * The pieces of fill of the zones `zones` (by id) that join nothing else of their net, no pad,
 * track or via, nor a fill that does: what DRC reports as isolated copper, and what KiCad's
 * filler removes as islands. Only those overlapping one of `near`; each as its zone's id and the
 * index of its filled polygon, with its area, mm², and its net, layer and the middle of its box.
 */
export function isolatedFills(board: Board, zones: ReadonlySet<string>, near: BBox[]): IsolatedFill[] {
  const candidates = boardZones(board.root)
    .filter((z) => zones.has(z.id) && !z.ruleArea && z.net !== "")
    .flatMap((zone) =>
      zoneFills(zone).flatMap((fill, index) => {
        if (fill.points.length < 3) return [];
        const piece = fillPiece(zone, fill.layer, [fill.points], index);
        return near.some((box) => boxesOverlap(box, piece.box)) ? [{ net: zone.net, piece }] : [];
      }),
    );
  if (candidates.length === 0) return [];
  const nets = new Set(candidates.map((c) => c.net));
  // Most pieces meet a pad, track or via of their net near the change, and are joined: reading
  // the net's copper over the whole board (seconds on vme-wren) is left for the rest.
  const local = netCopper(
    board,
    (net) => nets.has(net),
    {
      within: boxOf(
        near.map((b) => [
          { x: b.minX, y: b.minY },
          { x: b.maxX, y: b.maxY },
        ]),
      ),
    },
    false,
  );
  const open = new Set(
    candidates
      .filter(
        ({ net, piece }) =>
          !(local.get(net) ?? []).some((item) => sharesLayer(piece.layers, item.layers) && meet(piece, item)),
      )
      .map(({ piece }) => fillKey(piece.fill!)),
  );
  if (open.size === 0) return [];
  return [...netCopper(board, (net) => nets.has(net))].flatMap(([net, pieces]) =>
    islandsOf(pieces)
      .filter((island) => island.every((piece) => piece.kind === "fill"))
      .flat()
      .flatMap((piece) =>
        piece.fill && open.has(fillKey(piece.fill))
          ? [
              {
                ...piece.fill,
                area: pathArea(piece.outline!.rings[0]!),
                net,
                layer: [...piece.layers][0]!,
                at: centre(piece.box),
              },
            ]
          : [],
      ),
  );
}

/** A piece of a zone's fill that joins nothing of its net (`isolatedFills`). */
export interface IsolatedFill {
  zone: string;
  /** Which of the zone's filled polygons it is. */
  index: number;
  area: number;
  net: string;
  layer: string;
  at: PointMm;
}

const fillKey = ({ zone, index }: { zone: string; index: number }) => `${zone} ${index}`;

/** The copper of the nets `wanted`, in pieces, by net; without `fills`, their pads, tracks and vias only. */
function netCopper(
  board: Board,
  wanted?: (net: string) => boolean,
  { within, without, withoutCopper }: IslandScope = {},
  fills = true,
): Map<string, CopperPiece[]> {
  const copper = copperLayers(board);
  const byNet = new Map<string, CopperPiece[]>();
  const add = (net: string, piece: CopperPiece) => {
    if (net === "" || (wanted && !wanted(net)) || (within && !boxesOverlap(piece.box, within))) return;
    const list = byNet.get(net);
    if (list) list.push(piece);
    else byNet.set(net, [piece]);
  };
  for (const fp of within ? board.footprintsAt(growBox(within, FOOTPRINT_REACH)) : board.footprints()) {
    if (without?.has(fp.ref)) continue;
    for (const item of footprintItems(fp.node, copper))
      if (item.kind === "pad" && item.layers.size > 0)
        add(item.net, itemPiece(item, "pad", `${fp.ref}.${item.pad ?? ""}`));
  }
  for (const item of trackItems(board, copper, within))
    if (!(item.id && withoutCopper?.has(item.id)))
      add(item.net, itemPiece(item, item.kind === "via" ? "via" : "track", item.what));
  if (!fills) return byNet;
  for (const zone of boardZones(board.root)) {
    if (zone.ruleArea || zone.net === "" || (within && !boxesOverlap(zone.box, within))) continue;
    zoneFills(zone).forEach((fill, index) => {
      if (fill.points.length < 3) return;
      for (const rings of within ? clipToBox(fill.points, within) : [[fill.points]]) {
        if (rings[0]!.length < 3) continue;
        add(zone.net, fillPiece(zone, fill.layer, rings, within ? undefined : index));
      }
    });
  }
  return byNet;
}

/** A fill of `zone` on `layer` as a piece; `index`, its filled polygon's, when it is the whole of one. */
function fillPiece(zone: Zone, layer: string, rings: PointMm[][], index?: number): CopperPiece {
  return {
    kind: "fill",
    name: `the ${zone.net} pour on ${layer}`,
    layers: new Set([layer]),
    box: boxOf(rings),
    anchors: [rings[0]![0]!],
    outline: new IndexedOutline(rings),
    ...(index === undefined ? {} : { fill: { zone: zone.id, index } }),
  };
}

function itemPiece(item: BoardItem, kind: CopperPiece["kind"], name: string): CopperPiece {
  return {
    kind,
    name,
    layers: item.layers,
    box: item.box,
    anchors: item.ends ?? [centre(item.box)],
    shape: () => item.shape(),
  };
}

/**
 * Pieces joined where their copper meets on a shared layer (union–find over an R-tree of their
 * boxes): first the pads, tracks and vias among themselves, then the fills, so a fill is tested
 * against an island once it has met one of its pieces, not against each of them.
 */
function islandsOf(pieces: CopperPiece[]): CopperPiece[][] {
  const parent = pieces.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const index = new Flatbush(pieces.length);
  for (const p of pieces) index.add(p.box.minX - TOUCH, p.box.minY - TOUCH, p.box.maxX + TOUCH, p.box.maxY + TOUCH);
  index.finish();
  for (const fills of [false, true]) {
    pieces.forEach((a, i) => {
      if ((a.kind === "fill") !== fills) return;
      for (const j of index.search(a.box.minX - TOUCH, a.box.minY - TOUCH, a.box.maxX + TOUCH, a.box.maxY + TOUCH)) {
        const b = pieces[j]!;
        // Copper pairs once each; a fill with everything (other fills included) in the second pass.
        if (fills ? j === i || (b.kind === "fill" && j < i) : b.kind === "fill" || j <= i) continue;
        if (find(i) !== find(j) && sharesLayer(a.layers, b.layers) && meet(a, b)) parent[find(i)] = find(j);
      }
    });
  }
  return [...Map.groupBy(pieces, (_, i) => find(i)).values()];
}

/** Whether two pieces' copper meets: overlaps, or (a fill and another piece) touches. */
function meet(a: CopperPiece, b: CopperPiece): boolean {
  if (a.kind !== "fill" && b.kind !== "fill") return overlap(a.shape!(), b.shape!());
  if (a.kind === "fill" && b.kind === "fill") return fillsMeet(a.outline!, b.outline!);
  const [fill, other] = a.kind === "fill" ? [a, b] : [b, a];
  // Most copper in a pour sits on it (a via, a track's end, a solidly joined pad): a point test.
  // A pad joined by thermal spokes has its centre in the gap; only that needs the outlines.
  const outline = fill.outline!;
  if (other.anchors.some((p) => outline.contains(p))) return true;
  const shape = inflate(other.shape!(), TOUCH);
  const { minX, minY, maxX, maxY } = shape.box;
  // Else an edge of the fill crosses into it (the spokes' ends); a whole outline of the fill
  // inside it (a small island on a big pad) has its first point there.
  return (
    outline.edgesIn(minX, minY, maxX, maxY).some(([a, b]) => segmentMeets(a, b, shape)) ||
    shape.paths.some((path) => insidePath(outline.first, path))
  );
}

/** Whether two fills (of one net, on one layer: zones that overlap) share copper. */
function fillsMeet(a: IndexedOutline, b: IndexedOutline): boolean {
  if (a.contains(b.first) || b.contains(a.first)) return true;
  return a
    .edgesIn(-Infinity, -Infinity, Infinity, Infinity)
    .some(([p, q]) =>
      b
        .edgesIn(Math.min(p.x, q.x), Math.min(p.y, q.y), Math.max(p.x, q.x), Math.max(p.y, q.y))
        .some(([r, t]) => segmentsTouch(p, q, r, t)),
    );
}

/** Whether segment a–b has a point in `shape`: an end inside it, or a crossing with one of its edges. */
function segmentMeets(a: PointMm, b: PointMm, shape: ShapeMm): boolean {
  if (shape.paths.some((path) => insidePath(a, path) || insidePath(b, path))) return true;
  return shape.paths.some((path) => path.some((c, i) => segmentsTouch(a, b, c, path[(i + 1) % path.length]!)));
}

/**
 * A fill's outline (a pour may have tens of thousands of points) with its edges in an R-tree:
 * a point test counts the crossings of a ray to the right over the edges on its row, and a
 * piece of copper is tested against the edges near it only. A fill cut out of a window may
 * have holes: its rings are the outline, then the holes, and the test is even-odd over all.
 */
class IndexedOutline {
  private index?: { tree: Flatbush; edges: [PointMm, PointMm][] };

  constructor(readonly rings: readonly PointMm[][]) {}

  get first(): PointMm {
    return this.rings[0]![0]!;
  }

  contains(p: PointMm): boolean {
    let inside = false;
    for (const [a, b] of this.edgesIn(p.x, p.y, Infinity, p.y))
      if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
    return inside;
  }

  edgesIn(minX: number, minY: number, maxX: number, maxY: number): [PointMm, PointMm][] {
    if (!this.index) {
      const edges = this.rings.flatMap((ring) =>
        ring.map((a, i): [PointMm, PointMm] => [a, ring[(i + 1) % ring.length]!]),
      );
      const tree = new Flatbush(edges.length);
      for (const [a, b] of edges)
        tree.add(Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y));
      tree.finish();
      this.index = { tree, edges };
    }
    const { tree, edges } = this.index;
    return tree.search(minX, minY, maxX, maxY).map((i) => edges[i]!);
  }
}

function centre(box: BBox): PointMm {
  return { x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2 };
}

/**
 * How one filled polygon of a zone joins its net's copper, to ask how many islands the net would
 * fall into were the polygon cut into pieces (zones/pour-splits.ts). A pour cut in a neck whose
 * two sides still join the long way round (through another layer's pour, by vias) is not cut
 * for DRC, and a piece that holds no copper of the net joins nothing: KiCad's filler drops it.
 * The net's copper is read once, over the whole board.
 */
export class FillJoins {
  /** The net's islands with the polygon whole. */
  readonly islands: number;
  /** The copper the polygon touches, each with its island without the polygon. */
  private readonly touching: { piece: CopperPiece; island: number }[];
  /** Per island without the polygon, whether it holds copper other than fill. */
  private readonly holdsCopper: boolean[];
  private readonly layer: string;

  constructor(
    board: Board,
    private readonly zone: Zone,
    index: number,
  ) {
    const pieces = (netCopper(board, (net) => net === zone.net).get(zone.net) ?? []).filter(
      (p) => !(p.fill?.zone === zone.id && p.fill.index === index),
    );
    const groups = islandsOf(pieces);
    const islandOf = new Map(groups.flatMap((group, i) => group.map((p): [CopperPiece, number] => [p, i])));
    this.holdsCopper = groups.map((group) => group.some((p) => p.kind !== "fill"));
    const fill = zoneFills(zone)[index]!;
    this.layer = fill.layer;
    const whole = fillPiece(zone, fill.layer, [fill.points]);
    this.touching = pieces
      .filter(
        (p) => boxesOverlap(growBox(p.box, TOUCH), whole.box) && sharesLayer(whole.layers, p.layers) && meet(whole, p),
      )
      .map((piece) => ({ piece, island: islandOf.get(piece)! }));
    this.islands = this.count([this.touching.map((t) => t.island)]);
  }

  /** The net's islands with the polygon replaced by `pieces`, each its outline and then its holes. */
  islandsWith(pieces: PointMm[][][]): number {
    return this.count(
      pieces.map((rings) => {
        const piece = fillPiece(this.zone, this.layer, rings);
        return this.touching
          .filter((t) => boxesOverlap(growBox(t.piece.box, TOUCH), piece.box) && meet(piece, t.piece))
          .map((t) => t.island);
      }),
    );
  }

  /** The islands that hold copper once each of `joins` (islands one piece of fill touches) is one. */
  private count(joins: number[][]): number {
    const parent = this.holdsCopper.map((_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
      return i;
    };
    for (const [first, ...rest] of joins) for (const i of rest) parent[find(i)] = find(first!);
    const roots = new Set<number>();
    this.holdsCopper.forEach((has, i) => has && roots.add(find(i)));
    return roots.size;
  }
}
