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
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { findKicadPython, runKicadPython } from "../../cli/python.ts";
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
import type { BBox, Board } from "../model.ts";
import fillProgram from "./fill.py" with { type: "text" };
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
    /** The board without the change's copper, beside its own project and rules. */
    base: string;
    near: number[][];
    /** The zones to refill are cut to this. */
    window: number[];
    /** An island inside this is wholly inside the window, clear of its edge. */
    inner: number[];
    /** Other zones' saved fills are given as far as this. */
    reach: number[];
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
  if (boardZones(board.root).some((z) => z.filled && !z.ruleArea)) await findKicadPython();
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
  return result;
}

/**
 * Runs the fill; with `savedCopy`, KiCad also saves the filled board there (for comparisons);
 * with `change`, only the difference that change makes is applied (see {@link FillChange}).
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
      // The board without the change's copper, beside its own copy of the project and rules.
      const base = join(dir, "base", `${stem}.kicad_pcb`);
      mkdirSync(dirname(base));
      for (const ext of [".kicad_pro", ".kicad_dru"])
        if (existsSync(join(dir, stem + ext))) copyFileSync(join(dir, stem + ext), join(dir, "base", stem + ext));
      const window = growBox(
        boxOf(
          change.near.map((b) => [
            { x: b.minX, y: b.minY },
            { x: b.maxX, y: b.maxY },
          ]),
        ),
        WINDOW_MARGIN,
      );
      const zones = boardZones(board.root);
      writeFileSync(copy, printWithout(board, zones, new Set()));
      writeFileSync(base, printWithout(board, zones, changeNodes(board, change)));
      // Other zones' fills knock out the refilled ones up to their clearance past the window.
      const reach = growBox(window, WINDOW_MARGIN);
      const inner = growBox(window, -ISLAND_EDGE);
      spec = {
        ids,
        change: {
          base,
          near: change.near.map(nanometres),
          window: nanometres(window),
          inner: nanometres(inner),
          reach: nanometres(reach),
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

const TRACKS = new Set(["segment", "arc", "via"]);

const nm = (mm: number) => Math.round(mm * 1e6);

function nanometres(box: BBox): number[] {
  return [nm(box.minX), nm(box.minY), nm(box.maxX), nm(box.maxY)];
}

/** The footprints and tracks a change added. */
function changeNodes(board: Board, change: FillChange): Set<SNode> {
  const refs = new Set(change.refs);
  const items = new Set(change.items);
  const added = new Set<SNode>(
    board
      .footprints()
      .filter((f) => refs.has(f.ref))
      .map((f) => f.node),
  );
  for (const node of board.root.items) {
    if (
      node.type === "list" &&
      TRACKS.has(head(node) ?? "") &&
      items.has(childText(node, "uuid") ?? childText(node, "tstamp") ?? "")
    )
      added.add(node);
  }
  return added;
}

/** The board's bytes without `dropped` items and without the fills of its zones (the tree is left as it was). */
function printWithout(board: Board, zones: Zone[], dropped: Set<SNode>): Uint8Array {
  const all = board.root.items;
  const zoneItems = zones.map((z) => z.node.items);
  board.root.items = all.filter((node) => !dropped.has(node));
  for (const zone of zones)
    zone.node.items = zone.node.items.filter((node) => !(node.type === "list" && head(node) === "filled_polygon"));
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
