/**
 * Whether a change cut one of the board's pours in two. A new track of another net laid across
 * a pour's narrow neck leaves, once the pour is refilled, the copper beyond the neck joined to
 * the rest of its net by nothing: KiCad's DRC then reports a missing connection between two
 * pieces of the zone (Blaustahl's back GND pour, cut by the track between a new LED and its
 * resistor).
 *
 * The net's islands are compared around the new parts (`netIslands` within a box, cheap on a
 * big board; copper taken away, where a moved part was, only ever joins a pour) before the
 * routes (the board as the routes found it: their tracks and vias left out, nothing refilled
 * yet) and after the refill: copper of the board's that was joined before
 * and is apart after is cut off, unless the whole board's copper still joins it the long way
 * round, which the local view cannot see and the whole net's islands then settle.
 *
 * A route can also leave a piece of another net's pour joined to nothing, with no pad in it: a
 * track across sweep-half-swept's gnd pour boxed a corner of it in. Where the zone keeps its
 * islands, KiCad's DRC reports each as isolated copper. So the pours' pieces that join nothing
 * (`isolatedFills`) beside the routes are counted before and after too, and one more is a cut.
 */
import { boxesOverlap, boxOf, growBox } from "../clearance/geometry.ts";
import { footprintItems } from "../clearance/items.ts";
import { isolatedFills, netIslands, type CopperPiece, type IsolatedFill } from "../connectivity.ts";
import type { BBox, Board } from "../model.ts";
import { boardZones, zoneOnLayer, type NewCopper } from "../zones/zones.ts";
import { MAX_ROUTE_LENGTH } from "./route.ts";

export interface PourCut {
  net: string;
  /**
   * The board's copper cut off from the rest of the net, for a person: "pad 4 of U4", "a via of
   * GND at …"; or, for `islands`, where each new piece of the pour that joins nothing is.
   */
  cutOff: string[];
  /** Whether the routes left pieces of the pour joined to nothing rather than copper cut off. */
  islands?: true;
}

/** The net's islands around a change, taken before it, to compare with those after it. */
export class PourWatch {
  private readonly region: BBox | undefined;
  private readonly nets: Set<string>;
  /** Per net, the islands before the change, as keys of the board's copper (pads, tracks, vias). */
  private readonly before = new Map<string, string[][]>();
  /** Beside the routes, where a piece of pour they box in would be (each grown by `ISLAND_REACH`). */
  private readonly beside: BBox[];
  /** The ids of the pours there, and their pieces that joined nothing before. */
  private readonly pours: Set<string>;
  private readonly isolatedBefore: IsolatedFill[];

  /**
   * `refs`: the parts just placed; `laid`: the tracks and vias just routed for them, not refilled
   * yet. The region takes in both: a route across the board cuts where it runs.
   */
  constructor(board: Board, refs: string[], laid: NewCopper[]) {
    const boxes = [
      ...refs
        .flatMap((ref) => {
          const fp = board.footprint(ref);
          return fp ? footprintItems(fp.node, ["F.Cu", "B.Cu"]).filter((i) => i.kind === "pad") : [];
        })
        .map((p) => p.box),
      ...laid.map((l) => l.box),
    ];
    this.region = boxes.length > 0 ? growBox(boxOf(boxes.map(corners)), MAX_ROUTE_LENGTH) : undefined;
    const region = this.region;
    const zones = region
      ? boardZones(board.root).filter((z) => z.filled && !z.ruleArea && z.net !== "" && boxesOverlap(z.box, region))
      : [];
    this.nets = new Set(zones.map((z) => z.net));
    this.beside = laid.map((l) => growBox(l.box, ISLAND_REACH));
    // Pours of other nets on a track's layer: a route's own net's pour joins what it meets, and a
    // via's round pad boxes nothing in (reading an inner plane's pieces costs seconds on vme-wren).
    this.pours = new Set(
      zones
        .filter((z) =>
          laid.some(
            (l, i) =>
              l.net !== z.net &&
              l.layers !== "all" &&
              boxesOverlap(z.box, this.beside[i]!) &&
              [...l.layers].some((layer) => zoneOnLayer(z, layer)),
          ),
        )
        .map((z) => z.id),
    );
    this.isolatedBefore = this.pours.size > 0 ? isolatedFills(board, this.pours, this.beside) : [];
    if (!region || this.nets.size === 0) return;
    for (const { net, islands } of netIslands(board, (n) => this.nets.has(n), {
      within: region,
      without: new Set(refs),
      withoutCopper: new Set(laid.flatMap((l) => l.ids ?? [])),
    }))
      this.before.set(
        net,
        islands.map((island) => island.filter((p) => p.kind !== "fill").map(key)),
      );
  }

  /** The pours the change has cut, each with what it cut off. */
  cuts(board: Board): PourCut[] {
    return [...this.netsCut(board), ...this.islandsLeft(board)];
  }

  /**
   * The pours whose refilled fill beside the routes has more pieces that join nothing than
   * before, with where the pieces not there before are.
   */
  private islandsLeft(board: Board): PourCut[] {
    if (this.pours.size === 0) return [];
    const after = Map.groupBy(isolatedFills(board, this.pours, this.beside), (p) => p.zone);
    const before = Map.groupBy(this.isolatedBefore, (p) => p.zone);
    return [...after].flatMap(([zone, pieces]) => {
      const was = before.get(zone) ?? [];
      if (pieces.length <= was.length) return [];
      const fresh = pieces.filter((p) => !was.some((w) => Math.hypot(w.at.x - p.at.x, w.at.y - p.at.y) < SAME_PIECE));
      return [
        {
          net: pieces[0]!.net,
          cutOff: fresh.map((p) => `${p.at.x.toFixed(1)}, ${p.at.y.toFixed(1)} on ${p.layer}`),
          islands: true as const,
        },
      ];
    });
  }

  private netsCut(board: Board): PourCut[] {
    if (!this.region || this.before.size === 0) return [];
    const after = new Map(
      netIslands(board, (n) => this.before.has(n), { within: this.region }).map(({ net, islands }) => [
        net,
        islandOf(islands),
      ]),
    );
    const found: PourCut[] = [];
    for (const [net, islands] of this.before) {
      const now = after.get(net) ?? new Map<string, number>();
      let whole: Map<string, number> | undefined;
      const cutOff = new Set<string>();
      for (const island of islands) {
        // The island's copper by where it is now; copper lifted since is in none.
        const apart = Map.groupBy(
          island.filter((k) => now.has(k)),
          (k) => now.get(k)!,
        );
        if (apart.size < 2) continue;
        const [main, ...rest] = [...apart.values()].sort((a, b) => b.length - a.length);
        whole ??= islandOf(netIslands(board, (n) => n === net)[0]?.islands ?? []);
        for (const part of rest)
          if (whole.get(part[0]!) !== whole.get(main![0]!)) for (const k of part) cutOff.add(nameOf(k));
      }
      if (cutOff.size > 0) found.push({ net, cutOff: [...cutOff] });
    }
    return found;
  }
}

/** A piece of copper by what and where it is: the same pad, track or via before and after a change. */
function key(piece: CopperPiece): string {
  const { minX, minY, maxX, maxY } = piece.box;
  // A pad's piece is named "U4.4": for a person, "pad 4 of U4".
  const dot = piece.name.indexOf(".");
  const name = piece.kind === "pad" ? `pad ${piece.name.slice(dot + 1)} of ${piece.name.slice(0, dot)}` : piece.name;
  return `${name}@${[minX, minY, maxX, maxY].map((v) => v.toFixed(4)).join(",")}`;
}

/** How far from a route a piece of pour it boxed in reaches, mm: past its clearance and thermal gap. */
const ISLAND_REACH = 1;

/** How close two pieces' centres are when they are the same piece before and after a refill, mm. */
const SAME_PIECE = 0.5;

function nameOf(key: string): string {
  return key.slice(0, key.lastIndexOf("@"));
}

function corners(b: BBox) {
  return [
    { x: b.minX, y: b.minY },
    { x: b.maxX, y: b.maxY },
  ];
}

/** Each non-fill piece's island, by its key. */
function islandOf(islands: CopperPiece[][]): Map<string, number> {
  const of = new Map<string, number>();
  islands.forEach((island, i) => {
    for (const piece of island) if (piece.kind !== "fill") of.set(key(piece), i);
  });
  return of;
}
