/**
 * A board's own copy of a footprint, as a library footprint: a board carries every footprint it
 * uses, so when no library table holds one (a vendor library that is not in the project's
 * fp-lib-table), `add_component like: "C2"` and board sync take it from the board rather than
 * swapping in a stock footprint. The copy is the instance brought back to the front, unturned,
 * at the origin, without what only an instance carries: pad nets, pin data and the symbol's fields.
 */
import { Board } from "../model.ts";
import { flipFootprint, moveFootprint } from "./instance.ts";
import {
  childText,
  children,
  cloneNode,
  parseSexpr,
  printSexpr,
  removeChild,
  text,
  type SDocument,
  type SList,
} from "../../sexpr/index.ts";

/** Fields a library footprint has of its own (KiCad 8+); the others come from the symbol. */
const LIBRARY_FIELDS = new Set(["Reference", "Value", "Footprint", "Datasheet", "Description"]);
/** What a pad carries only on a board. */
const INSTANCE_PAD_DATA = ["net", "pinfunction", "pintype"];

export function libraryCopy(footprint: SList): SList {
  const node = cloneNode(footprint);
  if ((childText(node, "layer") ?? "F.Cu").startsWith("B.")) flipFootprint(node);
  moveFootprint(node, { x: 0, y: 0, rotation: 0 });
  for (const pad of children(node, "pad"))
    for (const name of INSTANCE_PAD_DATA) for (const item of children(pad, name)) removeChild(pad, item);
  for (const property of children(node, "property"))
    if (!LIBRARY_FIELDS.has(text(property, 1) ?? "")) removeChild(node, property);
  return node;
}

/**
 * A footprint source over a board file, for `Libraries.footprintFallback`: the first footprint
 * on the board with the lib id asked for, as a library copy. The board is read and indexed by
 * lib id on first use: board sync asks once per footprint whose library is missing, which on a
 * large board is a thousand asks.
 */
export function boardFootprints(
  boardFile: string,
  within: string,
): (libId: string) => { file: string; doc: SDocument } | undefined {
  let byLibId: Map<string, SList> | undefined;
  return (libId) => {
    if (!byLibId) {
      byLibId = new Map();
      for (const f of Board.load(boardFile, { within }).footprints())
        if (!byLibId.has(f.libId)) byLibId.set(f.libId, f.node);
    }
    const node = byLibId.get(libId);
    return node ? { file: boardFile, doc: parseSexpr(printSexpr(libraryCopy(node)), { file: boardFile }) } : undefined;
  };
}
