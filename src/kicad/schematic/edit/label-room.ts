/**
 * Where a renamed label goes. A label that grows with its new name must not run over another
 * item: it stays as it is when its longer text crosses nothing it did not cross before; else it
 * reads the other way from the same point, or slides along the wire it sits on (which keeps it
 * on its net) to the nearest spot where it crosses nothing; else the rename is refused, naming
 * what is in the way.
 */
import { CopperheadError } from "../../../errors.ts";
import { onSegment, toIU, type PointIu } from "../geometry.ts";
import { describeItem, inside, intersects, labelBox, occupiedItems, pageArea, pointBox, union, type Box, type DrawnBox } from "../space.ts";
import type { Label } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { toMm } from "./sheet-tree.ts";

/** Steps a label slides along its wire (the half grid KiCad snaps labels to). */
const STEP = toIU(1.27);

/**
 * The anchor and angle `label` takes when renamed to `text`: its own; else turned around (reading
 * the other way from the same point); else the nearest clear spot along the wire it sits on,
 * either way round. Throws (before anything is written) when none is clear.
 */
export function renamedLabelAt(file: SchematicFile, label: Label, text: string): { at: PointIu; rotation: number } {
  const flagged = label.kind !== "local";
  const box = (at: PointIu, chars: number, rotation = label.rotation) => labelBox(at, chars, rotation, flagged);
  const own = box(label.at, label.text.length);
  const wires = file.wires.filter((w) => onSegment(label.at, w.a, w.b, 0));
  const wireBoxes = wires.map((w) => union(pointBox(w.a), pointBox(w.b)));
  const same = (a: Box, b: Box) => a.x0 === b.x0 && a.y0 === b.y0 && a.x1 === b.x1 && a.y1 === b.y1;
  const others = occupiedItems(file).filter((i) => !same(i.box, own));
  // The wire a label sits on is no obstacle as the designer turned it; turned around, the
  // label must not run along it.
  const ownWire = (i: DrawnBox) => i.what === "wire" && wireBoxes.some((w) => same(w, i.box));
  const hits = (b: Box, turned: boolean) => others.filter((i) => intersects(b, i.box) && !(ownWire(i) && (!turned || across(i.box, label.rotation))));
  const before = new Set(hits(own, false));
  const fresh = hits(box(label.at, text.length), false).filter((i) => !before.has(i));
  if (fresh.length === 0) return { at: label.at, rotation: label.rotation };
  const page = pageArea(file);
  const flipped = (label.rotation + 180) % 360;
  for (const at of [label.at, ...slides(label.at, wires)]) {
    for (const rotation of at === label.at ? [flipped] : [label.rotation, flipped]) {
      const moved = box(at, text.length, rotation);
      if (inside(moved, page.area) && !intersects(moved, page.titleBlock) && hits(moved, rotation !== label.rotation).length === 0) return { at, rotation };
    }
  }
  const blockers = fresh.map(describeItem);
  throw new CopperheadError(
    "edit_conflict",
    `Renaming label ${label.text} at (${toMm(label.at).join(", ")}) to ${text} would run it over ${blockers.join("; ")}, and no spot along its wire is clear, either way round. Nothing was renamed.`,
    { fix: "Pick a shorter name, or make room beside the label (move_symbol the part it runs into) and retry.", label: label.text, blockers },
  );
}

/** True when a wire's box runs across a label reading at `rotation` (a vertical wire under a horizontal label). */
function across(wire: Box, rotation: number): boolean {
  return rotation % 180 === 0 ? wire.x0 === wire.x1 : wire.y0 === wire.y1;
}

/** Points along the wires through `at`, on the label grid, nearest first (`at` itself left out). */
function slides(at: PointIu, wires: { a: PointIu; b: PointIu }[]): PointIu[] {
  const points: { p: PointIu; d: number }[] = [];
  for (const { a, b } of wires) {
    const step = { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
    const length = Math.abs(b.x - a.x) + Math.abs(b.y - a.y);
    for (let k = -Math.floor(length / STEP); k <= Math.floor(length / STEP); k++) {
      const p = { x: at.x + step.x * k * STEP, y: at.y + step.y * k * STEP };
      if (k !== 0 && onSegment(p, a, b, 0)) points.push({ p, d: Math.abs(k) });
    }
  }
  return points.sort((x, y) => x.d - y.d).map((x) => x.p);
}
