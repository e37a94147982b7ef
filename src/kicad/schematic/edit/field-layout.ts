/**
 * Where a symbol's fields go, the way KiCad lays them out: turned with the symbol (a field of a
 * symbol turned by a quarter is drawn at the other angle than stored, so its text stays
 * horizontal or reads bottom to top, never upside down), Footprint, Datasheet and Description
 * hidden unless the part copied with `like` shows them, the `like` example's field sizes and
 * visibility copied, with its layout where that keeps the fields beside the body, and a part's
 * own fields moved clear of the wiring `connect` draws at its pins, so they never block it.
 */
import { toIU, type PlacementIu, type PointIu } from "../geometry.ts";
import { distance, fieldBox, fontSize, intersects, symbolBodyBox, translate, type Box } from "../space.ts";
import type { PlacedSymbol } from "../model/symbols.ts";
import { child, cloneNode, flag, head, list, setAtom, text, type SList } from "../../sexpr/index.ts";
import type { SheetSpace } from "./placement.ts";
import { fieldsResolver, symbolResolver, type Resolver } from "../text-vars.ts";

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
export function turnedField(prop: SList, origin: PointIu, from: number, to: number): SList {
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
 * A field of the example whose text sits farther than this from its body was placed by hand
 * for that spot (a value moved clear of a neighbour): copied, it would widen the new part by
 * as much and drop its text among other parts.
 */
const NEAR_BODY = toIU(2.54);

/** A placed symbol whose fields a new one copies, with its sheet's text variables (`sheetResolver`). */
export interface FieldExample {
  symbol: PlacedSymbol;
  sheet: Resolver;
}

/**
 * The `like` example's look put on fresh fields, laid out compactly beside the new body: each
 * field the example has keeps its own value and takes the example's size and visibility. One
 * the example shows near its body also takes its place relative to the body (turned to the new
 * rotation) and justification; one it shows farther away keeps where the library puts it
 * (`fromLibrary` names those fields), or, a field the library lacks, goes on the next line
 * below the fields already beside the body. `sheet` resolves the new symbol's sheet's variables.
 */
export function copyFieldLayout(
  props: SList[],
  { symbol: example, sheet: exampleSheet }: FieldExample,
  placement: PlacementIu,
  fromLibrary: Set<string>,
  sheet?: Resolver,
): void {
  const exampleBody = symbolBodyBox(example);
  const exampleFields = symbolResolver(example, exampleSheet);
  const stacked: SList[] = [];
  for (const prop of props) {
    const name = text(prop, 1) ?? "";
    const source = example.fields.find((f) => f.name === name);
    if (!source || !child(source.node, "at")) continue;
    const shown = fieldBox(source.node, example.placement, exampleFields);
    if (shown && distance(shown, exampleBody) > NEAR_BODY) {
      copyLook(prop, source.node);
      if (!fromLibrary.has(name)) stacked.push(prop);
      continue;
    }
    const turned = turnedField(source.node, example.placement.at, example.placement.rotation, placement.rotation);
    const at = child(turned, "at")!;
    setAtom(at, 1, Math.round((Number(text(at, 1)) + placement.at.x / 10_000) * 10_000) / 10_000);
    setAtom(at, 2, Math.round((Number(text(at, 2)) + placement.at.y / 10_000) * 10_000) / 10_000);
    const keep = prop.items.slice(0, 3);
    prop.items.splice(0, prop.items.length, ...keep, ...turned.items.slice(3));
    prop.items[2] = keep[2]!;
  }
  const own = fieldsResolver(props, sheet);
  const besides = props.filter((p) => !stacked.includes(p)).flatMap((p) => fieldBox(p, placement, own) ?? []);
  for (const prop of stacked) {
    const lowest = besides.reduce<Box | undefined>((low, b) => (!low || b.y1 > low.y1 ? b : low), undefined);
    const at = child(prop, "at")!;
    setAtom(at, 1, snapMm(lowest ? lowest.x0 : placement.at.x));
    setAtom(at, 2, snapMm((lowest ? lowest.y1 : placement.at.y) + fontSize(prop) / 2));
    const effects = child(prop, "effects");
    const justify = effects && child(effects, "justify");
    if (justify) effects.items.splice(effects.items.indexOf(justify), 1);
    effects?.items.push(list("justify", "left"));
    const box = fieldBox(prop, placement, own);
    if (box) besides.push(box);
  }
}

/** IU to millimetres, on a 0.01 mm step. */
function snapMm(iu: number): number {
  return Math.round(iu / 100) / 100;
}

/**
 * The font and visibility of `example`'s fields put on fresh ones, which keep their places: a
 * new power symbol shows or hides its text as the design's others of its name do.
 */
export function copyFieldLook(props: SList[], example: PlacedSymbol): void {
  for (const prop of props) {
    const source = example.fields.find((f) => f.name === text(prop, 1));
    if (source) copyLook(prop, source.node);
  }
}

/** The example field's font and visibility on `prop`, which keeps its place and justification. */
function copyLook(prop: SList, source: SList): void {
  const font = child(child(source, "effects") ?? source, "font");
  const hidden = flag(source, "hide") || flag(child(source, "effects") ?? source, "hide");
  let effects = child(prop, "effects");
  if (!effects) prop.items.push((effects = list("effects", list("font", list("size", 1.27, 1.27)))));
  const own = child(effects, "font");
  if (font && own) effects.items[effects.items.indexOf(own)] = cloneNode(font);
  // Either way a file writes it: `(hide yes)` from KiCad 8 on, a bare `hide` before.
  effects.items = effects.items.filter((i) => !(i.type === "atom" ? i.raw === "hide" : head(i) === "hide"));
  if (hidden) effects.items.push(list("hide", "yes"));
}

/** A placed symbol's visible fields with their boxes; `sheet` resolves its sheet's variables. */
export function fieldBoxes(symbol: PlacedSymbol, sheet: Resolver): { node: SList; box: Box }[] {
  const own = symbolResolver(symbol, sheet);
  return symbol.fields.flatMap((f) => {
    const box = fieldBox(f.node, symbol.placement, own);
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
    const offsets: PointIu[] = [];
    for (let r = 1; r <= NUDGE_STEPS; r++) {
      for (let dx = -r; dx <= r; dx++)
        for (let dy = -r; dy <= r; dy++)
          if (Math.max(Math.abs(dx), Math.abs(dy)) === r) offsets.push({ x: dx * GRID, y: dy * GRID });
    }
    offsets.sort((a, b) => Math.hypot(a.x, a.y) - Math.hypot(b.x, b.y));
    const clear = offsets.find((d) => {
      const box = translate(field.box, d);
      return (
        space.free(box, 0) &&
        !intersects(box, body) &&
        !drawn.some((b) => intersects(b, box)) &&
        !placed.some((b, j) => j !== i && intersects(b, box))
      );
    });
    if (!clear) return;
    const at = child(field.node, "at")!;
    setAtom(at, 1, Math.round((Number(text(at, 1)) + clear.x / 10_000) * 10_000) / 10_000);
    setAtom(at, 2, Math.round((Number(text(at, 2)) + clear.y / 10_000) * 10_000) / 10_000);
    placed[i] = translate(field.box, clear);
  });
}
