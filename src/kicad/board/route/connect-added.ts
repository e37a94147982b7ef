/**
 * Connecting what a change added to a board: its new footprints are routed (`route.ts`), the
 * zones their copper touches are refilled by KiCad's own filler around that copper
 * (`zones/refill.ts`), and a pad
 * or via that was to connect through a pour is checked to be in the refilled pour. What is
 * left gets one reason per part, for a person.
 */
import { boxesOverlap, inflate, overlap, polygon } from "../clearance/geometry.ts";
import { BoardObstacles } from "../clearance/obstacles.ts";
import { footprintItems } from "../clearance/items.ts";
import type { BoardRules } from "../clearance/rules.ts";
import { narrowStrips, type NarrowStrip } from "../zones/narrow-strips.ts";
import { refillZones } from "../zones/refill.ts";
import { boardZones, filledPolygons, zoneOnLayer, zonesTouchedBy, type NewCopper } from "../zones/zones.ts";
import type { Board, PointMm } from "../model.ts";
import { PourWatch, type PourCut } from "./pour-cuts.ts";
import { fillJoinsNet, routeFootprints, type PadLeft, type RouteOutcome } from "./route.ts";
import { liftCopper } from "./write.ts";

/** How far past new copper a zone's fill may change: its clearance and thermal gap at most. */
const REFILL_REACH = 1;

export interface AddedConnections {
  outcomes: RouteOutcome[];
  /** Parts with connections left unrouted, each with its reason ("pad 2 (GND): …"). */
  left: Map<string, string>;
  /** Ids of the zones KiCad refilled whose fill changed. */
  refilled: string[];
  /** Strips of other nets' pours the parts' own pads leave too narrow, once refilled (`narrow-strips.ts`). */
  narrow: NarrowStrip[];
}

export interface ConnectOptions {
  /** Copper taken off the board (a part moved or removed, its tracks lifted): the zones there are refilled too. */
  vacated?: NewCopper[];
  /** Parts of the same change left staged below the outline, which a pad may be waiting for. */
  staged?: string[];
  /** An index of the board as it stands now, when the caller has one (a fresh one is built otherwise). */
  obstacles?: BoardObstacles;
}

/**
 * Routes the footprints `refs`, refills the zones their copper touches, and checks the pours
 * they rely on. A pad its pour does not reach once refilled (the fill keeps its clearance off
 * it, or its spokes find no fill to land on: on the ESP32-P4 dev board, a capacitor's ground pad
 * beside the 5 V regulator) is routed once more, now that the fill is known, to its net's other
 * copper: a via to an inner plane, a track to the pour.
 */
export async function connectAdded(
  board: Board,
  boardFile: string,
  rules: BoardRules,
  refs: string[],
  { vacated = [], staged = [], obstacles = new BoardObstacles(board, rules) }: ConnectOptions = {},
): Promise<AddedConnections> {
  const outcomes = routeFootprints(board, rules, refs, obstacles, staged);
  let watch = watchRoutes(board, refs, outcomes);
  const changed = new Set(
    await refillAround(board, boardFile, refs, [...vacated, ...outcomes.flatMap((o) => o.added)]),
  );
  const unreached = checkPours(board, obstacles, outcomes, refs);
  if (unreached.length > 0) {
    // The first round's tracks are on the board now: a fresh index holds them.
    const fresh = new BoardObstacles(board, rules);
    const again = routeFootprints(board, rules, [...new Set(unreached.map((u) => u.ref))], fresh, staged);
    watch ??= watchRoutes(board, refs, again);
    for (const a of again) {
      const outcome = outcomes.find((o) => o.ref === a.ref)!;
      outcome.added.push(...a.added);
      outcome.ids.push(...a.ids);
      // Its other pads left unrouted get this round's way too, where it found one.
      for (const left of [...outcome.left]) {
        const route = a.connected.find((c) => c.pad === left.pad);
        if (!route) continue;
        outcome.left.splice(outcome.left.indexOf(left), 1);
        outcome.connected.push(route);
      }
    }
    const refilled = await refillAround(
      board,
      boardFile,
      again.map((a) => a.ref),
      again.flatMap((a) => a.added),
    );
    for (const id of refilled) changed.add(id);
    checkPours(board, obstacles, outcomes, refs);
  }
  const cuts = watch?.cuts(board) ?? [];
  if (cuts.length > 0) {
    const lifted = liftCutting(board, outcomes, cuts);
    for (const id of await refillAround(board, boardFile, [], lifted)) changed.add(id);
  }
  const left = new Map<string, string>();
  for (const o of outcomes) {
    if (o.left.length > 0) left.set(o.ref, o.left.map((l) => `pad ${l.pad} (${l.net}): ${l.reason}`).join("; "));
  }
  return { outcomes, left, refilled: [...changed], narrow: narrowStrips(board, refs, rules) };
}

/**
 * The pours around `refs` as `routed` found them, to tell whether its routes cut one once
 * refilled; none when it laid no track or via, as only a route is taken up for a cut
 * (`liftCutting`). Reading the nets' copper is most of a part's routing time on a dense board
 * (glasgow), and a part left for layout lays nothing.
 */
function watchRoutes(board: Board, refs: string[], routed: RouteOutcome[]): PourWatch | undefined {
  const laid = routed.flatMap((o) => o.added);
  return laid.length > 0 ? new PourWatch(board, refs, laid) : undefined;
}

/**
 * Takes up the new routes that cut a pour in two (`cuts`): every route of another net a part
 * laid across the cut net's zones, its pads left for layout with the reason. A route round
 * the pour's neck is for the designer, who sees the whole pour; the refill where the routes
 * were joins the pour again. Returns where they were, for that refill.
 */
function liftCutting(board: Board, outcomes: RouteOutcome[], cuts: PourCut[]): NewCopper[] {
  const zones = boardZones(board.root).filter((z) => z.filled && !z.ruleArea);
  const lifted: NewCopper[] = [];
  for (const { net, cutOff, islands } of cuts) {
    const pours = zones.filter((z) => z.net === net);
    for (const outcome of outcomes) {
      const crossing = outcome.added.filter(
        (a) =>
          a.net !== net &&
          pours.some(
            (z) => boxesOverlap(z.box, a.box) && (a.layers === "all" || [...a.layers].some((l) => zoneOnLayer(z, l))),
          ),
      );
      for (const across of new Set(crossing.map((a) => a.net))) {
        const layer =
          crossing
            .flatMap((a) => (a.layers === "all" ? [] : [...a.layers]))
            .find((l) => pours.some((z) => zoneOnLayer(z, l))) ?? pours.flatMap((z) => z.layers)[0];
        const taken = outcome.added.filter((a) => a.net === across);
        const ids = new Set(taken.flatMap((a) => a.ids ?? []));
        lifted.push(...liftCopper(board, ids));
        outcome.added = outcome.added.filter((a) => a.net !== across);
        outcome.ids = outcome.ids.filter((id) => !ids.has(id));
        const named = cutOff.slice(0, NAMED_CUT_OFF);
        const what = islands
          ? `leave ${named.length === 1 ? "a piece" : "pieces"} of the ${net} pour on ${layer} joined to nothing (at ${named.join("; ")})`
          : `cut the ${net} pour on ${layer} in two, leaving ${named.join(", ")} apart from the rest`;
        const reason = `a route would ${what} (in the way: the ${net} pour on ${layer})`;
        // Every new pad of the net that is not in a pour goes with it: some may touch other copper
        // of the net still, and are named for nothing worse than a look; none is kept that the
        // route alone joined.
        for (const o of outcomes) {
          const gone = o.connected.filter((c) => c.net === across && c.how !== "pour");
          o.connected = o.connected.filter((c) => !gone.includes(c));
          o.left.push(...gone.map((c) => ({ pad: c.pad, net: c.net, reason })));
        }
      }
    }
  }
  return lifted;
}

/** How many pieces of what a cut leaves apart its reason names. */
const NAMED_CUT_OFF = 3;

/** Refills the zones that `added` copper and the pads of `refs` touch, around them; the ids of the zones whose fill changed. */
async function refillAround(board: Board, boardFile: string, refs: string[], copper: NewCopper[]): Promise<string[]> {
  const added = [...copper];
  for (const fp of board.footprints().filter((f) => refs.includes(f.ref))) {
    for (const pad of footprintItems(fp.node, ["F.Cu", "B.Cu"]).filter((i) => i.kind === "pad"))
      added.push({ box: pad.box, net: pad.net, layers: pad.layers.size > 1 ? "all" : new Set(pad.layers) });
  }
  const touched = zonesTouchedBy(boardZones(board.root), added, REFILL_REACH);
  const near = added.map(({ box, layers }) => ({
    box: {
      minX: box.minX - REFILL_REACH,
      minY: box.minY - REFILL_REACH,
      maxX: box.maxX + REFILL_REACH,
      maxY: box.maxY + REFILL_REACH,
    },
    layers,
  }));
  return (await refillZones(board, boardFile, touched, { near })).changed;
}

/**
 * Checks each connection through a pour against the refilled fill: one the fill does not meet
 * moves to the outcome's left, with its reason. Returns those.
 */
function checkPours(board: Board, obstacles: BoardObstacles, outcomes: RouteOutcome[], refs: string[]) {
  const zones = new Map(boardZones(board.root).map((z) => [z.id, z]));
  // The index from before the routes is enough: what counts is copper the new parts did not bring.
  const joinsNet = (fill: PointMm[], net: string, layer: string) => fillJoinsNet(obstacles, fill, net, layer, refs);
  const unreached: { ref: string; left: PadLeft }[] = [];
  for (const outcome of outcomes) {
    outcome.connected = outcome.connected.filter((c) => {
      if (!c.pour) return true;
      const zone = zones.get(c.pour.zone);
      // Touching counts: a thermal spoke meets a pad at its edge.
      const copper = inflate(c.pour.copper, 0.01);
      if (
        zone &&
        filledPolygons(zone, c.pour.layer).some((f) => overlap(copper, polygon(f)) && joinsNet(f, c.net, c.pour!.layer))
      )
        return true;
      const left = {
        pad: c.pad,
        net: c.net,
        reason: `the ${c.net} pour on ${c.pour.layer} does not reach it once refilled`,
      };
      outcome.left.push(left);
      unreached.push({ ref: outcome.ref, left });
      return false;
    });
  }
  return unreached;
}
