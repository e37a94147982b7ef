/**
 * Whether a footprint a sync adds shows its reference on the silkscreen: as the board shows
 * those of the footprints like it. A designer who cleared the references off a dense board's
 * silkscreen (pico-ice shows 17 of its 101, Glasgow 2 of its 272) wants a part added there to
 * hide its own, which also keeps placement from looking for room for a text no one will print.
 */
import { referenceField, type Footprint } from "../model.ts";
import { textHidden } from "../clearance/items.ts";
import { child, children, text, type SList } from "../../sexpr/index.ts";

/** Whether a footprint's reference is printed: a Reference field, not hidden, on a silkscreen layer. */
export function referenceShown(footprint: SList): boolean {
  const field = referenceField(footprint);
  if (!field || textHidden(field)) return false;
  return /\.SilkS$/.test(text(child(field, "layer") ?? field, 1) ?? "");
}

/**
 * Whether a board whose footprints are `onBoard` hides the references of footprints like the
 * library footprint `libId` (`library`, its root list): more than half of those of the same
 * footprint name hide it, or, when the board has none of that name, of those with as many
 * copper pads.
 */
export function hidesReferencesLike(onBoard: Footprint[], libId: string, library: SList): boolean {
  const name = footprintName(libId);
  const footprints = onBoard.filter((f) => referenceField(f.node) !== undefined);
  const same = footprints.filter((f) => footprintName(f.libId) === name);
  const pads = copperPads(library);
  const like = same.length > 0 ? same : footprints.filter((f) => copperPads(f.node) === pads);
  const hidden = like.filter((f) => !referenceShown(f.node)).length;
  return hidden * 2 > like.length;
}

/** A library id's footprint name, whatever library nickname the board placed it from. */
function footprintName(libId: string): string {
  return libId.slice(libId.indexOf(":") + 1);
}

/** How many pads with copper a footprint has (mounting holes left out). */
function copperPads(footprint: SList): number {
  return children(footprint, "pad").filter((p) => text(p, 2) !== "np_thru_hole").length;
}
