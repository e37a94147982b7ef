/**
 * Geometric connectivity inside one sheet instance: which wires, labels, pins, sheet pins,
 * junctions and no-connect flags touch, grouped the way eeschema's CONNECTION_GRAPH builds its
 * per-sheet subgraphs (before any naming, label merging or hierarchy).
 *
 * The rules follow KiCad 9.0 as loaded by kicad-cli (measured against 9.0.8):
 * - items connect where their connection points coincide exactly (wire and bus ends, pin tips,
 *   label anchors, sheet pins, bus-entry ends, junctions, no-connect flags); a wire end or a
 *   pin landing mid-way along a wire does NOT connect;
 * - kicad-cli's load-time cleanup "breaks" wires and buses at junctions and bus-entry ends,
 *   but without an editor frame the second half of each broken line is never added back: the
 *   line is cut short at that point and its far part is lost (see `effectiveLines`). Its
 *   merging of overlapping collinear lines is lost the same way, so overlaps do not connect;
 * - a label (or sheet pin) that touches no pin, label or flag attaches to the bus, else the
 *   wire, it sits on anywhere along the segment; a label sitting on two or more lines joins
 *   them all;
 * - no-connect-type pins connect to nothing; bus entries never join the bus itself (the bus to
 *   net change happens by name), and wires do not join buses.
 */
import type { SheetInstance } from "./model/hierarchy.ts";
import type { SheetPin, SheetSymbol } from "./model/sheet-items.ts";
import type { Label, Line } from "./model/sheet-items.ts";
import {
  effectivePin,
  symbolInstance,
  unitPins,
  type LibPin,
  type PinElectricalType,
  type PlacedSymbol,
} from "./model/symbols.ts";
import { insideSegment, onSegment, placePoint, pointKey, SegmentIndex, type PointIu } from "./geometry.ts";

export interface PlacedPin {
  symbol: PlacedSymbol;
  lib: LibPin;
  reference: string;
  unit: number;
  /** Shown name (alternate applied, `~` → empty) and electrical type. */
  name: string;
  type: PinElectricalType;
  at: PointIu;
}

export type ConnItem =
  | { kind: "wire" | "bus"; line: Line; points: PointIu[] }
  | { kind: "busEntry"; points: PointIu[] }
  | { kind: "junction" | "noConnect"; points: PointIu[] }
  | { kind: "label"; label: Label; points: PointIu[] }
  | { kind: "sheetPin"; sheet: SheetSymbol; pin: SheetPin; points: PointIu[] }
  | { kind: "pin"; pin: PlacedPin; points: PointIu[] };

/**
 * The connected subgraphs (lists of items) of every sheet instance of a project. Instances of
 * one sheet file share their geometry, so a file is grouped once and its groups are handed to
 * each instance with that instance's references; only an instance that places a different
 * unit of some symbol is grouped on its own.
 */
export function sheetSubgraphs(
  instances: readonly SheetInstance[],
  projectName?: string,
): Map<SheetInstance, ConnItem[][]> {
  const templates = new Map<string, number[][]>();
  const out = new Map<SheetInstance, ConnItem[][]>();
  for (const instance of instances) {
    const items = collectItems(instance, projectName);
    const units = items.flatMap((item) => (item.kind === "pin" ? [item.pin.unit] : [])).join(",");
    const key = `${instance.file.path}\u0000${units}`;
    let groups = templates.get(key);
    if (!groups) {
      groups = groupIndices(items);
      templates.set(key, groups);
    }
    out.set(
      instance,
      groups.map((group) => group.map((i) => items[i]!)),
    );
  }
  return out;
}

/** Every connectable item of a sheet instance, with its connection points. */
export function collectItems(instance: SheetInstance, projectName?: string): ConnItem[] {
  const file = instance.file;
  const items: ConnItem[] = [];
  for (const line of effectiveLines(instance)) items.push({ kind: line.kind, line, points: [line.a, line.b] });
  for (const entry of file.busEntries) items.push({ kind: "busEntry", points: [entry.at, entry.end] });
  for (const j of file.junctions) items.push({ kind: "junction", points: [j.at] });
  for (const nc of file.noConnects) items.push({ kind: "noConnect", points: [nc.at] });
  for (const label of file.labels) items.push({ kind: "label", label, points: [label.at] });
  for (const sheet of file.sheets) {
    for (const pin of sheet.pins) items.push({ kind: "sheetPin", sheet, pin, points: [pin.at] });
  }
  for (const symbol of file.symbols) {
    const { reference, unit } = symbolInstance(symbol, instance.path, projectName);
    for (const lib of unitPins(symbol, unit)) {
      const at = placePoint(lib.at, symbol.placement);
      const { name, type } = effectivePin(symbol, lib);
      items.push({ kind: "pin", pin: { symbol, lib, reference, unit, name, type, at }, points: [at] });
    }
  }
  return items;
}

/**
 * Wires and buses as kicad-cli 9.0 sees them after its load-time cleanup.
 *
 * SCHEMATIC::BreakSegmentsOnJunctions visits every junction and bus-entry end (a
 * `std::set<VECTOR2I>`, whose `operator<` compares squared distances from the origin, so points
 * at equal distance count once) in that order, and for each line the point lies strictly
 * inside, moves the line's end to the point. The new segment for the rest of the line only
 * reaches the screen through an editor frame, which kicad-cli does not have.
 */
export function effectiveLines(instance: SheetInstance): (Line & { kind: "wire" | "bus" })[] {
  const file = instance.file;
  const lines = [
    ...file.wires.map((l) => ({ ...l, kind: "wire" as const })),
    ...file.buses.map((l) => ({ ...l, kind: "bus" as const })),
  ];
  const points: PointIu[] = [];
  const seen = new Set<number>();
  for (const p of [...file.junctions.map((j) => j.at), ...file.busEntries.flatMap((e) => [e.at, e.end])]) {
    const norm = p.x * p.x + p.y * p.y;
    if (seen.has(norm)) continue;
    seen.add(norm);
    points.push(p);
  }
  points.sort((a, b) => a.x * a.x + a.y * a.y - (b.x * b.x + b.y * b.y));
  // Lines only get shorter here, so an index of their drawn extent still finds every one.
  const index = new SegmentIndex(lines);
  for (const p of points) {
    for (const n of index.near(p)) {
      const line = lines[n]!;
      if (insideSegment(p, line.a, line.b)) line.b = p;
    }
  }
  return lines;
}

/** Groups a sheet's items into connected subgraphs: the indices of each group's items, in item order. */
function groupIndices(items: ConnItem[]): number[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const union = (a: number, b: number) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };

  const lines = items
    .map((item, index) => ({ item, index }))
    .filter(
      (e): e is { item: Extract<ConnItem, { kind: "wire" | "bus" }>; index: number } =>
        e.item.kind === "wire" || e.item.kind === "bus",
    );
  const buses = lines.filter((l) => l.item.kind === "bus");
  const wires = lines.filter((l) => l.item.kind === "wire");
  const lineIndex = new SegmentIndex(lines.map((l) => l.item.line));
  const busIndex = new SegmentIndex(buses.map((l) => l.item.line));
  const wireIndex = new SegmentIndex(wires.map((l) => l.item.line));
  /** The first line of `among` (in item order) that `p` lies on. */
  const firstOn = (among: typeof lines, index: SegmentIndex, p: PointIu, accuracy?: number) => {
    for (const n of index.near(p)) {
      const l = among[n]!;
      if (onSegment(p, l.item.line.a, l.item.line.b, accuracy)) return l;
    }
    return undefined;
  };

  const atPoint = new Map<string, number[]>();
  const addAt = (p: PointIu, index: number) => {
    const key = pointKey(p);
    const list = atPoint.get(key);
    if (!list) atPoint.set(key, [index]);
    else if (!list.includes(index)) list.push(index);
  };
  items.forEach((item, index) => {
    for (const p of item.points) addAt(p, index);
  });

  // A label on two or more lines joins them at its anchor (eeschema's "labels that overlap
  // wires" special case): the lines get a connection point there.
  items.forEach((item) => {
    if (item.kind !== "label") return;
    const hit = lineIndex
      .near(item.label.at)
      .map((n) => lines[n]!)
      .filter((l) => onSegment(item.label.at, l.item.line.a, l.item.line.b, 0));
    if (hit.length >= 2) for (const l of hit) addAt(item.label.at, l.index);
  });

  const propagates = (a: ConnItem, b: ConnItem, busHere: boolean): boolean => {
    if ((a.kind === "pin" && a.pin.type === "no_connect") || (b.kind === "pin" && b.pin.type === "no_connect"))
      return false;
    if (a.kind === "busEntry" || b.kind === "busEntry") {
      const other = a.kind === "busEntry" ? b : a;
      // At its bus end an entry only faces the bus, and entries never join buses.
      if (busHere || other.kind === "bus") return false;
      return true;
    }
    if ((a.kind === "wire" && b.kind === "bus") || (a.kind === "bus" && b.kind === "wire")) return false;
    return true;
  };

  for (const [key, indices] of atPoint) {
    if (indices.length < 2) continue;
    const [x, y] = key.split(",").map(Number) as [number, number];
    const p = { x, y };
    const busHere = firstOn(buses, busIndex, p, 0) !== undefined;
    for (let i = 0; i < indices.length; i++) {
      for (let j = i + 1; j < indices.length; j++) {
        const a = indices[i]!;
        const b = indices[j]!;
        if (propagates(items[a]!, items[b]!, busHere)) union(a, b);
      }
    }
  }

  // Labels and sheet pins that touch no pin, label, sheet pin or flag attach to the line they
  // sit on (eeschema's SCH_LABEL_BASE::UpdateDanglingState): buses first, then wires.
  items.forEach((item, index) => {
    if (item.kind !== "label" && item.kind !== "sheetPin") return;
    const at = item.points[0]!;
    const touching = (atPoint.get(pointKey(at)) ?? []).some((other) => {
      if (other === index) return false;
      const kind = items[other]!.kind;
      return kind === "pin" || kind === "label" || kind === "sheetPin" || kind === "noConnect";
    });
    if (touching) return;
    const line = firstOn(buses, busIndex, at) ?? firstOn(wires, wireIndex, at);
    if (line) union(index, line.index);
  });

  const groups = new Map<number, number[]>();
  items.forEach((_, index) => {
    const root = find(index);
    const group = groups.get(root);
    if (group) group.push(index);
    else groups.set(root, [index]);
  });
  return [...groups.values()];
}
