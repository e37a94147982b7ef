/**
 * Reads a schematic file's tree into its views (see `schematic-file.ts`) the way eeschema's
 * parser does for the file's format version.
 */
import { atomText, child, children, childText, flag, head, num, text, type SList } from "../../sexpr/index.ts";
import { has, SCHEMATIC } from "../../format-versions.ts";
import { pointIuOf, toIU, type PointIu } from "../geometry.ts";
import type { BusEntry, Label, LabelKind, Line, Marker, SheetSymbol } from "./sheet-items.ts";
import type { Field, LibPin, LibSymbol, PinElectricalType, PlacedSymbol, SymbolInstanceRef } from "./symbols.ts";

/** A row of a KiCad 6 root schematic's `symbol_instances`, path as written. */
export interface LegacySymbolInstance {
  path: string;
  reference: string;
  unit: number;
  value?: string;
  footprint?: string;
}

/** What one file holds, read from its tree; see `SchematicFile`. */
export interface FileItems {
  symbolInstances: LegacySymbolInstance[];
  sheetInstances: { path: string; page: string }[];
  libSymbols: Map<string, LibSymbol>;
  symbols: PlacedSymbol[];
  wires: Line[];
  buses: Line[];
  busEntries: BusEntry[];
  junctions: Marker[];
  noConnects: Marker[];
  labels: Label[];
  sheets: SheetSymbol[];
  busAliases: Map<string, string[]>;
}

/** A library symbol as `lib_symbols` embeds it (`def`), read into a view with the file reader's rules for `version`. */
export function readLibSymbol(def: SList, version: number): LibSymbol | undefined {
  const holder: SList = {
    type: "list",
    pre: "",
    items: [{ type: "atom", pre: "", raw: "lib_symbols" }, def],
    post: "",
    start: -1,
  };
  return new Reader(version).libSymbols(holder).get(text(def, 1) ?? "");
}

/** Reads the items of a file's tree into their views, each item list visited once. */
export function readItems(root: SList, version: number): FileItems {
  const read = new Reader(version);
  const libSymbols = read.libSymbols(child(root, "lib_symbols"));
  const file: FileItems = {
    symbolInstances: [],
    sheetInstances: [],
    libSymbols,
    symbols: [],
    wires: [],
    buses: [],
    busEntries: [],
    junctions: [],
    noConnects: [],
    labels: [],
    sheets: [],
    busAliases: new Map(),
  };
  for (const item of root.items) {
    if (item.type !== "list") continue;
    switch (head(item)) {
      case "symbol":
        file.symbols.push(read.placedSymbol(item, libSymbols));
        break;
      case "wire":
        file.wires.push(readLine(item));
        break;
      case "bus":
        file.buses.push(readLine(item));
        break;
      case "bus_entry": {
        const at = readAt(item);
        const size = child(item, "size");
        file.busEntries.push({
          node: item,
          at,
          end: { x: at.x + toIU(num(size ?? item, 1) ?? 0), y: at.y + toIU(num(size ?? item, 2) ?? 0) },
        });
        break;
      }
      case "junction":
        file.junctions.push({ node: item, at: readAt(item) });
        break;
      case "no_connect":
        file.noConnects.push({ node: item, at: readAt(item) });
        break;
      case "label":
        file.labels.push(read.label(item, "local"));
        break;
      case "global_label":
        file.labels.push(read.label(item, "global"));
        break;
      case "hierarchical_label":
        file.labels.push(read.label(item, "hierarchical"));
        break;
      case "sheet":
        file.sheets.push(read.sheet(item));
        break;
      case "bus_alias": {
        const members = child(item, "members");
        const names = members
          ? members.items.slice(1).map((_, i) => read.busAliasMember(text(members, i + 1) ?? ""))
          : [];
        file.busAliases.set(text(item, 1) ?? "", names);
        break;
      }
      case "symbol_instances":
        for (const path of children(item, "path")) {
          file.symbolInstances.push({
            path: text(path, 1) ?? "",
            reference: childText(path, "reference") ?? "",
            unit: Number(childText(path, "unit") ?? 1),
            value: read.tilde(childText(path, "value")),
            footprint: read.tilde(childText(path, "footprint")),
          });
        }
        break;
      case "sheet_instances":
        for (const path of children(item, "path"))
          file.sheetInstances.push({ path: text(path, 1) ?? "", page: childText(path, "page") ?? "" });
        break;
    }
  }
  return file;
}

// Reading runs over every item of every sheet. Each item list is visited once, by its head,
// and what is read of the lists inside it goes through `head`/`text`/`num`, which the parsed
// tree answers without building those lists' nodes.

/** The number at `index` of a list, 0 when absent. */
function numberAt(list: SList | undefined, index: number): number {
  return (list && num(list, index)) ?? 0;
}

/** A point the file may leave out reads as the origin, as eeschema reads it. */
function pointOrOrigin(list: SList | undefined): PointIu {
  return pointIuOf(list) ?? { x: 0, y: 0 };
}

function readAt(list: SList): PointIu {
  return pointOrOrigin(child(list, "at"));
}

function readAngle(list: SList): number {
  return numberAt(child(list, "at"), 3);
}

function readLine(list: SList): Line {
  const pts = child(list, "pts") ?? list;
  let a: SList | undefined;
  let b: SList | undefined;
  for (const item of pts.items) {
    if (item.type !== "list" || head(item) !== "xy") continue;
    if (!a) a = item;
    else if (!b) {
      b = item;
      break;
    }
  }
  return { node: list, a: pointOrOrigin(a), b: pointOrOrigin(b) };
}

/** A field; its name and value are decoded when asked for (most fields are never looked at). */
function readField(node: SList): Field {
  let name: string | undefined;
  return {
    node,
    get name() {
      return (name ??= text(node, 1) ?? "");
    },
    get value() {
      return text(node, 2) ?? "";
    },
  };
}

function readFields(list: SList): Field[] {
  const out: Field[] = [];
  for (const item of list.items) if (item.type === "list" && head(item) === "property") out.push(readField(item));
  return out;
}

/** `(name yes|no)` with a default for absent flags. */
function flagValue(list: SList, name: string, fallback: boolean): boolean {
  const c = child(list, name);
  if (!c) return fallback;
  return flag(list, name) ?? fallback;
}

/**
 * Reads items the way eeschema's parser does for one format version: the text conversions
 * it applies to old files happen here, so the views hold what KiCad works with.
 */
class Reader {
  constructor(private readonly version: number) {}

  /** Before `SCHEMATIC.tildeIsText`, a lone `~` stands for an empty value. */
  tilde(value: string | undefined): string | undefined {
    return value === "~" && !has(this.version, SCHEMATIC.tildeIsText) ? "" : value;
  }

  /** Text that may carry overbars, in today's `~{…}` notation. */
  private markup(value: string): string {
    return has(this.version, SCHEMATIC.overbarBraces) ? value : convertLegacyOverbars(value);
  }

  busAliasMember(name: string): string {
    return this.markup(name);
  }

  label(list: SList, kind: LabelKind): Label {
    return {
      node: list,
      kind,
      text: this.markup(text(list, 1) ?? ""),
      at: readAt(list),
      rotation: readAngle(list),
      shape: childText(list, "shape"),
    };
  }

  sheet(list: SList): SheetSymbol {
    const fields = readFields(list);
    const field = (...names: string[]) => fields.find((f) => names.includes(f.name))?.value ?? "";
    const size = child(list, "size");
    return {
      node: list,
      uuid: childText(list, "uuid") ?? "",
      name: field("Sheetname", "Sheet name"),
      fileName: field("Sheetfile", "Sheet file"),
      at: readAt(list),
      size: { x: toIU(size ? (num(size, 1) ?? 0) : 0), y: toIU(size ? (num(size, 2) ?? 0) : 0) },
      pins: children(list, "pin").map((node) => ({
        node,
        name: this.markup(text(node, 1) ?? ""),
        shape: text(node, 2) ?? "",
        at: readAt(node),
      })),
      onBoard: flagValue(list, "on_board", true),
      fields,
      pages: new Map(
        children(child(list, "instances") ?? list, "project").flatMap((project) =>
          children(project, "path").map((path): [string, string] => [
            text(path, 1) ?? "",
            childText(path, "page") ?? "",
          ]),
        ),
      ),
    };
  }

  placedSymbol(list: SList, libSymbols: Map<string, LibSymbol>): PlacedSymbol {
    let libId = "";
    let libName: string | undefined;
    let at: SList | undefined;
    let mirror: string | undefined;
    let unit = 1;
    let bodyStyle = 1;
    let uuid = "";
    let inBom = true;
    let onBoard = true;
    let dnp = false;
    let excludeFromSim = false;
    const fields: Field[] = [];
    const instances: SymbolInstanceRef[] = [];
    const pinAlternates = new Map<string, string>();
    let valueField: SList | undefined;
    let footprintField: SList | undefined;
    const yes = (item: SList, fallback: boolean) => (item.items.length > 1 ? text(item, 1) === "yes" : fallback);
    for (const item of list.items) {
      if (item.type !== "list") continue;
      switch (head(item)) {
        case "lib_id":
          libId = text(item, 1) ?? "";
          break;
        case "lib_name":
          libName = text(item, 1);
          break;
        case "at":
          at = item;
          break;
        case "mirror":
          mirror = text(item, 1);
          break;
        case "unit":
          unit = numberAt(item, 1) || 1;
          break;
        // KiCad 9 writes `(body_style n)`; KiCad 8 wrote `(convert n)`.
        case "body_style":
        case "convert":
          bodyStyle = numberAt(item, 1) || 1;
          break;
        case "in_bom":
          inBom = yes(item, true);
          break;
        case "on_board":
          onBoard = yes(item, true);
          break;
        case "dnp":
          dnp = yes(item, true);
          break;
        case "exclude_from_sim":
          excludeFromSim = yes(item, true);
          break;
        case "uuid":
          uuid = text(item, 1) ?? "";
          break;
        case "property":
          fields.push(readField(item));
          if (!valueField && text(item, 1) === "Value") valueField = item;
          if (!footprintField && text(item, 1) === "Footprint") footprintField = item;
          break;
        case "pin": {
          const alternate = child(item, "alternate");
          if (alternate) pinAlternates.set(text(item, 1) ?? "", text(alternate, 1) ?? "");
          break;
        }
        case "instances":
          for (const project of item.items) {
            if (project.type !== "list" || head(project) !== "project") continue;
            const projectName = text(project, 1) ?? "";
            for (const path of project.items) {
              if (path.type !== "list" || head(path) !== "path") continue;
              instances.push({
                project: projectName,
                path: text(path, 1) ?? "",
                reference: childText(path, "reference") ?? "",
                unit: Number(childText(path, "unit") ?? 1),
              });
            }
          }
          break;
      }
    }
    const libKey = libName ?? libId;
    return {
      node: list,
      value: this.tilde(valueField ? text(valueField, 2) : undefined) ?? "",
      footprint: this.tilde(footprintField ? text(footprintField, 2) : undefined) ?? "",
      libId,
      libKey,
      placement: {
        at: pointOrOrigin(at),
        rotation: numberAt(at, 3),
        mirror: mirror === "x" || mirror === "y" ? mirror : undefined,
      },
      unit,
      bodyStyle,
      inBom,
      onBoard,
      dnp,
      excludeFromSim,
      uuid,
      fields,
      instances,
      pinAlternates,
      lib: libSymbols.get(libKey),
    };
  }

  libSymbols(list: SList | undefined): Map<string, LibSymbol> {
    const raw = new Map<string, LibSymbol>();
    if (!list) return raw;
    for (const node of children(list, "symbol")) {
      const name = text(node, 1) ?? "";
      const power = child(node, "power");
      const pins: LibPin[] = [];
      let unitCount = 1;
      const collect = (unitNode: SList, unit: number, bodyStyle: number) => {
        for (const pin of unitNode.items)
          if (pin.type === "list" && head(pin) === "pin") pins.push(this.libPin(pin, unit, bodyStyle));
      };
      collect(node, 0, 0);
      for (const sub of node.items) {
        if (sub.type !== "list" || head(sub) !== "symbol") continue;
        // Sub-symbols are named `<name>_<unit>_<bodystyle>`; the name itself may contain `_`.
        const match = /_(\d+)_(\d+)$/.exec(text(sub, 1) ?? "");
        const unit = match ? Number(match[1]) : 0;
        const bodyStyle = match ? Number(match[2]) : 0;
        unitCount = Math.max(unitCount, unit);
        collect(sub, unit, bodyStyle);
      }
      raw.set(name, {
        node,
        name,
        power: power ? (text(power, 1) === "local" ? "local" : "global") : undefined,
        extends: childText(node, "extends"),
        unitCount,
        pins,
      });
    }
    // Derived symbols take the drawing and pins of their parent (same library, so the cache
    // name shares the `lib:` prefix).
    for (const symbol of raw.values()) {
      const seen = new Set<string>();
      let parentName = symbol.extends;
      while (parentName && !seen.has(parentName)) {
        seen.add(parentName);
        const prefix = symbol.name.includes(":") ? symbol.name.slice(0, symbol.name.indexOf(":") + 1) : "";
        const parent = raw.get(prefix + parentName) ?? raw.get(parentName);
        if (!parent) break;
        if (symbol.pins.length === 0) symbol.pins = parent.pins;
        symbol.unitCount = Math.max(symbol.unitCount, parent.unitCount);
        symbol.power ??= parent.power;
        parentName = parent.extends;
      }
    }
    return raw;
  }

  private libPin(node: SList, unit: number, bodyStyle: number): LibPin {
    let at: SList | undefined;
    let length = 0;
    let number = "";
    let name = "";
    let hidden = false;
    const alternates: LibPin["alternates"] = [];
    for (const item of node.items) {
      if (item.type === "atom") {
        // A bare `hide` (before `SCHEMATIC.pinHideBoolean`).
        if (atomText(item) === "hide") hidden = true;
        continue;
      }
      switch (head(item)) {
        case "at":
          at = item;
          break;
        case "length":
          length = toIU(numberAt(item, 1));
          break;
        case "number":
          number = this.tilde(this.markup(text(item, 1) ?? ""))!;
          break;
        case "name":
          name = this.tilde(this.markup(text(item, 1) ?? ""))!;
          break;
        case "hide":
          hidden = text(item, 1) !== "no";
          break;
        case "alternate":
          alternates.push({ name: this.tilde(text(item, 1) ?? "")!, type: pinType(text(item, 2)) });
          break;
      }
    }
    return {
      node,
      number,
      name,
      type: pinType(text(node, 1)),
      at: pointOrOrigin(at),
      orientation: numberAt(at, 3),
      length,
      hidden,
      unit,
      bodyStyle,
      alternates,
    };
  }
}

/** Pin electrical types; files before `SCHEMATIC.pinTypeNoConnect` say `unconnected`. */
function pinType(written: string | undefined): PinElectricalType {
  if (written === "unconnected") return "no_connect";
  return (written ?? "unspecified") as PinElectricalType;
}

/**
 * Old overbar notation (`~RESET~`, a tilde toggling the bar, `~~` a literal tilde, a space or
 * closing bracket ending the bar) in today's `~{RESET}`, the conversion eeschema applies to files
 * from before `SCHEMATIC.overbarBraces`.
 */
export function convertLegacyOverbars(old: string): string {
  if (old === "~") return old;
  let out = "";
  let inBar = false;
  for (let i = 0; i < old.length; i++) {
    const ch = old[i]!;
    if (ch === "~") {
      const next = old[i + 1];
      if (next === "~") {
        // `~~{` keeps a literal tilde before a brace that must not open a bar.
        if (old[i + 2] === "{") out += "~~{}";
        else out += "~";
        i++;
        continue;
      }
      // Already in the new notation: leave the text alone.
      if (next === "{") return old;
      out += inBar ? "}" : "~{";
      inBar = !inBar;
      continue;
    }
    if (inBar && (ch === " " || ch === "}" || ch === ")")) {
      out += "}";
      inBar = false;
    }
    out += ch;
  }
  return inBar ? `${out}}` : out;
}
