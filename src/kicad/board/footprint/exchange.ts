/**
 * Swapping a placed footprint for another library footprint the way KiCad's "Change Footprint"
 * does with its default options (`PCB_EDIT_FRAME::ExchangeFootprint`): the new footprint takes
 * the old one's identity (uuid, symbol link, sheet), position, side, rotation and lock; every
 * field keeps its text position, layer, visibility and effects (a designer placed the reference
 * where it reads well, and the new footprint's courtyard does not change that); local clearance
 * and mask/paste overrides stay; pads get the nets of the old pads with the same number;
 * graphics, pads, courtyard and 3D model are the library's.
 */
import type { Footprint } from "../model.ts";
import { afterLast, FOOTPRINT_HEADER } from "../../sexpr/node-order.ts";
import {
  child,
  children,
  cloneNode,
  head,
  insertChild,
  q,
  removeChild,
  setAtom,
  text,
  type SList,
} from "../../sexpr/index.ts";

/** Footprint-level overrides KiCad keeps unless told to reset them. */
const OVERRIDES = [
  "solder_mask_margin",
  "solder_paste_margin",
  "solder_paste_margin_ratio",
  "solder_paste_ratio",
  "clearance",
  "zone_connect",
  "thermal_width",
  "thermal_gap",
];

/**
 * Moves the old footprint's fields and overrides into `replacement` (a fresh instance of the new
 * library footprint at the same place, already carrying the wanted field values): each field of
 * the replacement is replaced by the old field of that name with the replacement's value; old
 * fields the library does not have are kept too.
 */
export function keepFootprintSettings(old: Footprint, replacement: SList): void {
  const oldFields = fieldNodes(old.node);
  const newFields = fieldNodes(replacement);
  for (const [name, node] of newFields) {
    const previous = oldFields.get(name);
    if (!previous) continue;
    const kept = cloneNode(previous);
    kept.pre = node.pre;
    setAtom(kept, 2, q(text(node, 2) ?? ""));
    replacement.items[replacement.items.indexOf(node)] = kept;
  }
  for (const [name, previous] of oldFields) {
    if (newFields.has(name)) continue;
    insertChild(replacement, cloneNode(previous), afterLast(replacement, [...FOOTPRINT_HEADER, "property", "fp_text"]));
  }
  for (const name of OVERRIDES) {
    const previous = child(old.node, name);
    const current = child(replacement, name);
    if (current) removeChild(replacement, current);
    if (previous)
      insertChild(
        replacement,
        cloneNode(previous),
        afterLast(replacement, [
          ...FOOTPRINT_HEADER,
          "property",
          "fp_text",
          "path",
          "sheetname",
          "sheetfile",
          "private_layers",
          "net_tie_pad_groups",
          ...OVERRIDES,
        ]),
      );
  }
}

/**
 * A footprint's fields by name: `(property …)` items, and up to KiCad 7 the
 * `(fp_text reference|value …)` texts, named Reference and Value.
 */
function fieldNodes(node: SList): Map<string, SList> {
  const fields = new Map<string, SList>();
  for (const item of node.items) {
    if (item.type !== "list") continue;
    if (head(item) === "property" && item.items.length > 3) fields.set(text(item, 1) ?? "", item);
    if (head(item) === "fp_text" && (text(item, 1) === "reference" || text(item, 1) === "value"))
      fields.set(text(item, 1) === "reference" ? "Reference" : "Value", item);
  }
  for (const bare of children(node, "property"))
    if (bare.items.length <= 3 && !fields.has(text(bare, 1) ?? "")) fields.set(text(bare, 1) ?? "", bare);
  return fields;
}
