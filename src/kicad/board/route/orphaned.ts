/**
 * The tracks and vias a removed part leaves serving nothing: what KiCad's track cleanup (delete
 * tracks unconnected at one end, then vias no longer joining two layers) would take once the
 * part's pads are gone, followed from those pads along their nets' copper and no farther, so
 * copper that dangled before stays as it was.
 *
 * - A track goes when an end that met the removed copper meets nothing else of its net on its
 *   layer: no pad, track or via, nor a zone's fill unless the end was on a removed pad (a pour
 *   joined to a pad solid covers it, and that fill goes with the pad).
 * - A via goes when the removed copper met it and no track or pad is left on it (a via laid to
 *   take the part's pad to a plane, a via in its pad), or what is left meets it on fewer than two
 *   layers.
 *
 * Used when a run removes a part (`BoardEditor.vacateForRemoval`): the designer asked for the part
 * to go, and a stub that served only it is a dangling-track warning in DRC, not a design choice.
 */
import { circle, growBox, boxesOverlap, overlap } from "../clearance/geometry.ts";
import { copperLayers, footprintItems, sharesLayer, trackItems, type BoardItem } from "../clearance/items.ts";
import { boardZones, filledPolygons, insidePolygon } from "../zones/zones.ts";
import { FOOTPRINT_REACH } from "../connectivity.ts";
import type { Board, PointMm } from "../model.ts";

/** How close a point must come to copper to meet it, mm: a track end on a pad's edge meets it. */
const MEETS = 1e-4;

/** The ids of the tracks and vias that served only the pads of the footprints `refs`. */
export function orphanedCopper(board: Board, refs: readonly string[]): Set<string> {
  const copper = copperLayers(board);
  const removing = new Set(refs);
  const gone: BoardItem[] = refs.flatMap((ref) => {
    const fp = board.footprint(ref);
    return fp ? footprintItems(fp.node, copper).filter((i) => i.kind === "pad" && i.net !== "") : [];
  });
  const nets = new Set(gone.map((p) => p.net));
  if (nets.size === 0) return new Set();

  const pieces = trackItems(board, copper).filter((i) => i.id !== undefined && nets.has(i.net));
  const fills = new Map<string, { layer: string; polygon: PointMm[] }[]>();
  for (const zone of boardZones(board.root)) {
    if (!nets.has(zone.net) || zone.ruleArea) continue;
    const list = fills.get(zone.net) ?? [];
    for (const layer of copper) for (const polygon of filledPolygons(zone, layer)) list.push({ layer, polygon });
    fills.set(zone.net, list);
  }
  const padsNear = new Map<string, BoardItem[]>();
  /** Pads of the nets of the parts that stay, near `at`. */
  const otherPads = (at: PointMm): BoardItem[] => {
    const key = `${Math.floor(at.x / FOOTPRINT_REACH)},${Math.floor(at.y / FOOTPRINT_REACH)}`;
    let pads = padsNear.get(key);
    if (!pads) {
      const cell = {
        minX: Math.floor(at.x / FOOTPRINT_REACH) * FOOTPRINT_REACH,
        minY: Math.floor(at.y / FOOTPRINT_REACH) * FOOTPRINT_REACH,
      };
      const box = growBox(
        { ...cell, maxX: cell.minX + FOOTPRINT_REACH, maxY: cell.minY + FOOTPRINT_REACH },
        FOOTPRINT_REACH,
      );
      pads = board
        .footprintsAt(box)
        .filter((fp) => !removing.has(fp.ref))
        .flatMap((fp) => footprintItems(fp.node, copper).filter((i) => i.kind === "pad" && nets.has(i.net)));
      padsNear.set(key, pads);
    }
    return pads;
  };

  const taken = new Set<BoardItem>();
  const meets = (item: BoardItem, at: PointMm, layer: string) =>
    item.layers.has(layer) && overlap(item.shape(), circle(at, MEETS));
  /**
   * Whether a track, via or pad left of `piece`'s net meets the point on `layer`, `piece` aside.
   * With `otherEnd` (the track's other end), what meets both ends does not hold it: a jog, a stub
   * into a via or the last piece into a pad's centre, lying within that copper, joins it to
   * nothing more.
   */
  const heldByCopper = (piece: BoardItem, at: PointMm, layer: string, otherEnd?: PointMm): boolean => {
    const holds = (p: BoardItem) => meets(p, at, layer) && !(otherEnd && meets(p, otherEnd, layer));
    return (
      pieces.some((p) => p !== piece && !taken.has(p) && holds(p)) ||
      otherPads(at).some((p) => p.net === piece.net && holds(p))
    );
  };
  const inFill = (net: string, at: PointMm, layer: string): boolean =>
    (fills.get(net) ?? []).some((f) => f.layer === layer && insidePolygon(f.polygon, at));
  /** Whether the via keeps a reason to be: tracks or pads on it, on two layers or more counting the pours. */
  const viaKept = (via: BoardItem): boolean => {
    const at = via.ends![0]!;
    const copperOn = (layer: string) =>
      pieces.some(
        (p) =>
          p !== via &&
          !taken.has(p) &&
          p.kind === "track" &&
          p.layers.has(layer) &&
          boxesOverlap(p.box, via.box) &&
          overlap(p.shape(), via.shape()),
      ) || heldByCopper(via, at, layer);
    const withCopper = copper.filter(copperOn);
    return (
      withCopper.length > 0 &&
      copper.filter((layer) => withCopper.includes(layer) || inFill(via.net, at, layer)).length >= 2
    );
  };

  const queue = [...gone];
  while (queue.length > 0) {
    const was = queue.pop()!;
    for (const piece of pieces) {
      if (taken.has(piece) || piece.net !== was.net || !boxesOverlap(growBox(piece.box, MEETS), was.box)) continue;
      let orphaned: boolean;
      if (piece.kind === "via") {
        orphaned = sharesLayer(piece.layers, was.layers) && overlap(piece.shape(), was.shape()) && !viaKept(piece);
      } else {
        const layer = [...piece.layers][0]!;
        const [a, b] = piece.ends!;
        orphaned = [
          [a!, b!],
          [b!, a!],
        ].some(
          ([end, other]) =>
            meets(was, end!, layer) &&
            !heldByCopper(piece, end!, layer, other) &&
            (was.kind === "pad" || !inFill(piece.net, end!, layer)),
        );
      }
      if (orphaned) {
        taken.add(piece);
        queue.push(piece);
      }
    }
  }
  return new Set([...taken].map((p) => p.id!));
}
