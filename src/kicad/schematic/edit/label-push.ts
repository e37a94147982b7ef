/**
 * Room for a label made by pushing what lies ahead of it further the way it reads, as a designer
 * opens a gap on a crowded sheet: a cut is made across the label's line, between the label and
 * the first thing its longer name would run over, and everything beyond the cut in the band of
 * the sheet that thing and what it touches span moves the same distance; the wires and buses
 * crossing the cut along the push stretch to follow. Where what lies ahead cannot go (the page
 * ends, something lies across every cut), what lies behind the cut is pulled back instead, the
 * label with it: the part whose pin it sits on, and what that part's band holds. What moves
 * keeps its place relative to everything else that moves, so that part of the sheet reads as
 * before, a gap wider. The last way `label-ways.ts` tries, since it moves the most.
 */
import { placePoint, toIU, type PointIu } from "../geometry.ts";
import {
  describeItem,
  drawnThings,
  grow,
  intersects,
  lineBox,
  nodePoints,
  pageArea,
  type Box,
  type DrawnThing,
} from "../space.ts";
import { unitPins } from "../model/symbols.ts";
import type { Line } from "../model/sheet-items.ts";
import {
  STEP,
  mmText,
  readingDirection,
  spotAfter,
  towards,
  type LabelRoom,
  type LabelSpot,
  type Rearrangement,
} from "./label-room.ts";

/** How far what lies ahead of a label is pushed at most, mm. */
export const MAX_PUSH_MM = 25.4;
/** How many cuts are tried, nearest the first thing in the way first. */
const MAX_CUTS = 6;

/**
 * What a push moves: the things between the cut and the far cut in the band they span, the
 * wires and buses the cut crosses along the push (they stretch) and those the far cut crosses
 * (they shorten), and what it leaves.
 */
interface Push {
  moving: DrawnThing[];
  stretched: { wire: Line; end: PointIu }[];
  shortened: { wire: Line; end: PointIu }[];
  /** Wires and buses along the push across both cuts: they stay, and what moves along them must stay on them. */
  spanning: Line[];
  /** Where the far cut is, along the push (Infinity: the page's edge). */
  end: number;
}

/**
 * Room made by pushing what lies ahead of the label, or else pulling back what lies behind it
 * (see the module comment): the nearest cut that crosses only wires and buses lying along the
 * push; beyond it as little of the sheet as will do (up to a far cut with a gap beyond it that
 * takes up the push, or else everything up to the page's edge); and the least push that leaves
 * the label reading clear, with what moved landing clear, on the page and off the title block.
 */
export function openGap(room: LabelRoom, text: string): { spot: LabelSpot } | { failed: string } {
  const label = room.label;
  const dir = readingDirection(label.rotation);
  const box = room.box(label.at, text);
  const own = new Set(room.wires.map((w) => w.node));
  const things = drawnThings(room.file).filter((t) => t.node !== label.node);
  const obstacles = things.filter(
    (t) => !(t.line && own.has(t.line.node)) && t.items.some((i) => intersects(box, i.box)),
  );
  if (obstacles.length === 0) return { failed: "nothing ahead of it is in the way but the page's edge" };
  const start = along(label.at, dir);
  const nearest = obstacles.reduce((a, b) => (extent(b, dir)[0] < extent(a, dir)[0] ? b : a));
  const first = extent(nearest, dir)[0];
  const cuts: number[] = [];
  for (let c = start + STEP / 2; c < first; c += STEP) cuts.unshift(c);
  if (cuts.length === 0) return { failed: `${describeItem(nearest.items[0]!)} reaches back to the label's own place` };
  // Pushed less than the name overlaps the first thing in the way, that thing stays in the way.
  const least = Math.max(1, Math.floor((alongRange(box, dir)[1] - first) / STEP));
  const last = Math.max(...obstacles.map((t) => extent(t, dir)[1]));
  // Which side of a cut a thing is on does not change from one cut to the next: its points are worked out once.
  const known = new Map<DrawnThing, PointIu[]>();
  const points = (t: DrawnThing) => known.get(t) ?? known.set(t, placedPoints(t)).get(t)!;
  const failed: string[] = [];
  for (const back of [false, true]) {
    const way = back ? { x: -dir.x, y: -dir.y } : dir;
    const edge = alongRange(pageArea(room.file).area, way)[1];
    for (const at of cuts.slice(0, MAX_CUTS)) {
      // Measured along the way things move: a pull moves what lies behind the cut, the label with it.
      const cut = back ? -at : at;
      // Everything the name runs into moves with a push, and the label with a pull: the far cut lies beyond them.
      const near = back ? -start : last;
      const farCuts: number[] = [];
      for (let c = cut + Math.ceil((near - cut) / STEP) * STEP; c < edge; c += 2 * STEP) farCuts.push(c);
      const why = moveBeyond(room, text, things, points, {
        cut,
        farCuts,
        way,
        back,
        least,
        band: acrossRange(box, dir),
      });
      if (typeof why !== "string") return why;
      failed.push(
        `${back ? "pulling back" : "pushing"} from a cut at ${dir.x !== 0 ? "x" : "y"} ${mmText(Math.abs(at))}: ${why}`,
      );
    }
  }
  return { failed: failed.join("; ") };
}

/**
 * The least push from `cut` along `way`, to the first far cut that will do (or the page's edge),
 * that makes room; otherwise what the last one tried ran into.
 */
function moveBeyond(
  room: LabelRoom,
  text: string,
  things: DrawnThing[],
  points: (thing: DrawnThing) => PointIu[],
  {
    cut,
    farCuts,
    way,
    back,
    least,
    band,
  }: {
    cut: number;
    farCuts: number[];
    way: PointIu;
    back: boolean;
    least: number;
    band: [number, number];
  },
): { spot: LabelSpot } | string {
  let why = "";
  for (const end of [...farCuts, Infinity]) {
    const push = pushedBy(things, points, { cut, end, dir: way, band });
    if ("across" in push) {
      // What lies across the cut lies across it for every far cut beyond: the band only widens.
      if (push.at === "cut") return `${push.across} lies across it`;
      continue;
    }
    for (let k = least; k * STEP <= toIU(MAX_PUSH_MM); k++) {
      const by = { x: way.x * k * STEP, y: way.y * k * STEP };
      // A gap too narrow for this push is too narrow for a longer one.
      if (cutOff(things, push, by, way)) break;
      const result = spotAfter(room, text, pushed(push, by, way, back));
      if ("spot" in result) return result;
      why = `moved ${mmText(k * STEP)} mm ${towards(way)}, ${"blocked" in result ? result.blocked : result.failed}`;
      if ("blocked" in result) break;
    }
  }
  return why || "no gap takes it up";
}

/**
 * What a push between `cut` and `end` (along `dir`) moves, starting from the band `band` across
 * the push and widened by everything that moves, until nothing between the cuts reaches into
 * the band but what moves: a thing wholly between them that reaches into the band moves, and
 * the band takes in all it draws. A wire or bus along the push that crosses a cut stretches (the
 * cut) or shortens (the far cut), one that crosses both stays. Anything else across a cut inside
 * the band (a part, a wire across the push, a drawn outline) stops it: which, and at which cut.
 */
function pushedBy(
  things: DrawnThing[],
  points: (thing: DrawnThing) => PointIu[],
  { cut, end, dir, band }: { cut: number; end: number; dir: PointIu; band: [number, number] },
): Push | { across: string; at: "cut" | "far cut" } {
  let [lo, hi] = band;
  const push: Push = { moving: [], stretched: [], shortened: [], spanning: [], end };
  const settled = new Set<DrawnThing>();
  const side = (p: PointIu) => {
    const a = along(p, dir);
    return a < cut ? -1 : a < end ? 0 : 1;
  };
  for (let widened = true; widened; ) {
    widened = false;
    for (const thing of things) {
      if (settled.has(thing)) continue;
      const spans = thing.items.map((i) => acrossRange(i.box, dir));
      if (!spans.some(([a, b]) => a <= hi && b >= lo)) continue;
      settled.add(thing);
      const sides = new Set(points(thing).map(side));
      if (!sides.has(0)) {
        if (sides.size === 1) continue;
        if (!lying(thing.line, dir)) return { across: describeItem(thing.items[0]!), at: "far cut" };
        push.spanning.push(thing.line!);
        continue;
      }
      if (sides.size > 1) {
        const line = thing.line;
        if (!line || !lying(line, dir))
          return { across: describeItem(thing.items[0]!), at: sides.has(-1) ? "cut" : "far cut" };
        const inside = side(line.a) === 0 ? line.a : line.b;
        (sides.has(-1) ? push.stretched : push.shortened).push({ wire: line, end: inside });
        continue;
      }
      push.moving.push(thing);
      for (const [a, b] of spans) [lo, hi] = [Math.min(lo, a), Math.max(hi, b)];
      widened = true;
    }
  }
  return push;
}

/** Whether `line` is a wire or bus lying along `dir`. */
function lying(line: Line | undefined, dir: PointIu): boolean {
  return !!line && (dir.x !== 0 ? line.a.y === line.b.y : line.a.x === line.b.x);
}

/**
 * Whether pushing by `by` would cut a connection: a wire the far cut shortens left less than a
 * grid step long, or with something that stays where it is on the length cut off or where its
 * new end lands; or a wire across both cuts ending too soon to keep what moves along it on it.
 */
function cutOff(things: DrawnThing[], push: Push, by: PointIu, dir: PointIu): boolean {
  const d = Math.abs(by.x + by.y);
  const far = (line: Line) => Math.max(along(line.a, dir), along(line.b, dir));
  if (push.spanning.some((line) => far(line) < push.end + d)) return true;
  const moving = new Set(push.moving);
  return push.shortened.some(({ wire, end }) => {
    if (far(wire) < push.end + d || far(wire) - along(end, dir) - d < STEP) return true;
    const gone = lineBox({ a: { x: end.x + dir.x, y: end.y + dir.y }, b: { x: end.x + by.x, y: end.y + by.y } });
    return things.some(
      (t) => !moving.has(t) && t.line !== wire && t.items.some((i) => intersects(grow(gone, 1), i.box)),
    );
  });
}

/** The push moved by `by`, as a rearrangement of the sheet; `back` when it pulls the label back with what lies behind it. */
function pushed(push: Push, by: PointIu, dir: PointIu, back: boolean): Rearrangement {
  const move = (end: PointIu) => ({ x: end.x + by.x, y: end.y + by.y });
  const lines = push.moving.flatMap((t) => (t.line ? [t.line] : []));
  const reference = (t: DrawnThing) => t.symbol?.fields.find((f) => f.name === "Reference")?.value ?? "";
  const named = push.moving.flatMap((t) =>
    t.symbol && !reference(t).startsWith("#") ? [reference(t)] : t.sheet ? [`sheet ${t.sheet.name}`] : [],
  );
  const shown =
    named.length > 4 ? `${named.slice(0, 4).join(", ")} and ${named.length - 4} more parts` : named.join(", ");
  const wires = push.stretched.length + push.shortened.length;
  return {
    ends: [
      ...push.stretched,
      ...push.shortened,
      ...lines.flatMap((wire) => [wire.a, wire.b].map((end) => ({ wire, end }))),
    ].map(({ wire, end }) => ({ wire, end, to: move(end) })),
    shifts: push.moving.filter((t) => !t.line).map((t) => ({ node: t.node, by, items: t.items })),
    ...(back ? { label: by } : {}),
    note: `what lay ${back ? "behind" : "ahead of"} it (${shown ? `${shown}; ` : ""}${push.moving.length} items in all) ${back ? "pulled back, the label with it," : "pushed"} ${mmText(Math.abs(by.x + by.y))} mm ${towards(dir)}${wires > 0 ? `, the ${wires} wires crossing the gap made longer or shorter to match` : ""}`,
  };
}

/**
 * The points that say which side of a cut a thing is on: a part's position and pins, a sheet's
 * corners and pins, a line's or bus entry's ends, a label's anchor, every point a graphic names.
 */
function placedPoints(thing: DrawnThing): PointIu[] {
  const { symbol, sheet, line, label, entry } = thing;
  if (symbol)
    return [symbol.placement.at, ...unitPins(symbol, symbol.unit).map((p) => placePoint(p.at, symbol.placement))];
  if (sheet)
    return [sheet.at, { x: sheet.at.x + sheet.size.x, y: sheet.at.y + sheet.size.y }, ...sheet.pins.map((p) => p.at)];
  if (line) return [line.a, line.b];
  if (entry) return [entry.at, entry.end];
  if (label) return [label.at];
  return nodePoints(thing.node);
}

/** How far along `dir` a point is. */
function along(p: PointIu, dir: PointIu): number {
  return p.x * dir.x + p.y * dir.y;
}

/** Where what a thing draws starts and ends along `dir`. */
function extent(thing: DrawnThing, dir: PointIu): [number, number] {
  const ranges = thing.items.map((i) => alongRange(i.box, dir));
  return [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))];
}

/** Where a box starts and ends along `dir` (as `along` measures a point). */
function alongRange(b: Box, dir: PointIu): [number, number] {
  if (dir.x > 0) return [b.x0, b.x1];
  if (dir.x < 0) return [-b.x1, -b.x0];
  if (dir.y > 0) return [b.y0, b.y1];
  return [-b.y1, -b.y0];
}

/** Where a box starts and ends across `dir`. */
function acrossRange(b: Box, dir: PointIu): [number, number] {
  return dir.x !== 0 ? [b.y0, b.y1] : [b.x0, b.x1];
}
