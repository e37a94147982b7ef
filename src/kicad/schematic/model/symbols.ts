/**
 * Placed symbols and the library symbols they draw from, as read from a schematic file (see
 * `read-items.ts`): pins, fields and per-instance references, and the questions asked of them
 * everywhere (a field's value, a unit's pins, a pin's chosen alternate).
 */
import type { SList } from "../../sexpr/index.ts";
import type { PlacementIu, PointIu } from "../geometry.ts";

export type PinElectricalType =
  | "input"
  | "output"
  | "bidirectional"
  | "tri_state"
  | "passive"
  | "free"
  | "unspecified"
  | "power_in"
  | "power_out"
  | "open_collector"
  | "open_emitter"
  | "no_connect";

export interface LibPin {
  node: SList;
  /** Number as KiCad reads it: `~` is empty in files older than `SCHEMATIC.tildeIsText`. */
  number: string;
  /** Name as KiCad reads it, empty for none (files before KiCad 10 write that as `~`). */
  name: string;
  type: PinElectricalType;
  /** Connection point (the pin tip) in library coordinates, IU, Y up. */
  at: PointIu;
  /** Direction of the pin body from the tip, degrees. */
  orientation: number;
  length: number;
  hidden: boolean;
  /** 0 = common to all units. */
  unit: number;
  /** 0 = common to all body styles (De Morgan). */
  bodyStyle: number;
  /** Alternate functions: `(alternate "SDA" bidirectional line)`. */
  alternates: { name: string; type: PinElectricalType }[];
}

export interface LibSymbol {
  node: SList;
  /** Cache name, e.g. `Device:R`. */
  name: string;
  /** `global` for `(power)`/`(power global)`, `local` for `(power local)`. */
  power?: "global" | "local";
  extends?: string;
  unitCount: number;
  /** Pins of every unit and body style, inherited ones included. */
  pins: LibPin[];
}

export interface Field {
  node: SList;
  name: string;
  value: string;
}

export interface SymbolInstanceRef {
  project: string;
  path: string;
  reference: string;
  unit: number;
}

export interface PlacedSymbol {
  node: SList;
  /**
   * The Value KiCad works with after loading the project: the Value field, overridden by
   * KiCad 6 instance data and, in files from before `SCHEMATIC.modernPowerSymbols`, by the
   * hidden pin name of a legacy power symbol (see `SchematicProject`). Power nets are named
   * by it.
   */
  value: string;
  /** The Footprint KiCad works with: the Footprint field, overridden by KiCad 6 instance data. */
  footprint: string;
  libId: string;
  /** Key into `lib_symbols`: `lib_name` when present, else `lib_id`. */
  libKey: string;
  placement: PlacementIu;
  unit: number;
  bodyStyle: number;
  inBom: boolean;
  onBoard: boolean;
  dnp: boolean;
  excludeFromSim: boolean;
  uuid: string;
  fields: Field[];
  instances: SymbolInstanceRef[];
  /** Alternate function chosen per pin number: `(pin "5" (alternate "SDA"))`. */
  pinAlternates: Map<string, string>;
  lib?: LibSymbol;
}

/** Name and electrical type of a pin on a placed symbol, honouring a chosen alternate. */
export function effectivePin(symbol: PlacedSymbol, pin: LibPin): { name: string; type: PinElectricalType } {
  const altName = symbol.pinAlternates.get(pin.number);
  const alt = altName ? pin.alternates.find((a) => a.name === altName) : undefined;
  if (alt) return { name: alt.name, type: alt.type };
  return { name: pin.name, type: pin.type };
}

/** Value of a field by name (`Reference`, `Value`, …) of a placed symbol or a sheet symbol. */
export function fieldValue(symbol: { fields: Field[] }, name: string): string | undefined {
  return symbol.fields.find((f) => f.name === name)?.value;
}

/**
 * Reference and unit of a symbol in one sheet instance. Falls back to the symbol's own
 * Reference field and `(unit)` when the file has no instance data for that path.
 */
export function symbolInstance(
  symbol: PlacedSymbol,
  instancePath: string,
  projectName?: string,
): { reference: string; unit: number } {
  const matches = symbol.instances.filter((i) => i.path === instancePath);
  const hit = matches.find((i) => i.project === projectName) ?? matches[0];
  if (hit) return { reference: hit.reference, unit: hit.unit };
  return { reference: fieldValue(symbol, "Reference") ?? "", unit: symbol.unit };
}

/**
 * The net a symbol without the `(power)` flag names all the same: one whose every pin is a
 * hidden power input of one name, under a `#` reference that keeps it out of the netlist. That is
 * how KiCad 5 libraries, and vendors' own power libraries still, draw a power symbol; the hidden
 * pin joins the net of its name wherever the symbol stands. Undefined for anything else.
 */
export function hiddenPowerNet(symbol: PlacedSymbol): string | undefined {
  if (!symbol.lib || symbol.lib.power || !(fieldValue(symbol, "Reference") ?? "").startsWith("#")) return undefined;
  const pins = unitPins(symbol, symbol.unit);
  const name = pins[0]?.name;
  return name && pins.every((p) => p.type === "power_in" && p.hidden && p.name === name) ? name : undefined;
}

/** Library pins present on one placed unit and body style (unit 0 / style 0 pins are shared). */
export function unitPins(symbol: PlacedSymbol, unit: number): LibPin[] {
  const lib = symbol.lib;
  if (!lib) return [];
  return lib.pins.filter(
    (p) => (p.unit === 0 || p.unit === unit) && (p.bodyStyle === 0 || p.bodyStyle === symbol.bodyStyle),
  );
}

/**
 * KiCad's sub-reference letters for a unit: 1 → A, 26 → Z, 27 → AA (LIB_SYMBOL::LetterSubReference
 * with the default first id 'A' and no separator).
 */
export function unitLetter(unit: number): string {
  let out = "";
  let u = unit;
  while (u > 0) {
    const r = (u - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    u = (u - 1 - r) / 26;
  }
  return out;
}
