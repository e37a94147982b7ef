/**
 * Schematic edits for tests, made on the lossless tree the way an edit tool would make them:
 * clone a placed symbol to a new place, delete one, set a field, rename labels, move a symbol to
 * another sheet. Each keeps the file loadable by kicad-cli (new uuids, instance paths that match
 * the sheet, pins landing on labels, wires or power symbols).
 */
import { placePoint, pointKey, toIU } from "../../src/kicad/schematic/geometry.ts";
import { readSchematicFile } from "../../src/kicad/schematic/model/schematic-file.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import {
  child,
  children,
  cloneNode,
  insertChild,
  num,
  printSexprBytes,
  q,
  readSexprFile,
  removeChild,
  setAtom,
  text,
  writeSexprFile,
  type SDocument,
  type SList,
} from "../../src/kicad/sexpr/index.ts";

export class SchematicEdit {
  readonly path: string;
  readonly doc: SDocument;

  constructor(path: string) {
    this.path = path;
    this.doc = readSexprFile(path);
  }

  save(): void {
    writeSexprFile(this.path, this.doc);
  }

  get root(): SList {
    return this.doc.root;
  }

  /** The placed symbol whose instance reference (or Reference field) is `ref`. */
  symbol(ref: string): SList {
    const found = children(this.root, "symbol").find((s) => referenceOf(s) === ref);
    if (!found) throw new Error(`no symbol ${ref} in ${this.path}`);
    return found;
  }

  /** A copy of `template` (from any sheet) placed at `(x, y)` under a new reference and uuid. */
  addCopy(
    template: SList,
    options: { ref: string; x: number; y: number; instancePath: string; value?: string },
  ): SList {
    const node = cloneNode(template);
    const at = child(node, "at")!;
    const dx = options.x - num(at, 1)!;
    const dy = options.y - num(at, 2)!;
    for (const p of children(node, "property")) {
      const pat = child(p, "at");
      if (pat) shift(pat, dx, dy);
      if (text(p, 1) === "Reference") setAtom(p, 2, q(options.ref));
      if (text(p, 1) === "Value" && options.value !== undefined) setAtom(p, 2, q(options.value));
    }
    shift(at, dx, dy);
    setAtom(child(node, "uuid")!, 1, q(crypto.randomUUID()));
    for (const pin of children(node, "pin")) {
      const uuid = child(pin, "uuid");
      if (uuid) setAtom(uuid, 1, q(crypto.randomUUID()));
    }
    setInstance(node, options.instancePath, options.ref);
    this.insertSymbol(node);
    return node;
  }

  /** Adds a library symbol to the `lib_symbols` cache (kept sorted by name, as eeschema writes it). */
  addLibSymbol(symbol: SList): void {
    const cache = child(this.root, "lib_symbols")!;
    const name = text(symbol, 1)!;
    const entries = children(cache, "symbol");
    if (entries.some((e) => text(e, 1) === name)) return;
    const next = entries.find((e) => (text(e, 1) ?? "") > name);
    insertChild(cache, symbol, next ? cache.items.indexOf(next) : cache.items.length);
  }

  /** Inserts a symbol node after the last placed symbol. */
  insertSymbol(node: SList): void {
    const symbols = children(this.root, "symbol");
    const last = symbols[symbols.length - 1];
    insertChild(this.root, node, last ? this.root.items.indexOf(last) + 1 : this.root.items.length);
  }

  remove(node: SList): void {
    removeChild(this.root, node);
  }

  setField(ref: string, name: string, value: string): void {
    const prop = children(this.symbol(ref), "property").find((p) => text(p, 1) === name);
    if (!prop) throw new Error(`${ref} has no field ${name}`);
    setAtom(prop, 2, q(value));
  }

  /**
   * Moves `ref` by (dx, dy) mm with its fields, dragging the ends of the wires that meet its pins
   * along, the way eeschema's drag does: the symbol moves, every connection stays.
   */
  moveSymbol(ref: string, dx: number, dy: number): void {
    const node = this.symbol(ref);
    const view = readSchematicFile(this.path, printSexprBytes(this.doc)).symbols.find(
      (s) => s.uuid === text(child(node, "uuid")!, 1),
    );
    if (!view) throw new Error(`cannot read ${ref} in ${this.path}`);
    const tips = new Set(unitPins(view, view.unit).map((pin) => pointKey(placePoint(pin.at, view.placement))));
    for (const wire of children(this.root, "wire")) {
      for (const xy of children(child(wire, "pts")!, "xy")) {
        if (tips.has(pointKey({ x: toIU(num(xy, 1)!), y: toIU(num(xy, 2)!) }))) shift(xy, dx, dy);
      }
    }
    shift(child(node, "at")!, dx, dy);
    for (const p of children(node, "property")) {
      const at = child(p, "at");
      if (at) shift(at, dx, dy);
    }
  }

  /** Renames every local label with text `from`. */
  renameLabels(from: string, to: string): number {
    let count = 0;
    for (const label of children(this.root, "label")) {
      if (text(label, 1) === from) {
        setAtom(label, 1, q(to));
        count++;
      }
    }
    return count;
  }

  /** A local label at a pin tip, laid out like eeschema writes one. */
  addLabel(name: string, x: number, y: number): void {
    const template = children(this.root, "label")[0]!;
    const node = cloneNode(template);
    setAtom(node, 1, q(name));
    const at = child(node, "at")!;
    setAtom(at, 1, x);
    setAtom(at, 2, y);
    setAtom(child(node, "uuid")!, 1, q(crypto.randomUUID()));
    insertChild(this.root, node, this.root.items.indexOf(template) + 1);
  }

  addWire(x1: number, y1: number, x2: number, y2: number): void {
    const template = children(this.root, "wire")[0]!;
    const node = cloneNode(template);
    const [a, b] = children(child(node, "pts")!, "xy");
    setAtom(a!, 1, x1);
    setAtom(a!, 2, y1);
    setAtom(b!, 1, x2);
    setAtom(b!, 2, y2);
    setAtom(child(node, "uuid")!, 1, q(crypto.randomUUID()));
    insertChild(this.root, node, this.root.items.indexOf(template) + 1);
  }

  /** Removes the wire between two points (either direction). */
  removeWire(x1: number, y1: number, x2: number, y2: number): void {
    const found = children(this.root, "wire").find((w) => {
      const [a, b] = children(child(w, "pts")!, "xy").map((xy) => [num(xy, 1), num(xy, 2)]);
      const same = (p: (number | undefined)[] | undefined, x: number, y: number) => p?.[0] === x && p?.[1] === y;
      return (same(a, x1, y1) && same(b, x2, y2)) || (same(a, x2, y2) && same(b, x1, y1));
    });
    if (!found) throw new Error(`no wire ${x1},${y1} - ${x2},${y2} in ${this.path}`);
    removeChild(this.root, found);
  }
}

function referenceOf(symbol: SList): string | undefined {
  const path = child(child(child(symbol, "instances") ?? symbol, "project") ?? symbol, "path");
  const fromInstance = path ? child(path, "reference") : undefined;
  if (fromInstance) return text(fromInstance, 1);
  const field = children(symbol, "property").find((p) => text(p, 1) === "Reference");
  return field ? text(field, 2) : undefined;
}

/** Points the symbol's single instance at `path` with reference `ref`. */
export function setInstance(symbol: SList, path: string, ref: string): void {
  const instancePath = child(child(child(symbol, "instances")!, "project")!, "path")!;
  setAtom(instancePath, 1, q(path));
  setAtom(child(instancePath, "reference")!, 1, q(ref));
}

function shift(at: SList, dx: number, dy: number): void {
  setAtom(at, 1, round(num(at, 1)! + dx));
  setAtom(at, 2, round(num(at, 2)! + dy));
}

function round(v: number): number {
  return Math.round(v * 1e4) / 1e4;
}
