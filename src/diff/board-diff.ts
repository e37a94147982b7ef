/**
 * The board half of a diff: footprints added, removed, swapped (another library footprint in
 * the same place), moved (position, rotation or side) or changed (value, fields, attributes);
 * nets as the pads carry them; tracks, vias and zones added or removed; the layer table; the
 * Edge.Cuts outline.
 *
 * Copper has no identity a person would recognise (its uuids change whenever KiCad rebuilds a
 * track), so tracks, vias and zones are compared by what they are — kind, layers, geometry,
 * width — and a track that moved is one removed and one added. Their net is reported but is not
 * part of that identity: a renamed net does not make every track and zone on it new (the pads
 * say that the net was renamed).
 */
import * as v from "valibot";
import { footprintToBoard, readNetRef, type Board, type Footprint } from "../kicad/board/model.ts";
import { naturalCompare } from "../util/natural-compare.ts";
import { child, children, childText, head, num, text, type SList } from "../kicad/sexpr/index.ts";
import { FieldChangeSchema, PinNetSchema, type FieldChange, type PinNet } from "./component-diff.ts";
import { diffGroups, GroupChangeSchema, MemberMoveSchema } from "./groups.ts";

export const FootprintPlacementSchema = v.object({
  x: v.number(),
  y: v.number(),
  angle: v.number(),
  /** `F.Cu` or `B.Cu`: the side it is mounted on. */
  layer: v.string(),
});
export type FootprintPlacement = v.InferOutput<typeof FootprintPlacementSchema>;

export const FootprintChangeSchema = v.object({
  ref: v.string(),
  /** `swapped`: another library footprint (with or without a move); `moved`: placement only. */
  status: v.picklist(["added", "removed", "swapped", "moved", "changed"]),
  /** Library footprint in the state that has it (after, for a change). */
  libId: v.string(),
  value: v.string(),
  /** The library footprint before a swap. */
  swappedFrom: v.optional(v.string()),
  /** Before and after of a move. */
  move: v.optional(v.object({ before: FootprintPlacementSchema, after: FootprintPlacementSchema })),
  /** Fields (`Value`, …) and `attributes`, `locked`. */
  changes: v.array(FieldChangeSchema),
  /** Where an added or removed footprint sits. */
  at: v.optional(FootprintPlacementSchema),
  /** The nets an added footprint's pads are on, or a removed one's were. */
  pads: v.array(PinNetSchema),
});
export type FootprintChange = v.InferOutput<typeof FootprintChangeSchema>;

/**
 * Millimetres, x then y. The length bound closes the tuple for validators that read 2020-12's
 * `prefixItems`, and bounds it for those that know only draft-07 and skip that keyword.
 */
const XyMm = v.pipe(v.tuple([v.number(), v.number()]), v.length(2));

export const CopperItemSchema = v.object({
  status: v.picklist(["added", "removed"]),
  kind: v.picklist(["segment", "arc", "via"]),
  /** Net name; `""` for an item on no net. */
  net: v.string(),
  /** The layer of a track, the layer pair of a via. */
  layers: v.array(v.string()),
  /** A track's start (and end), a via's position. */
  start: XyMm,
  end: v.optional(XyMm),
  width: v.number(),
});
export type CopperItem = v.InferOutput<typeof CopperItemSchema>;

export const ZoneItemSchema = v.object({
  status: v.picklist(["added", "removed"]),
  net: v.string(),
  layers: v.array(v.string()),
  name: v.string(),
  /** A rule area (keepout) rather than a copper fill. */
  ruleArea: v.boolean(),
  /** Corners of the zone's outline. */
  corners: v.number(),
});
export type ZoneItem = v.InferOutput<typeof ZoneItemSchema>;

export const LayerChangeSchema = v.object({
  status: v.picklist(["added", "removed", "changed"]),
  /** KiCad's canonical name, e.g. `In1.Cu`. */
  layer: v.string(),
  /** `signal`, `power`, `user` … and the user-given name, as `type "name"`. */
  before: v.nullable(v.string()),
  after: v.nullable(v.string()),
});
export type LayerChange = v.InferOutput<typeof LayerChangeSchema>;

/** Size of the Edge.Cuts bounding box, mm; null when the state has no outline. */
const OutlineSize = v.nullable(v.object({ width: v.number(), height: v.number() }));

export const OutlineChangeSchema = v.object({
  before: OutlineSize,
  after: OutlineSize,
  /** Edge.Cuts strokes that exist only after, only before. */
  added: v.number(),
  removed: v.number(),
});
export type OutlineChange = v.InferOutput<typeof OutlineChangeSchema>;

export const BoardDiffSchema = v.object({
  /** `added`/`removed`: the project gained or lost its board. */
  status: v.picklist(["added", "removed", "changed"]),
  footprints: v.array(FootprintChangeSchema),
  /** Nets as the pads carry them: added, removed, renamed. */
  nets: v.array(GroupChangeSchema),
  /** Pads whose net changed beyond a rename: `R5.2: VBUS → VBUS_PROT`. */
  pads: v.array(MemberMoveSchema),
  tracks: v.array(CopperItemSchema),
  zones: v.array(ZoneItemSchema),
  layers: v.array(LayerChangeSchema),
  outline: v.nullable(OutlineChangeSchema),
});
export type BoardDiff = v.InferOutput<typeof BoardDiffSchema>;

/**
 * Undefined when neither state has a board, or both hold the same file. A board file that
 * changed in nothing compared here (silkscreen text, settings) is a `changed` board with empty
 * lists, so a reviewer still learns that it changed.
 */
export function diffBoards(
  before: Board | undefined,
  after: Board | undefined,
  sameFile: boolean,
): BoardDiff | undefined {
  if (!before && !after) return undefined;
  const a = before ? readBoard(before) : emptyBoard();
  const b = after ? readBoard(after) : emptyBoard();
  const nets = diffGroups(a.padNets, b.padNets);
  const diff: BoardDiff = {
    status: !before ? "added" : !after ? "removed" : "changed",
    footprints: diffFootprints(a.footprints, b.footprints, a.codes, b.codes),
    nets: nets.groups,
    pads: nets.moves,
    tracks: diffItems(a.copper, b.copper).sort(compareCopper),
    zones: diffItems(a.zones, b.zones).sort(compareZones),
    layers: diffLayers(a.layers, b.layers),
    outline: diffOutline(a, b),
  };
  const empty =
    diff.status === "changed" &&
    diff.footprints.length +
      diff.nets.length +
      diff.pads.length +
      diff.tracks.length +
      diff.zones.length +
      diff.layers.length ===
      0 &&
    !diff.outline;
  return empty && sameFile ? undefined : diff;
}

/** An item as reported, and the identity it is compared by. */
interface Keyed<T> {
  item: T;
  key: string;
}

/** Net code → name, for boards that number their nets (KiCad 8/9). */
type NetCodes = Map<number, string>;

interface BoardModel {
  codes: NetCodes;
  footprints: Footprint[];
  padNets: Map<string, string[]>;
  copper: Keyed<Omit<CopperItem, "status">>[];
  zones: Keyed<Omit<ZoneItem, "status">>[];
  layers: Map<string, string>;
  edges: string[];
  size: { width: number; height: number } | null;
}

function emptyBoard(): BoardModel {
  return {
    codes: new Map(),
    footprints: [],
    padNets: new Map(),
    copper: [],
    zones: [],
    layers: new Map(),
    edges: [],
    size: null,
  };
}

function readBoard(board: Board): BoardModel {
  const codes: NetCodes = new Map();
  for (const net of board.nets()) if (net.code !== undefined) codes.set(net.code, net.name);
  const netName = (item: SList): string => {
    const ref = readNetRef(child(item, "net"));
    if (!ref) return "";
    return ref.name || (ref.code !== undefined ? (codes.get(ref.code) ?? "") : "");
  };
  const footprints = board.footprints();
  const groups = new Map<string, string[]>();
  for (const fp of footprints) {
    if (!fp.ref) continue;
    for (const { pin, net } of padNets(fp, codes)) {
      let members = groups.get(net);
      if (!members) groups.set(net, (members = []));
      members.push(`${fp.ref}.${pin}`);
    }
  }
  const copper: Keyed<Omit<CopperItem, "status">>[] = [];
  const zones: Keyed<Omit<ZoneItem, "status">>[] = [];
  const edges: string[] = [];
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const kind = head(item);
    if (kind === "segment" || kind === "arc") {
      const track: Omit<CopperItem, "status"> = {
        kind,
        net: netName(item),
        layers: [childText(item, "layer") ?? ""],
        start: point(child(item, "start")),
        end: point(child(item, "end")),
        width: mm(num(child(item, "width") ?? item, 1) ?? 0),
      };
      const mid = kind === "arc" ? point(child(item, "mid")) : undefined;
      copper.push({ item: track, key: JSON.stringify([kind, track.layers, track.start, track.end, mid, track.width]) });
    } else if (kind === "via") {
      const via: Omit<CopperItem, "status"> = {
        kind,
        net: netName(item),
        layers: atoms(child(item, "layers")),
        start: point(child(item, "at")),
        width: mm(num(child(item, "size") ?? item, 1) ?? 0),
      };
      const drill = num(child(item, "drill") ?? item, 1);
      copper.push({ item: via, key: JSON.stringify([kind, via.layers, via.start, via.width, drill]) });
    } else if (kind === "zone") {
      const polygon = child(item, "polygon");
      const outline = polygon ? children(child(polygon, "pts") ?? polygon, "xy").map((xy) => point(xy)) : [];
      const zone = {
        net: childText(item, "net_name") ?? netName(item),
        layers: child(item, "layers") ? atoms(child(item, "layers")) : [childText(item, "layer") ?? ""],
        name: childText(item, "name") ?? "",
        ruleArea: child(item, "keepout") !== undefined,
        corners: outline.length,
      };
      zones.push({ item: zone, key: JSON.stringify([zone.layers, zone.name, zone.ruleArea, outline]) });
    } else if (kind && /^gr_/.test(kind) && childText(item, "layer") === "Edge.Cuts") {
      edges.push(edgeKey(item, (p) => p));
    }
  }
  for (const fp of footprints) {
    for (const item of fp.node.items) {
      const kind = item.type === "list" ? head(item) : undefined;
      if (item.type === "list" && kind && /^fp_/.test(kind) && childText(item, "layer") === "Edge.Cuts") {
        edges.push(edgeKey(item, (p) => footprintToBoard(p, fp.at)));
      }
    }
  }
  const box = board.edgeCutsBBox();
  return {
    codes,
    footprints,
    padNets: groups,
    copper,
    zones,
    layers: readLayers(board),
    edges: edges.sort(),
    size: box ? { width: mm(box.maxX - box.minX), height: mm(box.maxY - box.minY) } : null,
  };
}

/** Board millimetres rounded to KiCad's 1 nm resolution, so float noise never reads as a change. */
function mm(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

function point(node: SList | undefined): [number, number] {
  return [mm(node ? (num(node, 1) ?? 0) : 0), mm(node ? (num(node, 2) ?? 0) : 0)];
}

function edgeKey(item: SList, toBoard: (p: { x: number; y: number }) => { x: number; y: number }): string {
  const at = (name: string) => {
    const node = child(item, name);
    if (!node) return null;
    const p = toBoard({ x: num(node, 1) ?? 0, y: num(node, 2) ?? 0 });
    return [mm(p.x), mm(p.y)];
  };
  const pts = children(child(item, "pts") ?? item, "xy").map((xy) => {
    const p = toBoard({ x: num(xy, 1) ?? 0, y: num(xy, 2) ?? 0 });
    return [mm(p.x), mm(p.y)];
  });
  return JSON.stringify([head(item)!.slice(3), at("start"), at("mid"), at("end"), at("center"), pts]);
}

/** Canonical layer name → `type` or `type "user name"`. */
function readLayers(board: Board): Map<string, string> {
  const out = new Map<string, string>();
  const table = child(board.root, "layers");
  if (!table) return out;
  for (const entry of table.items) {
    if (entry.type !== "list") continue;
    const name = text(entry, 1);
    if (!name) continue;
    const user = text(entry, 3);
    out.set(name, `${text(entry, 2) ?? ""}${user ? ` "${user}"` : ""}`);
  }
  return out;
}

function diffLayers(before: Map<string, string>, after: Map<string, string>): LayerChange[] {
  const out: LayerChange[] = [];
  for (const layer of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(layer) ?? null;
    const b = after.get(layer) ?? null;
    if (a === b) continue;
    out.push({ status: a === null ? "added" : b === null ? "removed" : "changed", layer, before: a, after: b });
  }
  return out.sort((x, y) => naturalCompare(x.layer, y.layer));
}

function diffOutline(a: BoardModel, b: BoardModel): OutlineChange | null {
  const { added, removed } = multisetDifference(a.edges, b.edges, (e) => e);
  if (added.length === 0 && removed.length === 0) return null;
  return { before: a.size, after: b.size, added: added.length, removed: removed.length };
}

/**
 * Footprints by reference. A reference that appears on more than one footprint in either state
 * (mounting holes, logos) is told apart by the footprint's uuid.
 */
function diffFootprints(
  before: Footprint[],
  after: Footprint[],
  codesBefore: NetCodes,
  codesAfter: NetCodes,
): FootprintChange[] {
  const counts = new Map<string, number>();
  for (const fp of [...before, ...after]) counts.set(fp.ref, (counts.get(fp.ref) ?? 0) + 1);
  const seen = new Set<string>();
  const ambiguous = new Set<string>();
  for (const list of [before, after]) {
    seen.clear();
    for (const fp of list) {
      if (seen.has(fp.ref) || fp.ref === "") ambiguous.add(fp.ref);
      seen.add(fp.ref);
    }
  }
  const key = (fp: Footprint) =>
    ambiguous.has(fp.ref) ? `${fp.ref}@${childText(fp.node, "uuid") ?? childText(fp.node, "tstamp") ?? ""}` : fp.ref;
  const was = new Map(before.map((fp) => [key(fp), fp]));
  const now = new Map(after.map((fp) => [key(fp), fp]));
  const out: FootprintChange[] = [];
  for (const [k, old] of was) {
    const fp = now.get(k);
    if (!fp) {
      out.push({
        ref: old.ref,
        status: "removed",
        libId: old.libId,
        value: old.value,
        changes: [],
        at: placement(old),
        pads: padNets(old, codesBefore),
      });
      continue;
    }
    const changes = footprintChanges(old, fp);
    const a = placement(old);
    const b = placement(fp);
    const moved = a.x !== b.x || a.y !== b.y || a.angle !== b.angle || a.layer !== b.layer;
    const swapped = old.libId !== fp.libId;
    if (!swapped && !moved && changes.length === 0) continue;
    out.push({
      ref: fp.ref,
      status: swapped ? "swapped" : changes.length > 0 ? "changed" : "moved",
      libId: fp.libId,
      value: fp.value,
      ...(swapped ? { swappedFrom: old.libId } : {}),
      ...(moved ? { move: { before: a, after: b } } : {}),
      changes,
      pads: [],
    });
  }
  for (const [k, fp] of now) {
    if (!was.has(k))
      out.push({
        ref: fp.ref,
        status: "added",
        libId: fp.libId,
        value: fp.value,
        changes: [],
        at: placement(fp),
        pads: padNets(fp, codesAfter),
      });
  }
  return out.sort((x, y) => naturalCompare(x.ref, y.ref) || naturalCompare(x.status, y.status));
}

/** Numbered pads and the net each is on, by pad number (a pad number repeated on one net once). */
function padNets(fp: Footprint, codes: NetCodes): PinNet[] {
  const out = new Map<string, PinNet>();
  for (const pad of fp.pads) {
    const net = pad.net?.name || (pad.net?.code !== undefined ? codes.get(pad.net.code) : undefined);
    if (net && pad.number && !out.has(`${pad.number}\u0000${net}`))
      out.set(`${pad.number}\u0000${net}`, { pin: pad.number, net });
  }
  return [...out.values()].sort((a, b) => naturalCompare(a.pin, b.pin) || naturalCompare(a.net, b.net));
}

function placement(fp: Footprint): FootprintPlacement {
  return { x: mm(fp.at.x), y: mm(fp.at.y), angle: fp.at.rotation, layer: fp.layer };
}

function footprintChanges(a: Footprint, b: Footprint): FieldChange[] {
  const out: FieldChange[] = [];
  const names = [...new Set([...Object.keys(a.fields), ...Object.keys(b.fields)])].filter((n) => n !== "Reference");
  for (const field of names.sort(naturalCompare)) {
    const before = a.fields[field] ?? null;
    const after = b.fields[field] ?? null;
    if (before !== after) out.push({ field, before, after });
  }
  const attrs = (fp: Footprint) => [...fp.attributes].sort().join(" ");
  if (attrs(a) !== attrs(b)) out.push({ field: "attributes", before: attrs(a), after: attrs(b) });
  if (a.locked !== b.locked)
    out.push({ field: "locked", before: a.locked ? "yes" : "no", after: b.locked ? "yes" : "no" });
  return out;
}

function compareCopper(a: CopperItem, b: CopperItem): number {
  return (
    naturalCompare(a.net, b.net) ||
    naturalCompare(a.kind, b.kind) ||
    naturalCompare(a.layers.join(","), b.layers.join(",")) ||
    a.start[0] - b.start[0] ||
    a.start[1] - b.start[1] ||
    (a.end?.[0] ?? 0) - (b.end?.[0] ?? 0) ||
    (a.end?.[1] ?? 0) - (b.end?.[1] ?? 0) ||
    naturalCompare(a.status, b.status)
  );
}

function compareZones(a: ZoneItem, b: ZoneItem): number {
  return (
    naturalCompare(a.net, b.net) ||
    naturalCompare(a.layers.join(","), b.layers.join(",")) ||
    naturalCompare(a.name, b.name) ||
    naturalCompare(a.status, b.status)
  );
}

/** What only one side has, counting duplicates (two identical vias are two vias). */
function multisetDifference<T>(before: T[], after: T[], key: (t: T) => string): { added: T[]; removed: T[] } {
  const pool = new Map<string, T[]>();
  for (const item of before) {
    const k = key(item);
    const list = pool.get(k);
    if (list) list.push(item);
    else pool.set(k, [item]);
  }
  const added: T[] = [];
  for (const item of after) {
    const list = pool.get(key(item));
    if (list && list.length > 0) list.pop();
    else added.push(item);
  }
  return { added, removed: [...pool.values()].flat() };
}

/** Items only one side has, each with its status. */
function diffItems<T extends object>(before: Keyed<T>[], after: Keyed<T>[]): (T & { status: "added" | "removed" })[] {
  const { added, removed } = multisetDifference(before, after, (k) => k.key);
  return [
    ...added.map((k) => ({ status: "added" as const, ...k.item })),
    ...removed.map((k) => ({ status: "removed" as const, ...k.item })),
  ];
}

function atoms(list: SList | undefined): string[] {
  return list ? list.items.slice(1).map((_, i) => text(list, i + 1) ?? "") : [];
}
