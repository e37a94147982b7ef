/**
 * Connecting what a change added to a board: its new footprints are routed (`route.ts`), the
 * zones their copper touches are refilled by KiCad's own filler around that copper
 * (`zones/refill.ts`), and a pad
 * or via that was to connect through a pour is checked to be in the refilled pour. What is
 * left gets one reason per part, for a person.
 */
import { inflate, overlap, polygon } from "../clearance/geometry.ts";
import { BoardObstacles } from "../clearance/obstacles.ts";
import { footprintItems } from "../clearance/items.ts";
import type { BoardRules } from "../clearance/rules.ts";
import { refillZones } from "../zones/refill.ts";
import { boardZones, filledPolygons, zonesTouchedBy, type NewCopper } from "../zones/zones.ts";
import type { Board, PointMm } from "../model.ts";
import { fillJoinsNet, routeFootprints, type RouteOutcome } from "./route.ts";

/** How far past new copper a zone's fill may change: its clearance and thermal gap at most. */
const REFILL_REACH = 1;

export interface AddedConnections {
  outcomes: RouteOutcome[];
  /** Parts with connections left unrouted, each with its reason ("pad 2 (GND): …"). */
  left: Map<string, string>;
  /** Ids of the zones KiCad refilled whose fill changed. */
  refilled: string[];
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
 * they rely on.
 */
export async function connectAdded(
  board: Board,
  boardFile: string,
  rules: BoardRules,
  refs: string[],
  { vacated = [], staged = [], obstacles = new BoardObstacles(board, rules) }: ConnectOptions = {},
): Promise<AddedConnections> {
  const outcomes = routeFootprints(board, rules, refs, obstacles, staged);
  const added: NewCopper[] = [...vacated, ...outcomes.flatMap((o) => o.added)];
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
  const { changed } = await refillZones(board, boardFile, touched, { near });
  const zones = new Map(boardZones(board.root).map((z) => [z.id, z]));
  // The index from before the routes is enough: what counts is copper the new parts did not bring.
  const joinsNet = (fill: PointMm[], net: string, layer: string) => fillJoinsNet(obstacles, fill, net, layer, refs);
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
      outcome.left.push({
        pad: c.pad,
        net: c.net,
        reason: `the ${c.net} pour on ${c.pour.layer} does not reach it once refilled`,
      });
      return false;
    });
  }
  const left = new Map<string, string>();
  for (const o of outcomes) {
    if (o.left.length > 0) left.set(o.ref, o.left.map((l) => `pad ${l.pad} (${l.net}): ${l.reason}`).join("; "));
  }
  return { outcomes, left, refilled: changed };
}
