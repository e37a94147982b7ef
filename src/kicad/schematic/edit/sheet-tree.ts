/**
 * Changing a sheet's tree the way eeschema saves it: top-level items inserted in eeschema's
 * order and in the file's own format, placed symbols with their instance rows (in the root's
 * `symbol_instances` in a KiCad 6 project), detach plans applied, and the boxes an item covers.
 */
import { samePoint, toIU, type PointIu } from "../geometry.ts";
import { itemRank, type MmPoint } from "../item-nodes.ts";
import { fieldBox, fontSize, labelBox, libUnitBox, lineBox, placeBox, pointBox, type Box } from "../space.ts";
import { adaptSyntax, addLegacyInstances, layOutInserted, legacyInstancePath } from "../dialect.ts";
import type { DetachPlan, SheetWiring } from "../wiring.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { PlacedSymbol } from "../model/symbols.ts";
import type { Line } from "../model/sheet-items.ts";
import {
  child,
  children,
  childText,
  cloneNode,
  head,
  insertChild,
  q,
  removeChild,
  setAtom,
  text,
  type SList,
} from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { sheetResolver, symbolResolver } from "../text-vars.ts";

/** `items` without repeats, in first-seen order. */
export function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

/** A point in IU as the mm pair the sheet files write. */
export function toMm(p: PointIu): MmPoint {
  return [p.x / 10_000, p.y / 10_000];
}

/**
 * Inserts a placed symbol built with its `(instances)`. In a KiCad 6 project the instance
 * data goes into the root's `symbol_instances` instead, as KiCad 6 writes it.
 */
export function placeSymbol(state: EditorState, file: SchematicFile, node: SList): void {
  if (state.legacyInstances) {
    const instances = child(node, "instances")!;
    removeChild(node, instances);
    const uuid = childText(node, "uuid") ?? "";
    const field = (name: string) => text(children(node, "property").find((p) => text(p, 1) === name) ?? node, 2) ?? "";
    const rootFile = state.project.root.file;
    addLegacyInstances(
      rootFile.doc.root,
      rootFile.version,
      children(child(instances, "project")!, "path").map((path) => ({
        path: legacyInstancePath(text(path, 1) ?? "", state.project.root.path, uuid),
        reference: childText(path, "reference") ?? "",
        unit: Number(childText(path, "unit") ?? 1),
        value: field("Value"),
        footprint: field("Footprint"),
      })),
    );
  }
  insertItem(file, node);
}

/**
 * Breaks every wire passing through `p` into two that meet there, as eeschema does when a wire
 * or junction is put on the middle of another. Left whole, kicad-cli breaks it on load itself
 * and, for a wire drawn right to left, drops the half that leads on (pic_programmer's VCC_PIC
 * wire lost U5 pin 14 to a junction put on it).
 */
export function splitWiresAt(file: SchematicFile, wiring: Pick<SheetWiring, "linesThrough">, p: PointIu): void {
  for (const wire of wiring.linesThrough(p)) {
    if (head(wire.node) !== "wire") continue;
    const [, second] = children(child(wire.node, "pts")!, "xy");
    const half = cloneNode(wire.node);
    const [start] = children(child(half, "pts")!, "xy");
    const [x, y] = toMm(p);
    for (const xy of [second!, start!]) {
      setAtom(xy, 1, x);
      setAtom(xy, 2, y);
    }
    const uuid = child(half, "uuid");
    if (uuid) setAtom(uuid, 1, q(file.newUuid()));
    insertItem(file, half);
  }
}

/**
 * Inserts a top-level item where eeschema would save it (by item type, then by uuid), in the
 * file's own format version.
 */
export function insertItem(file: SchematicFile, built: SList): void {
  const root = file.doc.root;
  const node = adaptSyntax(built, file.version);
  insertChild(root, node, itemPosition(root, node));
  layOutInserted(root, node, 1, file.version);
}

/** Where eeschema saves a top-level item: after the items of lower type rank and lower uuid. */
function itemPosition(root: SList, node: SList): number {
  const rank = itemRank(head(node) ?? "")!;
  const uuid = childText(node, "uuid") ?? "";
  let lastRanked = -1;
  for (let i = 0; i < root.items.length; i++) {
    const item = root.items[i]!;
    if (item.type !== "list") continue;
    const r = itemRank(head(item) ?? "");
    if (r === undefined) continue;
    if (r > rank || (r === rank && (childText(item, "uuid") ?? "") > uuid)) return i;
    lastRanked = i;
  }
  if (lastRanked >= 0) return lastRanked + 1;
  const trailer = root.items.findIndex(
    (item) =>
      item.type === "list" &&
      ["sheet_instances", "symbol_instances", "embedded_fonts", "embedded_files"].includes(head(item) ?? ""),
  );
  return trailer >= 0 ? trailer : root.items.length;
}

/** Drops a `lib_symbols` entry no placed symbol of the sheet uses any more, as eeschema does on save. */
export function pruneLibSymbol(file: SchematicFile, libKey: string): void {
  const cache = child(file.doc.root, "lib_symbols");
  if (!cache) return;
  const stillUsed = children(file.doc.root, "symbol").some(
    (s) => (childText(s, "lib_name") ?? childText(s, "lib_id")) === libKey,
  );
  if (stillUsed) return;
  const entry = children(cache, "symbol").find((e) => text(e, 1) === libKey);
  if (entry) removeChild(cache, entry);
}

/** Applies a detach plan; `done` keeps a node shared by several plans from being removed twice. */
export function applyPlan(file: SchematicFile, plan: DetachPlan, done: Set<SList>): void {
  const root = file.doc.root;
  for (const node of plan.remove) {
    if (done.has(node) || !root.items.includes(node)) continue;
    done.add(node);
    removeChild(root, node);
    if (head(node) === "symbol") pruneLibSymbol(file, childText(node, "lib_name") ?? childText(node, "lib_id") ?? "");
  }
  for (const { wire, end, to } of plan.trims) moveWireEnd(wire, end, to);
  for (const move of plan.moves) {
    if (done.has(move.node)) continue;
    done.add(move.node);
    const dx = (move.to.x - move.from.x) / 10_000;
    const dy = (move.to.y - move.from.y) / 10_000;
    const ats = [child(move.node, "at"), ...children(move.node, "property").map((p) => child(p, "at"))];
    for (const at of ats) {
      if (!at) continue;
      setAtom(at, 1, Math.round((Number(text(at, 1)) + dx) * 10_000) / 10_000);
      setAtom(at, 2, Math.round((Number(text(at, 2)) + dy) * 10_000) / 10_000);
    }
  }
}

/** Moves the end of `wire` at `end` to `to` (`wire` as read: its ends tell which is which). */
export function moveWireEnd(wire: Line, end: PointIu, to: PointIu): void {
  const xy = (child(wire.node, "pts")?.items ?? []).filter((i): i is SList => i.type === "list");
  const node = xy[samePoint(wire.a, end) ? 0 : 1]!;
  setAtom(node, 1, toMm(to)[0]);
  setAtom(node, 2, toMm(to)[1]);
}

/** The drawing of a placed unit on the sheet. */
export function symbolBox(symbol: PlacedSymbol, unit: number): Box {
  const body = symbol.lib ? libUnitBox(symbol.lib.node, unit, symbol.bodyStyle) : undefined;
  return body ? placeBox(body, symbol.placement) : pointBox(symbol.placement.at, toIU(2.54));
}

/** The boxes `occupiedBoxes` gives one top-level item (so a space can leave exactly those out). */
export function itemBoxes(file: SchematicFile, node: SList): Box[] {
  const symbol = file.symbols.find((s) => s.node === node);
  if (symbol) {
    const vars = symbolResolver(symbol, sheetResolver(file));
    return [
      symbolBox(symbol, symbol.unit),
      ...symbol.fields.flatMap((f) => fieldBox(f.node, symbol.placement, vars) ?? []),
    ];
  }
  const line = [...file.wires, ...file.buses].find((l) => l.node === node);
  if (line) return [lineBox(line)];
  const label = file.labels.find((l) => l.node === node);
  if (label) return [labelBox(label.at, label.text, label.rotation, label.kind !== "local", fontSize(label.node))];
  const marker = [...file.junctions, ...file.noConnects].find((m) => m.node === node);
  if (marker) return [pointBox(marker.at, toIU(1.27))];
  return [];
}

/** Shifts every position inside an item (its `at`s, polyline points, and a shape's start, end, centre and mid point) by `d` (IU). */
export function shiftNode(node: SList, d: PointIu): void {
  const shift = (n: SList) => {
    setAtom(n, 1, Math.round((Number(text(n, 1)) + d.x / 10_000) * 10_000) / 10_000);
    setAtom(n, 2, Math.round((Number(text(n, 2)) + d.y / 10_000) * 10_000) / 10_000);
  };
  const visit = (n: SList) => {
    for (const item of n.items) {
      if (item.type !== "list") continue;
      const h = head(item);
      if (h === "at" || h === "xy" || h === "start" || h === "end" || h === "center" || h === "mid") shift(item);
      else if (h !== "lib_symbols") visit(item);
    }
  };
  visit(node);
}
