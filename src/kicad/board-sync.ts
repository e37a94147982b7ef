/**
 * Headless "Update PCB from Schematic", for `board sync`, the `sync_board` tool and `sync --resolve`.
 *
 * `planBoardSync` compares the board with the schematic's components and native netlist and
 * returns a plan: plain, serialisable data saying which footprints to add, update or remove and
 * which nets change. `applyBoardSync` carries a plan out on the board tree in place, through the
 * lossless engine, so everything the plan does not name — routed copper, zones, graphics, the
 * formatting of untouched footprints — keeps its bytes. `syncBoard` loads, plans, applies and
 * writes only when something changed.
 *
 * It follows KiCad's `BOARD_NETLIST_UPDATER` with the dialog options a headless tool wants:
 * - footprints are matched to symbols by symbol path (KiCad's default), then, for what is left
 *   on both sides, by reference, so a symbol moved to another sheet keeps its placed and routed
 *   footprint (only `path`, `sheetname` and `sheetfile` change);
 * - a changed footprint id swaps the footprint in place: same uuid, position, rotation, side and
 *   lock; Reference and Value texts come from the new library footprint;
 * - fields are added and updated, never removed (board-only fields survive, as with KiCad's
 *   "remove extra fields" unticked);
 * - footprints whose symbol is gone or no longer on the board are removed, except:
 *   locked ones are kept and reported (KiCad's rule without "override locks": a lock means
 *   "do not touch"); footprints with tracks on their pads ARE removed, with a warning naming
 *   the copper left behind — the schematic is the source of truth, the copper is left alone
 *   rather than silently deleted, and DRC then shows it as dangling;
 * - pads take their nets from the netlist; a pad whose net changes gets KiCad's `pinfunction` and
 *   `pintype` too, while pads whose net is already right are not rewritten, so an old board
 *   does not turn into a whole-file diff;
 * - a net whose pads all move to one new name is renamed in place (table entry, pads, zones,
 *   and on KiCad 10 boards the tracks and vias, which name their net); a net left with no pad
 *   is removed from the table unless tracks, vias or zones still use it — then it stays and
 *   a warning says so, because dropping it would orphan copper;
 * - new footprints go in a tidy row below the Edge.Cuts outline, clear of every footprint.
 */
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { CopperheadError } from "../errors.ts";
import type { KicadProject } from "../repo/project.ts";
import { Board, footprintToBoard, readNetRef, type BBox, type Footprint, type NetFormat, type Placement } from "./board.ts";
import { listComponents, type Component } from "./components.ts";
import {
  addAttrFlags,
  boardBounds,
  fieldForFootprint,
  instantiateFootprint,
  localBounds,
  uuidSource,
  type FootprintField,
  type Side,
} from "./footprint-instance.ts";
import { openLibraries, type Libraries } from "./library.ts";
import { buildNetlist, naturalCompare, type Netlist } from "./netlist.ts";
import { loadSchematicProject, type SchematicProject } from "./schematic.ts";
import { child, children, head, insertChild, isList, list, num, printSexprBytes, q, removeChild, sameBytes, setAtom, text, writeSexprFile, type SList } from "./sexpr.ts";

export const BOARD_SYNC_SCHEMA = "copperhead.board-sync/1";

/** The net a pad should carry, with the pin data KiCad copies onto the pad. */
export interface PadNet {
  pad: string;
  net: string;
  pinfunction?: string;
  pintype?: string;
}

export interface FootprintAdd {
  ref: string;
  libId: string;
  value: string;
  path: string;
  sheetname?: string;
  sheetfile?: string;
  at: Placement;
  side: Side;
  fields: FootprintField[];
  /** Fabrication flags from the symbol: `dnp`, `exclude_from_bom`. */
  flags: string[];
  pads: PadNet[];
  /** Seed of the new footprint's uuids (stable: the same sync writes the same bytes). */
  uuidSeed: string;
}

export interface ValueChange {
  from?: string;
  to: string;
}

export interface PadChange {
  pad: string;
  /** Index among the footprint's pads, to address one of several pads sharing a number. */
  index: number;
  from?: string;
  /** Undefined: the pad loses its net. */
  to?: string;
  pinfunction?: string;
  pintype?: string;
}

export interface FootprintUpdate {
  ref: string;
  /** The footprint's uuid on the board before the sync (its identity). */
  uuid: string;
  /** Index among the board's footprints before the sync. */
  index: number;
  reference?: ValueChange;
  value?: ValueChange;
  /** A swap to another library footprint; `pads` are the new footprint's nets. */
  footprint?: { from: string; to: string; pads: PadNet[] };
  fields: { name: string; from?: string; to: string }[];
  path?: ValueChange;
  sheetname?: ValueChange;
  sheetfile?: ValueChange;
  flags?: { add: string[]; remove: string[] };
  pads: PadChange[];
}

export interface FootprintRemove {
  ref: string;
  libId: string;
  uuid: string;
  index: number;
  reason: "symbol_deleted" | "not_on_board";
}

/** A net table change: a rename (`from` and `to`), a new net (`to`) or a removed one (`from`). */
export interface NetChange {
  from?: string;
  to?: string;
  /** The net's code in the numbered (KiCad 8/9) table. */
  code?: number;
}

export type SyncWarningCode =
  | "locked_not_removed"
  | "locked_not_swapped"
  | "tracks_left_dangling"
  | "no_footprint_assigned"
  | "unannotated"
  | "pad_without_pin"
  | "pin_without_pad"
  | "copper_on_removed_net";

export interface SyncWarning {
  code: SyncWarningCode;
  message: string;
  ref?: string;
  net?: string;
}

export interface BoardSyncPlan {
  schema: typeof BOARD_SYNC_SCHEMA;
  netFormat: NetFormat;
  added: FootprintAdd[];
  updated: FootprintUpdate[];
  removed: FootprintRemove[];
  renets: NetChange[];
  warnings: SyncWarning[];
}

/** What planning reads: the design as loaded once (see `loadDesign`), and the libraries. */
export interface BoardSyncInputs {
  board: Board;
  schematic: SchematicProject;
  components: Component[];
  netlist: Netlist;
  libraries: Libraries;
}

/** True when the plan changes nothing on the board. */
export function isEmptyPlan(plan: BoardSyncPlan): boolean {
  return plan.added.length === 0 && plan.updated.length === 0 && plan.removed.length === 0 && plan.renets.length === 0;
}

// ---------------------------------------------------------------------------------------------
// Planning

interface PinData {
  net: string;
  pinfunction?: string;
  pintype?: string;
}

/** Heads of the top-level items that carry copper on a net. */
const COPPER_ITEMS = new Set(["segment", "arc", "via", "zone"]);
/** Space between staged footprints, and between the outline and the staging row (mm). */
const STAGING_GAP = 1;
const STAGING_MARGIN = 5;

export function planBoardSync(inputs: BoardSyncInputs): BoardSyncPlan {
  const { board, schematic, netlist, libraries } = inputs;
  const warnings: SyncWarning[] = [];
  const pins = indexNetlist(netlist);
  const netlistNames = new Set(netlist.nets.map((n) => n.name));
  const footprints = board.footprints();
  const wanted = wantedComponents(inputs.components, warnings);
  const { matches, unmatchedComponents, unmatchedFootprints } = matchFootprints(footprints, wanted);

  const sheetOf = sheetInfo(schematic);
  const removed: FootprintRemove[] = [];
  const keptFootprints = new Set<number>();
  const offBoard = new Set(inputs.components.filter((c) => !c.onBoard).flatMap((c) => [c.ref, c.symbolPath]));
  for (const index of unmatchedFootprints) {
    const fp = footprints[index]!;
    if (fp.attributes.includes("board_only")) {
      keptFootprints.add(index);
      continue;
    }
    if (fp.locked) {
      warnings.push({ code: "locked_not_removed", ref: fp.ref, message: `${fp.ref} has no symbol on the board side of the schematic but is locked, so it was kept; unlock it (or delete it) to remove it.` });
      keptFootprints.add(index);
      continue;
    }
    const tracks = copperOnPads(board, fp);
    if (tracks > 0) {
      warnings.push({ code: "tracks_left_dangling", ref: fp.ref, message: `${fp.ref} was removed; ${tracks} track/via end(s) on its pads are left in place and now dangle. Reroute or delete them.` });
    }
    const reason = offBoard.has(fp.ref) || (fp.path !== undefined && offBoard.has(fp.path)) ? "not_on_board" : "symbol_deleted";
    removed.push({ ref: fp.ref, libId: fp.libId, uuid: footprintId(fp), index, reason });
  }

  // Desired pad nets of every footprint that stays, and the changes they imply.
  const updated: FootprintUpdate[] = [];
  const padPlans: { update: FootprintUpdate; fp: Footprint; targets: (PinData | undefined)[] }[] = [];
  for (const [index, component] of matches) {
    const fp = footprints[index]!;
    keptFootprints.add(index);
    const update = planFootprintUpdate(fp, index, component, sheetOf(component), libraries, pins, warnings);
    if (update.footprint) {
      updated.push(update);
      continue;
    }
    padPlans.push({ update, fp, targets: padTargets(fp.pads.map(padShape), pins.get(component.ref)) });
    warnMissingPads(fp.ref, fp.pads.map(padShape), pins.get(component.ref), warnings);
    updated.push(update);
  }

  // Net renames: a net no longer in the schematic whose pads all move to one new name.
  const boardNets = new Map(board.nets().map((n) => [n.name, n]));
  const moves = new Map<string, Set<string>>();
  for (const { fp, targets } of padPlans) {
    fp.pads.forEach((pad, i) => {
      const from = pad.net?.name;
      if (!from || netlistNames.has(from)) return;
      const to = targets[i]?.net ?? "";
      if (!moves.has(from)) moves.set(from, new Set());
      moves.get(from)!.add(to);
    });
  }
  for (const update of updated) {
    if (!update.footprint) continue;
    const fp = footprints[update.index]!;
    for (const pad of fp.pads) {
      const from = pad.net?.name;
      if (!from || netlistNames.has(from)) continue;
      const to = update.footprint.pads.find((p) => p.pad === pad.number)?.net ?? "";
      if (!moves.has(from)) moves.set(from, new Set());
      moves.get(from)!.add(to);
    }
  }
  const renames = new Map<string, string>();
  const claimed = new Set<string>();
  for (const [from, targets] of [...moves].sort(([a], [b]) => naturalCompare(a, b))) {
    if (targets.size !== 1) continue;
    const to = [...targets][0]!;
    if (to === "" || boardNets.has(to) || claimed.has(to)) continue;
    renames.set(from, to);
    claimed.add(to);
  }
  const renamed = (name: string | undefined) => (name === undefined ? undefined : (renames.get(name) ?? name));

  for (const { update, fp, targets } of padPlans) {
    fp.pads.forEach((pad, i) => {
      const current = renamed(pad.net?.name) || undefined;
      const target = targets[i];
      if ((target?.net ?? undefined) === current) return;
      update.pads.push({ pad: pad.number, index: i, from: current, to: target?.net, pinfunction: target?.pinfunction, pintype: target?.pintype });
    });
  }

  // Placement of the new footprints, then their pads.
  const added = planAdditions(board, unmatchedComponents, sheetOf, libraries, pins, warnings, footprints);

  // Net table: renames, nets that appear, nets no pad uses any more.
  const finalNets = new Set<string>();
  for (const index of keptFootprints) {
    const update = updated.find((u) => u.index === index);
    if (update?.footprint) {
      for (const p of update.footprint.pads) finalNets.add(p.net);
      continue;
    }
    footprints[index]!.pads.forEach((pad, i) => {
      const change = update?.pads.find((c) => c.index === i);
      const name = change ? change.to : renamed(pad.net?.name);
      if (name) finalNets.add(name);
    });
  }
  for (const add of added) for (const p of add.pads) finalNets.add(p.net);

  const renets: NetChange[] = [];
  const numbered = board.netFormat === "numbered";
  for (const [from, to] of renames) renets.push({ from, to, code: boardNets.get(from)?.code });
  const existing = new Set([...boardNets.keys()].map((n) => renamed(n)!));
  let nextCode = Math.max(0, ...[...boardNets.values()].map((n) => n.code ?? 0)) + 1;
  for (const name of [...finalNets].filter((n) => !existing.has(n)).sort(naturalCompare)) {
    renets.push(numbered ? { to: name, code: nextCode++ } : { to: name });
  }
  const copper = copperNets(board);
  for (const net of boardNets.values()) {
    const name = renamed(net.name)!;
    if (finalNets.has(name)) continue;
    const used = numbered ? copper.codes.has(net.code ?? -1) : copper.names.has(net.name);
    if (used) {
      warnings.push({ code: "copper_on_removed_net", net: name, message: `No pad is on net ${name} any more, but tracks, vias or zones still are; the net was kept. Delete or reconnect that copper.` });
      continue;
    }
    renets.push(numbered ? { from: net.name, code: net.code } : { from: net.name });
  }

  return {
    schema: BOARD_SYNC_SCHEMA,
    netFormat: board.netFormat,
    added,
    updated: updated.filter(hasChanges).sort((a, b) => naturalCompare(a.ref, b.ref)),
    removed: removed.sort((a, b) => naturalCompare(a.ref, b.ref)),
    renets,
    warnings,
  };
}

function hasChanges(u: FootprintUpdate): boolean {
  return Boolean(u.reference || u.value || u.footprint || u.path || u.sheetname || u.sheetfile || u.flags || u.fields.length || u.pads.length);
}

/** Components that need a footprint: on the board, annotated, not virtual. */
function wantedComponents(components: Component[], warnings: SyncWarning[]): Component[] {
  const out: Component[] = [];
  for (const c of components) {
    if (!c.onBoard) continue;
    if (c.ref.includes("?")) {
      warnings.push({ code: "unannotated", ref: c.ref, message: `${c.ref} is not annotated, so it cannot be matched to a footprint; annotate the schematic.` });
      continue;
    }
    out.push(c);
  }
  return out;
}

/** Every path a component's units are recorded under on a board (`GetKIIDs()`). */
function unitPaths(c: Component): string[] {
  const sheet = c.sheetPath.replace(/^\/[^/]+/, "");
  return [c.symbolPath, ...c.symbols.map((s) => `${sheet}/${s.uuid}`)];
}

function matchFootprints(footprints: Footprint[], components: Component[]) {
  const byPath = new Map<string, Component>();
  for (const c of components) for (const p of unitPaths(c)) if (!byPath.has(p)) byPath.set(p, c);
  const matches = new Map<number, Component>();
  const used = new Set<Component>();
  footprints.forEach((fp, i) => {
    const c = fp.path ? byPath.get(fp.path) : undefined;
    if (c && !used.has(c)) {
      matches.set(i, c);
      used.add(c);
    }
  });
  const byRef = new Map(components.filter((c) => !used.has(c)).map((c) => [c.ref, c]));
  footprints.forEach((fp, i) => {
    if (matches.has(i)) return;
    const c = byRef.get(fp.ref);
    if (c && !used.has(c)) {
      matches.set(i, c);
      used.add(c);
    }
  });
  return {
    matches: [...matches].sort(([a], [b]) => a - b),
    unmatchedComponents: components.filter((c) => !used.has(c)),
    unmatchedFootprints: footprints.map((_, i) => i).filter((i) => !matches.has(i)),
  };
}

interface SheetData {
  sheetname?: string;
  sheetfile?: string;
}

/**
 * `sheetname` and `sheetfile` as the kicad-cli netlist's Sheetname/Sheetfile properties give
 * them: the name and file of the sheet holding the symbol; nothing for the root's name.
 */
function sheetInfo(schematic: SchematicProject): (c: Component) => SheetData {
  const byPath = new Map(schematic.instances.map((i) => [i.path, i]));
  return (c) => {
    const instance = byPath.get(c.sheetPath);
    if (!instance?.sheet) return { sheetname: undefined, sheetfile: basename(schematic.rootPath) };
    return { sheetname: instance.sheet.name || undefined, sheetfile: instance.sheet.fileName || undefined };
  };
}

/** Symbol fields a footprint mirrors: all but Reference, Value and Footprint (KiCad's rule). */
function footprintFields(c: Component): FootprintField[] {
  return Object.entries(c.fields)
    .filter(([name]) => name !== "Reference" && name !== "Value" && name !== "Footprint")
    .map(([name, value]) => ({ name, value }));
}

function wantedFlags(c: Component): string[] {
  return [...(c.inBom ? [] : ["exclude_from_bom"]), ...(c.dnp ? ["dnp"] : [])];
}

function planFootprintUpdate(
  fp: Footprint,
  index: number,
  c: Component,
  sheet: SheetData,
  libraries: Libraries,
  pins: Map<string, Map<string, PinData>>,
  warnings: SyncWarning[],
): FootprintUpdate {
  const update: FootprintUpdate = { ref: c.ref, uuid: footprintId(fp), index, fields: [], pads: [] };
  if (fp.ref !== c.ref) update.reference = { from: fp.ref, to: c.ref };
  if (fp.value !== c.value) update.value = { from: fp.value, to: c.value };
  if (!c.footprint) {
    warnings.push({ code: "no_footprint_assigned", ref: c.ref, message: `${c.ref} has no footprint assigned in the schematic; its footprint ${fp.libId} was left as it is.` });
  } else if (c.footprint !== fp.libId) {
    if (fp.locked) {
      warnings.push({ code: "locked_not_swapped", ref: c.ref, message: `${c.ref} is locked, so its footprint was not changed from ${fp.libId} to ${c.footprint}; unlock it to swap.` });
    } else {
      const library = libraries.resolveFootprint(c.footprint);
      const shapes = children(library.doc.root, "pad").map(padShapeOf);
      const targets = padTargets(shapes, pins.get(c.ref));
      warnMissingPads(c.ref, shapes, pins.get(c.ref), warnings);
      update.footprint = { from: fp.libId, to: c.footprint, pads: padNets(shapes, targets) };
    }
  }
  for (const { name, value } of footprintFields(c)) {
    if (fp.fields[name] !== value) update.fields.push({ name, from: fp.fields[name], to: value });
  }
  if (fp.path !== c.symbolPath) update.path = { from: fp.path, to: c.symbolPath };
  if ((fp.sheetname ?? undefined) !== sheet.sheetname) update.sheetname = { from: fp.sheetname, to: sheet.sheetname ?? "" };
  if ((fp.sheetfile ?? undefined) !== sheet.sheetfile) update.sheetfile = { from: fp.sheetfile, to: sheet.sheetfile ?? "" };
  const flags = wantedFlags(c);
  const add = flags.filter((f) => !fp.attributes.includes(f));
  const remove = ["dnp", "exclude_from_bom"].filter((f) => fp.attributes.includes(f) && !flags.includes(f));
  if (add.length || remove.length) update.flags = { add, remove };
  return update;
}

interface PadShape {
  number: string;
  onCopper: boolean;
  npth: boolean;
}

function padShape(pad: Footprint["pads"][number]): PadShape {
  return padShapeOf(pad.node);
}

function padShapeOf(node: SList): PadShape {
  const layers = child(node, "layers");
  const names = layers ? layers.items.slice(1).map((_, i) => text(layers, i + 1) ?? "") : [];
  return { number: text(node, 1) ?? "", onCopper: names.some((l) => l.endsWith(".Cu")), npth: text(node, 2) === "np_thru_hole" };
}

/**
 * The net each pad should carry (`updateComponentPadConnections`): the pin's net when the pad
 * has a number, is on copper and the symbol has that pin. Several no-connect pads sharing a
 * number get `name`, `name_1`, … so they stay apart, as KiCad does.
 */
function padTargets(pads: PadShape[], pins: Map<string, PinData> | undefined): (PinData | undefined)[] {
  const taken = new Set<string>();
  return pads.map((pad) => {
    if (!pad.number || !pad.onCopper || pad.npth) return undefined;
    const pin = pins?.get(pad.number);
    if (!pin) return undefined;
    if (!pin.pintype?.includes("no_connect")) return pin;
    let name = pin.net;
    for (let n = 1; taken.has(name); n++) name = `${pin.net}_${n}`;
    taken.add(name);
    return { ...pin, net: name };
  });
}

function padNets(pads: PadShape[], targets: (PinData | undefined)[]): PadNet[] {
  return pads.flatMap((pad, i) => {
    const t = targets[i];
    return t ? [{ pad: pad.number, net: t.net, pinfunction: t.pinfunction, pintype: t.pintype }] : [];
  });
}

function warnMissingPads(ref: string, pads: PadShape[], pins: Map<string, PinData> | undefined, warnings: SyncWarning[]): void {
  const numbers = new Set(pads.map((p) => p.number));
  for (const pin of pins?.keys() ?? []) {
    if (!numbers.has(pin)) warnings.push({ code: "pin_without_pad", ref, message: `${ref} pin ${pin} has no pad in the footprint; check the footprint assignment.` });
  }
  for (const pad of pads) {
    if (pad.number && pad.onCopper && !pad.npth && !pins?.has(pad.number)) {
      warnings.push({ code: "pad_without_pin", ref, message: `${ref} pad ${pad.number} has no pin in the symbol, so it gets no net.` });
    }
  }
}

function indexNetlist(netlist: Netlist): Map<string, Map<string, PinData>> {
  const pins = new Map<string, Map<string, PinData>>();
  for (const net of netlist.nets) {
    for (const node of net.nodes) {
      if (!pins.has(node.ref)) pins.set(node.ref, new Map());
      pins.get(node.ref)!.set(node.pin, { net: net.name, pinfunction: node.pinfunction, pintype: node.pintype });
    }
  }
  return pins;
}

function planAdditions(
  board: Board,
  components: Component[],
  sheetOf: (c: Component) => SheetData,
  libraries: Libraries,
  pins: Map<string, Map<string, PinData>>,
  warnings: SyncWarning[],
  footprints: Footprint[],
): FootprintAdd[] {
  const wanted = components.filter((c) => {
    if (c.footprint) return true;
    warnings.push({ code: "no_footprint_assigned", ref: c.ref, message: `${c.ref} has no footprint assigned in the schematic, so nothing was added for it.` });
    return false;
  });
  if (wanted.length === 0) return [];
  const outline = board.edgeCutsBBox();
  if (!outline) {
    throw new CopperheadError("board_outline_missing", `The board has no Edge.Cuts outline, so there is nowhere to stage the new footprints (${wanted.map((c) => c.ref).join(", ")}).`, {
      fix: "Draw the board outline on Edge.Cuts in KiCad, then sync again.",
      refs: wanted.map((c) => c.ref),
    });
  }
  // Every footprint is an obstacle, removed ones included: the staging row is planned before
  // removals and must not depend on their order.
  const obstacles = footprints.map((fp) => boardBounds(fp.node)).filter((b): b is BBox => b !== undefined);
  const stager = new Stager(outline, obstacles);
  const added: FootprintAdd[] = [];
  for (const c of [...wanted].sort((a, b) => naturalCompare(a.ref, b.ref))) {
    const library = libraries.resolveFootprint(c.footprint);
    const shapes = children(library.doc.root, "pad").map(padShapeOf);
    warnMissingPads(c.ref, shapes, pins.get(c.ref), warnings);
    const bounds = localBounds(library.doc.root) ?? { minX: -1, minY: -1, maxX: 1, maxY: 1 };
    const sheet = sheetOf(c);
    added.push({
      ref: c.ref,
      libId: c.footprint,
      value: c.value,
      path: c.symbolPath,
      ...sheet,
      at: { ...stager.place(bounds), rotation: 0 },
      side: "front",
      fields: footprintFields(c),
      flags: wantedFlags(c),
      pads: padNets(shapes, padTargets(shapes, pins.get(c.ref))),
      uuidSeed: `${c.symbolPath}|${c.footprint}`,
    });
  }
  return added;
}

/**
 * Lays new footprints left to right in rows below the outline, each on a 0.1 mm grid and
 * pushed right past anything it would overlap (earlier staged parts included); a row wraps at
 * the board's width (at least 50 mm).
 */
class Stager {
  private x: number;
  private y: number;
  private rowBottom: number;
  private readonly left: number;
  private readonly right: number;
  private readonly obstacles: BBox[];

  constructor(outline: BBox, obstacles: BBox[]) {
    this.left = outline.minX;
    this.right = outline.minX + Math.max(outline.maxX - outline.minX, 50);
    this.x = this.left;
    this.y = outline.maxY + STAGING_MARGIN;
    this.rowBottom = this.y;
    this.obstacles = obstacles;
  }

  place(local: BBox): { x: number; y: number } {
    const width = local.maxX - local.minX;
    for (;;) {
      const ox = Math.ceil((this.x - local.minX) * 10) / 10;
      const oy = Math.ceil((this.y - local.minY) * 10) / 10;
      const box = { minX: ox + local.minX, minY: oy + local.minY, maxX: ox + local.maxX, maxY: oy + local.maxY };
      const hit = this.obstacles.find((o) => overlaps(o, box, STAGING_GAP));
      if (hit) {
        this.x = hit.maxX + STAGING_GAP;
      } else if (box.maxX > this.right && this.x > this.left) {
        // Wrap; a part wider than the row still goes at the start of its own row.
      } else {
        this.obstacles.push(box);
        this.x = box.maxX + STAGING_GAP;
        this.rowBottom = Math.max(this.rowBottom, box.maxY);
        return { x: ox, y: oy };
      }
      if (this.x + width > this.right && this.x > this.left) {
        this.x = this.left;
        this.y = this.rowBottom + STAGING_GAP;
        this.rowBottom = this.y;
      }
    }
  }
}

function overlaps(a: BBox, b: BBox, gap: number): boolean {
  return a.minX < b.maxX + gap && b.minX < a.maxX + gap && a.minY < b.maxY + gap && b.minY < a.maxY + gap;
}

/** Track and via ends that land on a footprint's pads (within the pad's extent). */
export function copperOnPads(board: Board, fp: Footprint): number {
  const pads = fp.pads.flatMap((pad) => {
    const at = child(pad.node, "at");
    const size = child(pad.node, "size");
    if (!at) return [];
    const x = num(at, 1) ?? 0;
    const y = num(at, 2) ?? 0;
    const r = Math.max(num(size ?? at, 1) ?? 0, num(size ?? at, 2) ?? 0) / 2;
    return [{ ...footprintToBoard({ x, y }, fp.at), r }];
  });
  let count = 0;
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const h = head(item);
    if (h !== "segment" && h !== "arc" && h !== "via") continue;
    for (const name of h === "via" ? ["at"] : ["start", "end"]) {
      const p = child(item, name);
      const px = p && num(p, 1);
      const py = p && num(p, 2);
      if (px === undefined || py === undefined) continue;
      if (pads.some((pad) => Math.hypot(pad.x - px!, pad.y - py!) <= pad.r + 1e-6)) count++;
    }
  }
  return count;
}

/** Net codes (numbered form) and names (named form) that tracks, vias and zones use. */
function copperNets(board: Board): { codes: Set<number>; names: Set<string> } {
  const codes = new Set<number>();
  const names = new Set<string>();
  for (const item of board.root.items) {
    if (item.type !== "list" || !COPPER_ITEMS.has(head(item) ?? "")) continue;
    const net = readNetRef(child(item, "net"));
    if (net?.code !== undefined && net.code > 0) codes.add(net.code);
    if (net?.name) names.add(net.name);
    const netName = child(item, "net_name");
    if (netName && text(netName, 1)) names.add(text(netName, 1)!);
  }
  return { codes, names };
}

function footprintId(fp: Footprint): string {
  const uuid = child(fp.node, "uuid") ?? child(fp.node, "tstamp");
  return (uuid && text(uuid, 1)) || `ref:${fp.ref}`;
}

// ---------------------------------------------------------------------------------------------
// Applying

/**
 * Carries out a plan made by `planBoardSync` for this same board, in place. Throws
 * `internal_error` when the board is not the one the plan was made for (a footprint moved or
 * vanished), before changing anything.
 */
export function applyBoardSync(board: Board, plan: BoardSyncPlan, libraries: Libraries): void {
  const footprints = board.footprints();
  const located = (entry: { index: number; uuid: string; ref: string }): Footprint => {
    const fp = footprints[entry.index];
    if (!fp || footprintId(fp) !== entry.uuid) {
      throw new CopperheadError("internal_error", `The board sync plan does not match the board (footprint ${entry.ref} is not where the plan says).`, {
        fix: "Plan again against the current board.",
      });
    }
    return fp;
  };
  const removals = plan.removed.map(located);
  const updates = plan.updated.map((u) => ({ update: u, fp: located(u) }));
  // Resolve every library footprint first, so a missing one fails before any edit.
  const newLibraries = new Map<string, SList>();
  for (const id of [...plan.added.map((a) => a.libId), ...plan.updated.flatMap((u) => (u.footprint ? [u.footprint.to] : []))]) {
    newLibraries.set(id, libraries.resolveFootprint(id).doc.root);
  }
  const nets = new NetTable(board, plan.netFormat);

  for (const change of plan.renets) if (change.from !== undefined && change.to !== undefined) nets.rename(change.from, change.to);
  for (const change of plan.renets) if (change.from === undefined && change.to !== undefined) nets.add(change.to, change.code);

  for (const fp of removals) removeChild(board.root, fp.node);

  for (const { update, fp } of updates) {
    if (update.footprint) {
      swapFootprint(board, fp, update, newLibraries.get(update.footprint.to)!, nets);
      continue;
    }
    applyFieldChanges(fp, update);
    for (const change of update.pads) {
      const pad = fp.pads[change.index];
      if (!pad || pad.number !== change.pad) throw new CopperheadError("internal_error", `Pad ${change.pad} of ${update.ref} is not where the plan says.`, { fix: "Plan again against the current board." });
      writePadNet(pad.node, change.to === undefined ? undefined : { net: change.to, pinfunction: change.pinfunction, pintype: change.pintype }, nets);
    }
  }

  for (const add of plan.added) {
    const node = instantiateFootprint(newLibraries.get(add.libId)!, {
      libId: add.libId,
      uuidSeed: add.uuidSeed,
      at: add.at,
      side: add.side,
      reference: add.ref,
      value: add.value,
      fields: add.fields,
      path: add.path,
      sheetname: add.sheetname,
      sheetfile: add.sheetfile,
      flags: add.flags,
      layerIds: layerIds(board),
    });
    assignPadNets(node, add.pads, nets);
    insertFootprint(board.root, node);
  }

  for (const change of plan.renets) if (change.from !== undefined && change.to === undefined) nets.remove(change.from);
}

function applyFieldChanges(fp: Footprint, update: FootprintUpdate): void {
  const node = fp.node;
  const property = (name: string) => children(node, "property").find((p) => text(p, 1) === name);
  if (update.reference) setProperty(node, property("Reference"), "Reference", update.reference.to, fp);
  if (update.value) setProperty(node, property("Value"), "Value", update.value.to, fp);
  for (const field of update.fields) setProperty(node, property(field.name), field.name, field.to, fp);
  if (update.path) setOrInsertSheetData(node, "path", update.path.to);
  if (update.sheetname) setOrInsertSheetData(node, "sheetname", update.sheetname.to);
  if (update.sheetfile) setOrInsertSheetData(node, "sheetfile", update.sheetfile.to);
  if (update.flags) {
    let attr = child(node, "attr");
    if (!attr && update.flags.add.length > 0) {
      attr = list("attr");
      insertChild(node, attr, afterLast(node, ["layer", "uuid", "at", "descr", "tags", "property", "path", "sheetname", "sheetfile", "private_layers", "net_tie_pad_groups", "solder_mask_margin", "solder_paste_margin", "solder_paste_margin_ratio", "clearance", "zone_connect"]));
    }
    if (attr) {
      addAttrFlags(attr, update.flags.add);
      attr.items = [attr.items[0]!, ...attr.items.slice(1).filter((a) => !(a.type === "atom" && update.flags!.remove.includes(a.raw)))];
      if (attr.items.length === 1) removeChild(node, attr);
      else attr.items.slice(1).forEach((a, i) => (a.pre = i === 0 ? " " : " "));
    }
  }
}

function setProperty(node: SList, existing: SList | undefined, name: string, value: string, fp: Footprint): void {
  if (existing) {
    setAtom(existing, 2, q(value));
    return;
  }
  const uuid = uuidSource(`${fieldSeed(fp)}|field|${name}`)();
  const field = fieldForFootprint(name, value, fp.layer.startsWith("B.") ? "back" : "front", fp.at.rotation, uuid);
  insertChild(node, field, afterLast(node, ["layer", "uuid", "at", "descr", "tags", "property"]));
}

function fieldSeed(fp: Footprint): string {
  return footprintId(fp);
}

/** `path`, `sheetname` and `sheetfile` sit together after the properties, in that order. */
function setOrInsertSheetData(node: SList, name: "path" | "sheetname" | "sheetfile", value: string): void {
  const existing = child(node, name);
  if (value === "" && name !== "path") {
    if (existing) removeChild(node, existing);
    return;
  }
  if (existing) {
    setAtom(existing, 1, q(value));
    return;
  }
  const before = { path: ["layer", "uuid", "at", "descr", "tags", "property"], sheetname: ["layer", "uuid", "at", "descr", "tags", "property", "path"], sheetfile: ["layer", "uuid", "at", "descr", "tags", "property", "path", "sheetname"] }[name];
  insertChild(node, list(name, q(value)), afterLast(node, before));
}

/** Index just after the last child whose head is one of `heads` (1 when none is there). */
function afterLast(node: SList, heads: string[]): number {
  let at = 1;
  node.items.forEach((item, i) => {
    if (item.type === "list" && heads.includes(head(item) ?? "")) at = i + 1;
  });
  return Math.max(at, node.items[1]?.type === "atom" ? 2 : 1);
}

/** Replaces a footprint by a fresh library instance at the same place, side and identity. */
function swapFootprint(board: Board, fp: Footprint, update: FootprintUpdate, library: SList, nets: NetTable): void {
  const fieldsNow = { ...fp.fields };
  for (const f of update.fields) fieldsNow[f.name] = f.to;
  const node = instantiateFootprint(library, {
    libId: update.footprint!.to,
    uuidSeed: `${update.uuid}|${update.footprint!.to}`,
    uuid: update.uuid.startsWith("ref:") ? undefined : update.uuid,
    at: fp.at,
    side: fp.layer.startsWith("B.") ? "back" : "front",
    reference: update.reference?.to ?? fp.ref,
    value: update.value?.to ?? fp.value,
    fields: Object.entries(fieldsNow)
      .filter(([name]) => name !== "Reference" && name !== "Value" && name !== "Footprint")
      .map(([name, value]) => ({ name, value })),
    path: update.path?.to ?? fp.path,
    sheetname: update.sheetname ? update.sheetname.to || undefined : fp.sheetname,
    sheetfile: update.sheetfile ? update.sheetfile.to || undefined : fp.sheetfile,
    flags: [...fp.attributes.filter((a) => !update.flags?.remove.includes(a) && a !== "smd" && a !== "through_hole"), ...(update.flags?.add ?? [])],
    locked: fp.locked,
    previousFields: children(fp.node, "property"),
    layerIds: layerIds(board),
  });
  assignPadNets(node, update.footprint!.pads, nets);
  const index = board.root.items.indexOf(fp.node);
  removeChild(board.root, fp.node);
  insertChild(board.root, node, index);
}

function assignPadNets(node: SList, pads: PadNet[], nets: NetTable): void {
  const queue = new Map<string, PadNet[]>();
  for (const p of pads) {
    if (!queue.has(p.pad)) queue.set(p.pad, []);
    queue.get(p.pad)!.push(p);
  }
  for (const pad of children(node, "pad")) {
    const list = queue.get(text(pad, 1) ?? "");
    const target = list && (list.length > 1 ? list.shift() : list[0]);
    if (target) writePadNet(pad, { net: target.net, pinfunction: target.pinfunction, pintype: target.pintype }, nets);
  }
}

/** Pad children KiCad writes before `(net …)`. */
const BEFORE_NET = ["at", "size", "drill", "property", "layers", "remove_unused_layers", "keep_end_layers", "zone_layer_connections", "roundrect_rratio", "chamfer_ratio", "chamfer", "rect_delta"];

/** Sets (or clears) a pad's net, with `pinfunction` and `pintype` as KiCad writes them. */
function writePadNet(pad: SList, target: { net: string; pinfunction?: string; pintype?: string } | undefined, nets: NetTable): void {
  const remove = (name: string) => {
    const existing = child(pad, name);
    if (existing) removeChild(pad, existing);
  };
  if (!target) {
    remove("net");
    remove("pinfunction");
    remove("pintype");
    return;
  }
  const ref = nets.reference(target.net);
  const existing = child(pad, "net");
  if (existing) existing.items.splice(1, existing.items.length - 1, ...ref.items.slice(1).map((a) => ({ ...a, pre: " " })));
  else insertChild(pad, ref, afterLast(pad, BEFORE_NET));
  for (const [name, value] of [["pinfunction", target.pinfunction], ["pintype", target.pintype]] as const) {
    const node = child(pad, name);
    if (!value) {
      if (node) removeChild(pad, node);
    } else if (node) setAtom(node, 1, q(value));
    else insertChild(pad, list(name, q(value)), afterLast(pad, [...BEFORE_NET, "net", "pinfunction"]));
  }
}

/** Layer ids by name from the board's `(layers (0 "F.Cu" signal) …)` table. */
function layerIds(board: Board): Map<string, number> {
  const layers = child(board.root, "layers");
  const ids = new Map<string, number>();
  for (const entry of layers ? layers.items : []) {
    if (entry.type !== "list") continue;
    const id = num(entry, 0);
    const name = text(entry, 1);
    if (id !== undefined && name !== undefined) ids.set(name, id);
  }
  return ids;
}

/** Footprints are kept sorted by uuid, as KiCad 9 saves them. */
function insertFootprint(root: SList, node: SList): void {
  const uuid = text(child(node, "uuid")!, 1) ?? "";
  let lastFootprint = -1;
  for (let i = 0; i < root.items.length; i++) {
    const item = root.items[i]!;
    if (!isList(item, "footprint")) continue;
    lastFootprint = i;
    const other = child(item, "uuid");
    if (other && (text(other, 1) ?? "") > uuid) {
      insertChild(root, node, i);
      return;
    }
  }
  insertChild(root, node, lastFootprint >= 0 ? lastFootprint + 1 : afterLast(root, ["version", "generator", "generator_version", "general", "paper", "title_block", "layers", "setup", "property", "net"]));
}

/** The board's nets as the sync edits them: the numbered table (KiCad 8/9) or bare names (10). */
class NetTable {
  private readonly board: Board;
  private readonly format: NetFormat;
  private readonly codes = new Map<string, number>();

  constructor(board: Board, format: NetFormat) {
    this.board = board;
    this.format = format;
    for (const n of board.nets()) if (n.code !== undefined) this.codes.set(n.name, n.code);
  }

  /** A `(net …)` list pointing at `name`. */
  reference(name: string): SList {
    if (this.format === "named") return list("net", q(name));
    const code = this.codes.get(name);
    if (code === undefined) throw new CopperheadError("internal_error", `Net ${name} is not in the board's net table.`, { fix: "Plan again against the current board." });
    return list("net", code, q(name));
  }

  add(name: string, code: number | undefined): void {
    if (this.format === "named") return;
    const entries = children(this.board.root, "net");
    const last = entries[entries.length - 1];
    const at = last ? this.board.root.items.indexOf(last) + 1 : afterLast(this.board.root, ["version", "generator", "generator_version", "general", "paper", "title_block", "layers", "setup", "property"]);
    insertChild(this.board.root, list("net", code!, q(name)), at);
    this.codes.set(name, code!);
  }

  remove(name: string): void {
    if (this.format === "named") return;
    const entry = children(this.board.root, "net").find((n) => text(n, 2) === name);
    if (entry) removeChild(this.board.root, entry);
    this.codes.delete(name);
  }

  /** Renames a net everywhere its name is written; codes never change. */
  rename(from: string, to: string): void {
    const code = this.codes.get(from);
    if (code !== undefined) {
      this.codes.delete(from);
      this.codes.set(to, code);
    }
    const stack: SList[] = [this.board.root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const item of node.items) {
        if (item.type !== "list") continue;
        const h = head(item);
        if (h === "net" || h === "net_name") {
          const nameIndex = item.items.length > 2 ? 2 : 1;
          const atom = item.items[nameIndex];
          if (atom?.type === "atom" && atom.raw.startsWith('"') && text(item, nameIndex) === from) setAtom(item, nameIndex, q(to));
          continue;
        }
        if (h === "footprint" || h === "pad" || COPPER_ITEMS.has(h ?? "")) stack.push(item);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Whole-project convenience

export interface BoardSyncResult {
  plan: BoardSyncPlan;
  /** Path of the board the plan is for. */
  board: string;
  /** Whether the board file changed (always false on a dry run). */
  written: boolean;
}

/**
 * Loads the project's schematic and board, plans the sync, and — unless `dryRun` — applies it
 * and writes the board when its text changed. Nothing is written when planning or applying
 * fails, so a bad footprint id leaves the board byte-identical.
 */
export async function syncBoard(project: KicadProject, options: { dryRun?: boolean; libraries?: Libraries } = {}): Promise<BoardSyncResult> {
  const boardPath = project.board;
  if (!boardPath || !existsSync(boardPath)) {
    throw new CopperheadError("not_found", `The project has no board: ${project.name}.kicad_pcb is missing next to ${basename(project.projectFile)}.`, {
      fix: "Create the board in KiCad (File → New board, saved next to the .kicad_pro) before syncing it.",
    });
  }
  const schematic = loadSchematicProject(project.schematic, { within: project.repoRoot });
  const board = Board.load(boardPath, { within: project.repoRoot });
  const libraries = options.libraries ?? (await openLibraries(dirname(project.projectFile)));
  const plan = planBoardSync({ board, schematic, components: listComponents(schematic), netlist: buildNetlist(schematic), libraries });
  if (options.dryRun || isEmptyPlan(plan)) return { plan, board: boardPath, written: false };
  applyBoardSync(board, plan, libraries);
  const next = printSexprBytes(board.doc);
  if (sameBytes(next, board.doc.bytes)) return { plan, board: boardPath, written: false };
  writeSexprFile(boardPath, next);
  return { plan, board: boardPath, written: true };
}
