/**
 * A part's fields (Value, Footprint, MPN, any field; setting Reference renames the part) and
 * its placement attributes (do not populate, exclude from BOM, board or simulation), on every
 * unit, in the sheet's own format version.
 */
import { CopperheadError } from "../../../errors.ts";
import { hiddenPropertyNode } from "../item-nodes.ts";
import { describeVersion, has, SCHEMATIC, type FormatChange } from "../../format-versions.ts";
import { adaptNewField, layOutInserted, setLegacyInstanceField } from "../dialect.ts";
import { child, children, head, insertChild, list, q, setAtom, text, type SList } from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { checkNewReference, references, unitsOf } from "./lookup.ts";
import { toMm, unique } from "./sheet-tree.ts";

export interface PartAttributes {
  dnp?: boolean;
  excludeFromBom?: boolean;
  excludeFromBoard?: boolean;
  excludeFromSim?: boolean;
}

/**
 * Sets a field on every unit of `ref` (Value, Footprint, MPN, any field). A field the symbol
 * lacks is added hidden at the symbol's origin. Setting `Reference` renames the part.
 */
export function setField(state: EditorState, ref: string, field: string, value: string): void {
  const units = unitsOf(state, ref);
  if (field === "Reference") checkNewReference(value, references(state));
  if (field === "Footprint" && value !== "") state.libraries.resolveFootprint(value);
  state.edit(
    unique(units.map((u) => u.symbol)).flatMap((s) => state.withInstanceRows(state.fileOf(s))),
    () => {
      for (const symbol of unique(units.map((u) => u.symbol))) {
        const props = children(symbol.node, "property");
        const prop =
          props.find((p) => text(p, 1) === field) ??
          props.find((p) => text(p, 1)?.toLowerCase() === field.toLowerCase());
        if (prop) setAtom(prop, 2, q(value));
        else {
          const last = props[props.length - 1];
          const index = last ? symbol.node.items.indexOf(last) + 1 : symbol.node.items.length;
          const created = hiddenPropertyNode(field, value, toMm(symbol.placement.at));
          const version = state.fileOf(symbol).version;
          insertChild(symbol.node, adaptNewField(symbol.node, created, version), index);
          layOutInserted(symbol.node, created, 2, version);
        }
        if (field === "Reference") {
          for (const path of children(
            child(child(symbol.node, "instances") ?? symbol.node, "project") ?? symbol.node,
            "path",
          )) {
            const reference = child(path, "reference");
            if (reference && text(reference, 1) === ref) setAtom(reference, 1, q(value));
          }
        }
        // A KiCad 6 root's instance rows hold the reference, and a value and footprint that
        // KiCad reads over the symbol's own fields.
        if (state.legacyInstances) {
          const root = state.project.root.file.doc.root;
          if (field === "Reference") setLegacyInstanceField(root, symbol.uuid, "reference", value, ref);
          else if (field === "Value") setLegacyInstanceField(root, symbol.uuid, "value", value);
          else if (field === "Footprint") setLegacyInstanceField(root, symbol.uuid, "footprint", value);
        }
      }
    },
  );
}

/**
 * Sets a part's placement attributes on every unit: do not populate, exclude from the BOM,
 * exclude from the board (KiCad's `on_board no`, so board sync removes its footprint), exclude
 * from simulation. Attributes left undefined keep their value.
 */
export function setAttributes(state: EditorState, ref: string, attributes: PartAttributes): void {
  const units = unitsOf(state, ref);
  const flags: [keyof PartAttributes, string, boolean][] = [
    ["excludeFromSim", "exclude_from_sim", false],
    ["excludeFromBom", "in_bom", true],
    ["excludeFromBoard", "on_board", true],
    ["dnp", "dnp", false],
  ];
  // An attribute the sheet's format does not have would upgrade the file; say so instead.
  const since: Partial<Record<keyof PartAttributes, FormatChange>> = {
    dnp: SCHEMATIC.dnp,
    excludeFromSim: SCHEMATIC.excludeFromSim,
  };
  for (const symbol of unique(units.map((u) => u.symbol))) {
    const version = state.fileOf(symbol).version;
    for (const [key, change] of Object.entries(since) as [keyof PartAttributes, FormatChange][]) {
      if (attributes[key] === undefined || has(version, change)) continue;
      throw new CopperheadError(
        "edit_conflict",
        `${ref}'s sheet is in ${describeVersion("schematic", version)} format, which has no ${key === "dnp" ? "do-not-populate" : "exclude-from-simulation"} attribute (it starts at ${change.since}).`,
        {
          fix: "Open and save the project in a newer KiCad to use it, or leave the attribute out.",
          ref,
        },
      );
    }
  }
  state.edit(
    units.map((u) => u.instance.file),
    () => {
      for (const symbol of unique(units.map((u) => u.symbol))) {
        for (const [key, head, inverted] of flags) {
          const value = attributes[key];
          if (value === undefined) continue;
          setFlag(symbol.node, head, value !== inverted, state.fileOf(symbol).version);
        }
      }
    },
  );
}

/** Order of a placed symbol's flags as eeschema writes them, after `(unit)` / `(body_style)`. */
const SYMBOL_FLAGS = ["exclude_from_sim", "in_bom", "on_board", "dnp"];

/** Sets `(name yes|no)` on a placed symbol, adding it in eeschema's order when missing. */
function setFlag(symbol: SList, name: string, value: boolean, version: number): void {
  const existing = child(symbol, name);
  if (existing) {
    setAtom(existing, 1, value ? "yes" : "no");
    return;
  }
  const rank = SYMBOL_FLAGS.indexOf(name);
  const before = symbol.items.findIndex(
    (item) =>
      item.type === "list" &&
      (SYMBOL_FLAGS.indexOf(head(item) ?? "") > rank ||
        ["uuid", "property", "pin", "instances"].includes(head(item) ?? "")),
  );
  const flag = list(name, value ? "yes" : "no");
  insertChild(symbol, flag, before >= 0 ? before : symbol.items.length);
  layOutInserted(symbol, flag, 2, version);
}
