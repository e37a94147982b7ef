/**
 * Where a new footprint goes on a board, and moving one that is not routed yet: the spot a
 * designer would pick (kicad/board/spot-search.ts: ranked by the ratsnest it adds, then by its
 * distance to the pin of the part it serves (`servedPin`: a decoupling capacitor at the IC's
 * pin of its supply, a test point at the regulator's output), on the board's grid), kept clear of everything KiCad's
 * DRC would flag (kicad/board/clearance/), and for a new part one where its pads can be routed
 * (kicad/board/route/) when the best few clear spots offer one. Zone fills are not obstacles: they are refilled
 * after the edit. When no spot is clear, the footprint stays where board sync staged it, below
 * the outline, and the reason names what blocked the best spots.
 *
 * Sides: a footprint stays on its anchor's side. A surface-mount passive goes on the other side
 * when its own side has no room near the anchor; a through-hole part changes side only when
 * asked (`side`). A footprint on the back is
 * flipped exactly as KiCad flips it (`flipFootprint`).
 */
import type { BBox, Board, Footprint, PointMm } from "./model.ts";
import { CopperheadError } from "../../errors.ts";
import { copperOnPads } from "./nets.ts";
import { onlyAdds, type BoardSyncPlan, type FootprintAdd } from "./sync/plan.ts";
import { boardBounds, flipFootprint, instantiateFootprint, moveFootprint, type Side } from "./footprint/instance.ts";
import type { Libraries } from "../library/libraries.ts";
import { BoardObstacles } from "./clearance/obstacles.ts";
import type { BoardRules } from "./clearance/rules.ts";
import { NetCopper } from "./ratsnest.ts";
import {
  describeBlockers,
  searchSpot,
  spotBlocker,
  type BoardSpot,
  type SearchRequest,
  type SearchResult,
  type SpotPad,
} from "./spot-search.ts";
import { drawn, footprintItems } from "./clearance/items.ts";
import { connectingRoutes, laidOf, type Laid } from "./route/route.ts";
import { splitWatch } from "./zones/pour-splits.ts";
import { boardZones, type Zone } from "./zones/zones.ts";
import { child, children, cloneNode, list, q, text, type SList } from "../sexpr/index.ts";

export type { BoardSpot } from "./spot-search.ts";

/** How far from its anchor a footprint is looked for first, mm (courtyard to the anchor pin, or to its courtyard). */
export const REACH = 15;
/** Farther than this from the pin it serves, mm, a part's placement says so, with what fills the nearer spots. */
export const FAR = 10;

/** A footprint left staged, and what kept it off the board. */
export interface StagedFootprint {
  ref: string;
  reason: string;
}

const otherSide = (side: Side): Side => (side === "front" ? "back" : "front");
const sideOf = (layer: string): Side => (layer.startsWith("B.") ? "back" : "front");

/** Whether every pad of `footprint` that has copper is a surface-mount pad (mounting holes aside). */
function isSmd(footprint: SList): boolean {
  const pads = children(footprint, "pad").filter((p) => text(p, 2) !== "np_thru_hole");
  return pads.length > 0 && pads.every((p) => text(p, 2) === "smd");
}

/**
 * Whether `footprint` may go on the side other than `side` unasked: a surface-mount passive (at
 * most three pads) always; any other surface-mount part when the board already has surface-mount
 * parts on that side, which is then assembled anyway (Glasgow's back carries 95 of its parts,
 * and its front has no room left for an EEPROM). A through-hole part never.
 */
function mayGoOnOtherSide(board: Board, footprint: SList, side: Side): boolean {
  if (!isSmd(footprint)) return false;
  if (children(footprint, "pad").length <= 3) return true;
  const other = otherSide(side);
  return board.footprints().some((f) => f.node !== footprint && sideOf(f.layer) === other && isSmd(f.node));
}

/**
 * Tries the preferred side near the anchor, then (a surface-mount passive) the other side near
 * it, then the whole board; `mayFlip` allows the other side at all. A spot near the anchor
 * whose pads could not be connected is taken only when no attempt near it finds a better one.
 */
function findSpot(
  board: Board,
  obstacles: BoardObstacles,
  copper: NetCopper,
  request: Omit<SearchRequest, "sides" | "reach">,
  side: Side,
  mayFlip: boolean,
): SearchResult {
  // The anchor's side first, even on a board with parts on both: a designer puts an LED's
  // resistor beside it, not under it (pic_programmer's was, and its net could not be routed).
  const attempts: Pick<SearchRequest, "sides" | "reach">[] = request.anchor ? [{ sides: [side], reach: REACH }] : [];
  if (request.anchor && mayFlip) attempts.push({ sides: [otherSide(side)], reach: REACH });
  attempts.push({ sides: mayFlip ? [side, otherSide(side)] : [side] });
  let first: SearchResult | undefined;
  let unconnected: SearchResult | undefined;
  for (const attempt of attempts) {
    if (unconnected && attempt.reach === undefined) return unconnected;
    const result = searchSpot(board, obstacles, copper, { ...request, ...attempt });
    if (result.spot?.connectable !== false) {
      if (result.spot) return result;
    } else unconnected ??= result;
    first ??= result;
  }
  return unconnected ?? first!;
}

/**
 * The placement's index made the routing's once the sync is written (`applyBoardSync`, which
 * returns the footprints it wrote, `added`): when the plan only adds parts, the index is the
 * board's but for them, and takes the footprints written in place of its copies and their planned routes; undefined when the sync changed the
 * board elsewhere, and the routing indexes it afresh.
 */
export function indexForRouting(
  obstacles: BoardObstacles,
  added: ReadonlyMap<string, SList>,
  plan: BoardSyncPlan,
): BoardObstacles | undefined {
  if (!onlyAdds(plan)) return undefined;
  for (const add of plan.added) obstacles.replace(add.ref, added.get(add.ref)!);
  return obstacles;
}

/**
 * Moves the footprints a sync plan adds from the staging row onto the board, each where
 * `findSpot` puts it near its anchor's footprint (`anchorOf`), or, with no anchor, where its
 * ratsnest is shortest. Footprints are placed one after the other, each an obstacle for the
 * next, a part anchored on another new part after it (a resistor beside its new LED); those that
 * fit nowhere stay staged, with the reason. `obstacles` is an index of `board` as it stands
 * (not the run's cached one: the sync edits this tree after placing); it holds the placed parts
 * and their planned routes afterwards (`indexForRouting` makes it the routing's).
 */
export function placeAdditions(
  board: Board,
  plan: BoardSyncPlan,
  libraries: Libraries,
  anchorOf: (ref: string) => string | undefined,
  rules: BoardRules,
  obstacles = new BoardObstacles(board, rules),
): StagedFootprint[] {
  const staged: StagedFootprint[] = [];
  if (plan.added.length === 0) return staged;
  const nets = plan.added.flatMap((a) => a.pads.map((p) => p.net));
  let copper = new NetCopper(obstacles, nets);
  const anchors = new Map<string, Anchor>(
    board
      .footprints()
      .map((f) => [
        f.ref,
        { ref: f.ref, side: sideOf(f.layer), rotation: f.at.rotation, box: boardBounds(f.node), node: f.node },
      ]),
  );
  const padCount = padsPerNet(board);
  const pinOf = (part: Omit<Placed, "spot" | "routes">) => {
    const anchor = part.anchorRef ? anchors.get(part.anchorRef) : undefined;
    return (
      anchor &&
      servedPin(
        anchor.node,
        part.add.pads.map((p) => p.net),
        padCount,
        obstacles.copper,
      )
    );
  };
  const placedHere = new Map<string, Placed>();
  // The pads and planned routes of the parts placed so far, but `ref`'s own.
  const newCopperBesides = (ref: string): Laid[] =>
    [...placedHere.values()]
      .filter((p) => p.add.ref !== ref && anchors.has(p.add.ref))
      .flatMap((p) => [
        ...footprintItems(anchors.get(p.add.ref)!.node, obstacles.copper)
          .filter((i) => i.kind === "pad")
          .map(laidOf),
        ...p.routes,
      ]);
  // Placing changes no zone: the route trials all read the same ones, and judge cuts in the same fills.
  const zones = boardZones(board.root);
  const watch = splitWatch(board, rules);
  const search = (part: Omit<Placed, "spot" | "routes">) => {
    const anchor = part.anchorRef ? anchors.get(part.anchorRef) : undefined;
    const pin = pinOf(part);
    const request = {
      footprint: part.instance,
      padNets: new Map(part.add.pads.map((p) => [p.pad, p.net])),
      rotation: anchor?.rotation ?? 0,
      anchor: pin ? pinBox(pin) : anchor?.box,
      connectable: routeTrial(board, obstacles, rules, part.add.ref, {
        zones,
        watch,
        placedBefore: newCopperBesides(part.add.ref),
      }),
      avoid: part.avoid,
    };
    const side = anchor?.side ?? "front";
    return findSpot(board, obstacles, copper, request, side, mayGoOnOtherSide(board, part.instance, side));
  };
  // A part's planned routes are in the way of the next part, as they will be when it is routed
  // (bms-c1's resistor sat on the way out of its LED's ground pad).
  const place = (part: Omit<Placed, "spot" | "routes">, spot: BoardSpot, routes: Laid[] = []) => {
    part.add.at = { x: spot.x, y: spot.y, rotation: spot.rotation };
    part.add.side = spot.side;
    const placed = placedCopy(part.instance, spot);
    // With its nets, so the next part's route to it counts (a resistor to its new LED).
    for (const pad of children(placed, "pad")) {
      const net = part.add.pads.find((p) => p.pad === text(pad, 1))?.net;
      if (net) pad.items.push(list("net", q(net)));
    }
    obstacles.add(placed);
    obstacles.addPlanned(part.add.ref, routes);
    for (const item of footprintItems(placed, obstacles.copper)) copper.add(item);
    anchors.set(part.add.ref, {
      ref: part.add.ref,
      side: spot.side,
      rotation: spot.rotation,
      box: boardBounds(placed),
      node: placed,
    });
    placedHere.set(part.add.ref, { ...part, spot, routes });
  };
  const unplace = (ref: string) => {
    obstacles.remove(ref);
    copper = new NetCopper(obstacles, nets);
    anchors.delete(ref);
  };
  for (const add of anchoredLast(plan.added, anchorOf)) {
    const part = { add, instance: newInstance(libraries, add, rules), anchorRef: anchorOf(add.ref), avoid: [] };
    let result = search(part);
    // Beside a part this plan adds, where none of its spots connects, or every one near it would
    // leave a pour too narrow between its pads: that part moves to its next spots first (an LED
    // by its IC where its resistor's supply is out of reach, sweep's; where the back pour runs
    // round the resistor, multichannel's), and stays at the spot that served best.
    const anchor = part.anchorRef ? placedHere.get(part.anchorRef) : undefined;
    if (anchor && flaw(result) > 0) {
      let best = { spot: anchor.spot, routes: anchor.routes, result };
      for (let retry = 0; retry < ANCHOR_RETRIES && flaw(result) > 0; retry++) {
        unplace(anchor.add.ref);
        anchor.avoid.push({ ...placedHere.get(anchor.add.ref)!.spot, radius: ANCHOR_MOVE });
        const moved = search(anchor);
        if (!moved.spot || flaw(moved) > 0) {
          place(anchor, best.spot, best.routes);
          result = best.result;
          break;
        }
        place(anchor, moved.spot, moved.routes);
        result = search(part);
        if (flaw(result) < flaw(best.result)) best = { spot: moved.spot, routes: moved.routes ?? [], result };
      }
      if (placedHere.get(anchor.add.ref)!.spot !== best.spot) {
        unplace(anchor.add.ref);
        place(anchor, best.spot, best.routes);
        result = best.result;
      }
    }
    if (!result.spot) {
      const anchor = part.anchorRef ? anchors.get(part.anchorRef) : undefined;
      staged.push({
        ref: add.ref,
        reason: `no free spot${anchor ? ` within ${REACH} mm of ${anchor.ref} or elsewhere on the board` : " on the board"}: ${describeBlockers(result.blockers)}`,
      });
      continue;
    }
    place(part, result.spot, result.routes);
    const served = pinOf(part) ?? (part.anchorRef ? anchors.get(part.anchorRef)?.box : undefined);
    if (served) add.far = farNote(result.spot, served, part.anchorRef!, result.blockers);
  }
  return staged;
}

/** A pin of the part a new one serves: where it is and its number. */
interface ServedPin {
  /** Where its copper is: a pin may have several pads of its number (a module's pin with a pad on each side). */
  at: PointMm[];
  pad: string;
}

/** How many pads each net has on the board. */
function padsPerNet(board: Board): Map<string, number> {
  const count = new Map<string, number>();
  for (const fp of board.footprints())
    for (const pad of fp.pads) if (pad.net?.name) count.set(pad.net.name, (count.get(pad.net.name) ?? 0) + 1);
  return count;
}

/**
 * The pin of `anchor` a part with pads on `nets` serves, as a designer reads it: the anchor's
 * pad on a net they share with the fewest pads on the board (a decoupling capacitor's supply
 * pin, not its ground; a test point's one net), with every pad of that number on that net.
 * Undefined when they share none but the board's largest net and the part has pads on others:
 * a part whose only tie to the anchor is ground (a power LED put next to an IC) serves none of
 * the IC's pins, and goes beside the part as a whole; one wholly on ground (a ground test
 * point) serves its pin.
 */
function servedPin(
  anchor: SList,
  nets: string[],
  padCount: Map<string, number>,
  copper: string[],
): ServedPin | undefined {
  const most = Math.max(0, ...padCount.values());
  const largest = [...padCount].find(([, n]) => n === most)?.[0];
  const serves = (net: string) => net !== largest || nets.every((n) => n === largest);
  const pads = footprintItems(anchor, copper).filter(
    (i) => i.kind === "pad" && i.net !== "" && nets.includes(i.net) && serves(i.net),
  );
  pads.sort((a, b) => (padCount.get(a.net) ?? 0) - (padCount.get(b.net) ?? 0));
  const pad = pads[0];
  if (!pad) return undefined;
  const at = pads.filter((p) => p.pad === pad.pad && p.net === pad.net).map((p) => p.ends![0]!);
  return { at, pad: pad.pad ?? "" };
}

/** The box around a served pin's pads: the search's anchor, so a spot beside any of them is beside the pin. */
function pinBox(pin: ServedPin): BBox {
  const xs = pin.at.map((p) => p.x);
  const ys = pin.at.map((p) => p.y);
  return { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
}

/**
 * "12.5 mm from pad 3 of U1, the nearest free spot: nearer ones are taken by …" when `spot` is
 * farther than `FAR` from the pin it serves, or ("… from U1, …") from the part it was put
 * beside when it serves none of its pins (a power LED next to an IC); else undefined.
 * `blockers` are what took the spots ranked before it; with none, it was ranked first for its
 * shorter connections to its nets' copper.
 */
function farNote(
  spot: BoardSpot,
  served: ServedPin | BBox,
  anchorRef: string,
  blockers: SearchResult["blockers"],
): string | undefined {
  const distance =
    "pad" in served
      ? Math.min(...served.at.map((p) => Math.hypot(spot.x - p.x, spot.y - p.y)))
      : boxDistance(spot, served);
  if (distance <= FAR) return undefined;
  const what = "pad" in served ? `pad ${served.pad} of ${anchorRef}` : anchorRef;
  const where = `${Math.round(distance * 10) / 10} mm from ${what}`;
  return blockers.length > 0
    ? `${where}, the nearest free spot: nearer ones are taken by ${describeBlockers(blockers)}`
    : `${where}, where its connections to its nets' copper are shortest`;
}

/** How far `p` is from the nearest point of `box`, mm (0 inside it). */
function boxDistance(p: PointMm, box: BBox): number {
  return Math.hypot(Math.max(0, box.minX - p.x, p.x - box.maxX), Math.max(0, box.minY - p.y, p.y - box.maxY));
}

/**
 * What is wrong with a search's spot, worst highest: none (0), its pads would leave a pour a
 * strip under the minimum connection width (1), its pads could not be connected there (2).
 */
function flaw(result: SearchResult): number {
  return result.spot?.connectable === false ? 2 : result.spot?.strip ? 1 : 0;
}

/** How many more spots a new part tries when a part placed beside it cannot be connected there, or leaves a strip. */
const ANCHOR_RETRIES = 4;
/** How far each of those spots is from the ones tried before, mm: the next grid step over is boxed in the same way. */
const ANCHOR_MOVE = 3;

/** A part this plan adds, where it was placed, and the spots it was moved away from. */
interface Placed {
  add: FootprintAdd;
  instance: SList;
  anchorRef: string | undefined;
  avoid: NonNullable<SearchRequest["avoid"]>;
  spot: BoardSpot;
  /** The routes planned for its pads there. */
  routes: Laid[];
}

/** What a new footprint is placed next to: a footprint on the board or one placed before it. */
interface Anchor {
  ref: string;
  side: Side;
  rotation: number;
  box: ReturnType<typeof boardBounds>;
  node: SList;
}

/** The additions in plan order, each one anchored on another addition moved after that one. */
function anchoredLast(added: FootprintAdd[], anchorOf: (ref: string) => string | undefined): FootprintAdd[] {
  const ordered: FootprintAdd[] = [];
  const visit = (add: FootprintAdd, seen: Set<string>) => {
    if (ordered.includes(add) || seen.has(add.ref)) return;
    seen.add(add.ref);
    const anchor = added.find((a) => a.ref === anchorOf(add.ref));
    if (anchor) visit(anchor, seen);
    ordered.push(add);
  };
  for (const add of added) visit(add, new Set());
  return ordered;
}

/**
 * The footprint a sync will add, at the origin on the front: its real pads, courtyard and
 * silkscreen, its text as `applyBoardSync` writes it (raised to the board's minimum, the
 * reference hidden where the board hides its like).
 */
function newInstance(libraries: Libraries, add: FootprintAdd, rules: BoardRules): SList {
  const library = libraries.resolveFootprint(add.libId).doc.root;
  return instantiateFootprint(library, {
    libId: add.libId,
    uuidSeed: add.uuidSeed,
    at: { x: 0, y: 0, rotation: 0 },
    side: "front",
    reference: add.ref,
    value: add.value,
    fields: add.fields,
    flags: add.flags,
    silkText: rules.silkText(),
    hideReference: add.hideReference,
  });
}

/** A copy of `footprint` at `spot`, as an obstacle for the next. */
function placedCopy(footprint: SList, spot: BoardSpot): SList {
  const node = cloneNode(footprint);
  if (sideOf(text(child(node, "layer") ?? node, 1) ?? "F.Cu") !== spot.side) flipFootprint(node);
  moveFootprint(node, spot);
  return node;
}

export interface FootprintMove {
  /** Place it next to this part's footprint. */
  near?: string;
  /** Or at these coordinates (mm). */
  x?: number;
  y?: number;
  rotation?: number;
  /** The side to put it on; a through-hole part changes side only when this says so. */
  side?: Side;
}

/**
 * Moves a footprint that is not routed yet: next to another part's footprint (the best spot
 * `findSpot` finds) or to given coordinates, checked against every obstacle; `side` flips it
 * as KiCad does. `obstacles` is the board's index when the caller keeps one; it is kept current.
 * `routedBefore` says the part was on the board before this run, so copper on its pads is
 * its routing; a part the run added was only put down on such copper, which stays when it moves.
 * `routedAlone` says no other part is routed again with it: then, as for a new part, a spot near
 * `near` where its pads can be routed is preferred when one of the best few offers it.
 */
export function placeFootprint(
  board: Board,
  ref: string,
  move: FootprintMove,
  rules: BoardRules,
  obstacles = new BoardObstacles(board, rules),
  routedBefore = true,
  routedAlone = true,
): BoardSpot {
  const fp = movable(board, ref, routedBefore);
  const side = sideOf(fp.layer);
  const target = move.side ?? side;
  const padNets = new Map(fp.pads.flatMap((p) => (p.net?.name ? [[p.number, p.net.name] as [string, string]] : [])));
  obstacles.remove(ref);
  try {
    let spot: BoardSpot;
    if (move.near !== undefined) {
      const anchor = board.footprint(move.near);
      const anchorBox = anchor && boardBounds(anchor.node);
      if (!anchor || !anchorBox)
        throw new CopperheadError("not_found", `No footprint ${move.near} on the board to place ${ref} next to.`, {
          fix: "Name a part that is on the board.",
          ref: move.near,
        });
      const copper = new NetCopper(obstacles, padNets.values());
      const pin = servedPin(anchor.node, [...padNets.values()], padsPerNet(board), obstacles.copper);
      // Asked for a side: that side only. Otherwise its own side, and a surface-mount part may flip.
      const result = findSpot(
        board,
        obstacles,
        copper,
        {
          footprint: fp.node,
          padNets,
          rotation: move.rotation ?? anchor.at.rotation,
          anchor: pin ? pinBox(pin) : anchorBox,
          // Spots are tried for routes as a new part's are, unless another part is routed again
          // with it (a capacitor routed to a new regulator): their routes are laid together,
          // which one part's trial cannot foresee.
          ...(routedAlone ? { connectable: routeTrial(board, obstacles, rules, ref) } : {}),
        },
        target,
        move.side === undefined && mayGoOnOtherSide(board, fp.node, target),
      );
      if (!result.spot) {
        throw new CopperheadError(
          "edit_conflict",
          `No free spot for ${ref} near ${move.near}${move.side ? ` on the ${move.side}` : ""}: ${describeBlockers(result.blockers)}.`,
          {
            fix: 'Ask find_space (document: "board") for a free area near it and place_footprint at its x, y; or name another part as near, or try side: "back" or another rotation.',
            ref,
          },
        );
      }
      spot = result.spot;
      const far = farNote(spot, pin ?? anchorBox, move.near, result.blockers);
      if (far) spot = { ...spot, far };
    } else {
      spot = checkCoordinates(board, obstacles, fp, move, target);
    }
    if (spot.side !== side) flipFootprint(fp.node);
    moveFootprint(fp.node, spot);
    return spot;
  } finally {
    obstacles.add(fp.node);
  }
}

/** What the route trials of one placement share: the zones, the pour-cut judge (each fill read once) and what it placed before. */
interface TrialContext {
  zones?: Zone[];
  watch?: ReturnType<typeof splitWatch>;
  placedBefore?: Laid[];
}

/**
 * Whether the pads of `ref` at a spot the search tries can be routed to their nets' copper, and
 * by which routes: the best few clear spots are tried with it, so a part lands where it can be
 * connected when one of them allows it. A route must leave every pour whole, with the pads and
 * routes of the parts placed before it in the same plan (`placedBefore`) cutting it too: a new
 * LED's pads beside a neck of the pour, and its resistor's route through the rest of it.
 */
function routeTrial(
  board: Board,
  obstacles: BoardObstacles,
  rules: BoardRules,
  ref: string,
  { zones = boardZones(board.root), watch = splitWatch(board, rules), placedBefore = [] }: TrialContext = {},
): (pads: SpotPad[]) => Laid[] | undefined {
  return (pads) =>
    connectingRoutes(
      board,
      obstacles,
      rules,
      pads.map((p) => drawn({ kind: "pad", what: `a pad of ${ref}`, net: p.net, layers: p.layers, ref }, p.shape)),
      zones,
      (copper) => watch([...pads, ...placedBefore, ...copper]),
    );
}

/**
 * The spot `find_space` offers footprint `ref` (on the board) within `REACH` of `anchor`:
 * placement's own search, in the one rotation and on the one side asked, so `placeFootprint`
 * at its coordinates accepts it. `obstacles` is the board's index; it is left as it was.
 */
export function spotNear(
  board: Board,
  ref: string,
  anchor: BBox,
  side: Side,
  rotation: number | undefined,
  rules: BoardRules,
  obstacles = new BoardObstacles(board, rules),
): SearchResult {
  const fp = board.footprint(ref);
  if (!fp)
    throw new CopperheadError("not_found", `No footprint ${ref} on the board.`, {
      fix: "Call sync_board first so the board has the part, or check the reference.",
      ref,
    });
  // Where the part stands now is free for it.
  obstacles.remove(ref);
  try {
    const nets = fp.pads.flatMap((p) => (p.net?.name ? [p.net.name] : []));
    return searchSpot(board, obstacles, new NetCopper(obstacles, nets), {
      footprint: fp.node,
      rotation: rotation ?? fp.at.rotation,
      fixedRotation: true,
      sides: [side],
      anchor,
      reach: REACH,
    });
  } finally {
    obstacles.add(fp.node);
  }
}

/**
 * What a run can do about a part it may not move: no edit tool unlocks a part or drags its
 * tracks along, so the advice names only what the model can do.
 */
const LEAVE_IT =
  "Leave it where it is and place the other parts around it (find_space shows the free areas); if the request needs it moved, refuse and say why.";

/** The footprint `ref`, refusing one that is missing, locked or (when `routedBefore`) routed. */
function movable(board: Board, ref: string, routedBefore: boolean): Footprint {
  const fp = board.footprint(ref);
  if (!fp)
    throw new CopperheadError("not_found", `No footprint ${ref} on the board.`, {
      fix: "Call sync_board first so the board has the part, or check the reference.",
      ref,
    });
  if (fp.locked)
    throw new CopperheadError("edit_conflict", `${ref} is locked on the board; a lock means "do not move".`, {
      fix: LEAVE_IT,
      ref,
    });
  if (routedBefore && copperOnPads(board, fp) > 0) {
    throw new CopperheadError(
      "edit_conflict",
      `${ref} is routed with copper that was there before this run: moving it would leave its tracks behind.`,
      { fix: LEAVE_IT, ref },
    );
  }
  return fp;
}

/** The spot at the given coordinates, when the footprint fits there; else what is in the way. */
function checkCoordinates(
  board: Board,
  obstacles: BoardObstacles,
  fp: Footprint,
  move: FootprintMove,
  side: Side,
): BoardSpot {
  if (move.x === undefined || move.y === undefined)
    throw new CopperheadError("usage", "place_footprint needs near, or both x and y.", {
      fix: "Pass near (a reference) or x and y in mm.",
    });
  const rotation = move.rotation ?? fp.at.rotation;
  const blocker = spotBlocker(board, obstacles, fp.node, side, rotation)(move.x, move.y);
  if (blocker) {
    throw new CopperheadError(
      "edit_conflict",
      `${fp.ref} does not fit at ${move.x}, ${move.y}${side !== sideOf(fp.layer) ? ` on the ${side}` : ""}: ${blocker.item.what} is in the way (${blocker.reason}).`,
      {
        fix: "Pick another spot, or pass near to let copperhead find one.",
        ref: fp.ref,
      },
    );
  }
  return { x: move.x, y: move.y, rotation, side, distance: 0, ratsnest: 0 };
}
