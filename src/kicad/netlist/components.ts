/**
 * Components: one entry per reference designator, merged over the units placed for it —
 * what a BOM, a requirement rule or a parity check talks about. Power symbols, flags and other
 * virtual symbols (references starting with `#`) are not components.
 */
import type { SchematicProject } from "../schematic/model/hierarchy.ts";
import { fieldValue, symbolInstance, type PlacedSymbol } from "../schematic/model/symbols.ts";
import { naturalCompare } from "../../util/natural-compare.ts";

export interface Component {
  ref: string;
  value: string;
  footprint: string;
  libId: string;
  /** Every field by name, Reference/Value/Footprint/Datasheet included. */
  fields: Record<string, string>;
  inBom: boolean;
  onBoard: boolean;
  dnp: boolean;
  /** KiCad instance path of the sheet holding the first placed unit, e.g. `/<root uuid>`. */
  sheetPath: string;
  /** Human sheet path, e.g. `/` or `/Regulator/`. */
  sheet: string;
  /** Absolute path of the schematic file holding the first unit. */
  file: string;
  /** `<sheet uuids>/<symbol uuid>` as a board footprint's `(path …)` records it. */
  symbolPath: string;
  /** Units placed for this reference, ascending. */
  units: number[];
  /** The placed symbols, one per unit instance. */
  symbols: PlacedSymbol[];
}

export function listComponents(project: SchematicProject): Component[] {
  const byRef = new Map<string, Component>();
  for (const instance of project.instances) {
    for (const symbol of instance.file.symbols) {
      const { reference, unit } = symbolInstance(symbol, instance.path, project.projectName);
      if (!reference || reference.startsWith("#")) continue;
      const existing = byRef.get(reference);
      if (existing) {
        if (!existing.units.includes(unit)) existing.units.push(unit);
        existing.symbols.push(symbol);
        continue;
      }
      const fields: Record<string, string> = {};
      for (const f of symbol.fields) fields[f.name] = f.value;
      byRef.set(reference, {
        ref: reference,
        value: fieldValue(symbol, "Value") ?? "",
        footprint: fieldValue(symbol, "Footprint") ?? "",
        libId: symbol.libId,
        fields: { ...fields, Reference: reference },
        inBom: symbol.inBom,
        onBoard: symbol.onBoard,
        dnp: symbol.dnp,
        sheetPath: instance.path,
        sheet: instance.humanPath,
        file: instance.file.path,
        symbolPath: `${instance.path.replace(/^\/[^/]+/, "")}/${symbol.uuid}`,
        units: [unit],
        symbols: [symbol],
      });
    }
  }
  const components = [...byRef.values()];
  for (const c of components) c.units.sort((a, b) => a - b);
  return components.sort((a, b) => naturalCompare(a.ref, b.ref));
}
