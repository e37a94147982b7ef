/**
 * Library symbols as a sheet embeds them: resolving a lib id (the design's own embedded copy
 * first), embedding one in a sheet's `lib_symbols` the way eeschema does, pruning one no placed
 * symbol uses any more, and the fields and pins a freshly placed symbol gets from it.
 */
import { CopperheadError } from "../../../errors.ts";
import { closeMatches } from "../../../util/close-matches.ts";
import { placePoint, toIU, type PlacementIu } from "../geometry.ts";
import { hiddenPropertyNode, libraryFields, propertyNode } from "../item-nodes.ts";
import { RELEASES } from "../../format-versions.ts";
import { adaptSyntax, layOutInserted } from "../dialect.ts";
import { readLibSymbol } from "../model/read-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { LibSymbol } from "../model/symbols.ts";
import {
  child,
  children,
  cloneNode,
  head,
  insertChild,
  q,
  readDesignText,
  setAtom,
  text,
  type SList,
} from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { copyFieldLayout, hideDefaultHidden, type FieldExample } from "./field-layout.ts";
import type { Resolver } from "../text-vars.ts";
import { toMm, unique } from "./sheet-tree.ts";

/**
 * The symbol for `libId` as `lib_symbols` embeds it: the design's own embedded copy when a
 * sheet has one (so a new part matches the ones already placed, and symbols from libraries
 * the design no longer ships still work), else the libraries'; or a typed error with close lib ids.
 */
export function resolveLibSymbol(state: EditorState, libId: string): SList {
  const embedded = embeddedSymbol(state, libId);
  if (embedded) return embedded;
  try {
    return state.libraries.resolveSymbol(libId);
  } catch (err) {
    if (!(err instanceof CopperheadError)) throw err;
    const nickname = libId.includes(":") ? libId.slice(0, libId.indexOf(":")) : "";
    let candidates: string[] = [];
    if (err.code === "symbol_not_found" && nickname) {
      try {
        const source = readDesignText(state.libraries.library("symbol", nickname).path, { within: null });
        candidates = [...source.matchAll(/^\t\(symbol "([^"]+)"/gm)].map((m) => `${nickname}:${m[1]}`);
      } catch {
        candidates = [];
      }
    } else if (err.code === "library_not_found") {
      candidates = state.libraries.entries("symbol").map((e) => `${e.nickname}:${libId.slice(libId.indexOf(":") + 1)}`);
    }
    const close = closeMatches(libId, candidates);
    throw new CopperheadError(err.code, err.message, {
      ...err.details,
      fix: close.length > 0 ? `Did you mean ${close.join(", ")}?` : err.fix,
      libId,
    });
  }
}

/** A symbol embedded in one of the design's sheets under `libId`, copied fresh. */
function embeddedSymbol(state: EditorState, libId: string): SList | undefined {
  for (const file of state.project.files.values()) {
    const found = file.libSymbols.get(libId);
    if (found) return cloneNode(found.node);
  }
  return undefined;
}

/** The libraries' symbol for `libId`, or undefined when they have none. */
export function tryResolve(state: EditorState, libId: string): SList | undefined {
  try {
    return state.libraries.resolveSymbol(libId);
  } catch (err) {
    if (err instanceof CopperheadError) return undefined;
    throw err;
  }
}

/**
 * Embeds the library symbol `libId` in the sheet's `lib_symbols` (sorted by name), in the
 * file's syntax, and returns the embedded node with the `lib_name` a new placed symbol needs.
 * A cached copy equal to the library's is reused. One that differs (the library changed since
 * the sheet was saved) is left to the symbols that use it, and the library's version goes in
 * beside it as `<name>_1`, `<name>_2`…, as eeschema does: reusing the stale copy would give the
 * new symbol a lib_symbol_mismatch, and replacing it would change the symbols already placed.
 */
export function ensureLibSymbol(
  file: SchematicFile,
  libId: string,
  def: () => SList,
): { def: SList; libName?: string } {
  let cache = child(file.doc.root, "lib_symbols");
  if (!cache) {
    const after = ["title_block", "paper", "uuid"].map((h) => child(file.doc.root, h)).find(Boolean);
    cache = insertChild(
      file.doc.root,
      { type: "list", pre: "", items: [{ type: "atom", pre: "", raw: "lib_symbols" }], post: "", start: -1 },
      after ? file.doc.root.items.indexOf(after) + 1 : 1,
    ) as SList;
  }
  const entries = children(cache, "symbol");
  const wanted = adaptSyntax(def(), file.version);
  const insert = (node: SList) => {
    const name = text(node, 1) ?? "";
    const next = entries.find((e) => (text(e, 1) ?? "") > name);
    insertChild(cache!, node, next ? cache!.items.indexOf(next) : cache!.items.length);
    layOutInserted(cache!, node, 2, file.version);
    return node;
  };
  const existing = entries.find((e) => text(e, 1) === libId);
  if (!existing) return { def: insert(wanted) };
  if (sameSymbolBody(existing, wanted)) return { def: existing };
  const itemName = libId.slice(libId.indexOf(":") + 1);
  for (let n = 1; ; n++) {
    const libName = `${itemName}_${n}`;
    const alternative = entries.find((e) => text(e, 1) === libName);
    if (!alternative) return { def: insert(renamedLibSymbol(wanted, libName)), libName };
    if (sameSymbolBody(alternative, wanted)) return { def: alternative, libName };
  }
}

/** A library symbol under another cache name; its unit sub-symbols (`<name>_<unit>_<style>`) follow. */
function renamedLibSymbol(def: SList, name: string): SList {
  const old = (text(def, 1) ?? "").slice((text(def, 1) ?? "").indexOf(":") + 1);
  setAtom(def, 1, q(name));
  for (const sub of children(def, "symbol")) setAtom(sub, 1, q(name + (text(sub, 1) ?? "").slice(old.length)));
  return def;
}

/** True when two cached library symbols hold the same content, whatever their names and layout. */
function sameSymbolBody(a: SList, b: SList): boolean {
  const tokens = (node: SList): string[] => {
    const out: string[] = [];
    const name = text(node, 1) ?? "";
    const base = name.slice(name.indexOf(":") + 1);
    const visit = (list: SList, top: boolean) => {
      list.items.forEach((item, i) => {
        if (item.type === "list") visit(item, false);
        else if (i === 1 && top) out.push("<name>");
        else if (i === 1 && head(list) === "symbol" && item.raw.startsWith(`"${base}_`))
          out.push(item.raw.slice(base.length + 1));
        else out.push(item.raw);
      });
      out.push(")");
    };
    visit(node, true);
    return out;
  };
  const ta = tokens(a);
  const tb = tokens(b);
  return ta.length === tb.length && ta.every((t, i) => t === tb[i]);
}

/** A view (pins, units) of a library symbol not yet in any sheet, read by the schematic reader itself. */
export function libSymbolView(def: SList): LibSymbol {
  return readLibSymbol(def, RELEASES.schematic.at(-1)!.version)!;
}

/** The reference prefix a library symbol gives new parts (`R` for `R?`), `fallback` when it has none. */
export function referencePrefix(def: SList, fallback: string): string {
  return (libraryFields(def).find((f) => f.name === "Reference")?.value ?? fallback).replace(/\?+$/, "");
}

/**
 * Pin numbers a placed unit lists, in eeschema's order: the unit's own pins (shared ones
 * included) first, then the other units' pins in unit order, each number once.
 */
export function instancePinNumbers(lib: LibSymbol, unit: number): string[] {
  const ofUnit = (u: number) =>
    lib.pins
      .filter((p) => (p.unit === 0 || p.unit === u) && (p.bodyStyle === 0 || p.bodyStyle === 1))
      .map((p) => p.number);
  const out = ofUnit(unit);
  for (let u = 1; u <= lib.unitCount; u++) if (u !== unit) out.push(...ofUnit(u));
  return unique(out);
}

/**
 * The fields of a freshly placed symbol: the library's, where the library puts them
 * (transformed like the symbol), with `values` overriding; `values` the library lacks follow,
 * hidden at the origin. Footprint, Datasheet and Description are hidden (a symbol converted
 * from an old library may show them); with `like`, the example's sizes and visibility are
 * copied instead, and its layout where that stays beside the body (see field-layout.ts), its
 * fields' text variables resolved by the new symbol's sheet (`sheet`).
 */
export function symbolFields(
  def: SList,
  placement: PlacementIu,
  values: Record<string, string>,
  like?: FieldExample,
  sheet?: Resolver,
): SList[] {
  const fields: SList[] = [];
  const lib = libraryFields(def);
  for (const f of lib) {
    const at = placePoint({ x: toIU(f.at[0]), y: toIU(f.at[1]) }, placement);
    fields.push(propertyNode(f.name, values[f.name] ?? f.value, toMm(at), f.angle, f.rest));
  }
  for (const [name, value] of Object.entries(values)) {
    if (!lib.some((f) => f.name === name)) fields.push(hiddenPropertyNode(name, value, toMm(placement.at)));
  }
  if (like) copyFieldLayout(fields, like, placement, new Set(lib.map((f) => f.name)), sheet);
  else hideDefaultHidden(fields);
  return fields;
}
