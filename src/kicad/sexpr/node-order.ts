/**
 * Where KiCad writes a child inside its parent, for edits that insert one: a node goes after
 * the last sibling KiCad writes before it, so an inserted line lands where KiCad itself would
 * have put it and a diff shows only that line.
 */
import { head, type SList } from "./index.ts";

/** Top-level board heads KiCad writes before the net table and the footprints. */
export const BOARD_HEADER = [
  "version",
  "generator",
  "generator_version",
  "general",
  "paper",
  "title_block",
  "layers",
  "setup",
  "property",
];

/** Footprint heads KiCad writes before its fields (`property`; `fp_text` up to KiCad 7). */
export const FOOTPRINT_HEADER = ["locked", "placed", "layer", "tedit", "uuid", "tstamp", "at", "descr", "tags"];

/** Pad heads KiCad writes before `(net …)`. */
export const PAD_BEFORE_NET = [
  "at",
  "size",
  "drill",
  "property",
  "layers",
  "remove_unused_layers",
  "keep_end_layers",
  "zone_layer_connections",
  "roundrect_rratio",
  "chamfer_ratio",
  "chamfer",
  "rect_delta",
];

/** Index just after the last child whose head is one of `heads` (after the name when none is). */
export function afterLast(node: SList, heads: string[]): number {
  let at = 1;
  node.items.forEach((item, i) => {
    if (item.type === "list" && heads.includes(head(item) ?? "")) at = i + 1;
  });
  return Math.max(at, node.items[1]?.type === "atom" ? 2 : 1);
}
