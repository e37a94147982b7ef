/**
 * `docs/BOM.md`: a bill of materials that is part generated, part human.
 *
 * The generated part is a markdown table between two marker comments:
 *
 *     <!-- copperhead:bom:begin sha256=<hex> -->
 *     | Ref | Value | Footprint | MPN | DNP | Notes |
 *     | --- | --- | --- | --- | --- | --- |
 *     | C1 | 1u | Capacitor_SMD:C_0603_1608Metric | GRM188R61E105KA12D |  |  |
 *     | R9 | 4k7 | Resistor_SMD:R_0603_1608Metric |  | DNP |  |
 *     <!-- copperhead:bom:end -->
 *
 * - One row per component that is in the BOM, in natural ref order (R2 before R10).
 * - A part marked do-not-populate keeps its row, with `DNP` in the DNP column, so nobody orders
 *   or fits it by mistake (KiCad's own BOM export marks it the same way). A table written before
 *   the column existed is still read; it drifts only once a part in it is DNP.
 * - Ref, Value, Footprint, MPN and DNP are copperhead's, derived from the schematic; drift between
 *   them and the design is a `drift` finding. Any other column (Notes, Supplier, …) is the
 *   human's and is carried over by ref when the table is regenerated. Text outside the markers
 *   is never touched.
 * - The begin marker stores a hash of the generated cells only, so editing a human column is
 *   free, but a hand edit to a generated cell is detectable: regenerating would silently undo
 *   it, so `init` refuses unless forced.
 * - No dates or versions: the same design always renders the same bytes.
 */
import type { Component } from "../kicad/netlist/components.ts";
import { naturalCompare } from "../util/natural-compare.ts";
import {
  beginMarker,
  contentHash,
  endMarker,
  findGeneratedRegion,
  replaceGeneratedRegion,
} from "./generated-region.ts";
import { isRuleRow, splitTableRow, tableRow, tableRule } from "./markdown-table.ts";

export const BOM_FILE = "BOM.md";
/** The name in the generated region's markers. */
const REGION = "bom";

/** The generated columns, in order; matched case-insensitively when parsing. */
export const GENERATED_COLUMNS = ["Ref", "Value", "Footprint", "MPN", "DNP"] as const;
/** Generated columns a table may lack: it was written before they existed. */
const OPTIONAL_COLUMNS: readonly string[] = ["DNP"];
/** The DNP cell of a part that is not fitted. */
export const DNP_MARK = "DNP";
/** The human column a fresh table starts with. */
const DEFAULT_HUMAN_COLUMNS = ["Notes"];

/** The generated cells of one row. */
export interface BomLine {
  ref: string;
  value: string;
  footprint: string;
  mpn: string;
  /** `DNP` when the part is not fitted, else empty. */
  dnp: string;
}

export interface BomRow extends BomLine {
  /** Human-owned cells by column name. */
  human: Record<string, string>;
  /** 1-based line in the markdown file. */
  line: number;
}

export interface BomTable {
  /** 1-based lines of the begin and end markers. */
  beginLine: number;
  endLine: number;
  /** Hash stored in the begin marker; absent when the marker has none (written by hand). */
  storedHash?: string;
  /** Hash of the generated cells as they are now. */
  hash: string;
  /** The generated cells changed since copperhead wrote them. */
  edited: boolean;
  /** The header's columns as written; empty when the region has no table yet. */
  columns: string[];
  /** Generated columns the header lacks (a human deleted one). */
  missingColumns: string[];
  /** Human-owned columns, in the order the header has them. */
  humanColumns: string[];
  rows: BomRow[];
}

/** Field names that carry a manufacturer part number, compared without case or punctuation. */
const MPN_FIELDS = ["mpn", "manufacturerpartnumber", "mfrpn", "mfrpartnumber", "mfrno"];

/** A component's manufacturer part number, from its `MPN` field or a common synonym. */
export function componentMpn(component: Component): string {
  const byKey = new Map<string, string>();
  for (const [name, value] of Object.entries(component.fields)) {
    const key = name.toLowerCase().replace(/[^a-z0-9]/g, "");
    if (!byKey.has(key)) byKey.set(key, value);
  }
  for (const key of MPN_FIELDS) {
    const value = byKey.get(key)?.trim();
    if (value) return value;
  }
  return "";
}

/** The generated rows for a design: components in the BOM, in natural ref order. */
export function bomLines(components: readonly Component[]): BomLine[] {
  return components
    .filter((c) => c.inBom)
    .map((c) => ({
      ref: c.ref,
      value: c.value,
      footprint: c.footprint,
      mpn: componentMpn(c),
      dnp: c.dnp ? DNP_MARK : "",
    }))
    .sort((a, b) => naturalCompare(a.ref, b.ref));
}

/**
 * Hash of the generated cells: what the begin marker stores. An empty DNP cell is left out, so
 * a table written before the DNP column existed keeps its hash.
 */
export function bomHash(lines: readonly BomLine[]): string {
  return contentHash(lines.map((l) => [l.ref, l.value, l.footprint, l.mpn, ...(l.dnp ? [l.dnp] : [])]));
}

/**
 * Reads the generated table out of a BOM.md. Returns undefined when the file has no begin
 * marker; throws `parse_error` (with the line) for a begin marker without an end.
 */
export function parseBom(markdown: string, file: string = `docs/${BOM_FILE}`): BomTable | undefined {
  const lines = markdown.split(/\r?\n/);
  const region = findGeneratedRegion(lines, REGION, file);
  if (!region) return undefined;
  const { begin, end, storedHash } = region;

  let header: string[] | undefined;
  const rows: BomRow[] = [];
  for (let i = begin + 1; i < end; i++) {
    const text = lines[i]!.trim();
    if (!text.startsWith("|")) continue;
    const cells = splitTableRow(text);
    if (!header) {
      header = cells;
      continue;
    }
    if (isRuleRow(cells)) continue;
    const byColumn = new Map<string, string>();
    header.forEach((name, index) => byColumn.set(name, cells[index] ?? ""));
    const generated = (column: string) => byColumn.get(findColumn(header!, column) ?? "") ?? "";
    const ref = generated("Ref");
    if (!ref) continue;
    const human: Record<string, string> = {};
    for (const name of header) if (!isGeneratedColumn(name)) human[name] = byColumn.get(name) ?? "";
    rows.push({
      ref,
      value: generated("Value"),
      footprint: generated("Footprint"),
      mpn: generated("MPN"),
      dnp: generated("DNP"),
      human,
      line: i + 1,
    });
  }
  const columns = header ?? [];
  const hash = bomHash(rows);
  return {
    beginLine: begin + 1,
    endLine: end + 1,
    storedHash,
    hash,
    edited: storedHash !== undefined && storedHash !== hash,
    columns,
    missingColumns: GENERATED_COLUMNS.filter(
      (c) => !OPTIONAL_COLUMNS.includes(c) && findColumn(columns, c) === undefined,
    ),
    humanColumns: columns.filter((c) => !isGeneratedColumn(c)),
    rows,
  };
}

/**
 * The whole BOM.md for a design. With `existing`, everything outside the markers and every
 * human column is kept (cells matched by ref); a file without markers gets the table appended.
 * Whether a hand-edited generated region may be overwritten is the caller's decision.
 */
export function renderBom(
  design: { project: { name: string }; components: readonly Component[] },
  existing?: string,
): string {
  const lines = bomLines(design.components);
  if (existing === undefined) return [...preamble(design.project.name), ...renderTable(lines), ""].join("\n");
  const table = parseBom(existing);
  const humanByRef = new Map(table?.rows.map((r) => [r.ref, r.human]));
  const humanColumns = table && table.columns.length > 0 ? table.humanColumns : DEFAULT_HUMAN_COLUMNS;
  return replaceGeneratedRegion(existing, REGION, renderTable(lines, humanColumns, humanByRef), `docs/${BOM_FILE}`);
}

function preamble(projectName: string): string[] {
  return [
    `# Bill of materials: ${projectName}`,
    "",
    "The table between the copperhead markers is generated from the schematic. Its Ref, Value,",
    "Footprint, MPN and DNP columns belong to copperhead (DNP: not fitted, do not order or place):",
    "change the design (or a symbol's MPN field), not these cells. `copperhead init` and `copperhead do`",
    "regenerate them and `copperhead check` reports any row that disagrees with the design. Every other",
    "column, such as Notes, is yours: kept, matched by Ref; text outside the markers is never touched.",
    "",
  ];
}

function renderTable(
  lines: readonly BomLine[],
  humanColumns: readonly string[] = DEFAULT_HUMAN_COLUMNS,
  humanByRef: ReadonlyMap<string, Record<string, string>> = new Map(),
): string[] {
  const columns = [...GENERATED_COLUMNS, ...humanColumns];
  const out = [beginMarker(REGION, bomHash(lines)), tableRow(columns), tableRule(columns.length)];
  for (const l of lines) {
    const human = humanByRef.get(l.ref) ?? {};
    out.push(tableRow([l.ref, l.value, l.footprint, l.mpn, l.dnp, ...humanColumns.map((c) => human[c] ?? "")]));
  }
  out.push(endMarker(REGION));
  return out;
}

function isGeneratedColumn(name: string): boolean {
  return GENERATED_COLUMNS.some((c) => c.toLowerCase() === name.toLowerCase());
}

function findColumn(header: readonly string[], column: string): string | undefined {
  return header.find((h) => h.toLowerCase() === column.toLowerCase());
}
