/**
 * Finding the spot for a footprint the way a designer would: every grid position of the search
 * window, on each allowed side and at each quarter turn, ranked by the ratsnest it would add
 * (its pads to the existing copper of their nets) plus its distance to its anchor, then tried in
 * that order against the board's obstacles (kicad/board/clearance/) and the pours its pads would
 * cut in two (zones/pour-splits.ts). The first that is clear wins, but for one where its pads
 * would leave a pour a strip DRC calls too narrow
 * (zones/narrow-strips.ts), which ranks as if `STRIP_PENALTY` farther; when none is clear, the
 * items that blocked the best candidates are what the caller reports.
 */
import { cloneNode, child, children, childText, num, type SList } from "../sexpr/index.ts";
import type { BBox, Board, PointMm } from "./model.ts";
import type { Side } from "./footprint/instance.ts";
import { flipFootprint, moveFootprint } from "./footprint/instance.ts";
import { footprintItems, type SpokeFrame } from "./clearance/items.ts";
import { boxGap, boxOf, inflate, innerBox, rectangle, translate, type ShapeMm } from "./clearance/geometry.ts";
import { Occupancy } from "./clearance/occupancy.ts";
import type { Blocker, BoardObstacles } from "./clearance/obstacles.ts";
import type { BoardRules } from "./clearance/rules.ts";
import type { NetCopper } from "./ratsnest.ts";
import type { Laid } from "./route/route.ts";
import { stripWatch } from "./zones/narrow-strips.ts";
import { splitWatch } from "./zones/pour-splits.ts";

export interface BoardSpot {
  x: number;
  y: number;
  rotation: number;
  side: Side;
  /** Gap between the courtyard and the anchor's, mm (0 without an anchor). */
  distance: number;
  /** Total ratsnest length from the new pads to the existing copper of their nets, mm. */
  ratsnest: number;
  /** False when the search asked whether its pads could be connected and no clear spot tried could. */
  connectable?: false;
  /** True when its pads would leave another net's pour a strip DRC calls too narrow, and no spot that leaves none ranked near it. */
  strip?: true;
  /** Set by placement when the spot is far from the pin the part serves: how far, and what fills the nearer spots. */
  far?: string;
}

/** A footprint as it would sit at the origin on one side at one rotation. */
interface Variant {
  side: Side;
  rotation: number;
  courtyards: { shape: ShapeMm; layer: string }[];
  pads: {
    shape: ShapeMm;
    net: string;
    layers: ReadonlySet<string>;
    holes: ShapeMm[];
    centre: PointMm;
    spokeFrame?: SpokeFrame;
  }[];
  silk: { shape: ShapeMm; layer: string }[];
}

export interface SearchRequest {
  /** The footprint's tree, any side and rotation (a board instance or one made from the library). */
  footprint: SList;
  /** Nets its pads will carry, by pad number (a board instance's own nets when absent). */
  padNets?: Map<string, string>;
  /** Sides to try, the preferred first (the others cost `SIDE_PENALTY`). */
  sides: Side[];
  /** The rotation tried first; the other quarter turns cost `TURN_PENALTY` each. */
  rotation: number;
  /** Only `rotation` (a spot asked for in one orientation), no other quarter turns. */
  fixedRotation?: boolean;
  /** The courtyard it belongs next to. */
  anchor?: BBox;
  /** Farthest courtyard gap from the anchor, mm; the whole board when absent. */
  reach?: number;
  /**
   * The routes that would connect the pads (board coordinates, with their nets) at a clear
   * spot, undefined when they could not be; the first `TRIALS` clear spots are asked, and when
   * none passes the first clear one is taken.
   */
  connectable?: (pads: SpotPad[]) => Laid[] | undefined;
  /** Spots not to take again, nor any within `radius` mm of one on its side (a spot whose dependants could not be connected). */
  avoid?: (Pick<BoardSpot, "x" | "y" | "side"> & { radius: number })[];
}

/** A pad of a footprint at a candidate spot. */
export interface SpotPad {
  shape: ShapeMm;
  net: string;
  layers: ReadonlySet<string>;
}

/** How many clear spots are asked whether their pads could be connected (each costs a route search). */
const TRIALS = 24;
/** How far apart the spots asked are, mm (two grid steps): the very next step over is mostly boxed in the same way. */
const TRIAL_SPACING = 0.5;

export interface SearchResult {
  spot?: BoardSpot;
  /** The routes `connectable` planned for its pads there. */
  routes?: Laid[];
  /** What stopped the best-ranked candidates (those ranked above the spot, when there is one), most frequent first. */
  blockers: { blocker: Blocker; count: number }[];
}

/**
 * A clear spot whose pads would leave another net's pour a strip under the board's minimum
 * connection width ranks as if this much farther, mm: a designer walks a few millimetres to keep
 * DRC clean (on multichannel's flooded back an 0603 resistor beside its LED leaves one, beside
 * the IC a little way off none), but not across the board.
 */
const STRIP_PENALTY = 5;
/** Each quarter turn away from the preferred rotation costs this much, mm. */
const TURN_PENALTY = 0.5;
/** The side not preferred costs this much, mm. */
const SIDE_PENALTY = 2;
/** Candidate positions per variant on a whole-board search (the step grows to keep to it). */
const WHOLE_BOARD_POSITIONS = 40_000;
/**
 * A free area is searched in steps of at least its longer side over this: an area of 25 mm or
 * less keeps the 0.25 mm step, a larger one needs no finer placing than a hundredth of itself,
 * and each check of it meets more of the board. On a 2 m board a 1 m area is tried at a few
 * dozen spots, not tens of thousands.
 */
const AREA_STEPS = 100;
/** The best-ranked failed candidates whose blockers are reported. */
const REPORTED = 60;
/**
 * After this many blocked spots (past the reported ones) a search draws the occupancy raster, a
 * few tens of ms: a search that long is one through a crowded part of the board.
 */
const RASTER_AFTER = 2_000;
/** How deep inside a new pad or courtyard a board item must reach for the raster to count it, mm: an overlap the exact check sees too. */
const CORE_DEPTH = 0.005;
const OUTER_COPPER = ["F.Cu", "B.Cu"];

/** The grid a board's footprints sit on, and its origin (`(setup (grid_origin …))`). */
export function boardGrid(board: Board): { origin: PointMm; step: number } {
  const setup = child(board.root, "setup");
  const origin = setup ? child(setup, "grid_origin") : undefined;
  const o = { x: (origin && num(origin, 1)) ?? 0, y: (origin && num(origin, 2)) ?? 0 };
  const coords = children(board.root, "footprint").flatMap((fp) => {
    const at = child(fp, "at");
    return at ? [(num(at, 1) ?? 0) - o.x, (num(at, 2) ?? 0) - o.y] : [];
  });
  const onGrid = (g: number) => coords.filter((c) => Math.abs(c / g - Math.round(c / g)) < 1e-3).length;
  const step =
    [2.54, 1.27, 1, 0.635, 0.5, 0.25, 0.127, 0.1, 0.05, 0.025].find(
      (g) => coords.length > 0 && onGrid(g) >= coords.length * 0.6,
    ) ?? 0.05;
  return { origin: o, step };
}

/** The footprint at the origin, on `side`, turned to `rotation`, with its pads' nets. */
function variantOf(
  canonical: SList,
  side: Side,
  rotation: number,
  padNets: Map<string, string> | undefined,
  copper: string[],
): Variant {
  const node = cloneNode(canonical);
  if (side === "back") flipFootprint(node);
  moveFootprint(node, { x: 0, y: 0, rotation });
  return variantAsPlaced(node, side, rotation, padNets, copper);
}

/** A footprint tree as it stands, as a variant tried at (0, 0). */
function variantAsPlaced(
  node: SList,
  side: Side,
  rotation: number,
  padNets: Map<string, string> | undefined,
  copper: string[],
): Variant {
  const items = footprintItems(node, copper);
  const holes = new Map<string, ShapeMm[]>();
  for (const h of items.filter((i) => i.kind === "hole"))
    holes.set(h.pad ?? "", [...(holes.get(h.pad ?? "") ?? []), h.shape()]);
  return {
    side,
    rotation,
    courtyards: items
      .filter((i) => i.kind === "courtyard")
      .map((c) => ({ shape: c.shape(), layer: [...c.layers][0]! })),
    pads: items
      .filter((i) => i.kind === "pad")
      .map((p) => ({
        shape: p.shape(),
        net: padNets ? (padNets.get(p.pad ?? "") ?? "") : p.net,
        layers: p.layers,
        holes: holes.get(p.pad ?? "") ?? [],
        centre: p.ends![0]!,
        spokeFrame: p.spokeFrame,
      })),
    silk: items.filter((i) => i.kind === "silk").map((s) => ({ shape: s.shape(), layer: [...s.layers][0]! })),
  };
}

/** The footprint brought to the front, unturned, at the origin: what every variant starts from. */
function canonicalOf(footprint: SList): SList {
  const node = cloneNode(footprint);
  if ((childText(node, "layer") ?? "").startsWith("B.")) flipFootprint(node);
  moveFootprint(node, { x: 0, y: 0, rotation: 0 });
  return node;
}

/** The first item that keeps `v` from sitting at (x, y), or undefined when it fits. */
function blockerAt(obstacles: BoardObstacles, v: Variant, x: number, y: number): Blocker | undefined {
  for (const court of v.courtyards) {
    const b = obstacles.courtyardBlocker(translate(court.shape, x, y), court.layer);
    if (b) return b;
  }
  for (const pad of v.pads) {
    const shape = translate(pad.shape, x, y);
    const grown = (by: number) => translate(inflate(pad.shape, by), x, y);
    const b = obstacles.copperBlocker(
      { shape, net: pad.net, layers: pad.layers, kind: "pad", spokeFrame: pad.spokeFrame, grown },
      pad.holes.map((h) => translate(h, x, y)),
    );
    if (b) return b;
    for (const layer of pad.layers) {
      if (layer !== "F.Cu" && layer !== "B.Cu") continue;
      const under = obstacles.padUnderSilk(shape, layer);
      if (under) return under;
    }
  }
  for (const silk of v.silk) {
    const b = obstacles.silkBlocker(translate(silk.shape, x, y), silk.layer);
    if (b) return b;
  }
  return undefined;
}

/**
 * The legality of a spot: what keeps `footprint` (any side and rotation; its nets from
 * `padNets`, else its own) from standing at a given x, y on `side` at `rotation` (the board's
 * obstacles, or a pour of another net its pads would cut in two), undefined when it fits. The
 * one check a search makes of each spot, and the one `place_footprint` at given coordinates
 * makes, so a spot one offers the other accepts.
 */
export function spotBlocker(
  board: Board,
  obstacles: BoardObstacles,
  footprint: SList,
  side: Side,
  rotation: number,
  padNets?: Map<string, string>,
): (x: number, y: number) => Blocker | undefined {
  const v = variantOf(canonicalOf(footprint), side, rotation, padNets, obstacles.copper);
  const cuts = pourCuts(board, obstacles.rules);
  return (x, y) => blockerAt(obstacles, v, x, y) ?? cuts(padsAt(v, x, y));
}

/**
 * A spot whose pads would cut a pour of another net in two is as much in DRC's way as copper
 * (zones/pour-splits.ts): the pour, as what blocks `pads`.
 */
function pourCuts(board: Board, rules: BoardRules): (pads: SpotPad[]) => Blocker | undefined {
  const splits = splitWatch(board, rules);
  return (pads) => {
    const pour = splits(pads);
    return pour && { item: pour, reason: "its pads would cut it in two" };
  };
}

/** The pads of a variant at x, y. */
function padsAt(v: Variant, x: number, y: number): SpotPad[] {
  return v.pads.map((p) => ({ shape: translate(p.shape, x, y), net: p.net, layers: p.layers }));
}

interface Candidate {
  v: Variant;
  x: number;
  y: number;
  distance: number;
  ratsnest: number;
  score: number;
}

/** Searches the board for the best spot for a footprint; see the module comment. */
export function searchSpot(
  board: Board,
  obstacles: BoardObstacles,
  copperOf: NetCopper,
  request: SearchRequest,
): SearchResult {
  const canonical = canonicalOf(request.footprint);
  const turns = (request.fixedRotation ? [0] : [0, 90, 180, 270]).map((t) => ({
    rotation: (((request.rotation + t) % 360) + 360) % 360,
    penalty: (t === 0 ? 0 : t === 180 ? 2 : 1) * TURN_PENALTY,
  }));
  const variants = request.sides.flatMap((side, i) =>
    turns.map((t) => ({
      v: variantOf(canonical, side, t.rotation, request.padNets, obstacles.copper),
      penalty: t.penalty + (i === 0 ? 0 : SIDE_PENALTY),
    })),
  );
  return rankAndTry(board, obstacles, copperOf, variants, request);
}

/**
 * The free area of `width` × `height` mm (a courtyard of that size, either way round) nearest
 * `anchor` on `side`: what `find_space` answers for a size, with the same courtyard obstacles as
 * placement. Copper may run under it, as under a part's body: whether a given part's pads fit
 * there is what a search for that footprint (`searchSpot`) answers.
 */
export function searchArea(
  board: Board,
  obstacles: BoardObstacles,
  width: number,
  height: number,
  anchor: BBox,
  side: Side,
  reach: number,
): SearchResult {
  const layer = side === "back" ? "B.CrtYd" : "F.CrtYd";
  const variants = [0, 90].map((rotation) => ({
    v: {
      side,
      rotation,
      courtyards: [{ shape: rectangle({ x: 0, y: 0 }, width, height, rotation), layer }],
      pads: [],
      silk: [],
    },
    penalty: rotation === 0 ? 0 : TURN_PENALTY,
  }));
  return rankAndTry(board, obstacles, undefined, variants, {
    anchor,
    reach,
    step: Math.max(width, height) / AREA_STEPS,
  });
}

/** `step`: the finest step the positions tried may take, mm (the board's grid sets it otherwise). */
function rankAndTry(
  board: Board,
  obstacles: BoardObstacles,
  copperOf: NetCopper | undefined,
  variants: { v: Variant; penalty: number }[],
  request: Pick<SearchRequest, "anchor" | "reach" | "connectable" | "avoid"> & { step?: number },
): SearchResult {
  const grid = boardGrid(board);
  const outline = board.edgeCutsBBox();
  if (!outline) return { blockers: [] };
  const window =
    request.anchor && request.reach !== undefined ? clip(grow(request.anchor, request.reach), outline) : outline;
  const area = (window.maxX - window.minX) * (window.maxY - window.minY);
  const wanted = Math.max(
    request.step ?? 0,
    request.reach !== undefined ? 0.25 : Math.max(0.25, Math.sqrt(area / WHOLE_BOARD_POSITIONS)),
  );
  const step = grid.step * Math.max(1, Math.ceil(wanted / grid.step - 1e-9));
  const candidates: Candidate[] = [];
  const x0 = grid.origin.x + Math.ceil((window.minX - grid.origin.x) / step) * step;
  const y0 = grid.origin.y + Math.ceil((window.minY - grid.origin.y) / step) * step;
  for (const { v, penalty } of variants) {
    const court = v.courtyards.length
      ? boxOf(v.courtyards.flatMap((c) => c.shape.paths))
      : { minX: 0, minY: 0, maxX: 0, maxY: 0 };
    for (let x = x0; x <= window.maxX; x += step) {
      for (let y = y0; y <= window.maxY; y += step) {
        const placed = { minX: court.minX + x, minY: court.minY + y, maxX: court.maxX + x, maxY: court.maxY + y };
        if (
          placed.minX < outline.minX ||
          placed.maxX > outline.maxX ||
          placed.minY < outline.minY ||
          placed.maxY > outline.maxY
        )
          continue;
        const distance = request.anchor ? boxGap(placed, request.anchor) : 0;
        if (request.reach !== undefined && distance > request.reach) continue;
        const ratsnest = v.pads.reduce(
          (sum, p) =>
            sum + (p.net && copperOf ? copperOf.distance(p.net, { x: p.centre.x + x, y: p.centre.y + y }) : 0),
          0,
        );
        candidates.push({ v, x: round(x), y: round(y), distance, ratsnest, score: ratsnest + distance + penalty });
      }
    }
  }
  candidates.sort((a, b) => a.score - b.score || a.y - b.y || a.x - b.x);
  const tally = new Map<string, { blocker: Blocker; count: number }>();
  let tried = 0;
  let firstClear: Candidate | undefined;
  const trials: Candidate[] = [];
  // Clear spots that would leave a strip: held back (`deferred`, best first), each taken once the
  // candidates rank `STRIP_PENALTY` below it.
  const stripped = new Set<Candidate>();
  const deferred: Candidate[] = [];
  // With a spot, the blockers are what took the better-ranked spots (a far spot says why).
  const found = (c: Candidate, connectable?: boolean, routes?: Laid[]): SearchResult => ({
    spot: {
      x: c.x,
      y: c.y,
      rotation: c.v.rotation,
      side: c.v.side,
      distance: round(c.distance),
      ratsnest: round(c.ratsnest),
      ...(connectable === false ? { connectable } : {}),
      ...(stripped.has(c) ? { strip: true as const } : {}),
    },
    ...(routes ? { routes } : {}),
    blockers: [...tally.values()].sort((a, b) => b.count - a.count),
  });
  // A clear spot is taken, or, with `connectable`, taken when its pads could be connected;
  // "stop" once `TRIALS` were asked.
  const take = (c: Candidate, pads = padsAt(c.v, c.x, c.y)): SearchResult | "next" | "stop" => {
    if (!request.connectable) return found(c);
    firstClear ??= c;
    const routes = request.connectable(pads);
    if (routes) return found(c, true, routes);
    trials.push(c);
    return trials.length >= TRIALS ? "stop" : "next";
  };
  // The held-back spots that rank, with their penalty, no worse than `score`, taken in turn.
  const takeDeferred = (score: number): SearchResult | "next" | "stop" => {
    while (deferred.length > 0 && deferred[0]!.score + STRIP_PENALTY <= score) {
      const taken = take(deferred.shift()!);
      if (taken !== "next") return taken;
    }
    return "next";
  };
  const leavesStrip = stripWatch(board, obstacles.rules);
  const cuts = pourCuts(board, obstacles.rules);
  // What keeps a spot, or else its pads there, worked out once for the checks that follow.
  const check = (c: Candidate): { blocker: Blocker } | { pads: SpotPad[] } => {
    const blocker = blockerAt(obstacles, c.v, c.x, c.y);
    if (blocker) return { blocker };
    const pads = padsAt(c.v, c.x, c.y);
    const cut = cuts(pads);
    return cut ? { blocker: cut } : { pads };
  };
  let stopped = false;
  // Once the reported blockers are known, only whether a spot is blocked matters: a long search
  // turns most spots down from the occupancy raster, unasked (clearance/occupancy.ts).
  // `tried` counts the blocked spots asked.
  let covered: ((c: Candidate) => boolean) | undefined;
  for (const c of candidates) {
    const held = takeDeferred(c.score);
    if (held === "stop") {
      stopped = true;
      break;
    }
    if (held !== "next") return held;
    // A spot by one already asked is not asked again, clear or not, and once one is clear the
    // blockers are not reported: such a spot need not be checked at all.
    const within = (t: { x: number; y: number }, radius: number) => Math.hypot(t.x - c.x, t.y - c.y) < radius;
    if (
      trials.some((t) => t.v.side === c.v.side && within(t, TRIAL_SPACING)) ||
      deferred.some((t) => t.v.side === c.v.side && within(t, TRIAL_SPACING)) ||
      request.avoid?.some((t) => t.side === c.v.side && within(t, t.radius))
    )
      continue;
    if (tried >= RASTER_AFTER) {
      covered ??= coveredSpots(
        obstacles,
        variants.map((v) => v.v),
        window,
      );
      if (covered(c)) continue;
    }
    const checked = check(c);
    if ("pads" in checked) {
      if (leavesStrip(checked.pads)) {
        stripped.add(c);
        if (deferred.length < TRIALS) deferred.push(c);
        continue;
      }
      const taken = take(c, checked.pads);
      if (taken === "stop") {
        stopped = true;
        break;
      }
      if (taken !== "next") return taken;
      continue;
    }
    const { blocker } = checked;
    if (tried++ < REPORTED) {
      const key = `${blocker.item.what}|${blocker.reason}`;
      const entry = tally.get(key);
      if (entry) entry.count++;
      else tally.set(key, { blocker, count: 1 });
    }
  }
  if (!stopped) {
    const held = takeDeferred(Number.POSITIVE_INFINITY);
    if (held !== "next" && held !== "stop") return held;
  }
  if (firstClear) return found(firstClear, false);
  return { blockers: [...tally.values()].sort((a, b) => b.count - a.count) };
}

/**
 * Whether a candidate is certainly blocked by what the occupancy raster of `window` (grown by
 * the variants' reach) shows: a courtyard of the board under its courtyard, or copper of the
 * board of another net under one of its pads on an outer layer.
 */
function coveredSpots(obstacles: BoardObstacles, variants: Variant[], window: BBox): (c: Candidate) => boolean {
  const cores = new Map(
    variants.map((v) => [
      v,
      [
        ...v.courtyards.map((c) => ({ layer: c.layer, box: innerBox(c.shape, CORE_DEPTH) })),
        ...v.pads.flatMap((p) =>
          [...p.layers]
            .filter((l) => OUTER_COPPER.includes(l))
            .map((layer) => ({ layer, box: innerBox(p.shape, CORE_DEPTH) })),
        ),
      ].filter((core): core is { layer: string; box: BBox } => core.box !== undefined),
    ]),
  );
  const parts = [...cores.values()].flat();
  const reach = Math.max(
    0,
    ...parts.map(({ box }) => Math.max(Math.abs(box.minX), Math.abs(box.minY), Math.abs(box.maxX), Math.abs(box.maxY))),
  );
  const nets = new Set(variants.flatMap((v) => v.pads.map((p) => p.net)));
  const occupancy = Occupancy.of(obstacles, grow(window, reach), [...new Set(parts.map((p) => p.layer))], nets);
  return (c) =>
    cores.get(c.v)!.some(({ layer, box }) =>
      occupancy.covers(layer, {
        minX: box.minX + c.x,
        minY: box.minY + c.y,
        maxX: box.maxX + c.x,
        maxY: box.maxY + c.y,
      }),
    );
}

/** What blocked a search, in words: "the courtyard of U3 (courtyard), the board edge (edge clearance)". */
export function describeBlockers(blockers: SearchResult["blockers"], limit = 4): string {
  if (blockers.length === 0) return "no position on the board's grid is inside the outline";
  return blockers
    .slice(0, limit)
    .map(({ blocker }) => `${blocker.item.what} (${blocker.reason})`)
    .join(", ");
}

function grow(b: BBox, by: number): BBox {
  return { minX: b.minX - by, minY: b.minY - by, maxX: b.maxX + by, maxY: b.maxY + by };
}

function clip(a: BBox, b: BBox): BBox {
  return {
    minX: Math.max(a.minX, b.minX),
    minY: Math.max(a.minY, b.minY),
    maxX: Math.min(a.maxX, b.maxX),
    maxY: Math.min(a.maxY, b.maxY),
  };
}

function round(v: number): number {
  return Math.round(v * 10000) / 10000;
}
