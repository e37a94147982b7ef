/**
 * What touches what on one sheet, in raw drawn geometry (not kicad-cli's load-time cleanup):
 * the index the schematic editor uses to decide whether a pin is free, whether a new wire stub
 * would touch anything, and which wires, labels and power symbols only serve a pin (so that
 * disconnecting or deleting it takes them along and nothing else).
 */
import { samePoint, insideSegment, onSegment, placePoint, type PointIu } from "./geometry.ts";
import { segmentsTouch } from "../../util/segments.ts";
import type { SheetPin, SheetSymbol } from "./model/sheet-items.ts";
import type { Label, Line } from "./model/sheet-items.ts";
import type { SchematicFile } from "./model/schematic-file.ts";
import { hiddenPowerNet, symbolInstance, unitPins, type LibPin, type PlacedSymbol } from "./model/symbols.ts";
import type { SList } from "../sexpr/index.ts";

export interface PinAt {
  symbol: PlacedSymbol;
  lib: LibPin;
  reference: string;
  at: PointIu;
  /** A pin of a power symbol (or PWR_FLAG): it names or flags a net, it is not a part. */
  power: boolean;
}

/** What to do to the tree so a pin is left with nothing attached. */
export interface DetachPlan {
  /** Top-level nodes to delete (wires, labels, power symbols, flags, junctions). */
  remove: Set<SList>;
  /** Labels or power symbols at the pin that name a wired net: moved along to where it continues. */
  moves: { node: SList; kind: "label" | "symbol"; from: PointIu; to: PointIu }[];
  /**
   * Wires cut back rather than removed: the pin's wiring reaches a wire whose inside carries the
   * net on (a label on it, a branch ending on it, a pin), so its end at `end` moves in to `to`.
   */
  trims: { wire: Line; end: PointIu; to: PointIu }[];
  /** Why the pin cannot be cut loose without redrawing other connections (disconnect only). */
  conflict?: string;
  /** Where its wiring meets a larger net (cut back to there), when it does. */
  joins?: PointIu;
}

interface Walk {
  network: boolean;
  path: Line[];
  end: PointIu;
  /** The wire the walk stopped inside of, where something joins it, cut back to there. */
  trim?: { wire: Line; end: PointIu; to: PointIu };
  /** Dead ends only: what hangs off the far end and serves nothing else. */
  removables: SList[];
  /** A dead end at a label or power symbol, which names the net (or joins it elsewhere by name). */
  named?: boolean;
  /** Junctions at bends the walk passed through (redundant once its wires go). */
  passed: SList[];
}

export class SheetWiring {
  readonly pins: PinAt[] = [];

  constructor(
    readonly file: SchematicFile,
    instancePath: string,
    projectName: string,
  ) {
    for (const symbol of file.symbols) {
      const { reference, unit } = symbolInstance(symbol, instancePath, projectName);
      const power = symbol.lib?.power !== undefined || hiddenPowerNet(symbol) !== undefined;
      for (const lib of unitPins(symbol, unit)) {
        this.pins.push({
          symbol,
          lib,
          reference,
          at: placePoint(lib.at, symbol.placement),
          power,
        });
      }
    }
  }

  wiresEndingAt(p: PointIu): Line[] {
    return this.file.wires.filter((w) => samePoint(w.a, p) || samePoint(w.b, p));
  }

  /** Wires and buses that pass through `p` without ending there. */
  linesThrough(p: PointIu): Line[] {
    return [...this.file.wires, ...this.file.buses].filter((l) => insideSegment(p, l.a, l.b));
  }

  pinsAt(p: PointIu): PinAt[] {
    return this.pins.filter((pin) => samePoint(pin.at, p));
  }

  labelsAt(p: PointIu): Label[] {
    return this.file.labels.filter((l) => samePoint(l.at, p));
  }

  junctionsAt(p: PointIu): SList[] {
    return this.file.junctions.filter((j) => samePoint(j.at, p)).map((j) => j.node);
  }

  noConnectsAt(p: PointIu): SList[] {
    return this.file.noConnects.filter((n) => samePoint(n.at, p)).map((n) => n.node);
  }

  sheetPinsAt(p: PointIu): { sheet: SheetSymbol; pin: SheetPin }[] {
    return this.file.sheets.flatMap((sheet) =>
      sheet.pins.filter((pin) => samePoint(pin.at, p)).map((pin) => ({ sheet, pin })),
    );
  }

  busEntriesAt(p: PointIu): number {
    return this.file.busEntries.filter((e) => samePoint(e.at, p) || samePoint(e.end, p)).length;
  }

  /** True when anything electrical other than `self` (and no-connect flags) is at `p`. */
  attached(p: PointIu, self: (pin: PinAt) => boolean): boolean {
    return (
      this.wiresEndingAt(p).length > 0 ||
      this.labelsAt(p).length > 0 ||
      this.pinsAt(p).some((pin) => !self(pin)) ||
      this.sheetPinsAt(p).length > 0 ||
      this.busEntriesAt(p) > 0 ||
      this.junctionsAt(p).length > 0
    );
  }

  /**
   * True when a new wire along `points` (starting at a pin tip) touches nothing but that pin
   * and, with `join`, what is at its last point: no connection point, wire or bus along the
   * way, corners included.
   */
  pathClear(points: PointIu[], join = false): boolean {
    for (let i = 1; i < points.length; i++) {
      let a = points[i - 1]!;
      let b = points[i]!;
      const step = { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
      if (i === 1) a = { x: a.x + step.x, y: a.y + step.y };
      if (join && i === points.length - 1) {
        if (this.onSomething(a, b, true)) return false;
        b = { x: b.x - step.x, y: b.y - step.y };
        if (![...this.file.wires, ...this.file.buses].some((l) => segmentsTouch(a, b, l.a, l.b))) continue;
        return false;
      }
      if (
        this.onSomething(a, b, false) ||
        [...this.file.wires, ...this.file.buses].some((l) => segmentsTouch(a, b, l.a, l.b))
      )
        return false;
    }
    return true;
  }

  /** A connection point on segment a–b (with `exceptEnd`, other than at b itself). */
  private onSomething(a: PointIu, b: PointIu, exceptEnd: boolean): boolean {
    return this.connectionPoints().some((p) => onSegment(p, a, b, 0) && !(exceptEnd && samePoint(p, b)));
  }

  private connectionPoints(): PointIu[] {
    return [
      ...this.pins.map((p) => p.at),
      ...this.file.labels.map((l) => l.at),
      ...this.file.junctions.map((j) => j.at),
      ...this.file.noConnects.map((n) => n.at),
      ...this.file.sheets.flatMap((s) => s.pins.map((p) => p.at)),
      ...this.file.busEntries.flatMap((e) => [e.at, e.end]),
    ];
  }

  /** Items a wire ending at `p` would join there, counted as eeschema counts them for junctions. */
  endsAt(p: PointIu): number {
    return (
      this.wiresEndingAt(p).length +
      this.pinsAt(p).length +
      this.sheetPinsAt(p).length +
      2 * this.linesThrough(p).length
    );
  }

  /**
   * Plans cutting the pin at `tip` loose. Wires leading only to labels, power symbols or
   * nothing go entirely, with what hangs off their far end; a wire leading into a larger net is
   * cut back to where it meets that net, and a label or power symbol sitting right on the pin
   * moves there so the net keeps its name. `ignore` marks pins that do not count as other
   * connections (the pin itself; every pin of a component being deleted or moved).
   *
   * Where the wiring at the tip carries the net on two ways (into a larger net, or out to a label
   * or power symbol naming it), it stays joined there without the pin: "remove" keeps it, and
   * "move" keeps it too and says where it `joins`, so the moved pin is reconnected by name. In
   * "disconnect" mode, where the pin stays put, a pin joining two wired nets is a conflict, as is,
   * in "disconnect" and "move", a pin touching another pin, a sheet pin or a bus entry directly
   * ("remove" keeps that too: it stays connected without the pin).
   */
  planDetach(tip: PointIu, ignore: (pin: PinAt) => boolean, mode: "disconnect" | "move" | "remove"): DetachPlan {
    const plan: DetachPlan = { remove: new Set(), moves: [], trims: [] };
    const others = this.pinsAt(tip).filter((p) => !ignore(p));
    const parts = others.filter((p) => !p.power);
    const powers = others.filter((p) => p.power);
    const sheetPins = this.sheetPinsAt(tip);
    const walks = this.wiresEndingAt(tip).map((w) => this.walk(w, tip, ignore));
    const networks = walks.filter((w) => w.network);
    // A pin cut loose where it stays may take a label's wire with it; the edit's net check says
    // whether the net held.
    const carrying = walks.filter((w) => w.network || (mode !== "disconnect" && w.named));
    const direct = [
      ...parts.map((p) => `${p.reference} pin ${p.lib.number}`),
      ...sheetPins.map((s) => `sheet pin ${s.pin.name} of sheet ${s.sheet.name}`),
    ];
    if (direct.length > 0 || this.busEntriesAt(tip) > 0) {
      if (mode !== "remove")
        plan.conflict =
          direct.length > 0 ? `its tip touches ${direct.join(", ")} directly` : "a bus entry ends at its tip";
      return plan;
    }
    if (carrying.length >= 2) {
      if (mode === "disconnect") {
        plan.conflict = `${carrying.length} wired nets meet at its tip, and cutting it loose would split them`;
        return plan;
      }
      if (mode === "move") plan.joins = tip;
      // Without the pin, two wire ends meeting there need no junction dot.
      const left = this.wiresEndingAt(tip).length + others.length + 2 * this.linesThrough(tip).length;
      if (left < 3) for (const node of this.junctionsAt(tip)) plan.remove.add(node);
      return plan;
    }
    for (const node of this.noConnectsAt(tip)) plan.remove.add(node);
    for (const node of this.junctionsAt(tip)) plan.remove.add(node);
    for (const walk of walks) {
      for (const line of walk.path) plan.remove.add(line.node);
      if (walk.trim) plan.trims.push(walk.trim);
      for (const node of [...walk.removables, ...walk.passed]) plan.remove.add(node);
    }
    const network = networks[0];
    const atTip: { node: SList; kind: "label" | "symbol" }[] = [
      ...this.labelsAt(tip).map((l) => ({ node: l.node, kind: "label" as const })),
      ...unique(powers.map((p) => p.symbol.node)).map((node) => ({ node, kind: "symbol" as const })),
    ];
    for (const item of atTip) {
      if (network) plan.moves.push({ ...item, from: tip, to: network.end });
      else plan.remove.add(item.node);
    }
    if (network) {
      const end = network.end;
      plan.joins = end;
      const removed = new Set(network.path.map((l) => l.node));
      // A wire cut back to `end` ends there now instead of passing through.
      const trimmed = network.trim?.wire;
      const meeting =
        this.wiresEndingAt(end).filter((w) => !removed.has(w.node)).length +
        (trimmed ? 1 : 0) +
        this.pinsAt(end).filter((p) => !ignore(p)).length +
        this.sheetPinsAt(end).length;
      if (meeting < 3 && this.linesThrough(end).filter((l) => l !== trimmed).length === 0)
        for (const node of this.junctionsAt(end)) plan.remove.add(node);
    }
    return plan;
  }

  /**
   * Where the net goes on from inside `line` (walked from its end `from`), nearest `from` first:
   * a label on it, another wire ending on it, a junction, a pin's tip (other than `ignore`d
   * ones), a sheet pin or a bus entry. A wire crossing it is no connection.
   */
  private joinedInside(line: Line, from: PointIu, ignore: (pin: PinAt) => boolean): PointIu | undefined {
    const f = this.file;
    const points = [
      ...f.labels.map((l) => l.at),
      ...f.wires.filter((w) => w !== line).flatMap((w) => [w.a, w.b]),
      ...f.junctions.map((j) => j.at),
      ...this.pins.filter((p) => !ignore(p)).map((p) => p.at),
      ...f.sheets.flatMap((s) => s.pins.map((p) => p.at)),
      ...f.busEntries.flatMap((e) => [e.at, e.end]),
    ].filter((p) => insideSegment(p, line.a, line.b));
    const distance = (p: PointIu) => Math.abs(p.x - from.x) + Math.abs(p.y - from.y);
    return points.sort((a, b) => distance(a) - distance(b))[0];
  }

  private walk(first: Line, from: PointIu, ignore: (pin: PinAt) => boolean): Walk {
    const path: Line[] = [];
    const seen = new Set([first]);
    const passed: SList[] = [];
    const inner = this.joinedInside(first, from, ignore);
    if (inner)
      return { network: true, path, end: inner, removables: [], passed, trim: { wire: first, end: from, to: inner } };
    path.push(first);
    let at = samePoint(first.a, from) ? first.b : first.a;
    for (;;) {
      const more = this.wiresEndingAt(at).filter((w) => !seen.has(w));
      const pins = this.pinsAt(at).filter((p) => !ignore(p));
      const powers = pins.filter((p) => p.power);
      const labels = this.labelsAt(at);
      const joins =
        pins.some((p) => !p.power) ||
        this.sheetPinsAt(at).length > 0 ||
        this.busEntriesAt(at) > 0 ||
        this.linesThrough(at).length > 0 ||
        more.length >= 2 ||
        (more.length === 1 && (labels.length > 0 || powers.length > 0));
      if (joins) return { network: true, path, end: at, removables: [], passed };
      if (more.length === 1) {
        const next = more[0]!;
        seen.add(next);
        const within = this.joinedInside(next, at, ignore);
        if (within)
          return {
            network: true,
            path,
            end: within,
            removables: [],
            passed,
            trim: { wire: next, end: at, to: within },
          };
        passed.push(...this.junctionsAt(at));
        path.push(next);
        at = samePoint(next.a, at) ? next.b : next.a;
        continue;
      }
      const removables = [
        ...labels.map((l) => l.node),
        ...unique(powers.map((p) => p.symbol.node)),
        ...this.noConnectsAt(at),
        ...this.junctionsAt(at),
      ];
      return { network: false, path, end: at, removables, passed, named: labels.length + powers.length > 0 };
    }
  }
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
