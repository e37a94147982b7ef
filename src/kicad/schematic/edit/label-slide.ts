/**
 * Room for a label made by sliding what its run leads to further along the run, as a designer
 * does on a crowded row: the part or sheet at an end of the label's wire moves away from the
 * label, the wires at its pins stretched behind it and shortened ahead. Where it would run into
 * another part that can slide the same way (the other capacitor of a differential pair, the
 * next resistor of a column), the two slide together. The way `label-ways.ts` tries before
 * pushing what lies ahead (`label-push.ts`).
 */
import type { SList } from "../../sexpr/index.ts";
import { onSegment, placePoint, samePoint, toIU, type PointIu } from "../geometry.ts";
import {
  intersects,
  labelItem,
  noConnectBox,
  sheetSymbolItems,
  symbolItems,
  translate,
  type DrawnBox,
} from "../space.ts";
import { sheetResolver } from "../text-vars.ts";
import { unitPins, type PlacedSymbol } from "../model/symbols.ts";
import type { Line, SheetSymbol } from "../model/sheet-items.ts";
import {
  STEP,
  connectionPoints,
  mmText,
  spotAfter,
  towards,
  type LabelRoom,
  type LabelSpot,
  type Rearrangement,
} from "./label-room.ts";
import { toMm } from "./sheet-tree.ts";

/** How far the part or sheet at the label's wire's end slides along its run at most, mm. */
export const MAX_SLIDE_MM = 25.4;
/** How many parts slide together at most: the one the run leads to and those it would run into. */
const MAX_GROUP = 4;

/** A part or sheet that can slide along a run, and how far. */
interface SlidingBlock {
  /** As notes and errors name it: "R3", "sheet fpga-mgts". */
  name: string;
  node: SList;
  items: DrawnBox[];
  /** The wire ends at its pins, which move with it: wires behind it stretch, wires ahead shorten. */
  ends: { wire: Line; end: PointIu }[];
  /** What sits right on its pins and goes along: no-connect flags, labels, one-pin symbols such as power symbols. */
  riders: { node: SList; items: DrawnBox[] }[];
  /** How far it may slide, IU: short of anything that meets a wire ahead of it, keeping that wire a grid step long. */
  reach: number;
  /** Whether a wire ahead of it goes along whole, with its labels (see `tailOf`). */
  tails: boolean;
}

/** A part or a sheet, the two things a run can lead to. */
type Owner = { symbol: PlacedSymbol } | { sheet: SheetSymbol };

/**
 * Room made by sliding the part or sheet at an end of the label's wire further along the run (a
 * series resistor between a pin and the rest of its net, or the sheet the run enters), the
 * label's wire stretched to meet it. Every wire at its pins must lie along the run (see
 * `slidable`). The moved parts, their fields and the longer wires must land clear of everything
 * they did not already cross; a part they would land on slides along with them when it can.
 * The least slide that makes room wins.
 */
export function slideBlock(room: LabelRoom, text: string): { spot: LabelSpot } | { failed: string } {
  const found: { block: SlidingBlock; out: PointIu }[] = [];
  const whyNot: string[] = [];
  for (const wire of room.wires)
    for (const end of [wire.a, wire.b]) {
      const at = `its wire's end at (${toMm(end).join(", ")})`;
      const other = samePoint(wire.a, end) ? wire.b : wire.a;
      const out = { x: Math.sign(end.x - other.x), y: Math.sign(end.y - other.y) };
      if (out.x !== 0 && out.y !== 0) {
        whyNot.push("its wire is not horizontal or vertical");
        continue;
      }
      const owner = ownerAt(room, end);
      const block = owner ? slidable(room, owner, out) : `${at} meets no part's pin or sheet pin`;
      if (typeof block === "string") whyNot.push(block);
      else found.push({ block, out });
    }
  if (found.length === 0) return { failed: [...new Set(whyNot)].join("; ") || "it sits on no wire" };
  const failed: string[] = [];
  for (const { block, out } of found) {
    const group = [block];
    const reach = () => Math.min(toIU(MAX_SLIDE_MM), ...group.map((b) => b.reach));
    let last = "";
    let stop = "";
    for (let k = 1; k * STEP <= reach(); k++) {
      const by = { x: out.x * k * STEP, y: out.y * k * STEP };
      const result = spotAfter(room, text, slid(group, by, out));
      if ("spot" in result) return result;
      if ("blocked" in result) {
        const joining = group.length < MAX_GROUP ? companions(room, group, by, out) : [];
        if (joining.length > 0 && group.length + joining.length <= MAX_GROUP) {
          group.push(...joining);
          k--;
          continue;
        }
        stop = `slid ${mmText(k * STEP)} mm ${towards(out)}, ${result.blocked}`;
        break;
      }
      last = result.failed;
    }
    const limit = `it can slide ${mmText(reach())} mm at most`;
    failed.push(
      `${names(group)}: ${stop || limit}${last ? `${stop ? ", and short of that" : ", and there"} ${last}` : ""}`,
    );
  }
  return { failed: failed.join("; ") };
}

/** The group slid by `by`, as a rearrangement of the sheet. */
function slid(group: SlidingBlock[], by: PointIu, out: PointIu): Rearrangement {
  return {
    ends: group.flatMap((b) =>
      b.ends.map(({ wire, end }) => ({ wire, end, to: { x: end.x + by.x, y: end.y + by.y } })),
    ),
    shifts: group.flatMap((b) => [{ node: b.node, by, items: b.items }, ...b.riders.map((r) => ({ ...r, by }))]),
    note: `${names(group)} slid ${mmText(Math.abs(by.x + by.y))} mm ${towards(out)} along ${group.length > 1 ? "their runs" : "its run"}, ${group.length > 1 ? "their" : "its"} wires stretched and shortened to match${group.some((b) => b.tails) ? ", the free wires beyond going along with their labels" : ""}`,
  };
}

/** The group's names as a note says them: "C266 and C265". */
function names(group: SlidingBlock[]): string {
  const all = group.map((b) => b.name);
  return all.length > 1 ? `${all.slice(0, -1).join(", ")} and ${all.at(-1)}` : all[0]!;
}

/**
 * The parts the group, slid by `by`, would land on that can themselves slide the same way:
 * each joins the group, so a pair drawn side by side on parallel runs moves as one.
 */
function companions(room: LabelRoom, group: SlidingBlock[], by: PointIu, out: PointIu): SlidingBlock[] {
  const moving = new Set(group.flatMap((b) => [b.node, ...b.riders.map((r) => r.node)]));
  const landed = group
    .flatMap((b) => [...b.items, ...b.riders.flatMap((r) => r.items)])
    .map((i) => translate(i.box, by));
  const vars = sheetResolver(room.file);
  const joining: SlidingBlock[] = [];
  for (const symbol of room.file.symbols) {
    if (moving.has(symbol.node)) continue;
    if (!symbolItems(symbol, vars).some((i) => landed.some((box) => intersects(box, i.box)))) continue;
    const block = slidable(room, { symbol }, out);
    if (typeof block === "string") return [];
    joining.push(block);
  }
  return joining;
}

/**
 * What rides along when the wire `line` ahead of a sliding part moves whole: its far end, `far`,
 * must be free (nothing meets it but labels and a no-connect flag), and of the wire's other
 * connection points (`onIt`, the part's pin left out) only local or hierarchical labels may sit
 * anywhere on it. Those labels and the flag go with it. Undefined when the wire is not such a tail.
 */
function tailOf(room: LabelRoom, line: Line, far: PointIu, onIt: PointIu[]): SlidingBlock["riders"] | undefined {
  const atFar = room.meeting(far, [line]);
  if (atFar.wires.length + atFar.pins.length + atFar.junctions + atFar.sheetPins + atFar.busEntries > 0) return;
  const labels = room.file.labels.filter((l) => onIt.some((p) => samePoint(p, l.at)));
  if (labels.some((l) => l === room.label || l.kind === "global")) return;
  const busy = onIt.some((p) => !samePoint(p, far) && !labels.some((l) => samePoint(l.at, p)));
  if (busy) return;
  return [
    ...labels.map((l) => ({ node: l.node, items: [labelItem(l)] })),
    ...atFar.flags.map((flag) => ({
      node: flag.node,
      items: [{ box: noConnectBox(flag.at), what: "no-connect flag" }],
    })),
  ];
}

/** The part or sheet with a pin at `end`, if any. */
function ownerAt(room: LabelRoom, end: PointIu): Owner | undefined {
  const symbol = room.meeting(end).pins[0]?.symbol;
  if (symbol) return { symbol };
  const sheet = room.file.sheets.find((s) => s.pins.some((p) => samePoint(p.at, end)));
  return sheet && { sheet };
}

/**
 * `owner` as a block that can slide along `out`, when it can: nothing but one wire (or bus)
 * meets each of its pins, lying along the run (those behind it stretch, those ahead shorten,
 * and anything meeting one ahead stops the slide a grid step short), besides what sits right on
 * a pin and goes along (a no-connect flag, a local or hierarchical label, a power symbol or other
 * one-pin symbol). Otherwise why not.
 */
function slidable(room: LabelRoom, owner: Owner, out: PointIu): SlidingBlock | string {
  const f = room.file;
  const vars = sheetResolver(f);
  const symbol = "symbol" in owner ? owner.symbol : undefined;
  const block =
    "symbol" in owner
      ? {
          name: owner.symbol.fields.find((x) => x.name === "Reference")?.value ?? owner.symbol.libId,
          node: owner.symbol.node,
          items: symbolItems(owner.symbol, vars),
          pins: unitPins(owner.symbol, owner.symbol.unit).map((p) => placePoint(p.at, owner.symbol.placement)),
        }
      : {
          name: `sheet ${owner.sheet.name}`,
          node: owner.sheet.node,
          items: sheetSymbolItems(owner.sheet, vars),
          pins: owner.sheet.pins.map((p) => p.at),
        };
  const along = (p: PointIu, from: PointIu) => (p.x - from.x) * out.x + (p.y - from.y) * out.y;
  const ends: SlidingBlock["ends"] = [];
  const riders: SlidingBlock["riders"] = [];
  let reach = toIU(MAX_SLIDE_MM);
  let tails = false;
  let points: PointIu[] | undefined;
  // Stacked pins (a part's GND pins drawn on one spot) meet the same wire and riders once.
  const pins = block.pins.filter((p, i) => block.pins.findIndex((q) => samePoint(p, q)) === i);
  for (const pin of pins) {
    const meets = room.meeting(pin);
    const lines = [...meets.wires, ...f.buses.filter((b) => onSegment(pin, b.a, b.b, 0))];
    const where = `${block.name}'s pin at (${toMm(pin).join(", ")})`;
    const others = [...new Set(meets.pins.map((p) => p.symbol).filter((s) => s !== symbol))];
    const labels = meets.labels.filter((l) => l !== room.label);
    const extra = [
      ...others.filter((s) => unitPins(s, s.unit).length !== 1).map(() => "another part's pin"),
      ...(meets.junctions > 0 ? ["a junction"] : []),
      ...labels.filter((l) => l.kind === "global").map((l) => `global label ${l.text}`),
      ...(meets.sheetPins > ("sheet" in owner ? 1 : 0) ? ["another sheet pin"] : []),
      ...(meets.busEntries > 0 ? ["a bus entry"] : []),
      ...(lines.length > 1 ? ["more than one wire"] : []),
    ];
    if (extra.length > 0) return `${where} also meets ${extra[0]}`;
    riders.push(
      ...meets.flags.map((flag) => ({
        node: flag.node,
        items: [{ box: noConnectBox(flag.at), what: "no-connect flag" }],
      })),
      ...labels.map((l) => ({ node: l.node, items: [labelItem(l)] })),
      ...others.map((s) => ({ node: s.node, items: symbolItems(s, vars) })),
    );
    const line = lines[0];
    if (!line) continue;
    const far = samePoint(line.a, pin) ? line.b : samePoint(line.b, pin) ? line.a : undefined;
    if (!far) return `a wire runs on through ${where}`;
    if ((far.x - pin.x) * out.y !== 0 || (far.y - pin.y) * out.x !== 0) return `${where} meets a wire across the run`;
    ends.push({ wire: line, end: pin });
    if (along(far, pin) <= 0) continue;
    points ??= connectionPoints(f);
    const onIt = points.filter((p) => !samePoint(p, pin) && onSegment(p, line.a, line.b, 0));
    const tail = tailOf(room, line, far, onIt);
    if (tail) {
      // The row's tail: a wire ahead ending free, only labels on it, goes along whole with them.
      ends.push({ wire: line, end: far });
      riders.push(...tail);
      tails = true;
      continue;
    }
    // A wire ahead shortens; anything meeting it stops the slide a grid step short.
    reach = Math.min(reach, ...[far, ...onIt].map((p) => along(p, pin) - STEP));
  }
  if (reach < STEP)
    return `${block.name} has no room to slide: a wire ahead of it is a grid step long or meets something at once`;
  return { name: block.name, node: block.node, items: block.items, ends, riders, reach, tails };
}
