/**
 * Thermal spokes: a pad inside a pour of its net is joined to the refilled fill by four spokes,
 * along its axes (at 45° for a round pad), each crossing the thermal gap to fill that keeps the
 * zone's clearance from other nets and is at least its minimum width. Other nets' copper within
 * that clearance of a spoke's corridor cuts the spoke off, and KiCad's DRC flags a pad left with
 * fewer than `MIN_SPOKES` ("starved thermal"). New copper may cut spokes off only while enough
 * are left, so a track may pass beside a pad's free spokes and a part may sit next to a
 * ground pad without starving it.
 */
import type { PointMm } from "../model.ts";
import { inflate, overlap, stroke, type ShapeMm } from "./geometry.ts";
import type { BoardItem, SpokeFrame, Thermal } from "./items.ts";

/** A zone's minimum spoke count as KiCad sets it by default. */
export const MIN_SPOKES = 2;

/**
 * A pad as the spoke check sees it: its outline, its spokes' directions, and the pour that joins
 * it, on the `layers` the pour and the pad share. Only copper on those layers cuts its spokes: a
 * front track beside a through-hole pad leaves its spokes into a back pour whole.
 */
export interface SpokedPad {
  shape: ShapeMm;
  frame: SpokeFrame;
  thermal: Thermal;
  layers: ReadonlySet<string>;
}

/** Each spoke's corridor, grown by the zone's clearance: other nets' copper overlapping one cuts that spoke off. */
export function spokeCorridors(pad: SpokedPad): ShapeMm[] {
  const { width, clearance, thickness } = pad.thermal;
  return spokeEnds(pad).map((end) => inflate(stroke([end.from, end.to], Math.max(width, thickness)), clearance));
}

/**
 * Where each spoke meets the fill: another pad of the pad's net over that spot leaves no fill
 * there (it keeps its own gap), so the spoke does not count, though its corridor may start
 * inside that pad (antenna-eval's ring of small via pads inside a large mounting pad).
 */
export function spokeTips(pad: SpokedPad): ShapeMm[] {
  return spokeEnds(pad).map((end) => stroke([end.to], pad.thermal.thickness));
}

function spokeEnds(pad: SpokedPad): { from: PointMm; to: PointMm }[] {
  const { box } = pad.shape;
  const centre = { x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2 };
  const { gap, thickness } = pad.thermal;
  return [0, 1, 2, 3].map((k) => {
    const angle = ((pad.frame.angle + 90 * k) * Math.PI) / 180;
    const reach = pad.frame.half[k % 2]! + gap + thickness;
    return { from: centre, to: { x: centre.x + reach * Math.cos(angle), y: centre.y - reach * Math.sin(angle) } };
  });
}

/** The spokes (indices) that any of `items` cuts off. */
export function cutSpokes(corridors: ShapeMm[], items: BoardItem[]): Set<number> {
  const cut = new Set<number>();
  corridors.forEach((corridor, k) => {
    if (items.some((item) => overlap(corridor, item.shape()))) cut.add(k);
  });
  return cut;
}
