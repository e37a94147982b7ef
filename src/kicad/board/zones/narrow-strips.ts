/**
 * Where a part's own pads squeeze a pour of another net into a strip narrower than the board's
 * minimum connection width. Two pads a little more than twice the pour's clearance apart leave
 * such a strip between them: on multichannel's flooded back, an 0603 resistor's pads are
 * 0.85 mm apart and the GND pour keeps 0.3 mm from each, which leaves 0.25 mm against the
 * board's 0.3 mm. KiCad's fill keeps the strip (it is no thinner than the zone's minimum width)
 * and DRC reports it as `connection_width`, naming only the zone, wherever the pour runs round
 * the part. A spot where other copper keeps the pour from between the pads avoids it, and so
 * does a footprint with its pads closer together (the pour stays out) or farther apart; the
 * model is told at once, with the part and the place, to choose.
 *
 * Read after the refill, the fill says whether the pour runs between the two pads, and the
 * pads' gap less the clearances says how wide it runs there. Read before placing (`stripWatch`),
 * the saved fill says whether a spot is one where it would: placement ranks those last.
 */
import { boxesOverlap, boxesWithin, boxGap, boxOf, inflate, overlap, type ShapeMm } from "../clearance/geometry.ts";
import { copperLayers, footprintItems } from "../clearance/items.ts";
import type { BoardRules } from "../clearance/rules.ts";
import type { BBox, Board, PointMm } from "../model.ts";
import { boardZones, filledPolygons, insidePolygon, zoneFillRules, zoneOnLayer, type Zone } from "./zones.ts";

export interface NarrowStrip {
  ref: string;
  pads: [string, string];
  /** The pour's net and layer. */
  net: string;
  layer: string;
  /** How wide the strip runs, mm: the pads' gap less the pour's clearance to each. */
  width: number;
  /** The board's minimum connection width, mm. */
  minimum: number;
  at: PointMm;
}

/** A pad as the check reads it: a board pad's item, or one of a footprint tried at a spot. */
interface StripPad {
  shape: ShapeMm;
  net: string;
  layers: ReadonlySet<string>;
  pad?: string;
  /** The pad's own clearance override, mm. */
  clearance?: number;
}

/** The strips of other nets' pours the pads of `refs` leave narrower than the board's minimum connection width. */
export function narrowStrips(board: Board, refs: string[], rules: BoardRules): NarrowStrip[] {
  if (rules.constraints.minConnection <= 0 || refs.length === 0) return [];
  const zones = pourZones(board);
  const layers = copperLayers(board);
  return refs.flatMap((ref) => {
    const fp = board.footprint(ref);
    if (!fp) return [];
    const pads = footprintItems(fp.node, layers)
      .filter((i) => i.kind === "pad" && i.pad !== undefined)
      .map((item) => ({ ...item, shape: item.shape() }));
    return stripsOf(pads, zones, layers, rules, filledPolygons).map((s) => ({ ref, ...s }));
  });
}

/**
 * Whether a footprint's pads at a spot would leave a strip, judged before it stands there: the
 * saved fill says whether the pour runs where the pads would sit, as the refill after placing
 * them keeps it between them. Placement ranks such a spot below one that leaves none. The
 * zones and their fills are read at the first question, and each fill once.
 */
export function stripWatch(board: Board, rules: BoardRules): (pads: StripPad[]) => boolean {
  if (rules.constraints.minConnection <= 0) return () => false;
  let zones: Zone[] | undefined;
  const layers = copperLayers(board);
  const fills = new Map<Zone, Map<string, PointMm[][]>>();
  const fillsOf = (zone: Zone, layer: string) => {
    let byLayer = fills.get(zone);
    if (!byLayer) fills.set(zone, (byLayer = new Map()));
    let found = byLayer.get(layer);
    if (!found) byLayer.set(layer, (found = filledPolygons(zone, layer)));
    return found;
  };
  return (pads) => pads.length > 1 && stripsOf(pads, (zones ??= pourZones(board)), layers, rules, fillsOf).length > 0;
}

/** The filled zones of a net, which a pad of another net can squeeze. */
function pourZones(board: Board): Zone[] {
  return boardZones(board.root).filter((z) => z.filled && !z.ruleArea && z.net !== "");
}

/** The strips one part's `pads` leave in `zones`, each zone's fill on a layer read by `fillsOf`. */
function stripsOf(
  pads: StripPad[],
  zones: Zone[],
  layers: string[],
  rules: BoardRules,
  fillsOf: (zone: Zone, layer: string) => PointMm[][],
): Omit<NarrowStrip, "ref">[] {
  const minimum = rules.constraints.minConnection;
  const extent = boxOf(pads.flatMap((p) => p.shape.paths));
  const found: Omit<NarrowStrip, "ref">[] = [];
  for (const zone of zones.filter((z) => boxesOverlap(z.box, extent))) {
    const { clearance: own, minThickness } = zoneFillRules(zone.node);
    // A strip thinner than the zone's minimum width is no strip: the fill leaves it out.
    if (minThickness >= minimum) continue;
    const clearance = (p: StripPad) => Math.max(own, rules.clearance(p.net, zone.net), p.clearance ?? 0);
    for (const layer of layers.filter((l) => zoneOnLayer(zone, l))) {
      const here = pads.filter((p) => p.layers.has(layer) && p.net !== zone.net);
      for (const [i, a] of here.entries()) {
        for (const b of here.slice(i + 1)) {
          const room = clearance(a) + clearance(b);
          // Boxes first: of a large part's pads, only neighbours come this close.
          if (!boxesWithin(a.shape.box, b.shape.box, room + minimum)) continue;
          if (!overlap(inflate(a.shape, room + minimum), b.shape)) continue;
          const at = midpoint(a.shape.box, b.shape.box);
          // Read only for a pair close enough: a plane's fill runs to a hundred thousand points.
          if (!fillsOf(zone, layer).some((fill) => insidePolygon(fill, at))) continue;
          // Pads of one part face each other square, so their boxes' gap is theirs.
          const width = Math.round((boxGap(a.shape.box, b.shape.box) - room) * 1000) / 1000;
          found.push({ pads: [a.pad ?? "", b.pad ?? ""], net: zone.net, layer, width, minimum, at });
        }
      }
    }
  }
  return found;
}

/** For a person, and for the model: the strip, what DRC will call it, and what avoids it. */
export function describeNarrowStrip(s: NarrowStrip): string {
  return `pads ${s.pads[0]} and ${s.pads[1]} leave the ${s.net} pour on ${s.layer} a strip ${s.width.toFixed(2)} mm wide between them at ${s.at.x.toFixed(2)}, ${s.at.y.toFixed(2)}, under the board's ${s.minimum} mm minimum connection width (DRC: connection_width); a spot where the pour does not run between them, or a footprint with its pads closer together or farther apart, avoids it`;
}

function midpoint(a: BBox, b: BBox): PointMm {
  return { x: (a.minX + a.maxX + b.minX + b.maxX) / 4, y: (a.minY + a.maxY + b.minY + b.maxY) / 4 };
}
