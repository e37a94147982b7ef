/**
 * Where a label goes when it must make room. A label that grows with a new name must not run
 * over another item; it is moved the least that keeps the sheet readable, each way tried in
 * turn: as it is (when its longer text crosses nothing), reading the other way from the same
 * point, slid along the wire it sits on (which keeps it on its net), moved to that wire's other
 * end, carried out beyond a free end of its wire with the wire lengthened to meet it, or put at
 * the end of a new stub drawn off its wiring into free space (with a junction where the stub
 * meets it), as a designer gives a label room beside a crowded run. When none is clear the
 * rename is refused, saying what each way ran into. `move_label` checks a spot the model picks
 * by the same rules (`LabelRoom.blockers`).
 */
import { CopperheadError } from "../../../errors.ts";
import { child, setAtom, text, type SList } from "../../sexpr/index.ts";
import { onSegment, placePoint, samePoint, toIU, type PointIu } from "../geometry.ts";
import {
  describeItem,
  fontSize,
  inside,
  intersects,
  labelBox,
  occupiedItems,
  pageArea,
  pageRefsAnchor,
  pageRefsField,
  pageRefsWhat,
  pinOutwardLib,
  placeDirection,
  pointBox,
  union,
  type Box,
  type DrawnBox,
} from "../space.ts";
import { unitPins } from "../model/symbols.ts";
import type { Label, Line } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { junctionNode, lineNode } from "../item-nodes.ts";
import { insertItem, shiftNode, splitWiresAt, toMm } from "./sheet-tree.ts";

/** Steps a label slides along its wire (the half grid KiCad snaps labels to). */
const STEP = toIU(1.27);
/** How many spots along its wiring a label tries at most. */
const MAX_SPOTS = 400;
/** How far a free wire end is lengthened at most to clear a label, mm. */
const MAX_LENGTHEN_MM = 25.4;
/** How long a new stub off the label's wiring is at most, mm, and from how many of its spots (nearest first) one is tried. */
const MAX_STUB_MM = 12.7;
const STUB_SPOTS = 60;

/**
 * Where a label goes: its anchor and angle, and, when its wire is lengthened, the end moved out
 * to meet it (`wire` undefined: a label sitting on a pin gets a new stub from the pin); or,
 * when it goes on a new stub, the wire the stub leaves and where it leaves it.
 */
export interface LabelSpot {
  at: PointIu;
  rotation: number;
  lengthen?: { wire?: Line; end: PointIu; to: PointIu };
  stub?: { wire: Line; from: PointIu };
}

/** The free end of a label's wiring: the wire's end it sits at, or the pin it sits on, and the way out from it. */
export interface FreeEnd {
  wire?: Line;
  end: PointIu;
  out: PointIu;
}

/** One way of making room that was tried, and why it did not do. */
interface Tried {
  way: string;
  failed: string;
}

/**
 * What stands around one label on its sheet: every other drawn item, the wires it sits on, and
 * the page. Answers whether the label, with some text, is readable at a spot.
 */
export class LabelRoom {
  readonly wires: Line[];
  /** Every wire joined to the label's own, through wire ends (the net's wiring it can slide along). */
  readonly network: Line[];
  private readonly others: DrawnBox[];
  private readonly wireBoxes: Box[];
  private readonly page: { area: Box; titleBlock: Box };
  private readonly own: Box;

  constructor(
    readonly file: SchematicFile,
    readonly label: Label,
  ) {
    // As `occupiedItems` boxes it, so the label is not taken for one of its own obstacles.
    this.own = labelBox(label.at, label.text.length, label.rotation, label.kind !== "local", fontSize(label.node));
    this.wires = file.wires.filter((w) => onSegment(label.at, w.a, w.b, 0));
    this.wireBoxes = this.wires.map(lineBox);
    this.network = joinedWires(file.wires, this.wires);
    // Its page references go with it (`placeIntersheetRefs`).
    this.others = occupiedItems(file).filter(
      (i) => !same(i.box, this.own) && !(label.kind === "global" && i.what === pageRefsWhat(label.text)),
    );
    this.page = pageArea(file);
  }

  /** The label's box with `chars` characters at `at`, reading along `rotation` (see `labelBox`). */
  box(at: PointIu, chars: number, rotation = this.label.rotation): Box {
    return labelBox(at, chars, rotation, this.label.kind !== "local", fontSize(this.label.node));
  }

  /**
   * What a label of `chars` characters at `at`, reading along `rotation`, runs over. The wire
   * it sits on is no obstacle as the designer drew it; any other wire through `at` is one only
   * where it goes on in the direction the label reads (a label at a wire's end reading away
   * from it is how a label is drawn).
   */
  blockers(at: PointIu, chars: number, rotation: number): string[] {
    const box = this.box(at, chars, rotation);
    const turned = rotation !== this.label.rotation;
    const reads = readingDirection(rotation);
    const ahead = { x: at.x + reads.x, y: at.y + reads.y };
    const harmless = this.file.wires
      .filter(
        (w) => onSegment(at, w.a, w.b, 0) && ((!turned && this.wires.includes(w)) || !onSegment(ahead, w.a, w.b, 0)),
      )
      .map(lineBox);
    const found = this.others
      .filter((i) => intersects(box, i.box) && !(i.what === "wire" && harmless.some((w) => same(w, i.box))))
      .map(describeItem);
    if (!inside(box, this.page.area)) found.push("the page frame");
    if (intersects(box, this.page.titleBlock)) found.push("the title block");
    return found;
  }

  /**
   * The free end the label sits at (or, with `at`, the one at that end of its wire), when it is
   * one: the end of its wire with nothing else attached (no other wire, pin, junction, sheet pin
   * or bus entry), or a pin with nothing but the label on it. Its wiring can be lengthened from
   * there. Otherwise why not, for an error to say.
   */
  freeEnd(at: PointIu = this.label.at): FreeEnd | string {
    const f = this.file;
    const wire = this.wires.find((w) => samePoint(w.a, at) || samePoint(w.b, at));
    if (!wire && this.wires.length > 0) return "the label sits along its wire, not at an end of it";
    const pins = f.symbols.flatMap((s) =>
      unitPins(s, s.unit)
        .filter((p) => samePoint(placePoint(p.at, s.placement), at))
        .map((p) => placeDirection(pinOutwardLib(p.orientation), s.placement)),
    );
    const others = [
      ...f.wires.filter((w) => w !== wire && onSegment(at, w.a, w.b, 0)).map(() => "another wire"),
      ...f.junctions.filter((j) => samePoint(j.at, at)).map(() => "a junction"),
      ...pins.slice(wire ? 0 : 1).map(() => "a pin"),
      ...f.sheets.filter((s) => s.pins.some((p) => samePoint(p.at, at))).map(() => "a sheet pin"),
      ...f.busEntries.filter((e) => samePoint(e.at, at) || samePoint(e.end, at)).map(() => "a bus entry"),
    ];
    if (!wire && pins.length === 0) return "the label sits on no wire or pin";
    if (others.length > 0)
      return `its ${wire ? "wire's end" : "pin"} at (${toMm(at).join(", ")}) also meets ${others[0]}`;
    if (!wire) return { end: at, out: pins[0]! };
    const other = samePoint(wire.a, at) ? wire.b : wire.a;
    return { wire, end: at, out: { x: Math.sign(at.x - other.x), y: Math.sign(at.y - other.y) } };
  }

  /**
   * What a wire lengthened from `end` to `to` would run into (the label's own box and wire
   * left out): a longer wire must cross nothing, or it would join or cover it.
   */
  extensionBlockers(end: PointIu, to: PointIu): string[] {
    const step = { x: Math.sign(to.x - end.x), y: Math.sign(to.y - end.y) };
    const start = { x: end.x + step.x, y: end.y + step.y };
    const segment = union(pointBox(start), pointBox(to));
    const found = this.others
      .filter((i) => intersects(grow1(segment), i.box) && !this.wireBoxes.some((w) => same(w, i.box)))
      .map(describeItem);
    if (!inside(segment, this.page.area)) found.push("the page frame");
    if (intersects(segment, this.page.titleBlock)) found.push("the title block");
    return found;
  }
}

/**
 * The spot `label` takes when renamed to `text` (see the module comment). Throws (before anything
 * is written) when no way is clear, naming what each way ran into.
 */
export function renamedLabelAt(file: SchematicFile, label: Label, text: string): LabelSpot {
  const room = new LabelRoom(file, label);
  const chars = text.length;
  // Strict even where the old text already ran over something: the renamed label must read clear.
  const fresh = room.blockers(label.at, chars, label.rotation);
  if (fresh.length === 0) return { at: label.at, rotation: label.rotation };
  const flipped = (label.rotation + 180) % 360;
  const turns = [flipped, (label.rotation + 90) % 360, (label.rotation + 270) % 360];
  const tried: Tried[] = [];

  for (const rotation of turns)
    if (room.blockers(label.at, chars, rotation).length === 0) return { at: label.at, rotation };
  tried.push({
    way: "turned at the same point",
    failed: `read the other way it would run over ${room.blockers(label.at, chars, flipped)[0]}, and across its wire over ${room.blockers(label.at, chars, turns[1]!)[0] ?? room.blockers(label.at, chars, turns[2]!)[0]}`,
  });

  const along = slides(label.at, room.wires, room.network);
  let nearest: string | undefined;
  for (const at of along) {
    for (const rotation of [label.rotation, ...turns]) {
      const hit = room.blockers(at, chars, rotation);
      if (hit.length === 0) return { at, rotation };
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

  const ends = room.wires.flatMap((w) => [w.a, w.b]).filter((p) => !samePoint(p, label.at));
  const endFailures: string[] = [];
  for (const at of ends) {
    for (const rotation of [label.rotation, ...turns]) {
      const hit = room.blockers(at, chars, rotation);
      if (hit.length === 0) return { at, rotation };
      if (rotation === label.rotation) endFailures.push(`at (${toMm(at).join(", ")}) it would run over ${hit[0]}`);
    }
  }
  tried.push({
    way: "moving to its wire's other end",
    failed: ends.length === 0 ? "it sits on no wire" : endFailures.join("; "),
  });

  const lengthened = lengthenTo(room, chars);
  if ("spot" in lengthened) return lengthened.spot;
  tried.push({ way: `lengthening its wire's free end by up to ${MAX_LENGTHEN_MM} mm`, failed: lengthened.failed });

  const stubbed = stubTo(room, chars, [label.at, ...along].slice(0, STUB_SPOTS));
  if ("spot" in stubbed) return stubbed.spot;
  tried.push({
    way: `a new stub of up to ${MAX_STUB_MM} mm off its wiring, the label at its end`,
    failed: stubbed.failed,
  });

  throw new CopperheadError(
    "edit_conflict",
    `Renaming label ${label.text} at (${toMm(label.at).join(", ")}) to ${text} would run it over ${fresh.join("; ")}. Tried, least change first: ${tried.map((t) => `${t.way}: ${t.failed}`).join(". ")}. Nothing was renamed.`,
    {
      fix: "Pick a shorter name; or move the label yourself with move_label (to a spot on its wire, or beyond its wire's free end, which lengthens the wire) or make room (move_symbol the part it runs into), then retry.",
      label: label.text,
      blockers: fresh,
      tried: tried.map((t) => t.way),
    },
  );
}

/**
 * The nearest spot beyond a free end of the label's wire (the one it sits at first, then its
 * wire's others: the label moves out to it), on the grid and in the wire's direction, where the
 * lengthened wire crosses nothing and the label reads clear.
 */
function lengthenTo(room: LabelRoom, chars: number): { spot: LabelSpot } | { failed: string } {
  const at = room.label.at;
  const others = room.wires.flatMap((w) => [w.a, w.b]).filter((p) => !samePoint(p, at));
  // A label along its wire, not at an end of it, is lengthened from the wire's ends alone.
  const along = others.length > 0 && !room.wires.some((w) => samePoint(w.a, at) || samePoint(w.b, at));
  const failed: string[] = [];
  for (const end of along ? others : [at, ...others]) {
    const free = room.freeEnd(end);
    const found = typeof free === "string" ? { failed: free } : lengthenFrom(room, chars, free);
    if ("spot" in found) return found;
    failed.push(found.failed);
  }
  return { failed: failed.join("; ") };
}

/** `lengthenTo` from one free end. */
function lengthenFrom(room: LabelRoom, chars: number, free: FreeEnd): { spot: LabelSpot } | { failed: string } {
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
      const hit = room.blockers(to, chars, rotation);
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
function stubTo(room: LabelRoom, chars: number, points: PointIu[]): { spot: LabelSpot } | { failed: string } {
  const f = room.file;
  const label = room.label;
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
          if (intersects(room.box(to, chars, rotation), stub)) continue;
          const hit = room.blockers(to, chars, rotation);
          if (hit.length === 0) return { spot: { at: to, rotation, stub: { wire, from } } };
          nearest ??= `at the end of a stub from (${toMm(from).join(", ")}) it would run over ${hit[0]}`;
        }
      }
    }
  }
  return { failed: nearest ?? "no point inside its wires is free of other connections" };
}

/** Changes `label` to read `text` at `spot`, lengthening its wire or drawing its new stub when the spot says so. */
export function placeLabel(file: SchematicFile, label: Label, spot: LabelSpot): void {
  const lengthen = spot.lengthen;
  if (lengthen?.wire) moveWireEnd(lengthen.wire, lengthen.end, lengthen.to);
  else if (lengthen) insertItem(file, lineNode("wire", toMm(lengthen.end), toMm(lengthen.to), file.newUuid()));
  if (spot.stub) {
    const { wire, from } = spot.stub;
    // A stub's end on the middle of a wire is a T: the wire is broken there and a junction marks it, as eeschema draws one.
    splitWiresAt(file, { linesThrough: () => [wire] }, from);
    insertItem(file, lineNode("wire", toMm(from), toMm(spot.at), file.newUuid()));
    insertItem(file, junctionNode(toMm(from), file.newUuid()));
  }
  if (!samePoint(spot.at, label.at)) shiftNode(label.node, { x: spot.at.x - label.at.x, y: spot.at.y - label.at.y });
  if (spot.rotation !== label.rotation) turnLabel(label.node, spot.rotation);
  if (label.kind === "global") placeIntersheetRefs(label.node, spot);
}

/**
 * Puts a global label's page references just past its flag's far end, reading the label's way,
 * as KiCad places them when it lays the label's fields out. KiCad draws the field where the file
 * says, so a field left where the old, shorter name ended would be drawn across the new one.
 */
function placeIntersheetRefs(node: SList, spot: LabelSpot): void {
  const field = pageRefsField(node);
  const at = field && child(field, "at");
  if (!at) return;
  const end = pageRefsAnchor(spot.at, (text(node, 1) ?? "").length, spot.rotation, fontSize(node));
  setAtom(at, 1, toMm(end)[0]);
  setAtom(at, 2, toMm(end)[1]);
  setAtom(at, 3, spot.rotation % 180);
  const justify = child(child(field, "effects") ?? field, "justify");
  if (justify) setAtom(justify, 1, spot.rotation === 180 || spot.rotation === 270 ? "right" : "left");
}

/** Moves the end of `wire` at `end` to `to`. */
function moveWireEnd(wire: Line, end: PointIu, to: PointIu): void {
  const xy = (child(wire.node, "pts")?.items ?? []).filter((i): i is SList => i.type === "list");
  const index = samePoint(wire.a, end) ? 0 : 1;
  const node = xy[index]!;
  setAtom(node, 1, toMm(to)[0]);
  setAtom(node, 2, toMm(to)[1]);
}

/** Turns a label to read along `rotation`, justified as KiCad justifies a label at that angle. */
function turnLabel(node: SList, rotation: number): void {
  setAtom(child(node, "at")!, 3, rotation);
  const justify = child(child(node, "effects") ?? node, "justify");
  if (justify) setAtom(justify, 1, rotation === 180 || rotation === 270 ? "right" : "left");
}

function lineBox(line: Pick<Line, "a" | "b">): Box {
  return union(pointBox(line.a), pointBox(line.b));
}

function same(a: Box, b: Box): boolean {
  return a.x0 === b.x0 && a.y0 === b.y0 && a.x1 === b.x1 && a.y1 === b.y1;
}

/** A thin segment's box, one IU wider each way, so boxes it only touches along their edge count. */
function grow1(b: Box): Box {
  return { x0: b.x0 - 1, y0: b.y0 - 1, x1: b.x1 + 1, y1: b.y1 + 1 };
}

/** The screen direction a label at `rotation` reads in (Y down). */
function readingDirection(rotation: number): PointIu {
  return [
    { x: 1, y: 0 },
    { x: 0, y: -1 },
    { x: -1, y: 0 },
    { x: 0, y: 1 },
  ][(((rotation / 90) % 4) + 4) % 4]!;
}

/**
 * Spots a label can slide to, nearest first (`at` itself left out): along the wires through
 * `at` on the label grid from `at`, then along the rest of the wiring joined to them, on the
 * grid from each wire's start. At most `MAX_SPOTS` are looked at, so a sheet with a long bus of
 * wiring stays quick.
 */
function slides(at: PointIu, own: Line[], network: Line[]): PointIu[] {
  const points: { p: PointIu; d: number }[] = [];
  const seen = new Set<string>([`${at.x},${at.y}`]);
  const add = (p: PointIu) => {
    const key = `${p.x},${p.y}`;
    if (!seen.has(key)) points.push({ p, d: Math.abs(p.x - at.x) + Math.abs(p.y - at.y) });
    seen.add(key);
  };
  for (const { a, b } of own) {
    const step = { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
    const length = Math.abs(b.x - a.x) + Math.abs(b.y - a.y);
    for (let k = -Math.floor(length / STEP); k <= Math.floor(length / STEP); k++) {
      const p = { x: at.x + step.x * k * STEP, y: at.y + step.y * k * STEP };
      if (onSegment(p, a, b, 0)) add(p);
    }
  }
  for (const { a, b } of network) {
    if (own.some((w) => w.a === a && w.b === b)) continue;
    const step = { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
    if (step.x !== 0 && step.y !== 0) continue;
    const length = Math.abs(b.x - a.x) + Math.abs(b.y - a.y);
    for (let k = 0; k <= Math.floor(length / STEP); k++)
      add({ x: a.x + step.x * k * STEP, y: a.y + step.y * k * STEP });
  }
  return points
    .sort((x, y) => x.d - y.d)
    .slice(0, MAX_SPOTS)
    .map((x) => x.p);
}

/** The wires joined to `start` through their ends (a wire end on another wire, or two ends meeting), `start` included. */
function joinedWires(wires: Line[], start: Line[]): Line[] {
  const found = new Set(start);
  const queue = [...start];
  while (queue.length > 0) {
    const w = queue.pop()!;
    for (const other of wires) {
      if (found.has(other)) continue;
      const touches =
        [other.a, other.b].some((p) => onSegment(p, w.a, w.b, 0)) ||
        [w.a, w.b].some((p) => onSegment(p, other.a, other.b, 0));
      if (touches) {
        found.add(other);
        queue.push(other);
      }
    }
  }
  return [...found];
}
