/**
 * Parts by reference designator: added, removed, changed (a field, the library symbol, the
 * units placed, the sheet, the BOM/board/DNP attributes) and moved on their sheet.
 *
 * A move is where a placed unit sits, turns or is mirrored. It is reported on its own so a
 * reviewer sees that a part was only tidied; whether the move changed connectivity is the
 * net diff's business, which looks at nets and nothing else.
 */
import * as v from "valibot";
import type { Component } from "../kicad/netlist/components.ts";
import { naturalCompare } from "../util/natural-compare.ts";
import type { Netlist } from "../kicad/netlist/netlist.ts";
import { IU_PER_MM } from "../kicad/schematic/geometry.ts";
import type { SchematicProject } from "../kicad/schematic/model/hierarchy.ts";
import { symbolInstance } from "../kicad/schematic/model/symbols.ts";
import type { DesignState } from "./design-state.ts";

export const FieldChangeSchema = v.object({
  /**
   * A field name as KiCad shows it (`Value`, `MPN`), or an attribute: `lib_id`, `sheet`,
   * `in_bom`, `on_board`, `dnp`, `units` (units placed), `unit` (a placed symbol's unit).
   */
  field: v.string(),
  /** `null`: the field does not exist in that state. */
  before: v.nullable(v.string()),
  after: v.nullable(v.string()),
});
export type FieldChange = v.InferOutput<typeof FieldChangeSchema>;

export const SymbolPlacementSchema = v.object({
  /** Millimetres on the sheet, as the file writes them. */
  x: v.number(),
  y: v.number(),
  angle: v.number(),
  mirror: v.optional(v.picklist(["x", "y"])),
});
export type SymbolPlacement = v.InferOutput<typeof SymbolPlacementSchema>;

export const SymbolMoveSchema = v.object({
  unit: v.number(),
  sheet: v.string(),
  before: SymbolPlacementSchema,
  after: SymbolPlacementSchema,
});
export type SymbolMove = v.InferOutput<typeof SymbolMoveSchema>;

export const PinNetSchema = v.object({ pin: v.string(), net: v.string() });
export type PinNet = v.InferOutput<typeof PinNetSchema>;

export const ComponentChangeSchema = v.object({
  ref: v.string(),
  /** `moved`: placement only; `changed`: anything else (with or without moves). */
  status: v.picklist(["added", "removed", "changed", "moved"]),
  /** Human sheet path of its first unit, in the state that has it (after, for a change). */
  sheet: v.string(),
  value: v.string(),
  footprint: v.string(),
  libId: v.string(),
  changes: v.array(FieldChangeSchema),
  moves: v.array(SymbolMoveSchema),
  /** The nets an added part's pins joined, or a removed part's pins left. */
  pins: v.array(PinNetSchema),
});
export type ComponentChange = v.InferOutput<typeof ComponentChangeSchema>;

export function diffComponents(before: DesignState, after: DesignState): ComponentChange[] {
  const was = new Map(before.components.map((c) => [c.ref, c]));
  const now = new Map(after.components.map((c) => [c.ref, c]));
  const placedBefore = placements(before.schematic);
  const placedAfter = placements(after.schematic);
  const out: ComponentChange[] = [];
  for (const [ref, old] of was) {
    const c = now.get(ref);
    if (!c) {
      out.push(entry(old, "removed", [], [], pinNets(before.netlist, ref)));
      continue;
    }
    const changes = [...fieldChanges(old, c), ...unitChanges(old, c, placedBefore.get(ref), placedAfter.get(ref))];
    const moves = symbolMoves(placedBefore.get(ref), placedAfter.get(ref));
    if (changes.length > 0 || moves.length > 0)
      out.push(entry(c, changes.length > 0 ? "changed" : "moved", changes, moves, []));
  }
  for (const [ref, c] of now) if (!was.has(ref)) out.push(entry(c, "added", [], [], pinNets(after.netlist, ref)));
  return out.sort((a, b) => naturalCompare(a.ref, b.ref));
}

function entry(
  c: Component,
  status: ComponentChange["status"],
  changes: FieldChange[],
  moves: SymbolMove[],
  pins: PinNet[],
): ComponentChange {
  return {
    ref: c.ref,
    status,
    sheet: c.sheet,
    value: c.value,
    footprint: c.footprint,
    libId: c.libId,
    changes,
    moves,
    pins,
  };
}

/** Every field but Reference (the key), then the attributes that are not fields. */
function fieldChanges(a: Component, b: Component): FieldChange[] {
  const out: FieldChange[] = [];
  const names = [...new Set([...Object.keys(a.fields), ...Object.keys(b.fields)])].filter((n) => n !== "Reference");
  for (const field of fieldOrder(names)) {
    const before = a.fields[field] ?? null;
    const after = b.fields[field] ?? null;
    if (before !== after) out.push({ field, before, after });
  }
  const attribute = (field: string, before: string, after: string) => {
    if (before !== after) out.push({ field, before, after });
  };
  attribute("lib_id", a.libId, b.libId);
  attribute("sheet", a.sheet, b.sheet);
  attribute("in_bom", yesNo(a.inBom), yesNo(b.inBom));
  attribute("on_board", yesNo(a.onBoard), yesNo(b.onBoard));
  attribute("dnp", yesNo(a.dnp), yesNo(b.dnp));
  return out;
}

/**
 * Units: `units` when units were placed or deleted (`1,2,3` → `1,2`), else `unit` for each
 * placed symbol that now shows another unit of the part (a gate swap is two of them).
 */
function unitChanges(
  a: Component,
  b: Component,
  before: Map<string, Placed> | undefined,
  after: Map<string, Placed> | undefined,
): FieldChange[] {
  const keysA = [...(before ?? new Map()).keys()].sort();
  const keysB = [...(after ?? new Map()).keys()].sort();
  if (keysA.join("\n") !== keysB.join("\n")) {
    const was = a.units.join(",");
    const now = b.units.join(",");
    return was === now ? [] : [{ field: "units", before: was, after: now }];
  }
  const out: FieldChange[] = [];
  for (const key of keysA) {
    const was = before!.get(key)!.unit;
    const now = after!.get(key)!.unit;
    if (was !== now) out.push({ field: "unit", before: String(was), after: String(now) });
  }
  return out;
}

/** KiCad's own fields first, in the order its dialogs show them, then the rest by name. */
const KICAD_FIELDS = ["Value", "Footprint", "Datasheet", "Description"];

function fieldOrder(names: string[]): string[] {
  const rank = (n: string) => (KICAD_FIELDS.includes(n) ? KICAD_FIELDS.indexOf(n) : KICAD_FIELDS.length);
  return names.sort((a, b) => rank(a) - rank(b) || naturalCompare(a, b));
}

function yesNo(value: boolean): string {
  return value ? "yes" : "no";
}

interface Placed {
  unit: number;
  sheet: string;
  at: SymbolPlacement;
}

/**
 * Placed units by reference, each keyed by `<sheet instance path>/<symbol uuid>`: the identity
 * KiCad itself keeps for a symbol, so a unit is followed even when its unit number changes.
 */
function placements(schematic: SchematicProject | undefined): Map<string, Map<string, Placed>> {
  const out = new Map<string, Map<string, Placed>>();
  if (!schematic) return out;
  for (const instance of schematic.instances) {
    for (const symbol of instance.file.symbols) {
      const { reference, unit } = symbolInstance(symbol, instance.path, schematic.projectName);
      if (!reference || reference.startsWith("#")) continue;
      const { at, rotation, mirror } = symbol.placement;
      let units = out.get(reference);
      if (!units) out.set(reference, (units = new Map()));
      units.set(`${instance.path}/${symbol.uuid}`, {
        unit,
        sheet: instance.humanPath,
        at: { x: at.x / IU_PER_MM, y: at.y / IU_PER_MM, angle: rotation, ...(mirror ? { mirror } : {}) },
      });
    }
  }
  return out;
}

function symbolMoves(before: Map<string, Placed> | undefined, after: Map<string, Placed> | undefined): SymbolMove[] {
  const moves: SymbolMove[] = [];
  for (const [key, now] of after ?? []) {
    const was = before?.get(key);
    if (!was || samePlacement(was.at, now.at)) continue;
    moves.push({ unit: now.unit, sheet: now.sheet, before: was.at, after: now.at });
  }
  return moves.sort((a, b) => a.unit - b.unit || naturalCompare(a.sheet, b.sheet));
}

function samePlacement(a: SymbolPlacement, b: SymbolPlacement): boolean {
  return a.x === b.x && a.y === b.y && a.angle === b.angle && a.mirror === b.mirror;
}

function pinNets(netlist: Netlist, ref: string): PinNet[] {
  const out: PinNet[] = [];
  for (const net of netlist.nets)
    for (const node of net.nodes) if (node.ref === ref) out.push({ pin: node.pin, net: net.name });
  return out.sort((a, b) => naturalCompare(a.pin, b.pin));
}
