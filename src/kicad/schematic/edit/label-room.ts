/**
 * What stands around a label that must make room for a longer name, and how a chosen spot is
 * drawn. `LabelRoom` answers whether the label reads clear at a spot: its text crossing no other
 * item, on the page, off the title block. It can also answer for the sheet as a way of making
 * room would leave it (`Rearrangement`: a part or sheet slid along its run, a no-connect flag
 * carried out with its wire's end, what lies ahead pushed). `label-ways.ts` tries the ways in
 * turn; `move_label` checks a spot the model picks by the same rules (`LabelRoom.blockers`).
 */
import { child, setAtom, text, type SList } from "../../sexpr/index.ts";
import { onSegment, placePoint, samePoint, toIU, type PointIu } from "../geometry.ts";
import {
  describeItem,
  fontSize,
  inside,
  intersects,
  labelBox,
  lineBox,
  occupiedItems,
  pageArea,
  pageRefsAnchor,
  pageRefsField,
  pageRefsWhat,
  pinOutwardLib,
  placeDirection,
  pointBox,
  translate,
  union,
  type Box,
  type DrawnBox,
} from "../space.ts";
import { unitPins, type PlacedSymbol } from "../model/symbols.ts";
import type { Label, Line, Marker } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { junctionNode, lineNode } from "../item-nodes.ts";
import { insertItem, moveWireEnd, shiftNode, splitWiresAt, toMm } from "./sheet-tree.ts";

/** Steps a label slides along its wire (the half grid KiCad snaps labels to). */
export const STEP = toIU(1.27);
/** How many spots along its wiring a label tries at most. */
const MAX_SPOTS = 400;

/**
 * A change to the rest of the sheet that makes room for a label, made with the rename: wire ends
 * moved (a run stretched or shortened, a free end lengthened) and items moved whole (a part or
 * sheet slid along its run with its fields, a no-connect flag carried out with its wire's end,
 * everything beyond a cut pushed along).
 */
export interface Rearrangement {
  ends: { wire: Line; end: PointIu; to: PointIu }[];
  /** How far the label itself goes along with what moves (pulled back with the part it sits on), if it does. */
  label?: PointIu;
  /** Each moved item's node, how far, and its boxes as drawn now. */
  shifts: { node: SList; by: PointIu; items: DrawnBox[] }[];
  /** What moved, for the rename to report. */
  note: string;
}

/**
 * Where a label goes: its anchor and angle, and, when its wire is lengthened, the end moved out
 * to meet it (`wire` undefined: a label sitting on a pin gets a new stub from the pin); or,
 * when it goes on a new stub, the wire the stub leaves and where it leaves it; or the
 * rearrangement of the sheet that makes its room.
 */
export interface LabelSpot {
  at: PointIu;
  rotation: number;
  lengthen?: { wire?: Line; end: PointIu; to: PointIu };
  stub?: { wire: Line; from: PointIu };
  rearranged?: Rearrangement;
}

/**
 * The free end of a label's wiring: the wire's end it sits at, or the pin it sits on, and the
 * way out from it; `flag` when a no-connect flag sits on that end (it goes out with the end).
 */
export interface FreeEnd {
  wire?: Line;
  end: PointIu;
  out: PointIu;
  flag?: Marker;
}

/** What meets the sheet at a point, besides the wires in `except`. */
export interface Meeting {
  wires: Line[];
  pins: { symbol: PlacedSymbol; number: string; out: PointIu }[];
  junctions: number;
  labels: Label[];
  flags: Marker[];
  sheetPins: number;
  busEntries: number;
}

/**
 * What stands around one label on its sheet: every other drawn item, the wires it sits on, and
 * the page. Answers whether the label, with some text, is readable at a spot.
 */
export class LabelRoom {
  /** The sheet's wires, as the rearrangement leaves them (a moved end makes a new `Line` on the same node). */
  readonly sheetWires: Line[];
  readonly wires: Line[];
  /** Every wire joined to the label's own, through wire ends (the net's wiring it can slide along). */
  readonly network: Line[];
  private readonly others: DrawnBox[];
  /** The boxes the rearrangement put down: moved items and moved wires. */
  private readonly moved = new Set<DrawnBox>();
  private readonly wireBoxes: Box[];
  private readonly page: { area: Box; titleBlock: Box };
  private readonly own: Box;
  /** Wires the rearrangement moves whole (both ends), as drawn and where they land. */
  private readonly wholeLines: { before: Line; after: Line; what: string }[];
  /** `heldEnd`, once worked out (null: none). */
  private held?: (FreeEnd & { wire: Line }) | null;
  /** Where the label stands as the rearrangement leaves it. */
  readonly at: PointIu;

  /**
   * `drawn`: the sheet as it is (`occupiedItems`), kept so that a room for a rearrangement of
   * the same sheet (`rearrangedFor`) reads it once.
   */
  constructor(
    readonly file: SchematicFile,
    readonly label: Label,
    readonly rearranged?: Rearrangement,
    readonly drawn: DrawnBox[] = occupiedItems(file),
  ) {
    // As `occupiedItems` boxes it, so the label is not taken for one of its own obstacles.
    this.own = labelBox(label.at, label.text, label.rotation, label.kind !== "local", fontSize(label.node));
    const by = rearranged?.label ?? { x: 0, y: 0 };
    this.at = { x: label.at.x + by.x, y: label.at.y + by.y };
    const ends = rearranged?.ends ?? [];
    const moveEnds = (w: Line) =>
      ends
        .filter((e) => e.wire === w)
        // Which end moves is told by the wire as drawn: a wire moved whole has both ends listed.
        .reduce((line, e) => (samePoint(w.a, e.end) ? { ...line, a: e.to } : { ...line, b: e.to }), w as Line);
    this.sheetWires = file.wires.map(moveEnds);
    // A sheet slid along its run stretches the buses at its pins as well as the wires.
    const movedLines = [...new Set(ends.map((e) => e.wire))].map((w) => ({
      before: w,
      after: moveEnds(w),
      what: file.buses.includes(w) ? "bus" : "wire",
    }));
    this.wholeLines = movedLines.filter((l) => ends.filter((e) => e.wire === l.before).length > 1);
    // The wires it sits on as drawn, as the rearrangement leaves them: where a pull carries the
    // label along, another wire through its new place is not its own but one it would join.
    this.wires = this.sheetWires.filter((_, i) => onSegment(label.at, file.wires[i]!.a, file.wires[i]!.b, 0));
    this.wireBoxes = this.wires.map(lineBox);
    this.network = joinedWires(this.sheetWires, this.wires);
    // What moves leaves its old place: the moved items' boxes, and the old boxes of moved wires.
    const leaving = [
      ...(rearranged?.shifts ?? []).flatMap((s) => s.items),
      ...movedLines.map((l) => ({ box: lineBox(l.before), what: l.what })),
    ];
    const left = (i: DrawnBox) => leaving.some((l) => l.what === i.what && same(l.box, i.box));
    const arriving = [
      ...(rearranged?.shifts ?? []).flatMap((s) => s.items.map((i) => ({ ...i, box: translate(i.box, s.by) }))),
      ...movedLines.map((l) => ({ box: lineBox(l.after), what: l.what })),
    ];
    for (const item of arriving) this.moved.add(item);
    // Its page references go with it (`placeIntersheetRefs`).
    this.others = [
      ...drawn.filter(
        (i) => !same(i.box, this.own) && !(label.kind === "global" && i.what === pageRefsWhat(label.text)) && !left(i),
      ),
      ...arriving,
    ];
    this.page = pageArea(file);
  }

  /** The label's box reading `content` at `at`, along `rotation` (see `labelBox`). */
  box(at: PointIu, content: string, rotation = this.label.rotation): Box {
    return labelBox(at, content, rotation, this.label.kind !== "local", fontSize(this.label.node));
  }

  /**
   * What the label reading `content` at `at`, along `rotation`, runs over. The wire
   * it sits on is no obstacle as the designer drew it; any other wire through `at` is one only
   * where it goes on in the direction the label reads (a label at a wire's end reading away
   * from it is how a label is drawn).
   */
  blockers(at: PointIu, content: string, rotation: number): string[] {
    const box = this.box(at, content, rotation);
    const turned = rotation !== this.label.rotation;
    const reads = readingDirection(rotation);
    const ahead = { x: at.x + reads.x, y: at.y + reads.y };
    const harmless = this.sheetWires
      .filter(
        (w) => onSegment(at, w.a, w.b, 0) && ((!turned && this.wires.includes(w)) || !onSegment(ahead, w.a, w.b, 0)),
      )
      .map(lineBox);
    const found = this.others
      .filter((i) => intersects(box, i.box) && !(i.what === "wire" && harmless.some((w) => same(w, i.box))))
      .map(describeItem);
    return [...this.joined(at), ...found, ...this.offPage(box)];
  }

  /**
   * The wires a label moved to `at` would join to its net: each that passes through `at`
   * without meeting the label's wiring there (two wires crossing, no junction). A label joins
   * every wire through its anchor, so it would merge the two nets. Where the label is drawn,
   * what it joins is the design's own; carried elsewhere by a rearrangement, it is not.
   */
  private joined(at: PointIu): string[] {
    const asDrawn = samePoint(at, this.label.at) && samePoint(this.at, this.label.at);
    if (asDrawn || this.file.junctions.some((j) => samePoint(j.at, at))) return [];
    return this.sheetWires
      .filter((w) => !this.network.includes(w) && onSegment(at, w.a, w.b, 0))
      .map((w) => `${describeItem({ box: lineBox(w), what: "wire" })}, crossing its wire there, which it would join`);
  }

  /**
   * What meets the sheet at `at` besides the wires in `except`: other wires through it, symbol
   * pins (with the way each points out), junctions, labels, no-connect flags, sheet pins and
   * bus entries.
   */
  meeting(at: PointIu, except: Line[] = []): Meeting {
    const f = this.file;
    return {
      wires: this.sheetWires.filter((w) => !except.includes(w) && onSegment(at, w.a, w.b, 0)),
      pins: f.symbols.flatMap((symbol) =>
        unitPins(symbol, symbol.unit)
          .filter((p) => samePoint(placePoint(p.at, symbol.placement), at))
          .map((p) => ({
            symbol,
            number: p.number,
            out: placeDirection(pinOutwardLib(p.orientation), symbol.placement),
          })),
      ),
      junctions: f.junctions.filter((j) => samePoint(j.at, at)).length,
      labels: f.labels.filter((l) => samePoint(l.at, at)),
      flags: f.noConnects.filter((n) => samePoint(n.at, at)),
      sheetPins: f.sheets.filter((s) => s.pins.some((p) => samePoint(p.at, at))).length,
      busEntries: f.busEntries.filter((e) => samePoint(e.at, at) || samePoint(e.end, at)).length,
    };
  }

  /**
   * The free end the label sits at (or, with `at`, the one at that end of its wire), when it is
   * one: the end of its wire with nothing else attached (no other wire, pin, junction, sheet pin
   * or bus entry; a no-connect flag goes out with it), or a pin with nothing but the label on
   * it. Its wiring can be lengthened from there. Otherwise why not, for an error to say.
   */
  freeEnd(at: PointIu = this.at): FreeEnd | string {
    const wire = this.wires.find((w) => samePoint(w.a, at) || samePoint(w.b, at));
    if (!wire && this.wires.length > 0) return "the label sits along its wire, not at an end of it";
    const meets = this.meeting(at, wire ? [wire] : []);
    const others = [
      ...meets.wires.map(() => "another wire"),
      ...Array.from({ length: meets.junctions }, () => "a junction"),
      ...meets.pins.slice(wire ? 0 : 1).map(() => "a pin"),
      ...Array.from({ length: meets.sheetPins }, () => "a sheet pin"),
      ...Array.from({ length: meets.busEntries }, () => "a bus entry"),
    ];
    if (!wire && meets.pins.length === 0) return "the label sits on no wire or pin";
    if (others.length > 0)
      return `its ${wire ? "wire's end" : "pin"} at (${toMm(at).join(", ")}) also meets ${others[0]}`;
    const flag = meets.flags[0];
    if (!wire)
      return flag
        ? `its pin at (${toMm(at).join(", ")}) carries a no-connect flag`
        : { end: at, out: meets.pins[0]!.out };
    const other = samePoint(wire.a, at) ? wire.b : wire.a;
    return {
      wire,
      end: at,
      out: { x: Math.sign(at.x - other.x), y: Math.sign(at.y - other.y) },
      ...(flag ? { flag } : {}),
    };
  }

  /**
   * The free end of its wire the label holds: the label sits at that end and nothing else meets
   * it there (no flag either), so the label is all that keeps the end from dangling, and a
   * label moved off it must take the end along (see `shortenedTo`).
   */
  heldEnd(): (FreeEnd & { wire: Line }) | undefined {
    if (this.held === undefined) {
      const free = this.freeEnd();
      this.held = typeof free !== "string" && free.wire && !free.flag ? { ...free, wire: free.wire } : null;
    }
    return this.held ?? undefined;
  }

  /**
   * How the label goes to `at` without leaving the end it holds dangling: nothing to do where
   * it holds none, or stays put; its wire shortened to `at` where `at` lies along that wire with
   * nothing meeting the part cut off; otherwise undefined (the spot is not to be taken).
   */
  shortenedTo(at: PointIu): Pick<LabelSpot, "lengthen"> | undefined {
    const held = this.heldEnd();
    if (!held || samePoint(at, this.at)) return {};
    const { wire, end } = held;
    const other = samePoint(wire.a, end) ? wire.b : wire.a;
    if (!onSegment(at, wire.a, wire.b, 0) || samePoint(at, other)) return undefined;
    const cut = connectionPoints(this.file).some(
      (p) => onSegment(p, end, at, 0) && !samePoint(p, end) && !samePoint(p, at),
    );
    return cut ? undefined : { lengthen: { wire, end, to: at } };
  }

  /**
   * What a wire lengthened from `end` to `to` would run into (the label's own box and wire, what
   * the rearrangement put down, and the items in `except` left out): a longer wire must cross
   * nothing, or it would join or cover it.
   */
  extensionBlockers(end: PointIu, to: PointIu, except: Set<DrawnBox> = new Set()): string[] {
    const step = { x: Math.sign(to.x - end.x), y: Math.sign(to.y - end.y) };
    const start = { x: end.x + step.x, y: end.y + step.y };
    const segment = union(pointBox(start), pointBox(to));
    const found = this.others
      .filter(
        (i) =>
          intersects(grow1(segment), i.box) &&
          !this.moved.has(i) &&
          !except.has(i) &&
          !this.wireBoxes.some((w) => same(w, i.box)),
      )
      .map(describeItem);
    return [...found, ...this.offPage(segment)];
  }

  /** The room around the same label on the sheet as `rearranged` leaves it. */
  rearrangedFor(rearranged: Rearrangement): LabelRoom {
    return new LabelRoom(this.file, this.label, rearranged, this.drawn);
  }

  /**
   * What the rearrangement newly runs into: each moved item where it lands (what it already
   * ran over where it was drawn does not count, nor what moved with it), each wire moved whole
   * where it lands, and each lengthened wire along its new length.
   */
  rearrangedBlockers(): string[] {
    const found: string[] = [];
    for (const shift of this.rearranged?.shifts ?? [])
      for (const item of shift.items) {
        const before = new Set(this.drawn.filter((i) => intersects(item.box, i.box)));
        const landed = translate(item.box, shift.by);
        found.push(
          ...this.others
            .filter((i) => intersects(landed, i.box) && !this.moved.has(i) && !before.has(i))
            .map((i) => `${item.what} would run over ${describeItem(i)}`),
          ...this.offPage(landed).map((p) => `${item.what} would run over ${p}`),
        );
      }
    for (const line of this.wholeLines) {
      const before = this.crossedBy(line.before);
      const landed = grow1(lineBox(line.after));
      found.push(
        ...this.others
          .filter((i) => intersects(landed, i.box) && !this.moved.has(i) && !before.has(i))
          .map((i) => `a ${line.what} moved along would run into ${describeItem(i)}`),
      );
    }
    for (const { wire, end, to } of this.rearranged?.ends ?? []) {
      if (this.wholeLines.some((l) => l.before === wire)) continue;
      const other = samePoint(wire.a, end) ? wire.b : wire.a;
      const longer =
        Math.abs(to.x - other.x) + Math.abs(to.y - other.y) > Math.abs(end.x - other.x) + Math.abs(end.y - other.y);
      if (!longer) continue;
      found.push(
        ...this.extensionBlockers(end, to, this.crossedBy(wire)).map((b) => `the longer wire would run into ${b}`),
      );
    }
    return found;
  }

  /** What `line` already runs into as drawn (a label standing on it): moved or lengthened, it does not count again. */
  private crossedBy(line: Line): Set<DrawnBox> {
    return new Set(this.drawn.filter((i) => intersects(grow1(lineBox(line)), i.box)));
  }

  private offPage(box: Box): string[] {
    return [
      ...(inside(box, this.page.area) ? [] : ["the page frame"]),
      ...(intersects(box, this.page.titleBlock) ? ["the title block"] : []),
    ];
  }
}

/**
 * Spots a label can slide to, nearest first (`at` itself left out): along the wires through
 * `at` on the label grid from `at`, then along the rest of the wiring joined to them, on the
 * grid from each wire's start. At most `MAX_SPOTS` are looked at, so a sheet with a long bus of
 * wiring stays quick.
 */
export function slides(at: PointIu, own: Line[], network: Line[]): PointIu[] {
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

/** Every point where something can meet a wire: wire ends, pins, junctions, labels, flags, sheet pins and bus entries. */
export function connectionPoints(file: SchematicFile): PointIu[] {
  return [
    ...file.wires.flatMap((w) => [w.a, w.b]),
    ...file.symbols.flatMap((s) => unitPins(s, s.unit).map((p) => placePoint(p.at, s.placement))),
    ...file.junctions.map((j) => j.at),
    ...file.labels.map((l) => l.at),
    ...file.noConnects.map((n) => n.at),
    ...file.sheets.flatMap((s) => s.pins.map((p) => p.at)),
    ...file.busEntries.flatMap((e) => [e.at, e.end]),
  ];
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

/** Changes `label` to read `text` at `spot`, lengthening its wire, drawing its new stub or rearranging the sheet when the spot says so. */
export function placeLabel(file: SchematicFile, label: Label, spot: LabelSpot): void {
  for (const { wire, end, to } of spot.rearranged?.ends ?? []) moveWireEnd(wire, end, to);
  for (const { node, by } of spot.rearranged?.shifts ?? []) shiftNode(node, by);
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
  const end = pageRefsAnchor(spot.at, text(node, 1) ?? "", spot.rotation, fontSize(node));
  setAtom(at, 1, toMm(end)[0]);
  setAtom(at, 2, toMm(end)[1]);
  setAtom(at, 3, spot.rotation % 180);
  const justify = child(child(field, "effects") ?? field, "justify");
  if (justify) setAtom(justify, 1, spot.rotation === 180 || spot.rotation === 270 ? "right" : "left");
}

/** Turns a label to read along `rotation`, justified as KiCad justifies a label at that angle. */
function turnLabel(node: SList, rotation: number): void {
  setAtom(child(node, "at")!, 3, rotation);
  const justify = child(child(node, "effects") ?? node, "justify");
  if (justify) setAtom(justify, 1, rotation === 180 || rotation === 270 ? "right" : "left");
}

function same(a: Box, b: Box): boolean {
  return a.x0 === b.x0 && a.y0 === b.y0 && a.x1 === b.x1 && a.y1 === b.y1;
}

/** A thin segment's box, one IU wider each way, so boxes it only touches along their edge count. */
function grow1(b: Box): Box {
  return { x0: b.x0 - 1, y0: b.y0 - 1, x1: b.x1 + 1, y1: b.y1 + 1 };
}

/** The screen direction a label at `rotation` reads in (Y down). */
export function readingDirection(rotation: number): PointIu {
  return [
    { x: 1, y: 0 },
    { x: 0, y: -1 },
    { x: -1, y: 0 },
    { x: 0, y: 1 },
  ][(((rotation / 90) % 4) + 4) % 4]!;
}

/**
 * The room a rearrangement makes: the nearest spot along the label's own wires, as the
 * rearrangement leaves them, where the label reads clear, if what moved lands clear. `blocked`
 * says what the rearrangement itself runs into; `failed` what the label still would.
 */
export function spotAfter(
  base: LabelRoom,
  text: string,
  rearranged: Rearrangement,
): { spot: LabelSpot } | { blocked: string } | { failed: string } {
  const label = base.label;
  const room = base.rearrangedFor(rearranged);
  const blocked = room.rearrangedBlockers();
  if (blocked.length > 0) return { blocked: blocked[0]! };
  const turns = [0, 90, 180, 270].filter((r) => r !== label.rotation);
  const along = room.heldEnd() ? [] : slides(room.at, room.wires, room.wires);
  for (const at of [room.at, ...along])
    for (const rotation of [label.rotation, ...turns])
      if (room.blockers(at, text, rotation).length === 0) return { spot: { at, rotation, rearranged } };
  return { failed: `the label would still run over ${room.blockers(room.at, text, label.rotation)[0]}` };
}

/** The screen direction a unit vector points (Y down), as a note says it. */
export function towards(d: PointIu): string {
  return d.x > 0 ? "right" : d.x < 0 ? "left" : d.y > 0 ? "down" : "up";
}

/** IU as mm, to the hundredth. */
export function mmText(iu: number): string {
  return (iu / 10_000).toFixed(2);
}
