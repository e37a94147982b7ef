/**
 * Whether a footprint's pads at a spot would cut a pour of another net in two. A pad set in a
 * pour's narrow neck keeps the pour its clearance away all round, and once the pour is refilled
 * the copper beyond the neck is joined to the rest by nothing: KiCad's DRC reports the pieces as
 * a missing connection between two parts of the zone (pico-ice's front GND pour, cut by a new
 * capacitor's 3V3 pad between two of the board's parts). The router takes up a route that does
 * this (route/pour-cuts.ts); a pad cannot be taken up, so placement asks before it puts one down.
 *
 * Judged on the saved fill, as `stripWatch` is: the fill less the pads and their clearances,
 * with what is thinner than the zone's minimum width taken away (KiCad's fill drops it), falls
 * apart into more pieces than it was. Asked around the pads first, which settles almost every
 * spot; only a fill that falls apart there is taken whole, as the pieces may still meet beyond.
 * Pieces are a cut only where they leave the net in more islands (connectivity.ts `FillJoins`):
 * a piece holding no copper of the net is dropped by KiCad's filler, and two pieces whose copper
 * still joins the long way round (by vias, through another layer's pour) are one net to DRC.
 */
import { Clipper, EndType, FillRule, JoinType, type PathsD } from "clipper2-ts";
import {
  boxesOverlap,
  boxOf,
  clipToBox,
  growBox,
  inflate,
  insidePath,
  union,
  type ShapeMm,
} from "../clearance/geometry.ts";
import type { BoardRules } from "../clearance/rules.ts";
import type { BoardItem } from "../clearance/items.ts";
import { FillJoins } from "../connectivity.ts";
import type { BBox, Board, PointMm } from "../model.ts";
import { boardZones, zoneFillRules, zoneFills, zoneOnLayer, type Zone } from "./zones.ts";

/** A pad as the check reads it: one of a footprint tried at a spot. */
interface SplitPad {
  shape: ShapeMm;
  net: string;
  layers: ReadonlySet<string>;
  /** The pad's own clearance override, mm. */
  clearance?: number;
}

/** How far round the pads the fill is looked at first, mm: past a neck they could close. */
const AROUND = 1.5;
/** A piece of fill smaller than this, mm², is no piece: KiCad's fill leaves no such sliver. */
const SLIVER = 0.01;
/** How far past a pad's gap its spokes reach into the fill, mm: enough to meet it. */
const JOIN = 0.05;
/** Decimal places Clipper keeps (its integer grid is 1 nm), as in clearance/geometry.ts. */
const PRECISION = 6;

/**
 * The pour a footprint's pads at a spot would cut in two, as a blocker placement can report
 * ("the GND pour on F.Cu"), or undefined. The zones and their fills are read at the first
 * question, and each fill once.
 */
export function splitWatch(board: Board, rules: BoardRules): (pads: SplitPad[]) => BoardItem | undefined {
  let zones: Zone[] | undefined;
  const joins = new Map<string, FillJoins>();
  const joinsOf = (zone: Zone, index: number) => {
    const key = `${zone.id} ${index}`;
    let found = joins.get(key);
    if (!found) joins.set(key, (found = new FillJoins(board, zone, index)));
    return found;
  };
  // A pour's fill may hold tens of thousands of points: its box is taken once, not at each spot.
  const boxes = new WeakMap<PointMm[], BBox>();
  const boxOfFill = (points: PointMm[]) => {
    let found = boxes.get(points);
    if (!found) boxes.set(points, (found = boxOf([points])));
    return found;
  };
  return (pads) => {
    if (pads.length === 0) return undefined;
    zones ??= boardZones(board.root).filter((z) => z.filled && !z.ruleArea && z.net !== "");
    const extent = boxOf(pads.flatMap((p) => p.shape.paths));
    for (const zone of zones.filter((z) => boxesOverlap(z.box, growBox(extent, AROUND)))) {
      const { clearance: own, minThickness, thermalGap } = zoneFillRules(zone.node);
      for (const layer of layersOf(pads).filter((l) => zoneOnLayer(zone, l))) {
        const cutting = pads.filter((p) => p.layers.has(layer) && p.net !== zone.net);
        if (cutting.length === 0) continue;
        const knockout = union(
          cutting.map((p) => inflate(p.shape, Math.max(own, rules.clearance(p.net, zone.net), p.clearance ?? 0))),
        );
        // A new pad of the pour's own net joins the fill round it by its spokes, across its gap.
        const joining = pads
          .filter((p) => p.layers.has(layer) && p.net === zone.net)
          .flatMap((p) => inflate(p.shape, thermalGap + JOIN).paths);
        for (const [index, fill] of zoneFills(zone).entries()) {
          if (fill.layer !== layer || !boxesOverlap(boxOfFill(fill.points), knockout.box)) continue;
          const cut = piecesLeft(fill.points, knockout, joining, minThickness);
          if (!cut) continue;
          const net = joinsOf(zone, index);
          if (net.islandsWith(cut) > net.islands) return pourItem(zone, layer);
        }
      }
    }
    return undefined;
  };
}

/**
 * The pieces `knockout` cuts one filled polygon into, each its outline and then its holes, where
 * they are more than one that `joining` (new pads of the pour's net, with their gap) does not
 * join again: asked around the knockout first, which settles almost every spot, and then of the
 * whole polygon, as the pieces may still meet beyond. Undefined where the polygon stays whole.
 */
function piecesLeft(
  fill: PointMm[],
  knockout: ShapeMm,
  joining: PathsD,
  minThickness: number,
): PointMm[][][] | undefined {
  const near = clipToBox(fill, growBox(knockout.box, AROUND));
  const after = near.reduce((n, piece) => n + cutInto(piece, knockout.paths, joining, minThickness).length, 0);
  if (after <= near.length) return undefined;
  const pieces = cutInto([fill], knockout.paths, joining, minThickness);
  return pieces.length > 1 ? pieces : undefined;
}

/**
 * What `fill` less `cut` leaves, with what is thinner than `minThickness` taken away and pieces
 * that meet one of `joining` made one: each piece as its outline, then its holes.
 */
function cutInto(fill: PathsD, cut: PathsD, joining: PathsD, minThickness: number): PointMm[][][] {
  const left = Clipper.differenceD(fill, cut, FillRule.NonZero, PRECISION);
  const half = minThickness / 2;
  const opened = Clipper.inflatePathsD(
    Clipper.inflatePathsD(left, -half, JoinType.Round, EndType.Polygon, 2, PRECISION),
    half,
    JoinType.Round,
    EndType.Polygon,
    2,
    PRECISION,
  );
  const solid = opened.filter((p) => Math.abs(Clipper.areaD(p)) > SLIVER);
  // A new pad joins only the fill it meets: one beside the fill is no piece of it.
  const meeting = joining.filter((pad) => Clipper.intersectD(solid, [pad], FillRule.NonZero, PRECISION).length > 0);
  const joined = meeting.length > 0 ? Clipper.unionD(solid, meeting, FillRule.NonZero, PRECISION) : solid;
  // Clipper winds outlines positive and holes negative; a hole goes with the least outline round it.
  const outlines = joined.filter((p) => Clipper.areaD(p) > SLIVER).map((p) => ({ rings: [p], area: Clipper.areaD(p) }));
  for (const hole of joined.filter((p) => Clipper.areaD(p) < 0)) {
    const around = outlines.filter((o) => insidePath(hole[0]!, o.rings[0]!)).sort((a, b) => a.area - b.area)[0];
    around?.rings.push(hole);
  }
  return outlines.map((o) => o.rings);
}

function layersOf(pads: SplitPad[]): string[] {
  return [...new Set(pads.flatMap((p) => [...p.layers]))];
}

/** The pour as a blocker names it. */
function pourItem(zone: Zone, layer: string): BoardItem {
  const box = zone.box;
  return {
    kind: "pour",
    what: `the ${zone.net} pour on ${layer}`,
    net: zone.net,
    layers: new Set([layer]),
    box,
    shape: () => ({ paths: [zone.outline], box }),
  };
}
