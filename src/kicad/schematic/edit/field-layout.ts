/**
 * Where a symbol's fields go, the way KiCad lays them out: turned with the symbol (a field of a
 * symbol turned by a quarter is drawn at the other angle than stored, so its text stays
 * horizontal or reads bottom to top, never upside down), Footprint, Datasheet and Description
 * hidden unless the part copied with `like` shows them, the `like` example's field layout
 * copied relative to its body, and a part's own fields moved clear of the wiring `connect`
 * draws at its pins, so they never block it.
 */
import { toIU, type Placement, type Point } from "../geometry.ts";
import { fieldBox, intersects, translate, type Box } from "../space.ts";
import type { PlacedSymbol } from "../model/symbols.ts";
import { child, cloneNode, flag, list, setAtom, text, type SList } from "../../sexpr/index.ts";
import type { SheetSpace } from "./placement.ts";

/** Fields a new symbol shows only when the part it copies shows them (KiCad's own library hides them). */
const HIDDEN_BY_DEFAULT = new Set(["Footprint", "Datasheet", "Description"]);

/** Hides `prop` (modern `(hide yes)` inside its effects; the dialect writes what the file's version reads). */
export function hideField(prop: SList): void {
  let effects = child(prop, "effects");
  if (!effects) prop.items.push((effects = list("effects", list("font", list("size", 1.27, 1.27)))));
  if (flag(effects, "hide") || flag(prop, "hide")) return;
  effects.items.push(list("hide", "yes"));
}

/** Hides the fields a fresh symbol keeps out of sight, unless `shown` names them. */
export function hideDefaultHidden(props: SList[]): void {
  for (const prop of props) if (HIDDEN_BY_DEFAULT.has(text(prop, 1) ?? "")) hideField(prop);
}

/**
 * A copy of a field turned with its symbol from `from` to `to` degrees about `origin`, the way
 * eeschema rotates one: the position turns, and each quarter turn swaps the stored angle
 * between horizontal and vertical (eeschema draws a field of a symbol turned by a quarter at
 * the other angle, so the text keeps reading the same way on screen). The copy is relative to
 * the symbol's origin.
 */
export function turnedField(prop: SList, origin: Point, from: number, to: number): SList {
  const copy = cloneNode(prop);
  const at = child(copy, "at")!;
  let x = toIU(Number(text(at, 1))) - origin.x;
  let y = toIU(Number(text(at, 2))) - origin.y;
  const turns = ((Math.round((to - from) / 90) % 4) + 4) % 4;
  let angle = Number(text(at, 3) ?? 0);
  for (let i = 0; i < turns; i++) {
    [x, y] = [y, -x];
    angle = angle % 180 === 0 ? 90 : 0;
  }
  setAtom(at, 1, x / 10_000);
  setAtom(at, 2, y / 10_000);
  if (text(at, 3) !== undefined) setAtom(at, 3, angle);
  return copy;
}

/**
 * The `like` example's layout put on fresh fields: each field the example has takes its place
 * relative to the example's body (turned to the new rotation), size, justification and
 * visibility, keeping its own value.
 */
export function copyFieldLayout(props: SList[], example: PlacedSymbol, placement: Placement): void {
  for (const prop of props) {
    const name = text(prop, 1);
    const source = example.fields.find((f) => f.name === name);
    if (!source || !child(source.node, "at")) continue;
    const turned = turnedField(source.node, example.placement.at, example.placement.rotation, placement.rotation);
    const at = child(turned, "at")!;
    setAtom(at, 1, Math.round((Number(text(at, 1)) + placement.at.x / 10_000) * 10_000) / 10_000);
    setAtom(at, 2, Math.round((Number(text(at, 2)) + placement.at.y / 10_000) * 10_000) / 10_000);
    const keep = prop.items.slice(0, 3);
    prop.items.splice(0, prop.items.length, ...keep, ...turned.items.slice(3));
    prop.items[2] = keep[2]!;
  }
}

/** A placed symbol's visible fields with their boxes. */
export function fieldBoxes(symbol: PlacedSymbol): { node: SList; box: Box }[] {
  return symbol.fields.flatMap((f) => {
    const box = fieldBox(f.node, symbol.placement);
    return box ? [{ node: f.node, box }] : [];
  });
}

/** How far a field is moved, at most, to clear new wiring: twelve half-grid steps (15 mm) each way. */
const NUDGE_STEPS = 12;
const GRID = toIU(1.27);

/**
 * Moves each of a part's own fields that the new wiring (`drawn`: the wire, the label or power
 * symbol at its end) runs over to the nearest free place, up to 15 mm away; a field with
 * no free place near stays where it is (the wiring is right; the text is only crowded). `space`
 * leaves the part out, so `body` (its drawing) is kept clear here.
 */
export function clearOwnFields(fields: { node: SList; box: Box }[], drawn: Box[], space: SheetSpace, body: Box): void {
  const placed = fields.map((f) => f.box);
  fields.forEach((field, i) => {
    if (!drawn.some((d) => intersects(d, field.box))) return;
    const offsets: Point[] = [];
    for (let r = 1; r <= NUDGE_STEPS; r++) {
      for (let dx = -r; dx <= r; dx++) for (let dy = -r; dy <= r; dy++) if (Math.max(Math.abs(dx), Math.abs(dy)) === r) offsets.push({ x: dx * GRID, y: dy * GRID });
    }
    offsets.sort((a, b) => Math.hypot(a.x, a.y) - Math.hypot(b.x, b.y));
    const clear = offsets.find((d) => {
      const box = translate(field.box, d);
      return space.free(box, 0) && !intersects(box, body) && !drawn.some((b) => intersects(b, box)) && !placed.some((b, j) => j !== i && intersects(b, box));
    });
    if (!clear) return;
    const at = child(field.node, "at")!;
    setAtom(at, 1, Math.round((Number(text(at, 1)) + clear.x / 10_000) * 10_000) / 10_000);
    setAtom(at, 2, Math.round((Number(text(at, 2)) + clear.y / 10_000) * 10_000) / 10_000);
    placed[i] = translate(field.box, clear);
  });
}
