/**
 * Whether a footprint on the board is the library footprint a symbol names, whatever library
 * nickname it was placed from — `footprints:C_Disc_D5.0mm` on a board and
 * `Capacitor_THT:C_Disc_D5.0mm` in the schematic are the same part when their copper and
 * drawings are. Then the sync only re-links the footprint to the schematic's library id; a
 * swap would discard the designer's text placement for nothing.
 *
 * The comparison follows what DRC's library-parity check (`FOOTPRINT::FootprintNeedsUpdate`)
 * compares: pads (number, type, shape, position, orientation, size, drill, layers and local
 * settings), graphic shapes (geometry, layer, line width, fill) and footprint zones, in any
 * order. Texts are ignored, as KiCad ignores them: every board instance moves and restyles its
 * own. So are what the board adds to an instance — uuids, nets, pin functions — and the
 * spelling differences between file-format versions.
 */
import type { PlacementMm } from "../model.ts";
import { instantiateFootprint, type Side } from "./instance.ts";
import { atomText, child, head, num, text, type SList, type SNode } from "../../sexpr/index.ts";

/** Differences the comparison found, for the sync's report; empty when the footprints match. */
export type FootprintDifference = "pads" | "graphics" | "zones" | "mount";

export function compareFootprint(board: SList, library: SList, at: PlacementMm, side: Side): FootprintDifference[] {
  const placed = instantiateFootprint(library, {
    libId: text(board, 1) ?? "",
    uuidSeed: "compare",
    at,
    side,
    reference: "",
    value: "",
    fields: [],
    flags: [],
  });
  const differences: FootprintDifference[] = [];
  if (!sameBag(items(board, isPad).map(padKey), items(placed, isPad).map(padKey))) differences.push("pads");
  if (!sameBag(items(board, isShape).map(shapeKey), items(placed, isShape).map(shapeKey))) differences.push("graphics");
  if (!sameBag(items(board, isZone).map(zoneKey), items(placed, isZone).map(zoneKey))) differences.push("zones");
  if (mountType(board) !== mountType(placed)) differences.push("mount");
  return differences;
}

const SHAPES = new Set(["fp_line", "fp_rect", "fp_circle", "fp_arc", "fp_poly", "fp_curve"]);
const isPad = (item: SList) => head(item) === "pad";
const isShape = (item: SList) => SHAPES.has(head(item) ?? "");
const isZone = (item: SList) => head(item) === "zone";

function items(footprint: SList, test: (item: SList) => boolean): SList[] {
  return footprint.items.filter((i): i is SList => i.type === "list" && test(i));
}

function sameBag(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const sa = [...a].sort();
  const sb = [...b].sort();
  return sa.every((x, i) => x === sb[i]);
}

/** Instance data the board adds to a pad, and tokens whose spelling changed between versions. */
const PAD_INSTANCE = new Set(["uuid", "tstamp", "net", "pinfunction", "pintype", "locked"]);
/** Settings written out with their default value by newer versions only. */
const PAD_DEFAULTS: Record<string, string> = {
  thermal_bridge_angle: "45",
  remove_unused_layers: "no",
  keep_end_layers: "no",
  tenting: "",
  teardrops: "",
};

function padKey(pad: SList): string {
  const parts = pad.items.slice(1).flatMap((item): string[] => {
    if (item.type === "atom") return item.raw === "locked" ? [] : [canon(item)];
    const h = head(item) ?? "";
    if (PAD_INSTANCE.has(h)) return [];
    if (h in PAD_DEFAULTS && (PAD_DEFAULTS[h] === "" || text(item, 1) === PAD_DEFAULTS[h])) return [];
    if (h === "layers") return [`(layers ${item.items.slice(1).map(canon).sort().join(" ")})`];
    if (h === "at")
      return [`(at ${round(num(item, 1))} ${round(num(item, 2))} ${round(normalizeDegrees(num(item, 3) ?? 0))})`];
    return [canon(item)];
  });
  return parts.join(" ");
}

function shapeKey(shape: SList): string {
  const h = head(shape) ?? "";
  const points = ["start", "mid", "end", "center"].map((name) => {
    const p = child(shape, name);
    return p ? `${name} ${round(num(p, 1))} ${round(num(p, 2))}` : "";
  });
  const pts = child(shape, "pts");
  const polygon = pts ? pts.items.slice(1).map(canon).join(" ") : "";
  const stroke = child(shape, "stroke");
  const width = num(child(stroke ?? shape, "width") ?? shape, 1);
  const fill = text(child(shape, "fill") ?? shape, 1);
  const filled = fill === "solid" || fill === "yes" ? "solid" : "none";
  return [h, text(child(shape, "layer") ?? shape, 1) ?? "", ...points, polygon, `w ${round(width)}`, filled].join("|");
}

function zoneKey(zone: SList): string {
  const polygon = child(zone, "polygon");
  const layers = child(zone, "layers") ?? child(zone, "layer");
  return `${layers ? canon(layers) : ""}|${polygon ? canon(polygon) : ""}`;
}

function mountType(footprint: SList): string {
  const attr = child(footprint, "attr");
  const flags = attr ? attr.items.slice(1).map((a) => (a.type === "atom" ? a.raw : "")) : [];
  return flags.find((f) => f === "smd" || f === "through_hole") ?? "";
}

/** A node as text with numbers normalised, quotes dropped and sub-lists in a stable order. */
function canon(node: SNode): string {
  if (node.type === "atom") {
    const value = Number(node.raw);
    return node.raw !== "" && !node.raw.startsWith('"') && Number.isFinite(value) ? round(value) : atomText(node);
  }
  const atoms = node.items.filter((i) => i.type === "atom").map(canon);
  const lists = node.items
    .filter((i): i is SList => i.type === "list" && !PAD_INSTANCE.has(head(i) ?? ""))
    .map(canon)
    .sort();
  return `(${[...atoms, ...lists].join(" ")})`;
}

function round(value: number | undefined): string {
  return String(Math.round((value ?? 0) * 1e5) / 1e5);
}

function normalizeDegrees(angle: number): number {
  const a = ((angle % 360) + 360) % 360;
  return Math.abs(a - 360) < 1e-9 ? 0 : a;
}
