/**
 * Refilling zones with KiCad's own filler. copperhead does not compute fills: KiCad's
 * `pcbnew.ZONE_FILLER` does, on a temp copy of the edited board (with its project file and
 * custom rules beside it, so the rules are the board's), and only the filled polygons of the
 * zones asked for are read back and written into the lossless tree. Everything else in the
 * file keeps its bytes, its `(version …)` included, and a zone whose fill came out the same
 * keeps its bytes too.
 *
 * The script writes to a file (KiCad's Python bindings print warnings on stdout), per zone, its
 * filled polygons per layer as KiCad keeps them (fractured: outlines without holes, which is
 * how KiCad saves them), in nanometres; they are written as KiCad writes coordinates
 * (millimetres, at most six decimals).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { runKicadPython } from "../../cli/python.ts";
import { kicadTimeoutMs } from "../../cli/timeout.ts";
import { withScratchDir } from "../../cli/process.ts";
import { child, childText, children, flag, formatNumber, head, insertChild, list, printSexprBytes, q, readDesignBytes, removeChild, sym, type SList, type SNode } from "../../sexpr/index.ts";
import { boxesOverlap, boxOf, growBox } from "../clearance/geometry.ts";
import type { BBox, Board } from "../view.ts";
import { boardZones, zoneFills, type Zone } from "./zones.ts";

/** A refill with no change to window fills whole zones of the whole board: the floor of its cut-off (`cli/timeout.ts`). */
const REFILL_TIMEOUT_MS = 300_000;

/**
 * How far past the change's `near` boxes KiCad refills, mm: well past where the change's copper
 * can move a fill (its clearance and thermal gaps), so the window's edge is the same with and
 * without the change.
 */
const WINDOW_MARGIN = 5;

/** An island this close to the window's edge, mm, may be joined to its pour outside the window: it is kept. */
const ISLAND_EDGE = 1;

const FILL_SCRIPT = `
import sys, json, pcbnew
with open(sys.argv[2]) as spec_file:
    spec = json.load(spec_file)
wanted = set(spec["ids"])
change = spec.get("change")

def rectangles(boxes):
    shape = pcbnew.SHAPE_POLY_SET()
    for x1, y1, x2, y2 in boxes:
        outline = shape.NewOutline()
        for x, y in ((x1, y1), (x2, y1), (x2, y2), (x1, y2)):
            shape.Append(int(x), int(y), outline)
    shape.Simplify()
    return shape

def outlines(fills):
    shape = pcbnew.SHAPE_POLY_SET()
    for pts in fills:
        outline = shape.NewOutline()
        for i in range(0, len(pts), 2):
            shape.Append(pts[i], pts[i + 1], outline)
    return shape

def layer_name(layer):
    return pcbnew.BOARD.GetStandardLayerName(layer)

def fill(path):
    """Loads and fills a board: the zones asked for, their fills and their islands."""
    board = pcbnew.LoadBoard(path)
    zones = [z for z in board.Zones() if z.m_Uuid.AsString() in wanted]
    if change:
        # The copy carries no fills (reading a large board's fills costs KiCad a minute): other
        # zones get theirs near the change from the spec, and the zones to refill are cut to the
        # window. Fills come fractured (outlines with slits), as KiCad keeps them.
        for z in board.Zones():
            given = change["fills"].get(z.m_Uuid.AsString())
            if given is None or z.m_Uuid.AsString() in wanted:
                continue
            for layer in z.GetLayerSet().Seq():
                shape = outlines([f["pts"] for f in given if f["layer"] == layer_name(layer)])
                shape.BooleanIntersection(reach)
                shape.Fracture()
                z.SetFilledPolysList(layer, shape)
            z.SetIsFilled(True)
        # A piece the window's edge cuts off from the rest of its pour is no island: KiCad keeps
        # every piece here, and only those wholly inside the window go as the zone says.
        modes = {}
        for z in zones:
            modes[z.m_Uuid.AsString()] = (z.GetIslandRemovalMode(), z.GetMinIslandArea())
            z.SetIslandRemovalMode(pcbnew.ISLAND_REMOVAL_MODE_NEVER)
            # A hatch's grid may follow the zone's outline: a hatched zone is filled whole.
            if z.GetFillMode() != pcbnew.ZONE_FILL_MODE_HATCH_PATTERN:
                z.Outline().BooleanIntersection(window)
                z.CacheBoundingBox()
    board.BuildConnectivity()
    pcbnew.ZONE_FILLER(board).Fill(zones)
    if not change:
        return board, zones, None, None
    polys, islands = {}, {}
    for z in zones:
        for layer in z.GetLayerSet().Seq():
            key = (z.m_Uuid.AsString(), layer)
            filled = z.GetFilledPolysList(layer)
            polys[key], islands[key] = pcbnew.SHAPE_POLY_SET(), pcbnew.SHAPE_POLY_SET()
            for i in range(filled.OutlineCount()):
                piece = filled.COutline(i)
                if z.IsIsland(layer, i):
                    if removed(piece, *modes[key[0]]):
                        continue
                    islands[key].AddOutline(piece)
                polys[key].AddOutline(piece)
    return board, zones, polys, islands

def removed(piece, mode, min_area):
    """Whether KiCad would remove this island: it lies inside the window, clear of its edge."""
    box = piece.BBox()
    x1, y1, x2, y2 = change["inner"]
    inside = box.GetX() > x1 and box.GetY() > y1 and box.GetRight() < x2 and box.GetBottom() < y2
    return inside and (mode == pcbnew.ISLAND_REMOVAL_MODE_ALWAYS or (mode == pcbnew.ISLAND_REMOVAL_MODE_AREA and piece.Area() < min_area))

# A difference this small, nm² (a 10 µm square), is rounding, not copper.
SLIVER = 1e8
island_flags = {}
if change:
    window = rectangles([change["window"]])
    reach = rectangles([change["reach"]])
    # The same board without this change's copper, filled by the same KiCad: what the fill
    # would be today anyway. Only the difference the change makes is applied to the saved fill.
    _, _, unchanged, unchanged_islands = fill(change["base"])
board, zones, after, after_islands = fill(sys.argv[1])
if change:
    near = rectangles(change["near"])
    for z in zones:
        saved = change["fills"][z.m_Uuid.AsString()]
        for layer in z.GetLayerSet().Seq():
            key = (z.m_Uuid.AsString(), layer)
            mine = [f for f in saved if f["layer"] == layer_name(layer)]
            gained = after[key].CloneDropTriangulation()
            gained.BooleanSubtract(unchanged[key])
            lost = unchanged[key].CloneDropTriangulation()
            lost.BooleanSubtract(after[key])
            # Boolean operations on a whole plane's slit outline cost KiCad seconds each;
            # without the slits they take a fraction of one.
            saved_fill = outlines([f["pts"] for f in mine])
            merged = saved_fill.CloneDropTriangulation()
            merged.Unfracture()
            # Around the new copper the fill is KiCad's new one alone: no copper of the saved
            # fill is left inside the new items' clearance.
            stale = near.CloneDropTriangulation()
            stale.BooleanSubtract(after[key])
            new_copper = gained.CloneDropTriangulation()
            new_copper.BooleanSubtract(merged)
            cut = lost.CloneDropTriangulation()
            cut.BooleanAdd(stale)
            cut.BooleanIntersection(merged)
            if new_copper.Area() < SLIVER and cut.Area() < SLIVER:
                # Nothing to change here (boolean operations leave slivers of rounding): the
                # saved fill keeps its points, and its bytes.
                z.SetFilledPolysList(layer, saved_fill)
                island_flags[key] = [f["island"] for f in mine]
                continue
            merged.BooleanAdd(gained)
            merged.BooleanSubtract(lost)
            merged.BooleanSubtract(stale)
            merged.Fracture()
            z.SetFilledPolysList(layer, merged)
            # Islands are the saved ones and those the change made (the window's edge cuts off
            # the same pieces with and without the change).
            known = outlines([f["pts"] for f in mine if f["island"]])
            made = after_islands[key].CloneDropTriangulation()
            made.BooleanSubtract(unchanged_islands[key])
            known.BooleanAdd(made)
            island_flags[key] = [known.Collide(merged.COutline(i).CPoint(0), 10) for i in range(merged.OutlineCount())]
out = []
for z in zones:
    layers = []
    for layer in z.GetLayerSet().Seq():
        polys = z.GetFilledPolysList(layer)
        flags = island_flags.get((z.m_Uuid.AsString(), layer))
        fills_ = []
        for i in range(polys.OutlineCount()):
            chain = polys.COutline(i)
            pts = []
            for j in range(chain.PointCount()):
                p = chain.CPoint(j)
                pts.append(p.x)
                pts.append(p.y)
            fills_.append({"island": bool(flags[i] if flags else z.IsIsland(layer, i)), "pts": pts})
        layers.append({"layer": layer_name(layer), "fills": fills_})
    out.append({"id": z.m_Uuid.AsString(), "layers": layers})
with open(sys.argv[3], "w") as result:
    json.dump(out, result)
if len(sys.argv) > 4:
    board.Save(sys.argv[4])
`;

/**
 * What a change added, so a refill applies only the difference that change makes. A board
 * saved by an older KiCad often has fills today's filler would draw a little differently
 * (thermal spokes, clearances); refilling a whole pour would carry those differences into the
 * change, with DRC findings far from anything it touched. So KiCad fills the board twice, with
 * and without the change's copper (the latter printed from the tree without it, as a board
 * of its own: removing items through KiCad's Python bindings corrupts their later answers),
 * and only what differs between the two is applied to the saved fill; near the new copper
 * (`near`, boxes in millimetres) the fill is KiCad's new one.
 *
 * Both fills are made inside a window around the change (`WINDOW_MARGIN` past `near`): the
 * zones are cut to it, and the copies KiCad loads carry no fills; the spec brings the fills of
 * other zones that reach the window, and the saved fills of the zones to refill, for the merge.
 * Reading and filling whole planes is what costs: on vme-wren (12 layers), reading its fills
 * took KiCad a minute and refilling six planes four more, for a difference a few millimetres
 * across. The window's edge cuts the fill the same way with and without the change, so the
 * difference is the same.
 */
export interface FillChange {
  /** References of the footprints the change added. */
  refs: string[];
  /** Ids of the tracks and vias the change added. */
  items: string[];
  near: BBox[];
}

interface FilledLayer {
  layer: string;
  fills: { island: boolean; pts: number[] }[];
}

/** A zone's fill as the spec hands it to KiCad's Python: one outline, points in nanometres. */
interface SavedFill {
  layer: string;
  island: boolean;
  pts: number[];
}

export interface RefillResult {
  /** Ids of the zones whose fill changed (and was written). */
  changed: string[];
  /** Ids of the zones KiCad refilled to the same polygons (their bytes kept). */
  unchanged: string[];
}

/**
 * Refills `zones` of `board` (edited in memory; `boardFile` is where it lives, for its project
 * file and rules) with KiCad's filler and writes the new fills into the tree.
 */
export async function refillZones(board: Board, boardFile: string, zones: Zone[], change?: FillChange): Promise<RefillResult> {
  const result: RefillResult = { changed: [], unchanged: [] };
  if (zones.length === 0) return result;
  const filled = await fillWithKicad(board, boardFile, zones.map((z) => z.id), undefined, change);
  const byId = new Map(filled.map((z) => [z.id, z.layers]));
  for (const zone of zones) {
    const layers = byId.get(zone.id);
    if (!layers) {
      throw new CopperheadError("kicad_failed", `KiCad did not report zone ${zone.id} of ${boardFile} after filling it.`, {
        fix: "Open the board in KiCad and check that its zones have distinct ids; save it once to repair them.",
        file: boardFile,
      });
    }
    if (writeFills(zone.node, layers)) result.changed.push(zone.id);
    else result.unchanged.push(zone.id);
  }
  return result;
}

/**
 * Runs the fill; with `savedCopy`, KiCad also saves the filled board there (for comparisons);
 * with `change`, only the difference that change makes is applied (see {@link FillChange}).
 */
export async function fillWithKicad(board: Board, boardFile: string, ids: string[], savedCopy?: string, change?: FillChange): Promise<{ id: string; layers: FilledLayer[] }[]> {
  return withScratchDir(async (dir) => {
    const stem = basename(boardFile, extname(boardFile));
    const copy = join(dir, `${stem}.kicad_pcb`);
    for (const ext of [".kicad_pro", ".kicad_dru"]) {
      const beside = join(dirname(boardFile), stem + ext);
      // Read like any design file (regular, confined to the board's folder, capped): a FIFO or
      // a link to a device in its place must not hang or flood the copy.
      if (existsSync(beside)) writeFileSync(join(dir, stem + ext), readDesignBytes(beside));
    }
    let spec: object = { ids };
    if (change) {
      // The board without the change's copper, beside its own copy of the project and rules.
      const base = join(dir, "base", `${stem}.kicad_pcb`);
      mkdirSync(dirname(base));
      for (const ext of [".kicad_pro", ".kicad_dru"]) if (existsSync(join(dir, stem + ext))) copyFileSync(join(dir, stem + ext), join(dir, "base", stem + ext));
      const window = growBox(boxOf(change.near.map((b) => [{ x: b.minX, y: b.minY }, { x: b.maxX, y: b.maxY }])), WINDOW_MARGIN);
      const zones = boardZones(board.root);
      writeFileSync(copy, printWithout(board, zones, new Set()));
      writeFileSync(base, printWithout(board, zones, changeNodes(board, change)));
      // Other zones' fills knock out the refilled ones up to their clearance past the window.
      const reach = growBox(window, WINDOW_MARGIN);
      const inner = growBox(window, -ISLAND_EDGE);
      spec = { ids, change: { base, near: change.near.map(nanometres), window: nanometres(window), inner: nanometres(inner), reach: nanometres(reach), fills: fillsReaching(zones, new Set(ids), reach) } };
    } else {
      writeFileSync(copy, printSexprBytes(board.doc));
    }
    const resultFile = join(dir, "fills.json");
    const specFile = join(dir, "spec.json");
    writeFileSync(specFile, JSON.stringify(spec));
    const args = [copy, specFile, resultFile, ...(savedCopy ? [savedCopy] : [])];
    const stdout = await runKicadPython(FILL_SCRIPT, "fill zones", { timeoutMs: kicadTimeoutMs([boardFile], REFILL_TIMEOUT_MS), args });
    try {
      return JSON.parse(readFileSync(resultFile, "utf8")) as { id: string; layers: FilledLayer[] }[];
    } catch {
      throw new CopperheadError("kicad_failed", `KiCad's Python wrote no fill result for ${boardFile}.`, { fix: "Open the board in KiCad and refill its zones by hand (B).", output: stdout.slice(0, 500) });
    }
  });
}

const TRACKS = new Set(["segment", "arc", "via"]);

const nm = (mm: number) => Math.round(mm * 1e6);

function nanometres(box: BBox): number[] {
  return [nm(box.minX), nm(box.minY), nm(box.maxX), nm(box.maxY)];
}

/** The footprints and tracks a change added. */
function changeNodes(board: Board, change: FillChange): Set<SNode> {
  const refs = new Set(change.refs);
  const items = new Set(change.items);
  const added = new Set<SNode>(board.footprints().filter((f) => refs.has(f.ref)).map((f) => f.node));
  for (const node of board.root.items) {
    if (node.type === "list" && TRACKS.has(head(node) ?? "") && items.has(childText(node, "uuid") ?? childText(node, "tstamp") ?? "")) added.add(node);
  }
  return added;
}

/** The board's bytes without `dropped` items and without the fills of its zones (the tree is left as it was). */
function printWithout(board: Board, zones: Zone[], dropped: Set<SNode>): Uint8Array {
  const all = board.root.items;
  const zoneItems = zones.map((z) => z.node.items);
  board.root.items = all.filter((node) => !dropped.has(node));
  for (const zone of zones) zone.node.items = zone.node.items.filter((node) => !(node.type === "list" && head(node) === "filled_polygon"));
  try {
    return printSexprBytes(board.doc);
  } finally {
    board.root.items = all;
    zones.forEach((zone, i) => (zone.node.items = zoneItems[i]!));
  }
}

/**
 * The saved fills KiCad needs for a refill around a change, per zone id, in nanometres: all of
 * the zones to refill (`ids`: the merge starts from them), and of any other zone the pieces
 * that come into `reach` (a zone's fill knocks out the fills of lower priority).
 */
function fillsReaching(zones: Zone[], ids: Set<string>, reach: BBox): Record<string, SavedFill[]> {
  const out: Record<string, SavedFill[]> = {};
  for (const zone of zones) {
    const read = zoneFills(zone);
    const fills = children(zone.node, "filled_polygon").flatMap((node, i) => {
      const { layer, points } = read[i]!;
      if (!ids.has(zone.id) && !boxesOverlap(boxOf([points]), reach)) return [];
      return [{ layer, island: flag(node, "island") === true, pts: points.flatMap((p) => [nm(p.x), nm(p.y)]) }];
    });
    if (fills.length > 0 || ids.has(zone.id)) out[zone.id] = fills;
  }
  return out;
}

/** Replaces a zone's `filled_polygon` nodes by KiCad's; false (nothing touched) when they are the same. */
function writeFills(zone: SList, layers: FilledLayer[]): boolean {
  const old = children(zone, "filled_polygon");
  const fresh = layers.flatMap(({ layer, fills }) => fills.map((f) => ({ layer, island: f.island, pts: millimetres(f.pts) })));
  if (sameFills(old, fresh)) return false;
  const at = old.length > 0 ? zone.items.indexOf(old[0]!) : afterOutline(zone);
  for (const node of old) removeChild(zone, node);
  const spaced = !zone.pre.includes("\t");
  fresh.forEach((fill, i) => {
    if (spaced) zone.items.splice(at + i, 0, spacedFill(fill, indentOf(zone)));
    else insertChild(zone, list("filled_polygon", list("layer", q(fill.layer)), ...(fill.island ? [list("island")] : []), list("pts", ...fill.pts.map(([x, y]) => list("xy", x!, y!)))), at + i);
  });
  return true;
}

function millimetres(nm: number[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i + 1 < nm.length; i += 2) out.push([formatNumber(nm[i]! / 1e6), formatNumber(nm[i + 1]! / 1e6)]);
  return out;
}

/** Same layers, islands and points in the same order, compared as KiCad writes them. */
function sameFills(old: SList[], fresh: { layer: string; island: boolean; pts: string[][] }[]): boolean {
  if (old.length !== fresh.length) return false;
  return old.every((node, i) => {
    const f = fresh[i]!;
    const pts = child(node, "pts");
    const xy = pts ? children(pts, "xy") : [];
    if (childText(node, "layer") !== f.layer || (flag(node, "island") === true) !== f.island || xy.length !== f.pts.length) return false;
    return xy.every((p, j) => sameNumber(p.items[1], f.pts[j]![0]!) && sameNumber(p.items[2], f.pts[j]![1]!));
  });
}

function sameNumber(atom: SNode | undefined, value: string): boolean {
  return atom?.type === "atom" && formatNumber(Number(atom.raw)) === value;
}

/** Where fills go in a zone that has none: after its outline polygons. */
function afterOutline(zone: SList): number {
  const polygons = children(zone, "polygon");
  return polygons.length > 0 ? zone.items.indexOf(polygons.at(-1)!) + 1 : zone.items.length;
}

function indentOf(node: SList): string {
  const nl = node.pre.lastIndexOf("\n");
  return nl < 0 ? "" : node.pre.slice(nl + 1);
}

/**
 * A fill laid out as KiCad 6 and 7 wrote it, in files indented with spaces: two spaces per
 * level, one `(xy …)` per line.
 */
function spacedFill(fill: { layer: string; island: boolean; pts: string[][] }, zoneIndent: string): SList {
  const ind = `${zoneIndent}  `;
  const at = (depth: number) => `\n${ind}${"  ".repeat(depth)}`;
  const leaf = (name: string, items: SNode[], pre: string): SList => ({ type: "list", pre, items: [sym(name), ...items.map((a) => ({ ...a, pre: " " }) as SNode)], post: "", start: -1 });
  const xy = fill.pts.map(([x, y]) => leaf("xy", [sym(x!), sym(y!)], at(2)));
  const items: SNode[] = [sym("filled_polygon"), leaf("layer", [q(fill.layer)], at(1))];
  if (fill.island) items.push(leaf("island", [], at(1)));
  items.push({ type: "list", pre: at(1), items: [sym("pts"), ...xy], post: at(1), start: -1 });
  return { type: "list", pre: `\n${ind}`, items, post: `\n${ind}`, start: -1 };
}
