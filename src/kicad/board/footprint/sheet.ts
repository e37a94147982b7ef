/**
 * The sheet a board footprint says its symbol is on: the sheet name and file the board keeps
 * beside the footprint's symbol `path`.
 *
 * KiCad releases spell the same sheet differently (see `BoardDialect.sheetName`): KiCad 6 and 7
 * wrote the sheet's own name with `""` for the root, KiCad 8 the name with `"Root"` (translated
 * in other languages: `"Racine"`), KiCad 9 the path from the root (`"/"`, `"/Power/"`); old
 * files also carry sheet files with a translated `"File: "` prefix. A footprint that names its
 * sheet in any of those ways is up to date — rewriting it would change a board that is in sync —
 * and whatever the sync writes is spelt the way the board's own format spells it.
 */
import { basename } from "node:path";
import type { Component } from "../../netlist/components.ts";
import type { BoardDialect } from "../../format-versions.ts";
import type { SchematicProject } from "../../schematic/model/hierarchy.ts";

export interface SymbolSheet {
  /** The sheet's name; empty for the root. */
  name: string;
  /** Path from the root, `/` for the root, `/Power/` below it. */
  path: string;
  /** The sheet's file as its sheet symbol names it (the root: the root file's name). */
  file: string;
}

export interface SheetNames {
  /** The sheet a component's first unit is on. */
  of(component: Component): SymbolSheet;
  /** True when a footprint's recorded sheet name and file name `sheet`, in any release's spelling. */
  current(sheet: SymbolSheet, name: string | undefined, file: string | undefined): boolean;
}

export function sheetNames(schematic: SchematicProject): SheetNames {
  const byPath = new Map(schematic.instances.map((i) => [i.path, i]));
  const rootFile = basename(schematic.rootPath);
  // Names and paths of the sub-sheets: a root footprint may say anything but one of these.
  const subSheets = new Set(schematic.instances.flatMap((i) => (i.sheet ? [i.sheet.name, i.humanPath] : [])));
  return {
    of(component) {
      const instance = byPath.get(component.sheetPath);
      if (!instance?.sheet) return { name: "", path: "/", file: rootFile };
      return { name: instance.sheet.name, path: instance.humanPath, file: instance.sheet.fileName };
    },
    current(sheet, name = "", file = "") {
      const fileOk = file === sheet.file || file.endsWith(` ${sheet.file}`);
      if (!fileOk) return false;
      if (sheet.path === "/") return !subSheets.has(name);
      return name === sheet.name || name === sheet.path;
    },
  };
}

/** The sheet name a board of this dialect records for `sheet`. */
export function sheetNameIn(dialect: BoardDialect, sheet: SymbolSheet): string {
  if (sheet.path === "/") return dialect.rootSheetName;
  return dialect.sheetName === "path" ? sheet.path : sheet.name;
}
