/**
 * Where a label goes when it must make room. A label that grows with a new name must not run
 * over another item; it is moved the least that keeps the sheet readable, each way tried in
 * turn: as it is (when its longer text crosses nothing), reading the other way from the same
 * point, slid along the wire it sits on (which keeps it on its net), moved to that wire's other
 * end, carried out beyond a free end of its wire with the wire lengthened to meet it (a
 * no-connect flag on that end going out with it, the label then anywhere along the longer
 * wire), put at the end of a new stub drawn off its wiring into free space (with a junction
 * where the stub meets it), or given room by sliding the part or sheet at its wire's end further
 * along the run (a series resistor, the sheet the run enters), or, last, by pushing what lies
 * ahead of it further the way it reads (or pulling what lies behind it back, the label with it),
 * as a designer gives a label room beside a crowded run. When none is clear the rename is
 * refused, saying what each way ran into.
 */
import { CopperheadError } from "../../../errors.ts";
import { onSegment, samePoint, toIU, type PointIu } from "../geometry.ts";
import { intersects, lineBox, noConnectBox } from "../space.ts";
import type { Label } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import {
  LabelRoom,
  STEP,
  mmText,
  readingDirection,
  slides,
  spotAfter,
  towards,
  type FreeEnd,
  type LabelSpot,
} from "./label-room.ts";
import { MAX_PUSH_MM, openGap } from "./label-push.ts";
import { MAX_SLIDE_MM, slideBlock } from "./label-slide.ts";
import { toMm } from "./sheet-tree.ts";

/** How far a free wire end is lengthened at most to clear a label, mm. */
const MAX_LENGTHEN_MM = 25.4;
/** How long a new stub off the label's wiring is at most, mm, and from how many of its spots (nearest first) one is tried. */
const MAX_STUB_MM = 12.7;
const STUB_SPOTS = 60;

/** One way of making room that was tried, and why it did not do. */
interface Tried {
  way: string;
  failed: string;
}

/**
 * The spot `label` takes when renamed to `text` (see the module comment) and what else it moved to make room (`rearranged.note`). Throws (before anything
 * is written) when no way is clear, naming what each way ran into.
 */
export function renamedLabelAt(file: SchematicFile, label: Label, text: string): LabelSpot {
  const room = new LabelRoom(file, label);
  // Strict even where the old text already ran over something: the renamed label must read clear.
  const fresh = room.blockers(label.at, text, label.rotation);
  if (fresh.length === 0) return { at: label.at, rotation: label.rotation };
  const flipped = (label.rotation + 180) % 360;
  const turns = [flipped, (label.rotation + 90) % 360, (label.rotation + 270) % 360];
  const tried: Tried[] = [];

  for (const rotation of turns)
    if (room.blockers(label.at, text, rotation).length === 0) return { at: label.at, rotation };
  tried.push({
    way: "turned at the same point",
    failed: `read the other way it would run over ${room.blockers(label.at, text, flipped)[0]}, and across its wire over ${room.blockers(label.at, text, turns[1]!)[0] ?? room.blockers(label.at, text, turns[2]!)[0]}`,
  });

  // A label holding its wire's free end slides along that wire alone, the end shortened to it.
  const along = slides(label.at, room.wires, room.network).filter((at) => room.shortenedTo(at));
  let nearest: string | undefined;
  for (const at of along) {
    for (const rotation of [label.rotation, ...turns]) {
      const hit = room.blockers(at, text, rotation);
      if (hit.length === 0) return { at, rotation, ...room.shortenedTo(at) };
      nearest ??= `the nearest, (${toMm(at).join(", ")}), runs over ${hit[0]}`;
    }
  }
  tried.push({
    way: "sliding along the wiring it sits on, any way round",
    failed:
      along.length === 0
        ? room.wires.length === 0
          ? "it sits on no wire"
          : "its wiring has no other spot on the grid"
        : `none of the ${along.length} spots is clear: ${nearest}`,
  });

  // Not where it holds its wire's free end: that end would be left dangling.
  const ends = room.heldEnd() ? [] : room.wires.flatMap((w) => [w.a, w.b]).filter((p) => !samePoint(p, label.at));
  const endFailures: string[] = [];
  for (const at of ends) {
    for (const rotation of [label.rotation, ...turns]) {
      const hit = room.blockers(at, text, rotation);
      if (hit.length === 0) return { at, rotation };
      if (rotation === label.rotation) endFailures.push(`at (${toMm(at).join(", ")}) it would run over ${hit[0]}`);
    }
  }
  tried.push({
    way: "moving to its wire's other end",
    failed:
      ends.length > 0
        ? endFailures.join("; ")
        : room.heldEnd()
          ? "it holds its wire's free end, which would be left dangling"
          : "it sits on no wire",
  });

  const lengthened = lengthenTo(room, text);
  if ("spot" in lengthened) return lengthened.spot;
  tried.push({ way: `lengthening its wire's free end by up to ${MAX_LENGTHEN_MM} mm`, failed: lengthened.failed });

  const stubbed = stubTo(room, text, [label.at, ...along].slice(0, STUB_SPOTS));
  if ("spot" in stubbed) return stubbed.spot;
  tried.push({
    way: `a new stub of up to ${MAX_STUB_MM} mm off its wiring, the label at its end`,
    failed: stubbed.failed,
  });

  const slid = slideBlock(room, text);
  if ("spot" in slid) return slid.spot;
  tried.push({
    way: `sliding the part or sheet at its wire's end along the run, by up to ${MAX_SLIDE_MM} mm`,
    failed: slid.failed,
  });

  const pushed = openGap(room, text);
  if ("spot" in pushed) return pushed.spot;
  tried.push({
    way: `pushing what lies ahead of it further the way it reads, or pulling what lies behind it back with it, by up to ${MAX_PUSH_MM} mm`,
    failed: pushed.failed,
  });

  const fits = longestFit(room, text, [label.at, ...along, ...ends]);
  const fitsText = fits
    ? ` The longest start of ${text} that reads clear at this label, on its wiring, is ${fits.name} (${fits.name.length} of its ${text.length} characters), at (${toMm(fits.at).join(", ")}).`
    : "";
  throw new CopperheadError(
    "edit_conflict",
    `Renaming label ${label.text} at (${toMm(label.at).join(", ")}) to ${text} would run it over ${fresh.join("; ")}. Tried, least change first: ${tried.map((t) => `${t.way}: ${t.failed}`).join(". ")}.${fitsText} Nothing was renamed.`,
    {
      fix: `Pick a shorter name${fits ? ` (up to ${fits.name.length} characters as wide as these fit at this label)` : ""}; or move the label yourself with move_label (to a spot on its wire, or beyond its wire's free end, which lengthens the wire) or make room (move_symbol the part it runs into), then retry.`,
      label: label.text,
      blockers: fresh,
      tried: tried.map((t) => t.way),
      ...(fits ? { fits: { name: fits.name, at: toMm(fits.at) } } : {}),
    },
  );
}

/**
 * The longest start of `text` that reads clear at one of `spots` (any way round), and where: a
 * refused rename says how long a name fits, so whoever asked can pick one that does rather than
 * guess. Undefined when not even the first character fits.
 */
function longestFit(room: LabelRoom, text: string, spots: PointIu[]): { name: string; at: PointIu } | undefined {
  let best: { name: string; at: PointIu } | undefined;
  for (const at of spots)
    for (const rotation of [0, 90, 180, 270]) {
      const clear = (length: number) => room.blockers(at, text.slice(0, length), rotation).length === 0;
      // A longer start only grows the label's box, so the clear lengths run from 1 up to a bound.
      let [lo, hi] = [(best?.name.length ?? 0) + 1, text.length - 1];
      if (lo > hi || !clear(lo)) continue;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (clear(mid)) lo = mid;
        else hi = mid - 1;
      }
      best = { name: text.slice(0, lo), at };
    }
  return best;
}

/**
 * The nearest spot beyond a free end of the label's wire (the one it sits at first, then its
 * wire's others: the label moves out to it), on the grid and in the wire's direction, where the
 * lengthened wire crosses nothing and the label reads clear.
 */
function lengthenTo(room: LabelRoom, text: string): { spot: LabelSpot } | { failed: string } {
  const at = room.label.at;
  const others = room.wires.flatMap((w) => [w.a, w.b]).filter((p) => !samePoint(p, at));
  // A label along its wire, not at an end of it, is lengthened from the wire's ends alone.
  const along = others.length > 0 && !room.wires.some((w) => samePoint(w.a, at) || samePoint(w.b, at));
  const failed: string[] = [];
  for (const end of along ? others : [at, ...others]) {
    const free = room.freeEnd(end);
    const found =
      typeof free === "string"
        ? { failed: free }
        : free.flag
          ? carryFlagFrom(room, text, free)
          : lengthenFrom(room, text, free);
    if ("spot" in found) return found;
    failed.push(found.failed);
  }
  return { failed: failed.join("; ") };
}

/** `lengthenTo` from one free end. */
function lengthenFrom(room: LabelRoom, text: string, free: FreeEnd): { spot: LabelSpot } | { failed: string } {
  const { wire, end, out } = free;
  if (out.x !== 0 && out.y !== 0) return { failed: "its wire is not horizontal or vertical" };
  const label = room.label;
  let last = "";
  for (let k = 1; k * STEP <= toIU(MAX_LENGTHEN_MM); k++) {
    const to = { x: end.x + out.x * k * STEP, y: end.y + out.y * k * STEP };
    const blocked = room.extensionBlockers(end, to);
    if (blocked.length > 0)
      return {
        failed: `after ${(k * 1.27).toFixed(2)} mm the wire would run into ${blocked[0]}${last ? `, and short of that ${last}` : ""}`,
      };
    for (const rotation of [0, 90, 180, 270].sort(
      (a, b) => (b === label.rotation ? 1 : 0) - (a === label.rotation ? 1 : 0),
    )) {
      // Reading back along its lengthened wire, the label stands on it as on any wire.
      const hit = room.blockers(to, text, rotation);
      if (hit.length === 0) return { spot: { at: to, rotation, lengthen: { wire, end, to } } };
      if (rotation === label.rotation) last = `the label would still run over ${hit[0]}`;
    }
  }
  return { failed: last || "no length up to that is clear" };
}

/**
 * The nearest spot at the end of a new stub, square off a wire of the label's wiring from one
 * of `points` inside it (where nothing else meets the wire), on the grid and at least a grid
 * step long, where the stub crosses nothing and the label reads clear of everything, the stub
 * and the wire it leaves included.
 */
function stubTo(room: LabelRoom, text: string, points: PointIu[]): { spot: LabelSpot } | { failed: string } {
  const f = room.file;
  const label = room.label;
  if (room.heldEnd()) return { failed: "it holds its wire's free end, which would be left dangling" };
  let nearest: string | undefined;
  for (const from of points) {
    const wire = room.network.find(
      (w) => onSegment(from, w.a, w.b, 0) && !samePoint(from, w.a) && !samePoint(from, w.b),
    );
    if (!wire) continue;
    const busy =
      f.wires.some((w) => w !== wire && onSegment(from, w.a, w.b, 0)) ||
      f.junctions.some((j) => samePoint(j.at, from)) ||
      f.labels.some((l) => l !== label && samePoint(l.at, from));
    if (busy) continue;
    const across =
      wire.a.y === wire.b.y
        ? [
            { x: 0, y: -1 },
            { x: 0, y: 1 },
          ]
        : wire.a.x === wire.b.x
          ? [
              { x: -1, y: 0 },
              { x: 1, y: 0 },
            ]
          : [];
    for (const out of across) {
      for (let k = 2; k * STEP <= toIU(MAX_STUB_MM); k++) {
        const to = { x: from.x + out.x * k * STEP, y: from.y + out.y * k * STEP };
        const blocked = room.extensionBlockers(from, to);
        if (blocked.length > 0) {
          nearest ??= `from (${toMm(from).join(", ")}) a stub would run into ${blocked[0]}`;
          break;
        }
        const stub = lineBox({ a: from, b: to });
        for (const rotation of [label.rotation, ...[0, 90, 180, 270].filter((r) => r !== label.rotation)]) {
          // Read back along its stub, a label would sit on it.
          const reads = readingDirection(rotation);
          if (reads.x === -out.x && reads.y === -out.y) continue;
          if (intersects(room.box(to, text, rotation), stub)) continue;
          const hit = room.blockers(to, text, rotation);
          if (hit.length === 0) return { spot: { at: to, rotation, stub: { wire, from } } };
          nearest ??= `at the end of a stub from (${toMm(from).join(", ")}) it would run over ${hit[0]}`;
        }
      }
    }
  }
  return { failed: nearest ?? "no point inside its wires is free of other connections" };
}

/**
 * Lengthening a free end that carries a no-connect flag: the flag goes out with the end, and the
 * label may then sit anywhere along the longer wire (not at its end, where the flag is).
 */
function carryFlagFrom(room: LabelRoom, text: string, free: FreeEnd): { spot: LabelSpot } | { failed: string } {
  const { wire, end, out, flag } = free;
  if (out.x !== 0 && out.y !== 0) return { failed: "its wire is not horizontal or vertical" };
  let last = "";
  for (let k = 1; k * STEP <= toIU(MAX_LENGTHEN_MM); k++) {
    const by = { x: out.x * k * STEP, y: out.y * k * STEP };
    const to = { x: end.x + by.x, y: end.y + by.y };
    const found = spotAfter(room, text, {
      ends: [{ wire: wire!, end, to }],
      shifts: [{ node: flag!.node, by, items: [{ box: noConnectBox(end), what: "no-connect flag" }] }],
      note: `the no-connect flag at (${toMm(end).join(", ")}) went out ${mmText(k * STEP)} mm ${towards(out)} with its wire's end`,
    });
    if ("spot" in found) return found;
    if ("blocked" in found)
      return {
        failed: `carrying its no-connect flag ${mmText(k * STEP)} mm out, ${found.blocked}${last ? `, and short of that ${last}` : ""}`,
      };
    last = found.failed;
  }
  return { failed: `carrying its no-connect flag out, ${last || "no length up to that is clear"}` };
}
