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
 */
import { Clipper, EndType, FillRule, JoinType, type PathsD } from "clipper2-ts";
import { boxesOverlap, boxOf, clipToBox, growBox, inflate, union, type ShapeMm } from "../clearance/geometry.ts";
import type { BoardRules } from "../clearance/rules.ts";
import type { BoardItem } from "../clearance/items.ts";
import type { Board, PointMm } from "../model.ts";
import { child, num } from "../../sexpr/index.ts";
import { boardZones, filledPolygons, zoneFillRules, zoneOnLayer, type Zone } from "./zones.ts";

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
  const fills = new Map<string, PointMm[][]>();
  const fillsOf = (zone: Zone, layer: string) => {
    const key = `${zone.id} ${layer}`;
    let found = fills.get(key);
    if (!found) fills.set(key, (found = filledPolygons(zone, layer)));
    return found;
  };
  return (pads) => {
    if (pads.length === 0) return undefined;
    zones ??= boardZones(board.root).filter((z) => z.filled && !z.ruleArea && z.net !== "");
    const extent = boxOf(pads.flatMap((p) => p.shape.paths));
    for (const zone of zones.filter((z) => boxesOverlap(z.box, growBox(extent, AROUND)))) {
      const { clearance: own, minThickness } = zoneFillRules(zone.node);
      for (const layer of layersOf(pads).filter((l) => zoneOnLayer(zone, l))) {
        const cutting = pads.filter((p) => p.layers.has(layer) && p.net !== zone.net);
        if (cutting.length === 0) continue;
        const knockout = union(
          cutting.map((p) => inflate(p.shape, Math.max(own, rules.clearance(p.net, zone.net), p.clearance ?? 0))),
        );
        // A new pad of the pour's own net joins the fill round it by its spokes, across its gap.
        const gap = thermalGap(zone);
        const joining = pads
          .filter((p) => p.layers.has(layer) && p.net === zone.net)
          .flatMap((p) => inflate(p.shape, gap + JOIN).paths);
        for (const fill of fillsOf(zone, layer)) {
          if (!boxesOverlap(boxOf([fill]), knockout.box)) continue;
          if (splits(fill, knockout, joining, minThickness)) return pourItem(zone, layer);
        }
      }
    }
    return undefined;
  };
}

/**
 * Whether `knockout` cuts one piece of fill into several that `joining` (new pads of the pour's
 * net, with their gap) does not join again, around it first and then whole.
 */
function splits(fill: PointMm[], knockout: ShapeMm, joining: PathsD, minThickness: number): boolean {
  const window = growBox(knockout.box, AROUND);
  const near = clipToBox(fill, window);
  const after = near.reduce((n, piece) => n + pieces(piece, knockout.paths, joining, minThickness), 0);
  if (after <= near.length) return false;
  return pieces([fill], knockout.paths, joining, minThickness) > 1;
}

/**
 * How many pieces `fill` less `cut` leaves, with what is thinner than `minThickness` taken away,
 * and pieces that meet one of `joining` counted as one.
 */
function pieces(fill: PathsD, cut: PathsD, joining: PathsD, minThickness: number): number {
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
  const joined = joining.length > 0 ? Clipper.unionD(solid, joining, FillRule.NonZero, PRECISION) : solid;
  // Clipper winds outlines positive and holes negative.
  return joined.filter((p) => Clipper.areaD(p) > SLIVER).length;
}

/** How far a pad of a zone's net stands off its fill, mm (`thermal_gap`; KiCad's default 0.5). */
function thermalGap(zone: Zone): number {
  const fill = child(zone.node, "fill") ?? zone.node;
  return num(child(fill, "thermal_gap") ?? fill, 1) ?? 0.5;
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
