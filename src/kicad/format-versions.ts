/**
 * KiCad's s-expression file formats, version by version: the one table of every difference
 * between them that copperhead reads or writes.
 *
 * Each file states its format in `(version YYYYMMDD)`. KiCad bumps that date whenever the
 * syntax or the meaning of a file changes (eeschema's `SEXPR_SCHEMATIC_FILE_VERSION` and
 * `SEXPR_SYMBOL_LIB_FILE_VERSION`, pcbnew's `SEXPR_BOARD_FILE_VERSION` histories), and its
 * readers branch on it. Every entry below is such a branch: the first version that has the
 * change, and what the file looks like before and after. Readers ask `has(version, change)`
 * to interpret a file the way kicad-cli does; writers ask it to put new nodes in the file's own
 * dialect, so an edit never upgrades a file (see ARCHITECTURE.md, "File formats").
 *
 * Versions between releases come from development builds; the entries follow KiCad's history
 * for them too, but the releases below are the formats found in real repositories.
 */

/** One difference between format versions. */
export interface FormatChange {
  /** The first file-format version that has the change (a file's `(version …)`). */
  readonly since: number;
  /** The change, and what files from before it hold instead. */
  readonly what: string;
}

/** True when a file of format `version` has `change`. */
export function has(version: number, change: FormatChange): boolean {
  return version >= change.since;
}

export type FormatKind = "schematic" | "board";

/** The format each KiCad release writes, oldest first. */
export const RELEASES: Readonly<Record<FormatKind, readonly { major: number; version: number }[]>> = {
  schematic: [
    { major: 6, version: 20211123 },
    { major: 7, version: 20230121 },
    { major: 8, version: 20231120 },
    { major: 9, version: 20250114 },
  ],
  board: [
    { major: 6, version: 20211014 },
    { major: 7, version: 20221018 },
    { major: 8, version: 20240108 },
    { major: 9, version: 20241229 },
  ],
};

/**
 * The KiCad major version that writes (or, for development versions, leads up to) format
 * `version`: 20230121 → 7, 20231001 → 8. Newer than the last release counts as the next major.
 */
export function kicadMajor(kind: FormatKind, version: number): number {
  const releases = RELEASES[kind];
  for (const release of releases) if (version <= release.version) return release.major;
  return releases[releases.length - 1]!.major + 1;
}

/** `KiCad 7 (20230121)`, for messages. */
export function describeVersion(kind: FormatKind, version: number): string {
  return `KiCad ${kicadMajor(kind, version)} (${version})`;
}

/**
 * The oldest s-expression schematic format (KiCad 5.99 development builds; KiCad 6.0 is
 * 20211123). Anything older is a legacy `.sch` file, which only KiCad itself converts.
 */
export const OLDEST_SCHEMATIC_VERSION = 20200310;

/**
 * Schematic files (`.kicad_sch`), including the library symbols they embed in `lib_symbols`,
 * which are read and written in the schematic's own version. Symbol library files
 * (`.kicad_sym`) follow the same syntax with their own version dates; `symbolLibraryVersion`
 * maps them onto this table.
 */
export const SCHEMATIC = {
  pinTypeNoConnect: {
    since: 20210123,
    what: "the pin electrical type `no_connect`; before, `unconnected`",
  },
  itemUuids: {
    since: 20210125,
    what: "wires, buses, labels, no-connect flags and bus entries carry `(uuid …)`",
  },
  rootUuid: {
    since: 20210406,
    what: "the schematic's own `(uuid …)`, the first element of every instance path; before, KiCad makes one up at load",
  },
  overbarBraces: {
    since: 20210606,
    what: "overbars are written `~{RESET}`; before, `~RESET~` (label text, pin names and numbers)",
  },
  junctionUuids: {
    since: 20211123,
    what: "junctions carry `(uuid …)`",
  },
  strokeWithoutColor: {
    since: 20220101,
    what: "wire and bus strokes are `(stroke (width 0) (type default))`; before, with `(color 0 0 0 0)`",
  },
  propertyIdsDropped: {
    since: 20220929,
    what: 'properties are `(property "Value" "1k" (at …))`; before, with a field number `(id 1)` after the value',
  },
  dnp: {
    since: 20220914,
    what: "placed symbols carry `(dnp yes|no)`",
  },
  symbolInstancesInSymbols: {
    since: 20221002,
    what:
      'each placed symbol holds its references in `(instances (project "name" (path "/root-uuid/…" (reference) (unit))))`; ' +
      'before, the root schematic lists every placed symbol in `(symbol_instances (path "/sheet-uuid…/symbol-uuid" (reference) (unit) (value) (footprint)))`, ' +
      "its paths without the root's uuid",
  },
  sheetInstancesInSheets: {
    since: 20221110,
    what:
      "each sheet symbol holds its page numbers in `(instances (project … (path … (page))))`; before, the root schematic's " +
      '`(sheet_instances (path "/sheet-uuid/" (page "2")))` lists every sheet (its paths without the root\'s uuid before 20221002)',
  },
  instanceValueDropped: {
    since: 20221126,
    what: "instance data holds only reference and unit; before, also `(value …)` and `(footprint …)`",
  },
  intersheetRefsName: {
    since: 20220929,
    what: "a global label's intersheet reference field is named `Intersheetrefs`; before, `Intersheet References` (with `(id 0)`)",
  },
  modernPowerSymbols: {
    since: 20230221,
    what:
      "a power symbol's Value names its net; in older files KiCad names the net after the symbol's hidden power-input " +
      "pin, and kicad-cli emulates that at load by setting the Value of every such power symbol to that pin's name " +
      "(SCH_SCREEN::FixLegacyPowerSymbolMismatches, keyed on the root schematic's version)",
  },
  excludeFromSim: {
    since: 20230409,
    what: "symbols (placed and in libraries), sheets and text carry `(exclude_from_sim yes|no)`",
  },
  descriptionField: {
    since: 20230620,
    what: "a symbol's description is the `Description` field; before, the library-only property `ki_description`",
  },
  v8Syntax: {
    since: 20231120,
    what:
      'KiCad 8\'s writer: every string quoted (uuids, `(generator "eeschema")`), `(generator_version)`, text effects with ' +
      "`(hide yes)` and `(fields_autoplaced yes)`, tab-indented one-item-per-line layout; before, bare `hide` and " +
      "`(fields_autoplaced)`, unquoted uuids and two-space indentation",
  },
  embeddedFiles: {
    since: 20240620,
    what: "the root schematic and each library symbol end with `(embedded_fonts no)`",
  },
  pinHideBoolean: {
    since: 20241004,
    what: "`pin_names`, `pin_numbers` and library pins carry `(hide yes)`; before, a bare `hide` atom",
  },
  sheetAttributes: {
    since: 20250114,
    what:
      "sheet symbols carry `(exclude_from_sim no) (in_bom yes) (on_board yes) (dnp no)` after their size; KiCad 8's " +
      "(20231120) have none (the earliest version known to write them is KiCad 9.0's)",
  },
  tildeIsText: {
    since: 20250318,
    what: "a value, pin name or pin number of `~` is a literal tilde; before, `~` means empty",
  },
} as const satisfies Record<string, FormatChange>;

/**
 * Symbol library (`.kicad_sym`) versions that introduced each schematic-side change, so a
 * library symbol can be compared with, and embedded in, a schematic of any version: a library
 * version is mapped to the earliest schematic version with the same symbol syntax.
 */
const SYMBOL_LIBRARY_TO_SCHEMATIC: readonly [libraryVersion: number, schematicVersion: number][] = [
  [20210619, SCHEMATIC.overbarBraces.since],
  [20220914, SCHEMATIC.propertyIdsDropped.since],
  [20230620, SCHEMATIC.descriptionField.since],
  [20231120, SCHEMATIC.v8Syntax.since],
  [20240529, SCHEMATIC.embeddedFiles.since],
  [20241209, SCHEMATIC.pinHideBoolean.since],
  [20250318, SCHEMATIC.tildeIsText.since],
];

/** The schematic format whose symbol syntax equals that of symbol library format `version`. */
export function symbolLibraryVersion(version: number): number {
  let schematic = OLDEST_SCHEMATIC_VERSION;
  for (const [library, equivalent] of SYMBOL_LIBRARY_TO_SCHEMATIC) if (version >= library) schematic = equivalent;
  return schematic;
}

/**
 * Board files (`.kicad_pcb`), by pcbnew's `SEXPR_BOARD_FILE_VERSION` history: the changes to
 * what board sync, placement and routing write. The release dialects below bundle most of them;
 * a change that a writer must check on its own (it has no older spelling, so older boards go
 * without it) is asked with `has(board.version, BOARD.…)`.
 */
export const BOARD = {
  strokes: {
    since: 20211229,
    what: "graphic line widths are `(stroke (width 0.12) (type solid))`; before, `(width 0.12)`",
  },
  soldermaskBridgesFlag: {
    since: 20211228,
    what: "a footprint may carry `(attr … allow_soldermask_bridges)`; KiCad 6 does not know the flag",
  },
  footprintDnp: {
    since: 20230410,
    what:
      'a footprint carries the symbol\'s "Do not populate" as `(attr … dnp)`; before (KiCad 7), a board has no DNP at all: ' +
      "it lives in the schematic only, and KiCad 7 cannot open a board holding the flag",
  },
  footprintFields: {
    since: 20230620,
    what: 'a footprint\'s Reference and Value are `(property "Reference" "R1" (at …) …)`; before, `(fp_text reference "R1" …)`',
  },
  v8Syntax: {
    since: 20231014,
    what:
      "KiCad 8's writer: item ids are `(uuid \"…\")`, every string quoted, a footprint's sheet is `(sheetname …)` and " +
      '`(sheetfile …)`; before, `(tstamp …)` with bare ids and `(property "Sheetname" …)`',
  },
  booleans: {
    since: 20231212,
    what: "yes/no flags are lists, `(locked yes)`, `(hide yes)`; before, bare atoms `locked`, `hide`",
  },
  embeddedFiles: {
    since: 20240706,
    what: "the board and each footprint may end with `(embedded_fonts no)` and `(embedded_files …)`",
  },
  netNames: {
    since: 20251028,
    what: 'pads, tracks, vias and zones name their net, `(net "GND")`, and the board has no net table; before, `(net 3 "GND")` and a numbered table',
  },
} as const satisfies Record<string, FormatChange>;

/**
 * Board files (`.kicad_pcb`) and footprints (`.kicad_mod`), as one dialect per release: what
 * board sync writes so that an edit keeps a board in its own format. A board from a
 * development build is written in the dialect of the release it leads up to. The facts were
 * read off boards each release wrote (the KiCad demos and the open-hardware corpus) and checked
 * by loading the edited files with kicad-cli 9.
 */
export type KicadRelease = 6 | 7 | 8 | 9 | 10;

export interface BoardDialect {
  release: KicadRelease;
  /** The `(version …)` the release writes (KiCad 10: anything newer than KiCad 9's). */
  version: number;
  /**
   * Reference and Value of a footprint: `(fp_text reference "R1" …)` up to KiCad 7,
   * `(property "Reference" "R1" …)` since KiCad 8 (other fields are properties too).
   * Up to KiCad 7 a `(property "name" "value")` is a bare key/value pair with no position.
   */
  textFields: "fp_text" | "property";
  /** Item ids: `(tstamp 1234abcd-…)` up to KiCad 7, `(uuid "1234abcd-…")` since KiCad 8. */
  ids: "tstamp" | "uuid";
  /** Yes/no flags: bare atoms (`locked`, `hide`) up to KiCad 7, `(locked yes)` since KiCad 8. */
  flags: "atom" | "list";
  /** Line widths: `(width 0.12)` in KiCad 6, `(stroke (width 0.12) (type solid))` since KiCad 7. */
  strokes: "width" | "stroke";
  /**
   * A footprint's sheet: `(property "Sheetname" …)` and `(property "Sheetfile" …)` up to
   * KiCad 7, `(sheetname …)` and `(sheetfile …)` since KiCad 8.
   */
  sheetData: "property" | "token";
  /**
   * How the sheet is named: by its own name (`"Power"`) up to KiCad 8, by its path from the
   * root (`"/Power/"`) since KiCad 9.
   */
  sheetName: "name" | "path";
  /** The root sheet's name in that field: `""` up to KiCad 7, `"Root"` in KiCad 8, `"/"` since 9. */
  rootSheetName: string;
  /** Nets: a numbered table with `(net 3 "GND")` on pads up to KiCad 9, `(net "GND")` in KiCad 10. */
  nets: "numbered" | "named";
}

/** The board `(version …)` KiCad `major` writes. */
function boardRelease(major: number): number {
  return RELEASES.board.find((r) => r.major === major)!.version;
}

const KICAD6: BoardDialect = {
  release: 6,
  version: boardRelease(6),
  textFields: "fp_text",
  ids: "tstamp",
  flags: "atom",
  strokes: "width",
  sheetData: "property",
  sheetName: "name",
  rootSheetName: "",
  nets: "numbered",
};
const KICAD7: BoardDialect = { ...KICAD6, release: 7, version: boardRelease(7), strokes: "stroke" };
const KICAD8: BoardDialect = {
  ...KICAD7,
  release: 8,
  version: boardRelease(8),
  textFields: "property",
  ids: "uuid",
  flags: "list",
  sheetData: "token",
  rootSheetName: "Root",
};
const KICAD9: BoardDialect = { ...KICAD8, release: 9, version: boardRelease(9), sheetName: "path", rootSheetName: "/" };
const KICAD10: BoardDialect = { ...KICAD9, release: 10, version: Number.POSITIVE_INFINITY, nets: "named" };

/** The board dialects, oldest first. */
export const BOARD_DIALECTS: readonly BoardDialect[] = [KICAD6, KICAD7, KICAD8, KICAD9, KICAD10];

/**
 * The dialect a board of this `(version …)` is written in: the first release whose version is
 * not older. A board without a version is taken as the newest format.
 */
export function boardDialect(version: number | undefined): BoardDialect {
  return BOARD_DIALECTS.find((d) => version !== undefined && version <= d.version) ?? KICAD10;
}
