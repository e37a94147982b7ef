/**
 * What a schematic file draws besides symbols, as read from it: wires and buses, bus entries,
 * junctions and no-connect markers, labels, and the sheet symbols that place its sub-sheets.
 * Positions are in KiCad's integer units (see kicad/schematic/geometry.ts).
 */
import type { SList } from "../../sexpr/index.ts";
import type { PointIu } from "../geometry.ts";
import type { Field } from "./symbols.ts";

export interface Line {
  node: SList;
  a: PointIu;
  b: PointIu;
}

export interface BusEntry {
  node: SList;
  at: PointIu;
  /** The other end: `at + size`. */
  end: PointIu;
}

export interface Marker {
  node: SList;
  at: PointIu;
}

export type LabelKind = "local" | "global" | "hierarchical";

export interface Label {
  node: SList;
  kind: LabelKind;
  text: string;
  at: PointIu;
  rotation: number;
  shape?: string;
}

export interface SheetPin {
  node: SList;
  name: string;
  shape: string;
  at: PointIu;
}

export interface SheetSymbol {
  node: SList;
  uuid: string;
  name: string;
  /** `Sheetfile` as written (relative to the parent file's directory). */
  fileName: string;
  at: PointIu;
  size: PointIu;
  pins: SheetPin[];
  onBoard: boolean;
  fields: Field[];
  /** Page number of each instance, keyed by the parent's instance path. */
  pages: Map<string, string>;
}
