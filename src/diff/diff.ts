/**
 * The semantic diff of two design states (`copperhead diff`, the run summary, the pull-request
 * comment): what a change did to the circuit, in the terms a reviewer checks — parts, nets,
 * pins, the board, the requirements and the BOM — computed from the native model alone.
 *
 * The result is a pure function of the two states: every list has a stable order (natural
 * order of references, nets and ids), and nothing depends on paths, times or the machine, so
 * the same two states give byte-identical JSON.
 */
import * as v from "valibot";
import { naturalCompare } from "../util/natural-compare.ts";
import type { Netlist } from "../kicad/netlist/netlist.ts";
import { BoardDiffSchema, diffBoards } from "./board-diff.ts";
import { ComponentChangeSchema, diffComponents } from "./component-diff.ts";
import { BomRowChangeSchema, diffBom, diffRequirements, RequirementChangeSchema } from "./doc-diff.ts";
import { diffGroups, GroupChangeSchema, MemberMoveSchema } from "./groups.ts";
import type { DesignState } from "./design-state.ts";

export type { BoardDiff, CopperItem, FootprintChange, LayerChange, OutlineChange, ZoneItem } from "./board-diff.ts";
export type { ComponentChange, FieldChange, PinNet, SymbolMove, SymbolPlacement } from "./component-diff.ts";
export type { BomRowChange, RequirementChange } from "./doc-diff.ts";
export type { GroupChange, MemberMove } from "./groups.ts";

export const DIFF_SCHEMA = "copperhead.diff/1";

export const SheetChangeSchema = v.object({
  /** Human sheet path: `/`, `/Regulator/`. */
  path: v.string(),
  status: v.picklist(["added", "removed", "changed"]),
  /** Repo-relative file of the sheet, in the state that has it (after, for a change). */
  file: v.string(),
});
export type SheetChange = v.InferOutput<typeof SheetChangeSchema>;

export const DesignDiffSchema = v.object({
  schema: v.literal(DIFF_SCHEMA),
  /** True when nothing below changed. */
  empty: v.boolean(),
  /** Sheets whose file differs, byte for byte (a tidy-up shows here and in moves, not in nets). */
  sheets: v.array(SheetChangeSchema),
  components: v.array(ComponentChangeSchema),
  /** Schematic nets added, removed or renamed (a rename is a net whose pins stayed together). */
  nets: v.array(GroupChangeSchema),
  /** Pins of parts in both states that moved to another net: `R5.2: VBUS → VBUS_PROT`. */
  pins: v.array(MemberMoveSchema),
  /** Null when neither state has a board or both boards are the same. */
  board: v.nullable(BoardDiffSchema),
  requirements: v.array(RequirementChangeSchema),
  bom: v.array(BomRowChangeSchema),
  /** What could not be compared, and why (a broken BOM table). */
  problems: v.array(v.string()),
});
export type DesignDiff = v.InferOutput<typeof DesignDiffSchema>;

export function diffStates(before: DesignState, after: DesignState): DesignDiff {
  const nets = diffGroups(netGroups(before.netlist), netGroups(after.netlist));
  const board = diffBoards(before.board, after.board, before.boardHash === after.boardHash) ?? null;
  const parts = {
    sheets: diffSheets(before, after),
    components: diffComponents(before, after),
    nets: nets.groups,
    pins: nets.moves,
    board,
    requirements: diffRequirements(before.spec, after.spec),
    bom: diffBom(before.bom, after.bom),
  };
  const empty =
    parts.sheets.length +
      parts.components.length +
      parts.nets.length +
      parts.pins.length +
      parts.requirements.length +
      parts.bom.length ===
      0 && board === null;
  return { schema: DIFF_SCHEMA, empty, ...parts, problems: [...before.problems, ...after.problems] };
}

function netGroups(netlist: Netlist): Map<string, string[]> {
  return new Map(netlist.nets.map((net) => [net.name, net.nodes.map((n) => `${n.ref}.${n.pin}`)]));
}

function diffSheets(before: DesignState, after: DesignState): SheetChange[] {
  const was = new Map(before.sheets.map((s) => [s.path, s]));
  const now = new Map(after.sheets.map((s) => [s.path, s]));
  const out: SheetChange[] = [];
  for (const [path, a] of was) {
    const b = now.get(path);
    if (!b) out.push({ path, status: "removed", file: a.file });
    else if (a.hash !== b.hash || a.file !== b.file) out.push({ path, status: "changed", file: b.file });
  }
  for (const [path, b] of now) if (!was.has(path)) out.push({ path, status: "added", file: b.file });
  // The root first, then by path, as KiCad lists its hierarchy.
  return out.sort((x, y) => (x.path === "/" ? -1 : y.path === "/" ? 1 : naturalCompare(x.path, y.path)));
}
