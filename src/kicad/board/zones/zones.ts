/**
 * `kicad/board/zones/` holds the board's copper zones: reading them (this module) and
 * refilling them with KiCad's own filler (`refill.ts`).
 *
 * A zone is matched by its id: `(uuid …)` from KiCad 7 on, `(tstamp …)` in KiCad 6 files (KiCad
 * reads the one as the other). Its layers are `(layer "F.Cu")` or `(layers …)`, where KiCad 6
 * and 7 write `F&B.Cu` for both outer layers and `*.Cu` (or `In*.Cu`) for a set of them.
 */
import type { BBox, PointMm } from "../model.ts";
import { ptsPoints, readNetRef } from "../model.ts";
import { atomText, child, children, childText, num, type SList } from "../../sexpr/index.ts";

export interface Zone {
  node: SList;
  id: string;
  /** Net name, "" for no net (and for rule areas). */
  net: string;
  /** Net code in numbered boards; zones name their net by code. */
  netCode?: number;
  /** Copper layer patterns as written: a name, `F&B.Cu`, `*.Cu`, `In*.Cu`. */
  layers: string[];
  outline: PointMm[];
  box: BBox;
  /** A rule area (keepout): never filled. */
  ruleArea: boolean;
  /** KiCad fills it (`(fill yes …)`); an unfilled zone stays unfilled. */
  filled: boolean;
  priority: number;
  /**
   * Which pieces of its fill joined to nothing KiCad's filler removes (`island_removal_mode`):
   * all of them (the default), none, or those under `minArea` mm² (`island_area_min`).
   */
  islands: { remove: "always" | "never" } | { remove: "below"; minArea: number };
}

/**
 * How a zone's fill keeps off other nets' copper and how thin it may run, and how it joins pads
 * of its net by spokes, mm: its own clearance (`connect_pads`), `min_thickness`, and the
 * `thermal_gap` and `thermal_bridge_width` of its fill, KiCad's defaults where the file says
 * nothing.
 */
export function zoneFillRules(node: SList): {
  clearance: number;
  minThickness: number;
  thermalGap: number;
  thermalBridgeWidth: number;
} {
  const clearance = child(child(node, "connect_pads") ?? node, "clearance");
  const thickness = child(node, "min_thickness");
  const fill = child(node, "fill") ?? node;
  const gap = child(fill, "thermal_gap");
  const bridge = child(fill, "thermal_bridge_width");
  return {
    clearance: (clearance && num(clearance, 1)) ?? 0.5,
    minThickness: (thickness && num(thickness, 1)) ?? 0.25,
    thermalGap: (gap && num(gap, 1)) ?? 0.5,
    thermalBridgeWidth: (bridge && num(bridge, 1)) ?? 0.5,
  };
}

/** The board's top-level zones, in file order. */
export function boardZones(root: SList): Zone[] {
  return children(root, "zone").map(readZone);
}

export function readZone(node: SList): Zone {
  const layerNode = child(node, "layers") ?? child(node, "layer");
  const layers = layerNode ? layerNode.items.slice(1).flatMap((a) => (a.type === "atom" ? [atomText(a)] : [])) : [];
  const outline = ptsPoints(child(child(node, "polygon") ?? node, "pts"));
  const fill = child(node, "fill");
  const net = readNetRef(child(node, "net"));
  const priority = child(node, "priority");
  return {
    node,
    id: childText(node, "uuid") ?? childText(node, "tstamp") ?? "",
    net: childText(node, "net_name") ?? net?.name ?? "",
    netCode: net?.code,
    layers,
    outline,
    box: {
      minX: Math.min(...outline.map((p) => p.x)),
      minY: Math.min(...outline.map((p) => p.y)),
      maxX: Math.max(...outline.map((p) => p.x)),
      maxY: Math.max(...outline.map((p) => p.y)),
    },
    ruleArea: child(node, "keepout") !== undefined,
    filled: fill !== undefined && fill.items[1]?.type === "atom" && atomText(fill.items[1]) === "yes",
    priority: (priority && num(priority, 1)) ?? 0,
    islands: islandRemoval(fill),
  };
}

/** A zone's `(island_removal_mode …)`: 0 (or none) always, 1 never, 2 below `(island_area_min …)`. */
function islandRemoval(fill: SList | undefined): Zone["islands"] {
  const mode = fill && num(child(fill, "island_removal_mode") ?? fill, 1);
  if (mode === 1) return { remove: "never" };
  if (mode === 2) return { remove: "below", minArea: num(child(fill!, "island_area_min") ?? fill!, 1) ?? 10 };
  return { remove: "always" };
}

/** Whether a zone is on copper layer `layer` ("F.Cu", "In2.Cu", …). */
export function zoneOnLayer(zone: Zone, layer: string): boolean {
  return zone.layers.some((pattern) => {
    if (pattern === layer || pattern === "*.Cu") return true;
    if (pattern === "F&B.Cu") return layer === "F.Cu" || layer === "B.Cu";
    if (pattern === "In*.Cu") return /^In\d+\.Cu$/.test(layer);
    return false;
  });
}

/** Whether `point` lies inside the zone's outline (even-odd rule). */
export function insideOutline(zone: Zone, point: PointMm): boolean {
  return insidePolygon(zone.outline, point);
}

export function insidePolygon(polygon: PointMm[], point: PointMm): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i]!;
    const b = polygon[j]!;
    if (a.y > point.y !== b.y > point.y && point.x < ((b.x - a.x) * (point.y - a.y)) / (b.y - a.y) + a.x)
      inside = !inside;
  }
  return inside;
}

/** How far `point` is from a polygon's area, mm: 0 inside it (even-odd, so a fill's holes count as outside). */
export function distanceToPolygon(polygon: PointMm[], point: PointMm): number {
  if (insidePolygon(polygon, point)) return 0;
  let nearest = Infinity;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[j]!;
    const b = polygon[i]!;
    const [dx, dy] = [b.x - a.x, b.y - a.y];
    const t =
      dx === 0 && dy === 0
        ? 0
        : Math.max(0, Math.min(1, ((point.x - a.x) * dx + (point.y - a.y) * dy) / (dx * dx + dy * dy)));
    nearest = Math.min(nearest, Math.hypot(a.x + t * dx - point.x, a.y + t * dy - point.y));
  }
  return nearest;
}

/**
 * Fills already read, by their `filled_polygon` node: every route trial asks for the fills
 * around it again, and a refill puts new nodes in place of the old, never edits one.
 */
const readFills = new WeakMap<SList, { layer: string; points: PointMm[] }>();

/** The zone's filled polygons with their layers, board coordinates (shared: not to be changed). */
export function zoneFills(zone: Zone): { layer: string; points: PointMm[] }[] {
  return children(zone.node, "filled_polygon").map((fill) => {
    let read = readFills.get(fill);
    if (!read) {
      const pts = child(fill, "pts");
      read = {
        layer: childText(fill, "layer") ?? "",
        points: (pts ? children(pts, "xy") : []).map((xy) => ({ x: num(xy, 1) ?? 0, y: num(xy, 2) ?? 0 })),
      };
      readFills.set(fill, read);
    }
    return read;
  });
}

/** The zone's filled polygons on `layer`, board coordinates. */
export function filledPolygons(zone: Zone, layer: string): PointMm[][] {
  return zoneFills(zone)
    .filter((f) => f.layer === layer)
    .map((f) => f.points);
}

/** Copper that the edit added: where it is, its net and its copper layers ("all" for holes). */
export interface NewCopper {
  box: BBox;
  net: string;
  layers: Set<string> | "all";
  /** Ids of the tracks or vias it is; none for a new footprint's pads. */
  ids?: string[];
}

/**
 * The fillable zones that new copper comes near (its box grown by `margin`, on a layer the zone
 * is on): copper of another net, whose fill must be cut back, and a new pad of the zone's own
 * net, which the fill joins by thermal spokes across a gap KiCad cuts around it (left in the
 * saved solid fill, the pad has no spokes, and DRC reports it starved). A track or via of the
 * zone's net needs no refill: it connects by touching the fill (the router ends routes in it),
 * as KiCad joins them solid. Refilling is kept
 * to what the change needs because KiCad refills a whole zone, and a zone last filled by an
 * older KiCad comes back different far from the change. Rule areas and zones KiCad leaves
 * unfilled are never refilled.
 */
export function zonesTouchedBy(zones: Zone[], added: NewCopper[], margin: number): Zone[] {
  return zones.filter(
    (zone) =>
      zone.filled &&
      !zone.ruleArea &&
      added.some(
        (item) =>
          (item.net !== zone.net || item.ids === undefined) &&
          item.box.minX - margin < zone.box.maxX &&
          zone.box.minX < item.box.maxX + margin &&
          item.box.minY - margin < zone.box.maxY &&
          zone.box.minY < item.box.maxY + margin &&
          (item.layers === "all" || [...item.layers].some((layer) => zoneOnLayer(zone, layer))),
      ),
  );
}
