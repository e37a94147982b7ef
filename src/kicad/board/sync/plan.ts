/**
 * Planning a headless "Update PCB from Schematic": compare the board with the schematic and say,
 * as plain serialisable data, which footprints to add, update or remove and which nets change.
 * `applyBoardSync` (kicad/board/sync/apply.ts) carries a plan out.
 *
 * It follows KiCad's `BOARD_NETLIST_UPDATER` with the options a headless tool wants:
 * - footprints are matched to symbols by symbol path, then by reference (kicad/board/footprint/match.ts);
 * - what DRC's schematic-parity check compares is always brought up to date: missing and extra
 *   footprints, reference, value, footprint id and pad nets; so is a footprint's link to its
 *   symbol when it points at no unit of it;
 * - a footprint the schematic names under another library nickname, or another name for the
 *   same footprint (kicad/board/footprint/needs-update.ts), is only re-linked; a really different one is swapped
 *   in place, keeping what KiCad's "Change Footprint" keeps (kicad/board/footprint/exchange.ts);
 * - fields and sheet names, which parity does not compare, are updated on request only (KiCad's
 *   "Update footprint fields"), so syncing a board that is in sync changes nothing; the DNP and
 *   BOM flags, which it does compare, always; footprints the sync adds get everything;
 * - footprints whose symbol is gone or not on the board are removed, except locked ones
 *   (kept and reported); copper left on removed pads is reported, not deleted;
 * - a net whose pads all move to one new name is renamed in place (its copper follows); a net
 *   left with no pad is dropped unless copper still uses it.
 *
 * Every change is a `SyncChange` with a stable key. A filter decides which are applied — all of
 * them by default; inside a `do` run only those the approved proposal covers (kicad/board/sync/sync-scope.ts)
 * — and the plan lists the others in `skipped`, so nothing found is silent.
 */
import { CopperheadError } from "../../../errors.ts";
import type { BBox, Board, Footprint, NetFormat, PlacementMm } from "../model.ts";
import { copperNets, copperOnPads } from "../nets.ts";
import { stagingPlacer } from "../staging.ts";
import { hidesReferencesLike } from "./reference-style.ts";
import type { Component } from "../../netlist/components.ts";
import { compareFootprint, type FootprintDifference } from "../footprint/needs-update.ts";
import { boardBounds, localBounds, SYMBOL_FLAGS, type FootprintField, type Side } from "../footprint/instance.ts";
import { matchFootprints, unitPaths } from "../footprint/match.ts";
import { sheetNameIn, sheetNames, type SheetNames, type SymbolSheet } from "../footprint/sheet.ts";
import { BOARD, boardDialect, describeVersion, has, type BoardDialect } from "../../format-versions.ts";
import type { Libraries } from "../../library/libraries.ts";
import { naturalCompare } from "../../../util/natural-compare.ts";
import type { Netlist } from "../../netlist/netlist.ts";
import {
  indexPins,
  padMismatches,
  padNets,
  padShape,
  padTargets,
  type PadNet,
  type PadShape,
  type PinIndex,
  type PinNet,
} from "../pad-nets.ts";
import type { SchematicProject } from "../../schematic/model/hierarchy.ts";
import { child, children, text, type SList } from "../../sexpr/index.ts";

export type { PadNet } from "../pad-nets.ts";

export const BOARD_SYNC_SCHEMA = "copperhead.board-sync/1";

export interface FootprintAdd {
  ref: string;
  libId: string;
  value: string;
  path: string;
  sheetname?: string;
  sheetfile?: string;
  at: PlacementMm;
  side: Side;
  /** Parked beside the outline (not placed on the board yet), for a person to place and route. */
  staged: boolean;
  /** Why it is staged: what kept it off the board. */
  stagedReason?: string;
  /** Placed farther than `FAR` mm from the pin it serves: how far, and what fills the nearer spots. */
  far?: string;
  fields: FootprintField[];
  /** Fabrication flags from the symbol: `dnp`, `exclude_from_bom`. */
  flags: string[];
  pads: PadNet[];
  /** Seed of the new footprint's uuids (stable: the same sync writes the same bytes). */
  uuidSeed: string;
  /** Its reference is hidden, as the board hides those of footprints like it (`reference-style.ts`). */
  hideReference?: boolean;
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

export interface FootprintChange {
  from: string;
  to: string;
  /**
   * `relink`: the board's footprint is the library footprint the symbol names, placed from
   * another library; only its id changes. `swap`: the library footprint replaces it in place.
   */
  kind: "relink" | "swap";
  /** For a swap, the new footprint's pad nets. */
  pads: PadNet[];
  /** For a re-link: what differs between the board's copy and the library's now. */
  differs?: FootprintDifference[];
}

export interface FootprintUpdate {
  ref: string;
  /** The footprint's uuid on the board before the sync (its identity). */
  uuid: string;
  /** Index among the board's footprints before the sync. */
  index: number;
  reference?: ValueChange;
  value?: ValueChange;
  footprint?: FootprintChange;
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
  /** The net's code in the numbered (KiCad 6–9) table. */
  code?: number;
}

export type SyncWarningCode =
  | "locked_not_removed"
  | "second_footprint_kept"
  | "locked_not_swapped"
  | "tracks_left_dangling"
  | "copper_taken_along"
  | "no_footprint_assigned"
  | "footprint_unavailable"
  | "unannotated"
  | "pad_without_pin"
  | "pin_without_pad"
  | "copper_on_removed_net"
  | "dnp_not_on_board";

export interface SyncWarning {
  code: SyncWarningCode;
  message: string;
  ref?: string;
  net?: string;
}

export type ChangeKind =
  | "add"
  | "remove"
  | "reference"
  | "value"
  | "footprint"
  | "flags"
  | "link"
  | "fields"
  | "pad"
  | "rename"
  | "net_removed";

/** One change the sync found, as the filter sees it. */
export interface SyncChange {
  /** Stable across syncs of the same drift: the same change on the same item has the same key. */
  key: string;
  kind: ChangeKind;
  /** References of the footprint and its symbol (both when a reference changes). */
  refs: string[];
  /** Nets the change moves pads from and to, or renames. */
  nets: string[];
  /** What it does, in a few words ("value 1k → 2.2k"). */
  detail: string;
}

/**
 * Why a change found was not applied: `fields` — fields and sheet names are updated on request
 * only; `baseline` — the drift was there before the run; `out_of_scope` — the approved proposal
 * does not name what it touches.
 */
export type SkipReason = "fields" | "baseline" | "out_of_scope";

export interface SkippedChange {
  kind: ChangeKind;
  reason: SkipReason;
  ref?: string;
  net?: string;
  detail: string;
}

/** Decides a change: undefined applies it, a reason skips it. */
export type ChangeFilter = (change: SyncChange) => SkipReason | undefined;

export interface BoardSyncPlan {
  schema: typeof BOARD_SYNC_SCHEMA;
  netFormat: NetFormat;
  /** The board's file-format version; new nodes are written in its dialect. */
  version?: number;
  added: FootprintAdd[];
  updated: FootprintUpdate[];
  removed: FootprintRemove[];
  renets: NetChange[];
  warnings: SyncWarning[];
  skipped: SkippedChange[];
}

/** What planning reads: the design as loaded once (see `loadDesign`), and the libraries. */
export interface BoardSyncInputs {
  board: Board;
  schematic: SchematicProject;
  components: Component[];
  netlist: Netlist;
  libraries: Libraries;
}

export interface BoardSyncOptions {
  /** Also update fields, fabrication flags and sheet names (KiCad's "Update footprint fields"). */
  fields?: boolean;
  /** Which changes to apply; replaces the default (everything, fields only with `fields`). */
  filter?: ChangeFilter;
  /**
   * Footprints whose lock does not stop a swap or a removal (KiCad's "Override locks"); by
   * default a lock means "do not touch". A swapped footprint stays locked.
   */
  overrideLock?: (ref: string) => boolean;
}

/** True when the plan only adds footprints (and the nets they bring): nothing already on the board changes. */
export function onlyAdds(plan: BoardSyncPlan): boolean {
  return plan.updated.length === 0 && plan.removed.length === 0 && plan.renets.every((r) => r.from === undefined);
}

/** True when the plan changes nothing on the board. */
export function isEmptyPlan(plan: BoardSyncPlan): boolean {
  return plan.added.length === 0 && plan.updated.length === 0 && plan.removed.length === 0 && plan.renets.length === 0;
}

export function planBoardSync(inputs: BoardSyncInputs, options: BoardSyncOptions = {}): BoardSyncPlan {
  return new Planner(inputs, options).plan();
}

/** The default filter: everything, except fields unless asked for. */
function defaultFilter(fields: boolean): ChangeFilter {
  return (change) => (change.kind === "fields" && !fields ? "fields" : undefined);
}

/** A matched footprint with the pad nets it will end up with. */
interface Kept {
  fp: Footprint;
  index: number;
  component?: Component;
  update?: FootprintUpdate;
  /** Pad shapes and wanted nets of the footprint as it will be (the new one after a swap). */
  shapes: PadShape[];
  targets: (PinNet | undefined)[];
}

class Planner {
  private readonly inputs: BoardSyncInputs;
  private readonly filter: ChangeFilter;
  private readonly overrideLock: (ref: string) => boolean;
  private readonly dialect: BoardDialect;
  /** Whether the board's format has a footprint DNP flag (KiCad 8 on); before, DNP stays in the schematic. */
  private readonly boardHoldsDnp: boolean;
  private readonly pins: PinIndex;
  private readonly sheets: SheetNames;
  private readonly footprints: Footprint[];
  private readonly warnings: SyncWarning[] = [];
  private readonly dnpKeptInSchematic: string[] = [];
  private readonly skipped: SkippedChange[] = [];

  constructor(inputs: BoardSyncInputs, options: BoardSyncOptions) {
    this.inputs = inputs;
    this.filter = options.filter ?? defaultFilter(options.fields === true);
    this.overrideLock = options.overrideLock ?? (() => false);
    this.dialect = boardDialect(inputs.board.version);
    this.boardHoldsDnp = inputs.board.version === undefined || has(inputs.board.version, BOARD.footprintDnp);
    this.pins = indexPins(inputs.netlist);
    this.sheets = sheetNames(inputs.schematic);
    this.footprints = inputs.board.footprints();
  }

  /** Asks the filter; a skipped change is recorded. */
  private decide(change: SyncChange): boolean {
    const reason = this.filter(change);
    if (reason) this.skip(change, reason);
    return reason === undefined;
  }

  private skip(change: SyncChange, reason: SkipReason): void {
    this.skipped.push({
      kind: change.kind,
      reason,
      ...(change.refs[0] ? { ref: change.refs[0] } : {}),
      ...(change.nets[0] && !change.refs[0] ? { net: change.nets[0] } : {}),
      detail: change.detail,
    });
  }

  plan(): BoardSyncPlan {
    const { board, netlist } = this.inputs;
    const { wanted, unannotated } = this.wantedComponents();
    // An unannotated part keeps the footprint linked to it: matched, left as it is, never
    // removed as deleted, and never handed to a new part that took its old reference.
    const {
      matches: all,
      unmatchedComponents,
      unmatchedFootprints,
    } = matchFootprints(this.footprints, [...wanted, ...unannotated]);
    const matches = all.filter(([, c]) => !unannotated.includes(c));
    const removed = this.planRemovals(unmatchedFootprints, matches);
    const kept: Kept[] = [];
    for (const index of unmatchedFootprints) {
      if (!removed.some((r) => r.index === index)) kept.push(this.keptAsIs(index));
    }
    for (const [index, component] of all) if (unannotated.includes(component)) kept.push(this.keptAsIs(index));
    for (const [index, component] of matches) kept.push(this.planUpdate(index, component));

    const netlistNames = new Set(netlist.nets.map((n) => n.name));
    const boardNets = new Map(board.nets().map((n) => [n.name, n]));
    const renames = this.planRenames(kept, netlistNames, boardNets);
    const renamed = (name: string | undefined) => (name === undefined ? undefined : (renames.get(name) ?? name));
    for (const k of kept) this.planPads(k, renamed);

    const added = this.planAdditions(unmatchedComponents.filter((c) => !unannotated.includes(c)));
    this.dnpWarning();
    const renets = this.planNetTable(kept, added, renames, boardNets, renamed);
    const updated = kept.flatMap((k) => (k.update && hasChanges(k.update) ? [k.update] : []));
    return {
      schema: BOARD_SYNC_SCHEMA,
      netFormat: board.netFormat,
      ...(board.version !== undefined ? { version: board.version } : {}),
      added,
      updated: updated.sort((a, b) => naturalCompare(a.ref, b.ref)),
      removed: removed.sort((a, b) => naturalCompare(a.ref, b.ref)),
      renets,
      warnings: this.warnings,
      skipped: this.skipped,
    };
  }

  /** Components that need a footprint (on the board, annotated), and those on the board that are not annotated. */
  private wantedComponents(): { wanted: Component[]; unannotated: Component[] } {
    const wanted: Component[] = [];
    const unannotated: Component[] = [];
    for (const c of this.inputs.components) {
      if (!c.onBoard) continue;
      if (c.ref.includes("?")) {
        this.warnings.push({
          code: "unannotated",
          ref: c.ref,
          message: `${c.ref} is not annotated, so its footprint is left as it is and none is added for it; annotate the schematic.`,
        });
        unannotated.push(c);
        continue;
      }
      wanted.push(c);
    }
    return { wanted, unannotated };
  }

  private planRemovals(unmatched: number[], matches: [number, Component][]): FootprintRemove[] {
    const offBoard = new Set(this.inputs.components.filter((c) => !c.onBoard).flatMap((c) => [c.ref, c.symbolPath]));
    // A second footprint of a placed symbol (a reversible keyboard has each switch on both
    // sides, one symbol, two footprints of the same path and reference) is the designer's: its
    // symbol is there, and KiCad's updater keeps it unless told to delete extra footprints.
    const placed = new Set(matches.flatMap(([i]) => [this.footprints[i]!.ref, this.footprints[i]!.path ?? ""]));
    const removed: FootprintRemove[] = [];
    for (const index of unmatched) {
      const fp = this.footprints[index]!;
      if (fp.attributes.includes("board_only")) continue;
      if (placed.has(fp.ref) || (fp.path !== undefined && placed.has(fp.path))) {
        this.warnings.push({
          code: "second_footprint_kept",
          ref: fp.ref,
          message: `${fp.ref} has a second footprint (${fp.libId} on ${fp.layer}) beside the one linked to its symbol; it is kept as it is.`,
        });
        continue;
      }
      const uuid = footprintId(fp);
      const reason =
        offBoard.has(fp.ref) || (fp.path !== undefined && offBoard.has(fp.path)) ? "not_on_board" : "symbol_deleted";
      if (
        !this.decide({
          key: `remove:${uuid}`,
          kind: "remove",
          refs: [fp.ref],
          nets: [],
          detail: `remove ${fp.ref} (${reason === "not_on_board" ? "not on board" : "symbol deleted"})`,
        })
      )
        continue;
      if (fp.locked && !this.overrideLock(fp.ref)) {
        this.warnings.push({
          code: "locked_not_removed",
          ref: fp.ref,
          message: `${fp.ref} has no symbol on the board side of the schematic but is locked, so it was kept; unlock it (or delete it) to remove it.`,
        });
        continue;
      }
      const tracks = copperOnPads(this.inputs.board, fp);
      if (tracks > 0) {
        this.warnings.push({
          code: "tracks_left_dangling",
          ref: fp.ref,
          message: `${fp.ref} was removed; ${tracks} track/via end(s) on its pads are left in place and now dangle. Reroute or delete them.`,
        });
      }
      removed.push({ ref: fp.ref, libId: fp.libId, uuid, index, reason });
    }
    return removed;
  }

  /** A footprint the sync leaves alone (board-only, locked, or its removal not applied). */
  private keptAsIs(index: number): Kept {
    const fp = this.footprints[index]!;
    const shapes = fp.pads.map((p) => padShape(p.node));
    return { fp, index, shapes, targets: fp.pads.map((p) => (p.net?.name ? { net: p.net.name } : undefined)) };
  }

  private planUpdate(index: number, c: Component): Kept {
    const fp = this.footprints[index]!;
    const uuid = footprintId(fp);
    const update: FootprintUpdate = { ref: c.ref, uuid, index, fields: [], pads: [] };
    const refs = [...new Set([fp.ref, c.ref])];
    const change = (kind: ChangeKind, key: string, detail: string) =>
      this.decide({ key: `${kind}:${uuid}:${key}`, kind, refs, nets: [], detail: `${c.ref} ${detail}` });

    if (fp.ref !== c.ref && change("reference", c.ref, `reference ${fp.ref} → ${c.ref}`))
      update.reference = { from: fp.ref, to: c.ref };
    if (fp.value !== c.value && change("value", c.value, `value ${fp.value} → ${c.value}`))
      update.value = { from: fp.value, to: c.value };
    const swapped = this.planFootprintChange(fp, c, update, change);

    // The link to the symbol, and the sheet it names with it.
    const sheet = this.sheets.of(c);
    if (!fp.path || !unitPaths(c).includes(fp.path)) {
      if (change("link", c.symbolPath, `symbol link → ${c.symbolPath}`)) {
        update.path = { from: fp.path, to: c.symbolPath };
        this.setSheet(update, fp, sheet);
      }
    } else if (
      !this.sheets.current(sheet, fp.sheetname, fp.sheetfile) &&
      change("fields", `sheet=${sheet.path}|${sheet.file}`, `sheet → ${sheet.path}`)
    ) {
      this.setSheet(update, fp, sheet);
    }
    this.planAttributes(fp, c, update, change);

    const shapes = swapped ? swapped.shapes : fp.pads.map((p) => padShape(p.node));
    const pins = this.pins.get(c.ref);
    const current = swapped ? [] : fp.pads.map((p) => p.net?.name);
    const targets = padTargets(shapes, pins, current);
    this.warnPads(c.ref, shapes, pins);
    if (swapped) update.footprint!.pads = padNets(shapes, targets);
    return { fp, index, component: c, update, shapes, targets };
  }

  /** A changed footprint id: a re-link when the footprint is the same, else a swap. */
  private planFootprintChange(
    fp: Footprint,
    c: Component,
    update: FootprintUpdate,
    change: (kind: ChangeKind, key: string, detail: string) => boolean,
  ): { shapes: PadShape[] } | undefined {
    if (!c.footprint) {
      this.warnings.push({
        code: "no_footprint_assigned",
        ref: c.ref,
        message: `${c.ref} has no footprint assigned in the schematic; its footprint ${fp.libId} was left as it is.`,
      });
      return undefined;
    }
    if (c.footprint === fp.libId || !change("footprint", c.footprint, `footprint ${fp.libId} → ${c.footprint}`))
      return undefined;
    const sameName = itemName(c.footprint) === itemName(fp.libId);
    let library: SList;
    try {
      library = this.inputs.libraries.resolveFootprint(c.footprint).doc.root;
    } catch (err) {
      // Only the library nickname differs and the schematic's library lacks the footprint: the
      // board's copy is the part, so it stays. A footprint the schematic really changed must be
      // found, or the sync fails before writing anything.
      if (!sameName || !(err instanceof CopperheadError)) throw err;
      this.warnings.push({
        code: "footprint_unavailable",
        ref: c.ref,
        message: `${c.ref}: the schematic names ${c.footprint}, which is not available (${err.message}); the board's ${fp.libId} was kept.`,
      });
      return undefined;
    }
    // The same footprint under another library nickname is re-linked, whether or not the
    // library has moved on since it was placed: taking the library's newer copy is "Update
    // Footprints from Library", a deliberate act, not a side effect of a sync.
    const side: Side = fp.layer.startsWith("B.") ? "back" : "front";
    const differences = compareFootprint(fp.node, library, fp.at, side);
    if (sameName || differences.length === 0) {
      update.footprint = {
        from: fp.libId,
        to: c.footprint,
        kind: "relink",
        pads: [],
        ...(differences.length ? { differs: differences } : {}),
      };
      return undefined;
    }
    if (fp.locked && !this.overrideLock(c.ref)) {
      this.warnings.push({
        code: "locked_not_swapped",
        ref: c.ref,
        message: `${c.ref} is locked, so its footprint was not changed from ${fp.libId} to ${c.footprint}; unlock it to swap.`,
      });
      return undefined;
    }
    update.footprint = { from: fp.libId, to: c.footprint, kind: "swap", pads: [] };
    return { shapes: children(library, "pad").map(padShape) };
  }

  /** Fields (all symbol fields but Reference, Value and Footprint) and the DNP and BOM flags. */
  private planAttributes(
    fp: Footprint,
    c: Component,
    update: FootprintUpdate,
    change: (kind: ChangeKind, key: string, detail: string) => boolean,
  ): void {
    for (const { name, value } of footprintFields(c)) {
      if (fp.fields[name] === value) continue;
      if (change("fields", `${name}=${value}`, `${name} ${fp.fields[name] ?? "(new)"} → ${value}`))
        update.fields.push({ name, from: fp.fields[name], to: value });
    }
    const flags = this.wantedFlags(c);
    const add = flags.filter((f) => !fp.attributes.includes(f));
    const remove = SYMBOL_FLAGS.filter((f) => fp.attributes.includes(f) && !flags.includes(f));
    if (
      (add.length || remove.length) &&
      change(
        "flags",
        flags.join(",") || "none",
        `attributes ${[...add.map((f) => `+${f}`), ...remove.map((f) => `-${f}`)].join(" ")}`,
      )
    ) {
      update.flags = { add, remove };
    }
  }

  /**
   * The fabrication flags a footprint takes from its symbol. A board from before KiCad 8 has no
   * DNP flag (KiCad 7 keeps DNP in the schematic and cannot open a board that holds one), so
   * there DNP parts are only noted, once per plan, and the board keeps its own format.
   */
  private wantedFlags(c: Component): string[] {
    if (c.dnp && !this.boardHoldsDnp) this.dnpKeptInSchematic.push(c.ref);
    return [...(c.inBom ? [] : ["exclude_from_bom"]), ...(c.dnp && this.boardHoldsDnp ? ["dnp"] : [])];
  }

  /** The note for DNP parts a pre-KiCad 8 board cannot mark. */
  private dnpWarning(): void {
    const refs = [...new Set(this.dnpKeptInSchematic)].sort(naturalCompare);
    if (refs.length === 0) return;
    const format = describeVersion("board", this.inputs.board.version!);
    this.warnings.push({
      code: "dnp_not_on_board",
      ...(refs.length === 1 ? { ref: refs[0] } : {}),
      message:
        `${refs.join(", ")} ${refs.length === 1 ? "is" : "are"} "Do not populate" in the schematic; a ${format} board has no DNP flag ` +
        `(footprints carry it from board format ${BOARD.footprintDnp.since}, KiCad 8), so the board was left without it, as KiCad 7 keeps it. ` +
        "KiCad 8's DRC reports the difference until the board is saved by KiCad 8 or newer.",
    });
  }

  private setSheet(update: FootprintUpdate, fp: Footprint, sheet: SymbolSheet): void {
    const name = sheetNameIn(this.dialect, sheet);
    if ((fp.sheetname ?? "") !== name) update.sheetname = { from: fp.sheetname, to: name };
    if ((fp.sheetfile ?? "") !== sheet.file) update.sheetfile = { from: fp.sheetfile, to: sheet.file };
  }

  private warnPads(ref: string, shapes: PadShape[], pins: Map<string, PinNet> | undefined): void {
    const { pinsWithoutPad, padsWithoutPin } = padMismatches(shapes, pins);
    for (const pin of pinsWithoutPad)
      this.warnings.push({
        code: "pin_without_pad",
        ref,
        message: `${ref} pin ${pin} has no pad in the footprint; check the footprint assignment.`,
      });
    for (const pad of padsWithoutPin)
      this.warnings.push({
        code: "pad_without_pin",
        ref,
        message: `${ref} pad ${pad} has no pin in the symbol, so it gets no net.`,
      });
  }

  /** Nets no longer in the schematic whose pads all move to one new name are renamed. */
  private planRenames(kept: Kept[], netlistNames: Set<string>, boardNets: Map<string, unknown>): Map<string, string> {
    const moves = new Map<string, Set<string>>();
    for (const k of kept) {
      if (!k.component) continue;
      const swapped = k.update?.footprint?.kind === "swap";
      k.fp.pads.forEach((pad, i) => {
        const from = pad.net?.name;
        if (!from || netlistNames.has(from)) return;
        const to =
          (swapped ? k.update!.footprint!.pads.find((p) => p.pad === pad.number)?.net : k.targets[i]?.net) ?? "";
        if (!moves.has(from)) moves.set(from, new Set());
        moves.get(from)!.add(to);
      });
    }
    const renames = new Map<string, string>();
    const claimed = new Set<string>();
    for (const [from, targets] of [...moves].sort(([a], [b]) => naturalCompare(a, b))) {
      if (targets.size !== 1) continue;
      const to = [...targets][0]!;
      if (to === "" || boardNets.has(to) || claimed.has(to)) continue;
      if (
        !this.decide({
          key: `rename:${from}:${to}`,
          kind: "rename",
          refs: [],
          nets: [from, to],
          detail: `net ${from} → ${to}`,
        })
      )
        continue;
      renames.set(from, to);
      claimed.add(to);
    }
    return renames;
  }

  /** Pad net changes of a footprint that stays (a swapped one gets all its nets with the swap). */
  private planPads(k: Kept, renamed: (name: string | undefined) => string | undefined): void {
    if (!k.update || k.update.footprint?.kind === "swap") return;
    k.fp.pads.forEach((pad, i) => {
      const current = renamed(pad.net?.name) || undefined;
      const target = k.targets[i];
      if ((target?.net ?? undefined) === current) return;
      const detail = `${k.update!.ref} pad ${pad.number} ${current ?? "(no net)"} → ${target?.net ?? "(no net)"}`;
      const nets = [current, target?.net].filter((n): n is string => n !== undefined);
      if (
        !this.decide({
          key: `pad:${k.update!.uuid}:${i}:${target?.net ?? ""}`,
          kind: "pad",
          refs: [k.fp.ref],
          nets,
          detail,
        })
      )
        return;
      k.update!.pads.push({
        pad: pad.number,
        index: i,
        from: current,
        to: target?.net,
        pinfunction: target?.pinfunction,
        pintype: target?.pintype,
      });
    });
  }

  private planAdditions(components: Component[]): FootprintAdd[] {
    const wanted = components.filter((c) => {
      if (c.footprint) return true;
      this.warnings.push({
        code: "no_footprint_assigned",
        ref: c.ref,
        message: `${c.ref} has no footprint assigned in the schematic, so nothing was added for it.`,
      });
      return false;
    });
    const applied = [...wanted]
      .sort((a, b) => naturalCompare(a.ref, b.ref))
      .filter((c) =>
        this.decide({
          key: `add:${c.ref}:${c.footprint}`,
          kind: "add",
          refs: [c.ref],
          nets: [],
          detail: `add ${c.ref} (${c.footprint})`,
        }),
      );
    if (applied.length === 0) return [];
    // Every footprint is an obstacle, removed ones included: where new parts go must not depend
    // on the order of the edits.
    const obstacles = this.footprints.map((fp) => boardBounds(fp.node)).filter((b): b is BBox => b !== undefined);
    const placer = stagingPlacer(this.inputs.board, obstacles);
    return applied.map((c) => {
      const library = this.inputs.libraries.resolveFootprint(c.footprint).doc.root;
      const shapes = children(library, "pad").map(padShape);
      const pins = this.pins.get(c.ref);
      this.warnPads(c.ref, shapes, pins);
      const pads = padNets(shapes, padTargets(shapes, pins));
      const bounds = localBounds(library) ?? { minX: -1, minY: -1, maxX: 1, maxY: 1 };
      const spot = placer.place({ ref: c.ref, libId: c.footprint, bounds, nets: [...new Set(pads.map((p) => p.net))] });
      const sheet = this.sheets.of(c);
      const sheetname = sheetNameIn(this.dialect, sheet);
      return {
        ref: c.ref,
        libId: c.footprint,
        value: c.value,
        path: c.symbolPath,
        ...(sheetname ? { sheetname } : {}),
        sheetfile: sheet.file,
        at: spot.at,
        side: spot.side,
        staged: spot.staged,
        fields: footprintFields(c),
        flags: this.wantedFlags(c),
        pads,
        uuidSeed: `${c.symbolPath}|${c.footprint}`,
        ...(hidesReferencesLike(this.footprints, c.footprint, library) ? { hideReference: true } : {}),
      };
    });
  }

  /** Net table: renames, nets that appear, nets no pad uses any more. */
  private planNetTable(
    kept: Kept[],
    added: FootprintAdd[],
    renames: Map<string, string>,
    boardNets: Map<string, { code?: number; name: string }>,
    renamed: (name: string | undefined) => string | undefined,
  ): NetChange[] {
    const finalNets = new Set<string>();
    for (const k of kept) {
      if (k.update?.footprint?.kind === "swap") {
        for (const p of k.update.footprint.pads) finalNets.add(p.net);
        continue;
      }
      k.fp.pads.forEach((pad, i) => {
        const change = k.update?.pads.find((c) => c.index === i);
        const name = change ? change.to : renamed(pad.net?.name);
        if (name) finalNets.add(name);
      });
    }
    for (const add of added) for (const p of add.pads) finalNets.add(p.net);

    const numbered = this.inputs.board.netFormat === "numbered";
    const renets: NetChange[] = [];
    for (const [from, to] of renames) renets.push({ from, to, code: boardNets.get(from)?.code });
    const existing = new Set([...boardNets.keys()].map((n) => renamed(n)!));
    let nextCode = Math.max(0, ...[...boardNets.values()].map((n) => n.code ?? 0)) + 1;
    for (const name of [...finalNets].filter((n) => !existing.has(n)).sort(naturalCompare)) {
      renets.push(numbered ? { to: name, code: nextCode++ } : { to: name });
    }
    const copper = copperNets(this.inputs.board);
    for (const net of boardNets.values()) {
      const name = renamed(net.name)!;
      if (finalNets.has(name)) continue;
      if (
        !this.decide({
          key: `net_removed:${name}`,
          kind: "net_removed",
          refs: [],
          nets: [name],
          detail: `net ${name} (no pad left)`,
        })
      )
        continue;
      const used = numbered ? copper.codes.has(net.code ?? -1) : copper.names.has(net.name);
      if (used) {
        this.warnings.push({
          code: "copper_on_removed_net",
          net: name,
          message: `No pad is on net ${name} any more, but tracks, vias or zones still are; the net was kept. Delete or reconnect that copper.`,
        });
        continue;
      }
      renets.push(numbered ? { from: net.name, code: net.code } : { from: net.name });
    }
    return renets;
  }
}

function hasChanges(u: FootprintUpdate): boolean {
  return Boolean(
    u.reference ||
      u.value ||
      u.footprint ||
      u.path ||
      u.sheetname ||
      u.sheetfile ||
      u.flags ||
      u.fields.length ||
      u.pads.length,
  );
}

/** Symbol fields a footprint mirrors: all but Reference, Value and Footprint (KiCad's rule). */
function footprintFields(c: Component): FootprintField[] {
  return Object.entries(c.fields)
    .filter(([name]) => name !== "Reference" && name !== "Value" && name !== "Footprint")
    .map(([name, value]) => ({ name, value }));
}

function itemName(libId: string): string {
  return libId.slice(libId.indexOf(":") + 1);
}

/** A footprint's identity: its uuid (tstamp on old boards), else its reference. */
export function footprintId(fp: Footprint): string {
  const uuid = child(fp.node, "uuid") ?? child(fp.node, "tstamp");
  return (uuid && text(uuid, 1)) || `ref:${fp.ref}`;
}
