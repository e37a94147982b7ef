/**
 * Refilling zones with KiCad's own filler. copperhead does not compute fills: KiCad's
 * `pcbnew.ZONE_FILLER` does, on a temp copy of the edited board (with its project file and
 * custom rules beside it, so the rules are the board's), and only the filled polygons of the
 * zones asked for are read back and written into the lossless tree. Everything else in the
 * file keeps its bytes, its `(version …)` included, and a zone whose fill came out the same
 * keeps its bytes too.
 *
 * The program is `fill.py` beside this file, run from a file so its tracebacks name its lines;
 * `FillSpec` and `FilledZone` are the contract between the two. It writes to a file (KiCad's
 * Python bindings print warnings on stdout), per zone, its filled polygons per layer as KiCad
 * keeps them (fractured: outlines without holes, which is how KiCad saves them), in
 * nanometres; they are written as KiCad writes coordinates (millimetres, at most six decimals).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { findKicadPython, prepareKicadPython, runKicadPython } from "../../cli/python.ts";
import { kicadTimeoutMs } from "../../cli/timeout.ts";
import { withScratchDir } from "../../cli/process.ts";
import {
  child,
  childText,
  children,
  flag,
  formatNumber,
  head,
  insertChild,
  list,
  printSexprBytes,
  q,
  readDesignBytes,
  removeChild,
  sym,
  type SList,
  type SNode,
} from "../../sexpr/index.ts";
import { boxesOverlap, boxOf, growBox } from "../clearance/geometry.ts";
import { pointMmOf, type BBox, type Board } from "../model.ts";
import { boardBounds } from "../footprint/instance.ts";
import fillProgram from "./fill.py" with { type: "text" };
import { boardZones, zoneFills, type Zone } from "./zones.ts";
import { isolatedFills } from "../connectivity.ts";

/** A refill with no change to window fills whole zones of the whole board: the floor of its cut-off (`cli/timeout.ts`). */
const REFILL_TIMEOUT_MS = 300_000;

/**
 * How far past the change's `near` boxes KiCad's new fill replaces the saved one, mm: well past
 * where the change's copper can move a fill (its clearance and thermal gaps).
 */
const WINDOW_MARGIN = 5;

/**
 * How far past the window KiCad fills, mm: the fill area's edge cuts the zone where KiCad would
 * not (a neck thinner than the zone's minimum width, a pad's spokes with no fill to reach), so
 * that edge stays this far from the fill that is kept.
 */
const FILL_EDGE = 3;

/** An island this close to the fill area's edge, mm, may be joined to its pour outside it: it is kept. */
const ISLAND_EDGE = 1;

/**
 * How far past `WINDOW_MARGIN` the window may grow to take in a pad connection or an island its
 * edge would cut, mm (see {@link FillChange}).
 */
const WINDOW_GROWTH = 10;

/**
 * Where a change was made, so a refill fills only there. Reading and filling whole planes is
 * what costs: on vme-wren (12 layers), reading its fills took KiCad a minute and refilling six
 * planes four more, for a change a few millimetres across. So KiCad fills the zones inside a
 * window around the change (`WINDOW_MARGIN` past `near`, one box per item, so a part moved
 * across the board gets two small windows, not one the size of the board), and inside the
 * window its fill replaces the saved one; outside it, the saved fill keeps its bytes.
 *
 * `near` holds both where the change's copper is and where copper was taken away (a part moved
 * or removed, its tracks lifted): the voids it cut into a pour are filled again, and the spokes
 * that reached its pads go with them. A board whose fills an older KiCad saved gets KiCad 9's
 * fill inside the window, no piece of the old one cut at its edge, as a refill in KiCad would
 * draw it there.
 *
 * Where the window's edge runs, the two fills meet, and they must meet where neither draws a
 * feature of its own. A pad's connection to its zone is one: its thermal gap and the spokes that
 * reach the fill past it, which DRC counts. New spokes on one side of the edge and the old gap
 * on the other starve a pad. And KiCad 9 draws some reliefs of a board KiCad 6 filled with fewer
 * spokes than the zone asks (the vias in rp2040-designguide's exposed pad, a USB shell on
 * uext-esp32-c3), so redrawing one the change never came near adds a DRC error the change did
 * not make. So no edge cuts a connection: those the change reaches (`near` on one of the zone's
 * layers, or a relief overlapping the relief of one reached: KiCad draws the two as one) are
 * taken into the window whole, pad, gap, spokes and a minimum-width strip of fill past them;
 * those it does not reach keep their saved fill whole, even inside the window, as outside it,
 * except where a reached one overlaps such a connection's box (a new pad on a large custom pad of
 * its net, whose box is too big to take in): there the reached one is KiCad's fill.
 * An island of KiCad's fill is the other feature: cut by the edge, its outer part would be the
 * saved fill's, joined to nothing, so the window takes in whole every island its edge cuts.
 *
 * The window grows by at most `WINDOW_GROWTH` past its margin: overlapping reliefs (a row of
 * ground pins, a field of stitching vias) can chain across the whole board, and a window the
 * size of the board is the whole-plane refill the window exists to avoid (and rewrites every
 * saved relief on a board an older KiCad filled). A connection past that bound keeps its saved
 * fill whole, as it does outside any window.
 *
 * KiCad fills a little more than the window (`FILL_EDGE`), so the edge of what it filled is
 * never where its fill is kept. The copy it loads carries no fills: the spec brings the fills of
 * other zones that reach the fill area, and the saved fills of the zones to refill, for the merge.
 */
export interface FillChange {
  /** Where the change's copper is and was, with the fill it can move, and the copper layers it is on. */
  near: { box: BBox; layers: Set<string> | "all" }[];
}

interface FilledLayer {
  layer: string;
  fills: { island: boolean; pts: number[] }[];
}

/** One zone of `fill.py`'s result. */
export interface FilledZone {
  id: string;
  layers: FilledLayer[];
}

/** What `fill.py` reads from its spec file; boxes are `[x1, y1, x2, y2]` in nanometres. */
interface FillSpec {
  /** Ids of the zones to fill. */
  ids: string[];
  change?: {
    /** Where KiCad's new fill replaces the saved one, before it grows to take in what its edge cuts. */
    window: number[][];
    /**
     * Where the change's copper is and was, with the fill it can move (`near`), and its layers:
     * a pad connection of a zone on one of them that overlaps it is redrawn.
     */
    reached: { box: number[]; layers: string[] | "all" }[];
    /** How far the window may grow: `WINDOW_GROWTH` past it. */
    limit: number[][];
    /** The zones to refill are cut to the grown window and this much more, nm (`FILL_EDGE`). */
    fillEdge: number;
    /** An island farther than this inside the fill area's edge, nm, is clear of it (`ISLAND_EDGE`). */
    islandEdge: number;
    /** Other zones' saved fills are given as far as this. */
    reach: number[][];
    /** Saved fills per zone id: every fill of the zones to refill, other zones' pieces within `reach`. */
    fills: Record<string, SavedFill[]>;
  };
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

/** Refilling zones needs KiCad's Python: a board with pours fails before any edit without it. */
export async function assertCanRefill(board: Board): Promise<void> {
  if (hasPours(board)) await findKicadPython();
}

/**
 * Starts KiCad's Python for the refill an edit of `board` is about to ask for, so the refill
 * does not wait for it to start (`prepareKicadPython`); nothing on a board without pours.
 */
export function prepareRefill(board: Board): void {
  if (hasPours(board)) prepareKicadPython();
}

function hasPours(board: Board): boolean {
  return boardZones(board.root).some((z) => z.filled && !z.ruleArea);
}

/**
 * Refills `zones` of `board` (edited in memory; `boardFile` is where it lives, for its project
 * file and rules) with KiCad's filler and writes the new fills into the tree.
 */
export async function refillZones(
  board: Board,
  boardFile: string,
  zones: Zone[],
  change?: FillChange,
): Promise<RefillResult> {
  const result: RefillResult = { changed: [], unchanged: [] };
  if (zones.length === 0) return result;
  const filled = await fillWithKicad(
    board,
    boardFile,
    zones.map((z) => z.id),
    undefined,
    change,
  );
  const byId = new Map(filled.map((z) => [z.id, z.layers]));
  for (const zone of zones) {
    const layers = byId.get(zone.id);
    if (!layers) {
      throw new CopperheadError(
        "kicad_failed",
        `KiCad did not report zone ${zone.id} of ${boardFile} after filling it.`,
        {
          fix: "Open the board in KiCad and check that its zones have distinct ids; save it once to repair them.",
          file: boardFile,
        },
      );
    }
    if (writeFills(zone.node, layers)) result.changed.push(zone.id);
    else result.unchanged.push(zone.id);
  }
  if (change) dropIslands(board, new Set(result.changed), change);
  return result;
}

/**
 * Removes the pieces of the refilled zones' fills near `change` that join nothing of their net,
 * where the zone removes islands, as KiCad's filler does (only zones whose fill changed: an
 * unchanged one is the saved fill, judged when it was saved). KiCad judges an island in the
 * fill it drew, cut to the window, whose pieces reach on past the window's edge into the saved
 * fill; but the saved fill out there may have been
 * joined only through what the change took away (a pocket of pour a removed part's ground pad
 * held), so once merged the piece joins nothing, and KiCad's fill of the whole board has none
 * of it.
 */
function dropIslands(board: Board, refilled: ReadonlySet<string>, change: FillChange): void {
  if (refilled.size === 0) return;
  const near = change.near.map(({ box }) => growBox(box, WINDOW_MARGIN + WINDOW_GROWTH + FILL_EDGE));
  const zones = new Map(boardZones(board.root).map((z) => [z.id, z]));
  const dropped = isolatedFills(board, refilled, near).filter(({ zone, area }) => {
    const rule = zones.get(zone)!.islands;
    return rule.remove === "always" || (rule.remove === "below" && area < rule.minArea);
  });
  for (const [id, pieces] of Map.groupBy(dropped, (d) => d.zone)) {
    const fills = children(zones.get(id)!.node, "filled_polygon");
    for (const { index } of pieces) removeChild(zones.get(id)!.node, fills[index]!);
  }
}

/**
 * Runs the fill; with `savedCopy`, KiCad also saves the filled board there (for comparisons);
 * with `change`, KiCad fills only around it and its fill replaces the saved one there (see {@link FillChange}).
 */
export async function fillWithKicad(
  board: Board,
  boardFile: string,
  ids: string[],
  savedCopy?: string,
  change?: FillChange,
): Promise<FilledZone[]> {
  return withScratchDir(async (dir) => {
    const stem = basename(boardFile, extname(boardFile));
    const copy = join(dir, `${stem}.kicad_pcb`);
    for (const ext of [".kicad_pro", ".kicad_dru"]) {
      const beside = join(dirname(boardFile), stem + ext);
      // Read like any design file (regular, confined to the board's folder, capped): a FIFO or
      // a link to a device in its place must not hang or flood the copy.
      if (existsSync(beside)) writeFileSync(join(dir, stem + ext), readDesignBytes(beside));
    }
    let spec: FillSpec = { ids };
    if (change) {
      const window = change.near.map(({ box }) => growBox(box, WINDOW_MARGIN));
      const limit = window.map((b) => growBox(b, WINDOW_GROWTH));
      // Other zones' fills knock out the refilled ones up to their clearance past the largest fill area.
      const reach = limit.map((b) => growBox(b, FILL_EDGE + WINDOW_MARGIN));
      const zones = boardZones(board.root);
      writeFileSync(
        copy,
        printForWindow(
          board,
          zones,
          reach.map((b) => growBox(b, FAR_COPPER)),
        ),
      );
      spec = {
        ids,
        change: {
          window: window.map(nanometres),
          reached: change.near.map(({ box, layers }) => ({
            box: nanometres(box),
            layers: layers === "all" ? "all" : [...layers],
          })),
          limit: limit.map(nanometres),
          fillEdge: nm(FILL_EDGE),
          islandEdge: nm(ISLAND_EDGE),
          reach: reach.map(nanometres),
          fills: fillsReaching(zones, new Set(ids), reach),
        },
      };
    } else {
      writeFileSync(copy, printSexprBytes(board.doc));
    }
    const resultFile = join(dir, "fills.json");
    const specFile = join(dir, "spec.json");
    writeFileSync(specFile, JSON.stringify(spec));
    const args = [copy, specFile, resultFile, ...(savedCopy ? [savedCopy] : [])];
    const stdout = await runKicadPython(fillProgram, "fill zones", {
      timeoutMs: kicadTimeoutMs([boardFile], REFILL_TIMEOUT_MS),
      args,
      name: "fill.py",
    });
    try {
      return JSON.parse(readFileSync(resultFile, "utf8")) as FilledZone[];
    } catch {
      throw new CopperheadError("kicad_failed", `KiCad's Python wrote no fill result for ${boardFile}.`, {
        fix: "Open the board in KiCad and refill its zones by hand (B).",
        output: stdout.slice(0, 500),
      });
    }
  });
}

const nm = (mm: number) => Math.round(mm * 1e6);

function nanometres(box: BBox): number[] {
  return [nm(box.minX), nm(box.minY), nm(box.maxX), nm(box.maxY)];
}

/**
 * The board's bytes as KiCad fills around a change: its zones without their fills, and only the
 * footprints, tracks and vias that come within `keep` (the tree is left as it was). The fill is
 * cut to the window and what lies farther cannot move it; loading the whole board is what costs
 * (on vme-wren, most of a refill's time). Zones, drawings and the outline all stay.
 */
function printForWindow(board: Board, zones: Zone[], keep: BBox[]): Uint8Array {
  const zoneItems = zones.map((z) => z.node.items);
  const rootItems = board.root.items;
  for (const zone of zones)
    zone.node.items = zone.node.items.filter((node) => !(node.type === "list" && head(node) === "filled_polygon"));
  board.root.items = rootItems.filter((node) => {
    const box = node.type === "list" ? copperBox(node) : undefined;
    return box === undefined || keep.some((k) => boxesOverlap(box, k));
  });
  try {
    return printSexprBytes(board.doc);
  } finally {
    board.root.items = rootItems;
    zones.forEach((zone, i) => (zone.node.items = zoneItems[i]!));
  }
}

/**
 * How far past the fills' reach a footprint, track or via is still given to KiCad, mm: past the
 * largest clearance a board's rules ask between copper, or to a hole or the board's edge.
 */
const FAR_COPPER = 10;

/** The box of a footprint, track or via (undefined for anything else, or what has no position). */
function copperBox(node: SList): BBox | undefined {
  const kind = head(node);
  if (kind === "footprint") return boardBounds(node);
  if (kind !== "segment" && kind !== "arc" && kind !== "via") return undefined;
  const points = ["start", "mid", "end", "at"].flatMap((key) => {
    const p = pointMmOf(child(node, key));
    return p ? [p] : [];
  });
  if (points.length === 0) return undefined;
  const width = Number(childText(node, kind === "via" ? "size" : "width") ?? 0) / 2;
  return growBox(boxOf([points]), width);
}

/**
 * The saved fills KiCad needs for a refill around a change, per zone id, in nanometres: all of
 * the zones to refill (`ids`: the merge starts from them), and of any other zone the pieces
 * that come into `reach` (a zone's fill knocks out the fills of lower priority).
 */
function fillsReaching(zones: Zone[], ids: Set<string>, reach: BBox[]): Record<string, SavedFill[]> {
  const out: Record<string, SavedFill[]> = {};
  for (const zone of zones) {
    const read = zoneFills(zone);
    const fills = children(zone.node, "filled_polygon").flatMap((node, i) => {
      const { layer, points } = read[i]!;
      if (!ids.has(zone.id) && !reach.some((r) => boxesOverlap(boxOf([points]), r))) return [];
      return [{ layer, island: flag(node, "island") === true, pts: points.flatMap((p) => [nm(p.x), nm(p.y)]) }];
    });
    if (fills.length > 0 || ids.has(zone.id)) out[zone.id] = fills;
  }
  return out;
}

/** Replaces a zone's `filled_polygon` nodes by KiCad's; false (nothing touched) when they are the same. */
function writeFills(zone: SList, layers: FilledLayer[]): boolean {
  const old = children(zone, "filled_polygon");
  const fresh = layers.flatMap(({ layer, fills }) =>
    fills.map((f) => ({ layer, island: f.island, pts: millimetres(f.pts) })),
  );
  if (sameFills(old, fresh)) return false;
  const at = old.length > 0 ? zone.items.indexOf(old[0]!) : afterOutline(zone);
  for (const node of old) removeChild(zone, node);
  const spaced = !zone.pre.includes("\t");
  fresh.forEach((fill, i) => {
    if (spaced) zone.items.splice(at + i, 0, spacedFill(fill, indentOf(zone)));
    else
      insertChild(
        zone,
        list(
          "filled_polygon",
          list("layer", q(fill.layer)),
          ...(fill.island ? [list("island")] : []),
          list("pts", ...fill.pts.map(([x, y]) => list("xy", x!, y!))),
        ),
        at + i,
      );
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
    if (
      childText(node, "layer") !== f.layer ||
      (flag(node, "island") === true) !== f.island ||
      xy.length !== f.pts.length
    )
      return false;
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
  const leaf = (name: string, items: SNode[], pre: string): SList => ({
    type: "list",
    pre,
    items: [sym(name), ...items.map((a) => ({ ...a, pre: " " }) as SNode)],
    post: "",
    start: -1,
  });
  const xy = fill.pts.map(([x, y]) => leaf("xy", [sym(x!), sym(y!)], at(2)));
  const items: SNode[] = [sym("filled_polygon"), leaf("layer", [q(fill.layer)], at(1))];
  if (fill.island) items.push(leaf("island", [], at(1)));
  items.push({ type: "list", pre: at(1), items: [sym("pts"), ...xy], post: at(1), start: -1 });
  return { type: "list", pre: `\n${ind}`, items, post: `\n${ind}`, start: -1 };
}
