/**
 * `kicad/board/route/` routes what a change adds: each pad of a new footprint to the existing
 * copper of its net, with tracks and vias that keep the board's rules (`clearance/rules.ts`:
 * net class track width and clearance, via size and drill, the board minimums and the custom
 * rules). Existing copper is never moved, cut or deleted: new tracks only end on it.
 *
 * A pad is connected when it already touches copper of its net, or when it sits in a pour of
 * its net on its own layer (it connects through the pour once the zone is refilled; the caller
 * checks that after the refill). Otherwise it is routed on a grid (`grid.ts`) to the nearest
 * copper of its net — a pad, a track, a via, or a via down into a pour of its net on another
 * layer (an inner plane) — on the outer layers, within `MAX_ROUTE_LENGTH`. A route the grid
 * finds is checked exactly against the obstacle model before it is written. A route that would
 * cut a pour of another net in two (`zones/pour-splits.ts`) is searched again with its way
 * through the pour barred. What cannot be routed is left with its reason, for a person.
 */
import {
  boxesOverlap,
  boxOf,
  circle,
  growBox,
  inflate,
  overlap,
  polygon,
  shapeOf,
  stroke,
  type ShapeMm,
} from "../clearance/geometry.ts";
import { footprintItems, sharesLayer, type BoardItem } from "../clearance/items.ts";
import { BoardObstacles, clearanceTo, holeClearanceTo, type Blocker } from "../clearance/obstacles.ts";
import type { BoardRules } from "../clearance/rules.ts";
import {
  boardZones,
  distanceToPolygon,
  filledPolygons,
  insideOutline,
  insidePolygon,
  zoneFills,
  zoneOnLayer,
  type NewCopper,
  type Zone,
} from "../zones/zones.ts";
import type { BBox, Board, PointMm } from "../model.ts";
import { splitWatch } from "../zones/pour-splits.ts";
import { RouteGrid, type GridPoint } from "./grid.ts";
import { writeTrack, writeVia } from "./write.ts";

/**
 * Longest automatic route, mm of track (a via counts as `VIA_COST`). Past this a designer would
 * rather place the part again or route it by hand than accept a detour.
 */
export const MAX_ROUTE_LENGTH = 15;
/** How many times a route that would cut a pour is searched again, its way barred each time. */
const CUT_RETRIES = 2;
/** A via costs this much track, mm: one is taken only when it saves a detour. */
const VIA_COST = 1.5;
/** Grid pitch, mm. */
const STEP = 0.1;
/** Extra distance obstacles are grown by, so the straight run between free cells is clear (> STEP·√2/2). */
const MARGIN = 0.075;
/** Only the outer layers carry new tracks: inner layers are usually planes. */
const ROUTING_LAYERS = ["F.Cu", "B.Cu"];

export interface PadRoute {
  pad: string;
  net: string;
  /** How it is connected: routed, through a pour (`zone` on `layer`), or already. */
  how: "routed" | "pour" | "connected";
  length?: number;
  vias?: number;
  /** For `pour` (and a route ending in a via into a pour): the zone and layer to check after the refill, and the copper that must meet its fill there. */
  pour?: Pour;
}

export interface PadLeft {
  pad: string;
  net: string;
  reason: string;
}

export interface RouteOutcome {
  ref: string;
  connected: PadRoute[];
  left: PadLeft[];
  /** Boxes of the new copper (tracks and vias) on their layers, for the zone refill. */
  added: NewCopper[];
  /** Ids of the tracks and vias written for it. */
  ids: string[];
}

/** New copper of this routing session, an obstacle to the next route of another net. */
export interface Laid {
  net: string;
  layers: Set<string>;
  shape: ShapeMm;
  /** A via's drill: no other via may stand within the hole-to-hole distance of it, of any net. */
  drill?: ShapeMm;
}

/** A pad (or any item of the board) as copper laid in this session's way. */
export function laidOf(item: BoardItem): Laid {
  return { net: item.net, layers: new Set(item.layers), shape: item.shape() };
}

/**
 * The pour that new copper (a route's tracks and vias, with this session's) would cut in two
 * once refilled, judged on the saved fills with the new parts' pads (`zones/pour-splits.ts`), or
 * undefined.
 */
export type PourCutJudge = (copper: Laid[]) => BoardItem | undefined;

/**
 * Routes every pad of the footprints `refs` that has a net and is not connected yet, and writes
 * the tracks and vias into the board. The obstacle model is built once for all of them. A pad
 * with no copper of its net in reach, whose net the pads of `staged` parts (the same change's,
 * left below the outline) are on, says it waits for them.
 */
export function routeFootprints(
  board: Board,
  rules: BoardRules,
  refs: string[],
  obstacles = new BoardObstacles(board, rules),
  staged: string[] = [],
): RouteOutcome[] {
  const laid: Laid[] = [];
  const outcomes: RouteOutcome[] = [];
  const work: { pad: BoardItem; outcome: RouteOutcome }[] = [];
  for (const ref of refs) {
    const outcome: RouteOutcome = { ref, connected: [], left: [], added: [], ids: [] };
    outcomes.push(outcome);
    const fp = board.footprint(ref);
    if (!fp) continue;
    for (const pad of footprintItems(fp.node, obstacles.copper))
      if (pad.kind === "pad" && pad.net !== "") work.push({ pad, outcome });
  }
  // Connections between the new parts first (an LED to its resistor): placement put them where
  // that net gets through, and the routes to the board's copper go round it afterwards.
  const nets = new Set(work.map(({ pad }) => pad.net));
  const elsewhere = new Set(
    obstacles
      .all(
        (i) =>
          nets.has(i.net) &&
          !refs.includes(i.ref ?? "") &&
          (i.kind === "pad" || i.kind === "track" || i.kind === "via"),
      )
      .map((i) => i.net),
  );
  const order = new Map(work.map(({ pad }) => [pad, elsewhere.has(pad.net) ? 1 : 0]));
  // The saved fills know nothing of the new parts: their pads cut the pours with the routes.
  const watch = splitWatch(board, rules);
  const pads = work.map(({ pad }) => laidOf(pad));
  const cuts: PourCutJudge = (copper) => watch([...pads, ...copper]);
  for (const { pad, outcome } of work.sort((a, b) => order.get(a.pad)! - order.get(b.pad)!)) {
    const number = /^pad (\S+) of /.exec(pad.what)?.[1] ?? "";
    if (/^(unconnected|Net)-\(/.test(pad.net) && !othersOnNet(obstacles, pad)) continue;
    const result = routePad(board, obstacles, rules, pad, laid, outcome, cuts);
    if ("reason" in result)
      outcome.left.push({
        pad: number,
        net: pad.net,
        reason:
          result.noCopper || onlyStagedCopper(obstacles, pad, staged)
            ? (waitingFor(obstacles, pad, staged) ?? result.reason)
            : result.reason,
      });
    else outcome.connected.push({ ...result, pad: number, net: pad.net });
  }
  // A pad left unrouted may have been reached since, by the route of a later pad of its net
  // ending on it (hexpansion's LED pad, which the resistor's route came to): it is connected.
  // Else it is tried once more, ending on its net's routes laid since (Glasgow's EEPROM: its
  // first +3V3 pin found no way to the pour, its neighbours' routes passed beside it).
  for (const { pad, outcome } of work) {
    const number = /^pad (\S+) of /.exec(pad.what)?.[1] ?? "";
    const left = outcome.left.findIndex((l) => l.pad === number && l.net === pad.net);
    if (left < 0) continue;
    if (laid.some((l) => l.net === pad.net && sharesLayer(l.layers, pad.layers) && overlap(l.shape, pad.shape()))) {
      outcome.left.splice(left, 1);
      outcome.connected.push({ pad: number, net: pad.net, how: "connected" });
    } else if (laid.some((l) => l.net === pad.net)) {
      const again = routePad(board, obstacles, rules, pad, laid, outcome, cuts);
      if ("reason" in again) continue;
      outcome.left.splice(left, 1);
      outcome.connected.push({ ...again, pad: number, net: pad.net });
    }
  }
  return outcomes;
}

/** "waits for R900, staged below the outline": the staged parts with a pad on `pad`'s net. */
function waitingFor(obstacles: BoardObstacles, pad: BoardItem, staged: string[]): string | undefined {
  const refs = [
    ...new Set(
      obstacles.all((i) => i.kind === "pad" && i.net === pad.net && staged.includes(i.ref ?? "")).map((i) => i.ref!),
    ),
  ].sort();
  if (refs.length === 0) return undefined;
  return `waits for ${refs.join(" and ")}, staged below the outline`;
}

/**
 * Whether the net's only other copper is on staged parts: a route towards them (below the
 * outline) is no way to the net, and the pad waits for them (uext-esp32-c3's LED, its resistor
 * staged, was said to be blocked by a connector pad on the way down).
 */
function onlyStagedCopper(obstacles: BoardObstacles, pad: BoardItem, staged: string[]): boolean {
  return (
    staged.length > 0 &&
    obstacles.all((i) => i.net === pad.net && i.ref !== pad.ref && i.kind !== "hole" && !staged.includes(i.ref ?? ""))
      .length === 0
  );
}

/** Whether any other copper is on the pad's net at all (a single-pad net needs no route). */
function othersOnNet(obstacles: BoardObstacles, pad: BoardItem): boolean {
  return (
    obstacles.near(growBox(pad.box, MAX_ROUTE_LENGTH), (i) => i.net === pad.net && i !== pad && i.kind !== "hole")
      .length > 0
  );
}

type PadResult = Omit<PadRoute, "pad" | "net"> | { reason: string; noCopper?: boolean };

/** How a pad would be connected: at once (touching its net's copper, or in its pour), by a checked route, or not, with the reason. */
type PadPlan =
  | Omit<PadRoute, "pad" | "net">
  | { reason: string; noCopper?: boolean }
  | { route: CopperPlan; end: GridPoint; pourAt: BuiltGrid["pourAt"] };

function routePad(
  board: Board,
  obstacles: BoardObstacles,
  rules: BoardRules,
  pad: BoardItem,
  laid: Laid[],
  outcome: RouteOutcome,
  cuts: PourCutJudge,
): PadResult {
  const planned = planPad(obstacles, rules, pad, laid, { zones: boardZones(board.root), explain: true, cuts });
  if (!("route" in planned)) return planned;
  const { route: plan, end, pourAt } = planned;
  const net = pad.net;
  const width = plan.width;
  const via = rules.via(net);
  // laidCopper lists the tracks, then the vias, in the plan's order.
  const copper = laidCopper(plan, net, rules, obstacles.copper);
  plan.tracks.forEach((track, k) => {
    const ids: string[] = [];
    for (let i = 1; i < track.points.length; i++)
      ids.push(writeTrack(board, track.points[i - 1]!, track.points[i]!, width, track.layer, net));
    outcome.added.push({ box: copper[k]!.shape.box, net, layers: copper[k]!.layers, ids });
    outcome.ids.push(...ids);
  });
  plan.vias.forEach((at, k) => {
    const id = writeVia(board, at, via.diameter, via.drill, net);
    outcome.added.push({ box: copper[plan.tracks.length + k]!.shape.box, net, layers: "all", ids: [id] });
    outcome.ids.push(id);
  });
  laid.push(...copper);
  const pour = pourAt(
    end.x,
    end.y,
    plan.endsInPour ? undefined : ROUTING_LAYERS[end.layer],
    (plan.endsInPour ? via.diameter : width) / 2,
  );
  return {
    how: "routed",
    length: Math.round(plan.length * 100) / 100,
    vias: plan.vias.length,
    ...(pour ? { pour } : {}),
  };
}

/**
 * The routes that would connect every pad of a footprint that is not on the board yet (`pads`,
 * with their nets) where they stand; undefined when a pad could not be connected. A placement
 * that would leave a pad boxed in by other nets' copper is worse than one a little farther
 * away, and the routes are in the way of the next part placed (kicad/board/placement.ts). A pad
 * whose net has no copper on the board yet (a net the change adds, its first part) has nothing
 * to be cut off from; one whose copper is out of reach (the new LED a resistor goes next to,
 * too far away) cannot be routed. `cuts` judges whether a route would cut a pour in two, with
 * the pads and whatever else the caller has placed. Nothing is written.
 */
export function connectingRoutes(
  board: Board,
  obstacles: BoardObstacles,
  rules: BoardRules,
  pads: BoardItem[],
  zones = boardZones(board.root),
  cuts?: PourCutJudge,
): Laid[] | undefined {
  // The routes planned for the pads before are in the way of the next, as they will be when
  // the pads are routed in this order.
  const routes: Laid[] = [];
  const connected = pads.every((pad) => {
    if (pad.net === "") return true;
    // Its footprint's other pads of other nets are in the way as much as any new copper (those
    // of its own net are no copper of the net's to end on: they are not routed yet).
    const siblings = pads.filter((p) => p !== pad && p.net !== pad.net).map(laidOf);
    const planned = planPad(obstacles, rules, pad, [...siblings, ...routes], { zones, explain: false, cuts });
    if ("route" in planned) routes.push(...laidCopper(planned.route, pad.net, rules, obstacles.copper));
    return !("reason" in planned) || (planned.noCopper === true && !netHasCopper(obstacles, pad, zones));
  });
  return connected ? routes : undefined;
}

/** A planned route's tracks and vias as copper in the way of the next route. */
function laidCopper(plan: CopperPlan, net: string, rules: BoardRules, copper: string[]): Laid[] {
  const via = rules.via(net);
  return [
    ...plan.tracks.map((t) => ({ net, layers: new Set([t.layer]), shape: stroke(t.points, plan.width) })),
    ...plan.vias.map((at) => ({
      net,
      layers: new Set(copper),
      shape: circle(at, via.diameter / 2),
      drill: circle(at, via.drill / 2),
    })),
  ];
}

/**
 * Whether a fill of `net` on `layer` holds copper of the net but `refs`' own (a pad's or via's
 * centre, a track's end): a fill piece that holds only the new part is an island, not a way to
 * the net (a board may keep its islands, as sweep does).
 */
export function fillJoinsNet(
  obstacles: BoardObstacles,
  fill: PointMm[],
  net: string,
  layer: string,
  refs: string[],
): boolean {
  const items = obstacles.near(
    boxOf([fill]),
    (i) =>
      i.net === net &&
      !refs.includes(i.ref ?? "") &&
      i.layers.has(layer) &&
      (i.kind === "pad" || i.kind === "via" || i.kind === "track"),
  );
  // Fill runs over tracks and vias of its net; a pad it joins by spokes that meet only its edge.
  if (items.some((i) => i.kind !== "pad" && i.ends?.some((p) => insidePolygon(fill, p)))) return true;
  const area = polygon(fill);
  return items.some((i) => i.kind === "pad" && overlap(inflate(i.shape(), 0.01), area));
}

/**
 * Whether `pad`'s net has any copper on the board but `pad`'s own footprint's (pads, tracks,
 * vias, filled zones); without `pads`, tracks, vias and zones only.
 */
function netHasCopper(obstacles: BoardObstacles, pad: BoardItem, zones: Zone[], pads = true): boolean {
  const own = obstacles.all(
    (i) =>
      i.net === pad.net && i.ref !== pad.ref && ((pads && i.kind === "pad") || i.kind === "track" || i.kind === "via"),
  );
  return own.length > 0 || zones.some((z) => z.net === pad.net && z.filled && !z.ruleArea);
}

/**
 * Whether a pad of another part touches no copper of its net: no track or via (the board's or
 * this session's) and no fill of its net's pours. Such a pad is no way to the net where the net
 * has other copper: a route ending on it (a part of an earlier run left for layout) would make
 * an island with it, never joined to the net.
 */
function joinsNothing(obstacles: BoardObstacles, pad: BoardItem, laid: Laid[], zones: Zone[]): boolean {
  const shape = pad.shape();
  const touching = obstacles.near(
    growBox(pad.box, 0.01),
    (i) => i.net === pad.net && (i.kind === "track" || i.kind === "via"),
  );
  if (touching.some((i) => overlap(inflate(i.shape(), 0.01), shape))) return false;
  if (
    laid.some((l) => l.net === pad.net && sharesLayer(l.layers, pad.layers) && overlap(inflate(l.shape, 0.01), shape))
  )
    return false;
  const centre = pad.ends?.[0];
  return !(
    centre &&
    zones.some(
      (z) =>
        z.net === pad.net &&
        [...pad.layers].some((layer) => filledPolygons(z, layer).some((fill) => insidePolygon(fill, centre))),
    )
  );
}

/** What a route plan may take as read: the board's zones, and whether a failure needs its reason in words. */
interface PlanContext {
  zones: Zone[];
  /**
   * False where only whether a pad connects matters (placement's trials): the items in the way
   * are not looked for, nor is a route across the board to copper out of the pad's reach.
   */
  explain: boolean;
  /** Whether a route would cut a pour in two: such a route is searched again, its way barred. */
  cuts?: PourCutJudge;
}

/** How `pad` would be connected: the route it would take, checked exactly against the obstacles and this session's copper. */
function planPad(
  obstacles: BoardObstacles,
  rules: BoardRules,
  pad: BoardItem,
  laid: Laid[],
  { zones: allZones, explain, cuts }: PlanContext,
): PadPlan {
  const net = pad.net;
  const centre = { x: (pad.box.minX + pad.box.maxX) / 2, y: (pad.box.minY + pad.box.maxY) / 2 };
  const padShape = pad.shape();
  const own = (i: BoardItem) =>
    i.net === net && i.ref !== pad.ref && (i.kind === "pad" || i.kind === "track" || i.kind === "via");
  const touching = obstacles
    .near(pad.box, own)
    .some((i) => sharesLayer(i.layers, pad.layers) && overlap(padShape, i.shape()));
  if (touching || laid.some((l) => l.net === net && sharesLayer(l.layers, pad.layers) && overlap(padShape, l.shape)))
    return { how: "connected" };
  // The net's zones, read once: the window, the pours and the reason all ask for them.
  const netZones = allZones.filter((z) => z.net === net && !z.ruleArea);
  const zones = netZones.filter((z) => z.filled);
  for (const zone of zones) {
    for (const layer of pad.layers) {
      if (
        filledPolygons(zone, layer).some(
          (f) => insidePolygon(f, centre) && fillJoinsNet(obstacles, f, net, layer, [pad.ref ?? ""]),
        )
      )
        return { how: "pour", pour: { zone: zone.id, layer, at: centre, copper: padShape } };
    }
  }
  const startLayers = ROUTING_LAYERS.map((l, i) => (pad.layers.has(l) ? i : -1)).filter((i) => i >= 0);
  if (startLayers.length === 0)
    return { reason: `pad on ${[...pad.layers].join(", ")}, where copperhead does not route` };
  // The net's own width first; where that finds no way (a fine-pitch pad boxed in), its class's.
  const wide = netWidth(obstacles, rules, pad);
  const narrowest = rules.trackWidth(net);
  const plan = (width: number, span?: GridSpan) =>
    planWithWidth(obstacles, rules, pad, centre, laid, width, zones, netZones, startLayers, { explain, cuts }, span);
  const planned = plan(wide);
  // A net of new parts only (an LED by a connector, its resistor by the supply): the other end
  // is out of the pad's neighbourhood, or in it with no way there short enough, and the route
  // crosses the board to it. A net of pads alone has nothing nearer to take.
  const padsOnly = () => !netHasCopper(obstacles, pad, zones, false) && !laid.some((l) => l.net === net);
  if ("reason" in planned && explain && zones.length === 0 && (planned.noCopper || padsOnly())) {
    const far = farCopper(obstacles, laid, pad, centre);
    if (far !== undefined) {
      // Its track keeps off the other nets' pours where it can. Where it cannot (sweep-half-swept
      // pours gnd over both sides), it crosses them as a designer's track does, the pour flowing
      // round it; one that cuts a pour in two is taken up again by the pour-cut watch
      // (`connect-added.ts`), as no refill would join the pour again.
      const pours = allZones
        .filter((z) => z.filled && !z.ruleArea && z.net !== net)
        .flatMap((z) =>
          ROUTING_LAYERS.flatMap((layer) => filledPolygons(z, layer).map((fill) => ({ net: z.net, layer, fill }))),
        );
      const span = spanTo(far.distance);
      const around = plan(narrowest, { ...span, pours });
      if ("route" in around) return around;
      // Only for a net of new parts: a part whose net's copper is far off is better placed again.
      if (pours.length > 0 && padsOnly()) {
        const across = plan(narrowest, span);
        if ("route" in across) return across;
      }
      return {
        reason: withInTheWay(
          `no rule-clean path to ${net} copper ${far.distance.toFixed(1)} mm away`,
          obstacles,
          pad,
          centre,
          far.at,
        ),
      };
    }
  }
  return "route" in planned || ("noCopper" in planned && planned.noCopper) || wide === narrowest
    ? planned
    : plan(narrowest);
}

/** Farthest a route goes to reach copper of its net out of its pad's neighbourhood, mm. */
const FAR_REACH = 150;
/** Cells across a wide span's half: its pitch grows with the distance, so its grid stays this size. */
const SPAN_CELLS = 400;

/**
 * A routing window wider than a pad's neighbourhood: its half width and pitch, and the longest
 * route in it, mm; with the other nets' pours its tracks and vias keep off.
 */
interface GridSpan {
  reach: number;
  step: number;
  length: number;
  pours?: { net: string; layer: string; fill: PointMm[] }[];
}

/** The span that reaches copper `distance` mm away, with room to go round what lies between. */
function spanTo(distance: number): GridSpan {
  const reach = distance + 5;
  const step = Math.max(STEP, Math.ceil((reach / SPAN_CELLS) * 20) / 20);
  return { reach, step, length: Math.max(MAX_ROUTE_LENGTH, distance * 2.5) };
}

/**
 * How far the nearest copper of `pad`'s net is (another part's pad, a track, a via, or one of
 * this run's routes), when it lies beyond the pad's neighbourhood but within `FAR_REACH`.
 */
function farCopper(
  obstacles: BoardObstacles,
  laid: Laid[],
  pad: BoardItem,
  centre: PointMm,
): { distance: number; at: PointMm } | undefined {
  const gap = (b: BBox) =>
    Math.hypot(Math.max(0, b.minX - centre.x, centre.x - b.maxX), Math.max(0, b.minY - centre.y, centre.y - b.maxY));
  const boxes = [
    ...obstacles
      .near(
        growBox(pad.box, FAR_REACH),
        (i) => i.net === pad.net && i.ref !== pad.ref && (i.kind === "pad" || i.kind === "track" || i.kind === "via"),
      )
      .map((i) => i.box),
    ...laid.filter((l) => l.net === pad.net).map((l) => l.shape.box),
  ];
  const nearest = boxes.reduce<BBox | undefined>((best, b) => (!best || gap(b) < gap(best) ? b : best), undefined);
  if (!nearest) return undefined;
  const distance = gap(nearest);
  const at = { x: (nearest.minX + nearest.maxX) / 2, y: (nearest.minY + nearest.maxY) / 2 };
  return distance > MAX_ROUTE_LENGTH * 0.5 && distance <= FAR_REACH ? { distance, at } : undefined;
}

/** How far from a connection the net's own tracks set the width of a new one, mm. */
const WIDTH_REACH = 10;

/**
 * The width of a new track of `pad`'s net: its net class's, raised to the widest track the net
 * already has within `WIDTH_REACH` of the pad, as a designer keeps a power rail a power rail
 * (a rail drawn 0.5 mm wide is not joined by the class's 0.2 mm).
 */
function netWidth(obstacles: BoardObstacles, rules: BoardRules, pad: BoardItem): number {
  const drawn = obstacles
    .near(growBox(pad.box, WIDTH_REACH), (i) => i.kind === "track" && i.net === pad.net)
    .map((i) => i.width ?? 0);
  return Math.max(rules.trackWidth(pad.net), ...drawn);
}

/** `planPad`'s route with tracks `width` wide, checked exactly against the obstacles and this session's copper. */
function planWithWidth(
  obstacles: BoardObstacles,
  rules: BoardRules,
  pad: BoardItem,
  centre: PointMm,
  laid: Laid[],
  width: number,
  zones: Zone[],
  netZones: Zone[],
  startLayers: number[],
  { explain, cuts }: Pick<PlanContext, "explain" | "cuts">,
  span?: GridSpan,
): PadPlan {
  const net = pad.net;
  const via = rules.via(net);
  const noCopper = (): PadPlan => {
    // A zone of the net around the pad that KiCad left unfilled there is not copper to reach, and the reason says so.
    const unfilled = netZones.some((z) => zoneOnLayerOf(z, pad) && insideOutline(z, centre));
    return {
      reason: unfilled
        ? `no ${net} copper within ${MAX_ROUTE_LENGTH} mm: the ${net} zone around it has no fill there`
        : `no ${net} copper within ${MAX_ROUTE_LENGTH} mm`,
      noCopper: true,
    };
  };
  const reach = span?.reach ?? windowReach(obstacles, pad, centre, zones);
  // Nothing of the net in reach, not even this session's copper: no grid need be built to find
  // no goal in it (a spot search asks at many spots: glasgow's capacitor moved 40 mm off its nets).
  if (reach === undefined && !laid.some((l) => l.net === net && boxesOverlap(l.shape.box, growBox(pad.box, NEAR))))
    return noCopper();
  const grid = buildGrid(obstacles, rules, pad, centre, laid, { width, via }, zones, reach ?? NEAR, span);
  const longest = span?.length ?? MAX_ROUTE_LENGTH;
  if (!grid.hasGoal()) {
    const blocked = grid.grid.goal.some((g) => g.includes(1)) || grid.grid.viaGoal.includes(1);
    if (blocked) return { reason: explain ? noPath(obstacles, pad, centre) : NO_PATH };
    return noCopper();
  }
  let cut: PourCut | undefined;
  for (let retry = 0; ; retry++) {
    const path = grid.grid.search(startLayers, VIA_COST, longest);
    if (!path) return { reason: cut ? cutReason(cut) : explain ? noPath(obstacles, pad, centre) : NO_PATH };
    const plan = toCopper(grid.grid, path, grid.pourAt, width);
    noShortLastStep(plan);
    endOnAnchor(plan, grid.grid, path.at(-1)!, grid.padGoals);
    for (const track of plan.tracks) {
      const shape = stroke(track.points, width);
      const layers = new Set([track.layer]);
      const blocker =
        describe(obstacles.copperBlocker({ shape, net, layers, kind: "track" })) ??
        laidBlocker(laid, shape, net, layers, rules);
      if (blocker) return { reason: `no rule-clean path within ${longest} mm to ${net} copper (${blocker})` };
    }
    for (const at of plan.vias) {
      const shape = circle(at, via.diameter / 2);
      const all = new Set(obstacles.copper);
      const blocker =
        describe(obstacles.copperBlocker({ shape, net, layers: all, kind: "via" }, [circle(at, via.drill / 2)])) ??
        laidBlocker(laid, shape, net, all, rules);
      if (blocker) return { reason: `no rule-clean path within ${longest} mm to ${net} copper (${blocker})` };
    }
    cut = cuts && pourCutBy(plan, net, rules, obstacles.copper, laid, cuts);
    if (!cut) return { route: plan, end: path.at(-1)!, pourAt: grid.pourAt };
    if (retry === CUT_RETRIES) return { reason: cutReason(cut) };
    // Its way through the pour is barred to the next search, as far as the pour keeps off it.
    const by = rules.clearance(net, cut.pour.net) + width / 2;
    for (const piece of cut.copper) {
      const barred = inflate(piece.shape, by);
      for (const layer of piece.layers) {
        const i = ROUTING_LAYERS.indexOf(layer);
        if (i >= 0) grid.grid.bar(grid.grid.blocked[i]!, barred, pad.shape());
      }
      if (piece.drill) grid.grid.bar(grid.grid.noVia, barred, pad.shape());
    }
  }
}

/** A pour a route would cut in two, and the route's tracks and vias that cut it. */
interface PourCut {
  pour: BoardItem;
  copper: Laid[];
}

/**
 * The pour `plan` would cut in two (with this session's `laid` copper), and which of its
 * segments and vias to bar: those that cut it alone; else, where only together they do (the
 * route closes a ring round a piece of the pour with the pads it joins), its way out of the pad,
 * so the next search leaves the pad another way and may go round.
 */
function pourCutBy(
  plan: CopperPlan,
  net: string,
  rules: BoardRules,
  copper: string[],
  laid: Laid[],
  cuts: PourCutJudge,
): PourCut | undefined {
  const pieces = [
    ...plan.tracks.flatMap((t) =>
      t.points
        .slice(1)
        .map((end, i) => ({ net, layers: new Set([t.layer]), shape: stroke([t.points[i]!, end], plan.width) })),
    ),
    ...laidCopper({ ...plan, tracks: [] }, net, rules, copper),
  ];
  const pour = cuts([...laid, ...pieces]);
  if (!pour) return undefined;
  const alone = pieces.filter((piece) => cuts([...laid, piece]));
  return { pour, copper: alone.length > 0 ? alone : pieces.slice(0, 1) };
}

/** Why a pad is left where every way found would cut a pour in two. */
function cutReason(cut: PourCut): string {
  return `every way found would cut ${cut.pour.what} in two (in the way: ${cut.pour.what})`;
}

/** A failed route's reason where no one reads it (`PlanContext.explain`). */
const NO_PATH = "no rule-clean path";

/** How many of the other nets' items in the way a reason names. */
const NAMED_IN_THE_WAY = 3;

/**
 * Why no path was found, for a person: the other nets' copper on the outer layers that crosses
 * the straight line from the pad to the nearest copper of its net.
 */
function noPath(obstacles: BoardObstacles, pad: BoardItem, centre: PointMm): string {
  const own = obstacles.near(
    growBox(pad.box, MAX_ROUTE_LENGTH),
    (i) => i.net === pad.net && i.ref !== pad.ref && (i.kind === "pad" || i.kind === "track" || i.kind === "via"),
  );
  const target = own
    .flatMap((i) => i.ends ?? [])
    .reduce<PointMm | undefined>(
      (best, p) =>
        !best || Math.hypot(p.x - centre.x, p.y - centre.y) < Math.hypot(best.x - centre.x, best.y - centre.y)
          ? p
          : best,
      undefined,
    );
  return withInTheWay(
    `no rule-clean path within ${MAX_ROUTE_LENGTH} mm to ${pad.net} copper`,
    obstacles,
    pad,
    centre,
    target,
  );
}

/** `reason`, naming the other nets' copper on the outer layers across the straight line from the pad to `target`. */
function withInTheWay(
  reason: string,
  obstacles: BoardObstacles,
  pad: BoardItem,
  centre: PointMm,
  target: PointMm | undefined,
): string {
  if (!target) return reason;
  const line = stroke([centre, target], 0.01);
  const crossing = obstacles.near(
    line.box,
    (i) =>
      i.net !== pad.net &&
      i.ref !== pad.ref &&
      (i.kind === "pad" || i.kind === "track" || i.kind === "via") &&
      ROUTING_LAYERS.some((l) => i.layers.has(l)) &&
      overlap(line, i.shape()),
  );
  // What is on the pad's own side first: that is where the route starts.
  const ordered = [...crossing.filter((i) => sharesLayer(i.layers, pad.layers)), ...crossing];
  const named = [...new Set(ordered.map((i) => i.what))].slice(0, NAMED_IN_THE_WAY);
  return named.length ? `${reason} (in the way: ${named.join(", ")})` : reason;
}

function zoneOnLayerOf(zone: Zone, pad: BoardItem): boolean {
  return [...pad.layers].some((l) => zoneOnLayer(zone, l));
}

/** "clearance to pad 2 of U3": what stops a route, for the reason a person reads. */
function describe(blocker: Blocker | undefined): string | undefined {
  return blocker ? `${blocker.reason} to ${blocker.item.what}` : undefined;
}

/** A track or via of this session on another net that new copper would come too close to. */
function laidBlocker(
  laid: Laid[],
  shape: ShapeMm,
  net: string,
  layers: Set<string>,
  rules: BoardRules,
): string | undefined {
  for (const other of laid) {
    if (other.net === net || !sharesLayer(layers, other.layers)) continue;
    if (
      boxesOverlap(growBox(shape.box, 1), other.shape.box) &&
      overlap(inflate(shape, rules.clearance(net, other.net)), other.shape)
    )
      return `clearance to a new track of ${other.net}`;
  }
  return undefined;
}

interface BuiltGrid {
  grid: RouteGrid;
  hasGoal(): boolean;
  /** The pads of the net the route may end on, by routing layer index. */
  padGoals: BoardItem[][];
  /** The pour of the net a via at cell (col, row) lands in. */
  /** The pour at a cell (on `layer` when given), with the copper of `radius` that ends there. */
  pourAt(col: number, row: number, layer?: string, radius?: number): Pour | undefined;
}

/** The widest room around a pad its grid takes, mm, without a wider span. */
const NEAR = MAX_ROUTE_LENGTH * 0.75;

/**
 * Room around the pad and the nearest copper of its net it could reach: the grid's half-width,
 * mm; undefined when no copper of the net lies anywhere in the widest room (`NEAR`, rounded up
 * to the grid's step; a fill counts by its distance, to the room's corners).
 */
function windowReach(obstacles: BoardObstacles, pad: BoardItem, centre: PointMm, zones: Zone[]): number | undefined {
  const gap = (b: { minX: number; minY: number; maxX: number; maxY: number }) =>
    Math.max(
      Math.abs(centre.x - (b.minX + b.maxX) / 2) - (b.maxX - b.minX) / 2,
      Math.abs(centre.y - (b.minY + b.maxY) / 2) - (b.maxY - b.minY) / 2,
      0,
    );
  let nearest = Infinity;
  for (const item of obstacles.near(
    growBox(pad.box, NEAR + STEP),
    (i) => i.net === pad.net && i.ref !== pad.ref && (i.kind === "pad" || i.kind === "track" || i.kind === "via"),
  ))
    nearest = Math.min(nearest, gap(item.box));
  // A fill's own outline, not its box: a board-wide pour's box holds every pad, its fill not always (flat_hierarchy's GND).
  for (const zone of zones) {
    for (const fill of zoneFills(zone))
      if (fill.points.length > 2 && gap(shapeOf([fill.points]).box) < nearest)
        nearest = Math.min(nearest, distanceToPolygon(fill.points, centre));
  }
  if (nearest > (NEAR + STEP) * Math.SQRT2) return undefined;
  return Math.min(NEAR, Math.max(3, nearest + 3));
}

/**
 * The grid around a pad: blocked where a track or via of its net would break a rule, goals on
 * the net's copper (other footprints' pads, tracks, vias) and, for a via, in the net's pours on
 * other layers (`zones`: the net's filled zones); `reach` is its half-width, mm (`windowReach`,
 * or a wide span's).
 */
function buildGrid(
  obstacles: BoardObstacles,
  rules: BoardRules,
  pad: BoardItem,
  centre: PointMm,
  laid: Laid[],
  size: { width: number; via: { diameter: number; drill: number } },
  zones: Zone[],
  reach: number,
  span?: GridSpan,
): BuiltGrid {
  const net = pad.net;
  const step = span?.step ?? STEP;
  // A coarser pitch grows obstacles more, so a straight run between free cells stays clear.
  const margin = Math.max(MARGIN, step * 0.75);
  const half = Math.ceil(reach / step);
  const layerIndex = new Map(ROUTING_LAYERS.map((l, i) => [l, i]));
  const grid = new RouteGrid({ origin: centre, half, step, layers: ROUTING_LAYERS.length });
  const window = growBox({ minX: centre.x, minY: centre.y, maxX: centre.x, maxY: centre.y }, half * step);
  const tw = size.width / 2 + margin;
  const vr = size.via.diameter / 2 + margin;
  const padGoals: BoardItem[][] = ROUTING_LAYERS.map(() => []);
  let hasCopper: boolean | undefined;
  const elsewhere = () => (hasCopper ??= netHasCopper(obstacles, pad, zones, false));
  // An obstacle is drawn when the search reaches it (`RouteGrid.defer`): `box` is its shape's, undrawn.
  const keepOff = (plane: Uint8Array, box: BBox, shape: () => ShapeMm, by: number) =>
    grid.defer(growBox(box, by), (clip) => grid.fill(plane, inflate(shape(), by), clip));
  const block = (
    item: { layers: ReadonlySet<string>; box: BBox; shape(): ShapeMm },
    track: number | undefined,
    via: number | undefined,
  ) => {
    if (track !== undefined)
      for (const l of item.layers) {
        const i = layerIndex.get(l);
        if (i !== undefined) keepOff(grid.blocked[i]!, item.box, () => item.shape(), track);
      }
    if (via !== undefined) keepOff(grid.noVia, item.box, () => item.shape(), via);
  };
  for (const item of obstacles.near(growBox(window, 2))) {
    const other = item.net === "" || item.net !== net;
    switch (item.kind) {
      case "edge":
        block(
          { ...item, layers: new Set(ROUTING_LAYERS) },
          rules.edgeClearance(net) + tw,
          rules.edgeClearance(net) + vr,
        );
        break;
      case "keepout":
        if (item.keepout!.tracks) block(item, tw, undefined);
        if (item.keepout!.vias && item.layers.size > 0) keepOff(grid.noVia, item.box, () => item.shape(), vr);
        break;
      case "hole":
        if (other)
          block(
            { ...item, layers: new Set(ROUTING_LAYERS) },
            holeClearanceTo(rules, net, item) + tw,
            Math.max(holeClearanceTo(rules, net, item) + vr, rules.holeToHole() + size.via.drill / 2 + margin),
          );
        else keepOff(grid.noVia, item.box, () => item.shape(), rules.holeToHole() + size.via.drill / 2 + margin);
        break;
      case "pad":
      case "track":
      case "via":
      case "copper":
        if (other) {
          const c = clearanceTo(rules, net, item);
          block(item, c + tw, c + vr);
          // Its spokes into its pour that are still free stay free (the corridors carry the zone's
          // clearance). Which are free is asked only when the search reaches them.
          const spokes = item.kind === "pad" ? obstacles.spokeBox(item) : undefined;
          if (spokes) {
            let free: ReturnType<BoardObstacles["freeSpokes"]> | undefined;
            grid.defer(growBox(spokes, Math.max(tw, vr)), (clip) => {
              for (const { corridor, layers } of (free ??= obstacles.freeSpokes(item))) {
                for (const l of layers) {
                  const i = layerIndex.get(l);
                  if (i !== undefined) grid.fill(grid.blocked[i]!, inflate(corridor, tw), clip);
                }
                grid.fill(grid.noVia, inflate(corridor, vr), clip);
              }
            });
          }
        } else if (item !== pad && item.ref !== pad.ref && item.kind !== "copper") {
          if (item.kind === "pad" && joinsNothing(obstacles, item, laid, zones) && elsewhere()) continue;
          for (const l of item.layers) {
            const i = layerIndex.get(l);
            if (i === undefined) continue;
            grid.fill(grid.goal[i]!, item.shape());
            if (item.kind === "pad") padGoals[i]!.push(item);
          }
          // A via may not stand in a pad of its own net either (via in pad).
          if (item.kind === "pad") keepOff(grid.noVia, item.box, () => item.shape(), vr);
        }
        break;
    }
  }
  for (const pour of span?.pours ?? []) {
    const i = layerIndex.get(pour.layer)!;
    const c = rules.clearance(net, pour.net);
    const shape = polygon(pour.fill);
    keepOff(grid.blocked[i]!, shape.box, () => shape, c + tw);
    keepOff(grid.noVia, shape.box, () => shape, c + vr);
  }
  for (const other of laid) {
    if (other.drill)
      keepOff(grid.noVia, other.drill.box, () => other.drill!, rules.holeToHole() + size.via.drill / 2 + margin);
    if (other.net === net) {
      // The run's earlier routes of the net are its copper too: a pad beside one joins it (an
      // EEPROM's three pins strapped to +3V3), where a route of its own put a second via on the first.
      for (const l of other.layers) {
        const i = layerIndex.get(l);
        if (i !== undefined) grid.fill(grid.goal[i]!, other.shape);
      }
      continue;
    }
    const c = rules.clearance(net, other.net);
    block({ layers: other.layers, box: other.shape.box, shape: () => other.shape }, c + tw, c + vr);
  }
  // The pad's own footprint: its other pads (of this net too) are no place for a via.
  grid.fill(grid.noVia, inflate(pad.shape(), vr));
  grid.keepInsideOutline(obstacles.outline);
  const pourAt = pourGoals(obstacles, grid, net, pad, zones);
  return { grid, hasGoal: () => grid.hasGoal(), pourAt, padGoals };
}

/**
 * A pour of the net a pad or route relies on, checked after the refill: the fill must meet
 * `copper` (the pad, the via or the track's end), not merely cover `at`, for a pad in a thermal
 * relief or a hatched fill has no fill at its centre.
 */
export type Pour = { zone: string; layer: string; at: PointMm; copper: ShapeMm };

/**
 * Marks the net's pours (fills that reach its copper, not islands): on a routing layer the pad
 * is on, the route may end in them; a via anywhere in them (any layer) ends it too. Returns the
 * lookup from a cell to the pour it is in (on `layer` when given), for the check after the refill.
 */
function pourGoals(
  obstacles: BoardObstacles,
  grid: RouteGrid,
  net: string,
  pad: BoardItem,
  zones: Zone[],
): BuiltGrid["pourAt"] {
  const found: { zone: string; layer: string; polygon: PointMm[] }[] = [];
  const window = {
    minX: grid.point(0, 0).x,
    minY: grid.point(0, 0).y,
    maxX: grid.point(grid.size - 1, grid.size - 1).x,
    maxY: grid.point(grid.size - 1, grid.size - 1).y,
  };
  for (const zone of zones) {
    for (const { layer, points } of zoneFills(zone)) {
      if (
        points.length < 3 ||
        !boxesOverlap(boxOf([points]), window) ||
        !fillJoinsNet(obstacles, points, net, layer, [pad.ref ?? ""])
      )
        continue;
      found.push({ zone: zone.id, layer, polygon: points });
      const shape = shapeOf([points]);
      const index = ROUTING_LAYERS.indexOf(layer);
      if (index >= 0 && pad.layers.has(layer)) grid.fill(grid.goal[index]!, shape);
      grid.fill(grid.viaGoal, shape);
    }
  }
  return (col, row, layer, radius = 0.05) => {
    const at = grid.point(col, row);
    const hit = found.find((f) => (layer === undefined || f.layer === layer) && insidePolygon(f.polygon, at));
    return hit ? { zone: hit.zone, layer: hit.layer, at, copper: circle(at, radius) } : undefined;
  };
}

export interface CopperPlan {
  /** The tracks' width, mm. */
  width: number;
  tracks: { layer: string; points: PointMm[] }[];
  vias: PointMm[];
  length: number;
  endsInPour: boolean;
}

/** A grid path as tracks (collinear steps merged) and vias (where the layer changes). */
function toCopper(grid: RouteGrid, path: GridPoint[], pourAt: BuiltGrid["pourAt"], width: number): CopperPlan {
  const plan: CopperPlan = { width, tracks: [], vias: [], length: 0, endsInPour: false };
  let run: GridPoint[] = [path[0]!];
  const flush = () => {
    if (run.length < 2) return;
    const corners = [run[0]!];
    for (let i = 1; i < run.length - 1; i++) {
      const [a, b, c] = [run[i - 1]!, run[i]!, run[i + 1]!];
      if (b.x - a.x !== c.x - b.x || b.y - a.y !== c.y - b.y) corners.push(b);
    }
    corners.push(run.at(-1)!);
    const points = corners.map((p) => grid.point(p.x, p.y));
    for (let i = 1; i < points.length; i++)
      plan.length += Math.hypot(points[i]!.x - points[i - 1]!.x, points[i]!.y - points[i - 1]!.y);
    plan.tracks.push({ layer: ROUTING_LAYERS[run[0]!.layer]!, points });
  };
  for (let i = 1; i < path.length; i++) {
    const p = path[i]!;
    if (p.layer !== run[0]!.layer) {
      flush();
      plan.vias.push(grid.point(p.x, p.y));
      run = [p];
    } else run.push(p);
  }
  flush();
  const end = path.at(-1)!;
  // A route that stops on a cell that is no goal of its layer ends in a via down into a pour.
  if (!grid.goal[end.layer]![end.y * grid.size + end.x] && pourAt(end.x, end.y)) {
    plan.vias.push(grid.point(end.x, end.y));
    plan.endsInPour = true;
  }
  return plan;
}

/**
 * A last step shorter than the track's width, turned off the run before it into the copper it
 * reaches, is a dangling track to KiCad's DRC: the run's copper takes in both of its ends, and
 * counts for the end they share, and the copper reached takes in both too and counts for
 * whichever end lies nearer its own ends (`TestTrackEndpointDangling`), on blaustahl a 0.1 mm
 * stub into a +3V3 track. The run before it already meets that copper when the step is at most
 * half the width: the step goes. A longer one is folded into the run (its corner dropped),
 * which the rule check after this still judges.
 */
export function noShortLastStep(plan: CopperPlan): void {
  const last = plan.tracks.at(-1);
  if (plan.endsInPour || !last || last.points.length < 3) return;
  const [b, c] = last.points.slice(-2) as [PointMm, PointMm];
  const step = Math.hypot(c.x - b.x, c.y - b.y);
  if (step >= plan.width) return;
  plan.length -= step;
  if (step <= plan.width / 2) last.points.pop();
  else {
    const a = last.points.at(-3)!;
    plan.length += Math.hypot(c.x - a.x, c.y - a.y) - Math.hypot(b.x - a.x, b.y - a.y);
    last.points.splice(-2, 1);
  }
}

/**
 * A route that stops on a pad ends on the pad's anchor, where KiCad's connectivity, the routing
 * check and `view` all look for it: the grid cell it reached lies in the pad's outline as the
 * grid knows it, which for a rounded rectangle, a trapezoid or a custom pad may be outside the
 * copper (a regulator's rounded pad reported "Missing connection" by KiCad).
 */
function endOnAnchor(plan: CopperPlan, grid: RouteGrid, end: GridPoint, padGoals: BoardItem[][]): void {
  const last = plan.tracks.at(-1);
  if (plan.endsInPour || !last || last.layer !== ROUTING_LAYERS[end.layer]) return;
  const at = grid.point(end.x, end.y);
  const dot = circle(at, STEP / 2);
  const target = padGoals[end.layer]!.find((p) => boxesOverlap(p.box, dot.box) && overlap(dot, p.shape()));
  const anchor = target?.ends?.[0];
  if (!anchor || (anchor.x === at.x && anchor.y === at.y)) return;
  last.points.push(anchor);
  plan.length += Math.hypot(anchor.x - at.x, anchor.y - at.y);
}
