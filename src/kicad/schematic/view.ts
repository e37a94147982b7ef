/**
 * `kicad/schematic/` holds the schematic document: this view, its per-version dialect, geometry,
 * connectivity, free space and wiring; `edit/` holds the edit operations and their transaction.
 * It reads only `sexpr/` and `library/`, never the netlist or the board (ARCHITECTURE.md).
 *
 * Typed, in-place view of a KiCad schematic project (a root `.kicad_sch` and the sheets it
 * pulls in).
 *
 * Every view object keeps the `SList` it was read from (`node`), so edit tools can change the
 * tree through the S-expression engine and print it back byte-for-byte elsewhere. The views are
 * read from the tree on demand and again after an edit says it changed the file (see
 * `SchematicFile`), so an edited project is never printed and parsed to be seen as it now is.
 * Geometry is converted to KiCad's integer units (see kicad/schematic/geometry.ts) because
 * connectivity compares positions exactly, the way eeschema does.
 *
 * A sheet file used by several sheet symbols is parsed once (one `SchematicFile`) but appears
 * as several `SheetInstance`s; per-instance data such as references and units is resolved
 * against the instance path, exactly like KiCad's `(instances (project … (path …)))` blocks.
 */
import { existsSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { CopperheadError } from "../../errors.ts";
import {
  atomText,
  child,
  children,
  childText,
  flag,
  head,
  isList,
  num,
  parseSexpr,
  readDesignBytes,
  text,
  type SDocument,
  type SList,
} from "../sexpr/index.ts";
import { has, OLDEST_SCHEMATIC_VERSION, SCHEMATIC } from "../format-versions.ts";
import { toIU, type PlacementIu as Placement, type PointIu as Point } from "./geometry.ts";
import { trimEndOf } from "../../util/trim.ts";

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
  at: Point;
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
  placement: Placement;
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

export interface Line {
  node: SList;
  a: Point;
  b: Point;
}

export interface BusEntry {
  node: SList;
  at: Point;
  /** The other end: `at + size`. */
  end: Point;
}

export interface Marker {
  node: SList;
  at: Point;
}

export type LabelKind = "local" | "global" | "hierarchical";

export interface Label {
  node: SList;
  kind: LabelKind;
  text: string;
  at: Point;
  rotation: number;
  shape?: string;
}

export interface SheetPin {
  node: SList;
  name: string;
  shape: string;
  at: Point;
}

export interface SheetSymbol {
  node: SList;
  uuid: string;
  name: string;
  /** `Sheetfile` as written (relative to the parent file's directory). */
  fileName: string;
  at: Point;
  size: Point;
  pins: SheetPin[];
  onBoard: boolean;
  fields: Field[];
  /** Page number of each instance, keyed by the parent's instance path. */
  pages: Map<string, string>;
}

/** A row of a KiCad 6 root schematic's `symbol_instances`, path as written. */
export interface LegacySymbolInstance {
  path: string;
  reference: string;
  unit: number;
  value?: string;
  footprint?: string;
}

/** What one file holds, read from its tree; see `SchematicFile`. */
interface FileItems {
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

/**
 * One `.kicad_sch` file: its lossless tree and the views of what it holds, read from the tree
 * on first use, the way `Board` reads a board. An edit changes the tree in place and then calls
 * `changed()`, which drops the views; the next question reads them from the changed tree again,
 * so nothing is printed or parsed after an edit. Views handed out before a change keep showing
 * the tree as it was (an edit plans with them, then changes the nodes they point at).
 *
 * In a project whose root predates `SCHEMATIC.symbolInstancesInSymbols` or
 * `SCHEMATIC.modernPowerSymbols`, what a symbol's Value and references are depends on the root
 * too (see `SchematicProject.resolveSymbols`); such a file reads its views again after the root
 * changed.
 */
export class SchematicFile {
  /** The file's `(version …)`; see format.ts for what each version means. */
  readonly version: number;
  readonly uuid: string;
  #doc: SDocument;
  #items?: FileItems;
  /** The project's resolution stamp the items were resolved for; -1 for none. */
  #stamp = -1;
  #changes = 0;
  #project?: SchematicProject;

  constructor(
    readonly path: string,
    doc: SDocument,
  ) {
    const root = doc.root;
    if (!isList(root, "kicad_sch")) {
      throw new CopperheadError("parse_error", `${path}: not a KiCad schematic (root is not kicad_sch)`, {
        file: path,
        fix: "Pass a .kicad_sch file saved by KiCad 6 or later.",
      });
    }
    const version = Number(childText(root, "version") ?? 0);
    if (!(version >= OLDEST_SCHEMATIC_VERSION)) {
      throw new CopperheadError("parse_error", `${path}: schematic format version ${childText(root, "version") ?? "(none)"} is not one KiCad ever wrote`, {
        file: path,
        fix: "Open the project in KiCad 6 or newer, save it, and run copperhead again.",
      });
    }
    this.#doc = doc;
    this.version = version;
    this.uuid = childText(root, "uuid") ?? "";
  }

  /** The lossless tree; edits change it in place (and then call `changed`). */
  get doc(): SDocument {
    return this.#doc;
  }

  /** How many times the tree changed since it was read. */
  get changes(): number {
    return this.#changes;
  }

  /** Root-level `symbol_instances` (KiCad 6 files), as written. */
  get symbolInstances(): LegacySymbolInstance[] {
    return this.items().symbolInstances;
  }
  /** Root-level `sheet_instances`: page numbers by path, as written. */
  get sheetInstances(): { path: string; page: string }[] {
    return this.items().sheetInstances;
  }
  get libSymbols(): Map<string, LibSymbol> {
    return this.items().libSymbols;
  }
  get symbols(): PlacedSymbol[] {
    return this.items().symbols;
  }
  get wires(): Line[] {
    return this.items().wires;
  }
  get buses(): Line[] {
    return this.items().buses;
  }
  get busEntries(): BusEntry[] {
    return this.items().busEntries;
  }
  get junctions(): Marker[] {
    return this.items().junctions;
  }
  get noConnects(): Marker[] {
    return this.items().noConnects;
  }
  get labels(): Label[] {
    return this.items().labels;
  }
  get sheets(): SheetSymbol[] {
    return this.items().sheets;
  }
  /** `(bus_alias "NAME" (members …))` definitions; eeschema pools them across all sheets. */
  get busAliases(): Map<string, string[]> {
    return this.items().busAliases;
  }

  /** Says the tree was changed in place: the views are read from it again when next asked for. */
  changed(): void {
    this.#items = undefined;
    this.#changes++;
    this.#project?.fileChanged();
  }

  /** Puts the file back to `source` (an earlier print of it), as a rollback does. */
  restore(source: Uint8Array): void {
    this.#doc = parseSexpr(source, { file: this.path });
    this.changed();
  }

  /** Makes the file part of `project`, whose load-time resolution its views then get. */
  attach(project: SchematicProject): void {
    this.#project = project;
  }

  private items(): FileItems {
    const stamp = this.#project?.resolutionStamp() ?? -1;
    let items = this.#items;
    if (items && this.#stamp === stamp) return items;
    // Resolution changes the symbols in place, so it starts from views read afresh.
    if (!items || this.#stamp !== -1) items = readItems(this.#doc.root, this.version);
    this.#items = items;
    this.#stamp = stamp;
    if (stamp !== -1) this.#project!.resolveSymbols(this, items.symbols);
    return items;
  }
}

export interface SheetInstance {
  /** KiCad instance path: `/rootuuid` for the root, `/rootuuid/sheetuuid/…` below it. */
  readonly path: string;
  /** Human path used as a net-name prefix: `/` for the root, `/Sub/` below it. */
  readonly humanPath: string;
  /** Number of sheets from the root, root = 1 (KiCad's SCH_SHEET_PATH::size()). */
  readonly depth: number;
  /** Page number as written in the sheet's instance data ("1" for the root). */
  page: string;
  readonly file: SchematicFile;
  /** Sheet symbol (in the parent's file) that placed this instance, as the parent's views show it now; absent for the root. */
  readonly sheet?: SheetSymbol;
  readonly parent?: SheetInstance;
  readonly children: SheetInstance[];
}

/**
 * Loads a schematic project from its root `.kicad_sch`, following sheet symbols recursively,
 * and resolves what KiCad resolves at load time across files (see `SchematicProject`).
 * Throws `not_found` for a missing file, `sheet_recursion` when a sheet contains itself and
 * `legacy_format` for a KiCad 5 `.sch`.
 *
 * Every file is read through the repo's confined reader: a sheet must resolve inside `within`
 * (the repo root; by default the root schematic's folder) and be a regular file under the size
 * cap, so a hostile `Sheetfile` (`/dev/zero`, `/dev/stdin`, `../../etc/passwd`) reads nothing.
 */
export function loadSchematicProject(rootPath: string, options: { within?: string } = {}): SchematicProject {
  const absRoot = resolve(rootPath);
  const within = options.within ?? dirname(absRoot);
  const files = new Map<string, SchematicFile>();
  const load = (path: string, referencedFrom?: string): SchematicFile => {
    const cached = files.get(path);
    if (cached) return cached;
    const sheetFix = referencedFrom ? `Restore ${basename(path)} or fix the Sheetfile property of the sheet in ${basename(referencedFrom)}.` : undefined;
    if (!existsSync(path)) {
      throw new CopperheadError("not_found", `Schematic file not found: ${path}`, {
        file: path,
        referencedFrom,
        fix: sheetFix ?? "Check the path to the root .kicad_sch file.",
      });
    }
    let source: Uint8Array;
    try {
      source = readDesignBytes(path, { within });
    } catch (err) {
      if (err instanceof CopperheadError && referencedFrom) {
        throw new CopperheadError(err.code, `${err.message} (the Sheetfile of a sheet in ${basename(referencedFrom)} names it)`, {
          ...err.details,
          referencedFrom,
          fix: `Point the sheet's Sheetfile in ${basename(referencedFrom)} at a schematic file inside the repository.`,
        });
      }
      throw err;
    }
    const file = readSchematicFile(path, source);
    files.set(path, file);
    return file;
  };

  const rootFile = load(absRoot);
  const root: SheetInstance = {
    path: `/${rootFile.uuid || LEGACY_ROOT_UUID}`,
    humanPath: "/",
    depth: 1,
    page: "1",
    file: rootFile,
    children: [],
  };
  const instances: SheetInstance[] = [];
  // Depth-first with an explicit stack; the chain of files above each instance detects cycles.
  const stack: { instance: SheetInstance; chain: string[] }[] = [{ instance: root, chain: [absRoot] }];
  while (stack.length > 0) {
    const { instance, chain } = stack.pop()!;
    instances.push(instance);
    const created: { instance: SheetInstance; chain: string[] }[] = [];
    const parentFile = instance.file;
    parentFile.sheets.forEach((sheet, index) => {
      const childPath = resolve(dirname(parentFile.path), sheet.fileName);
      if (chain.includes(childPath)) {
        throw new CopperheadError("sheet_recursion", `Sheet "${sheet.name}" in ${basename(parentFile.path)} includes ${basename(childPath)}, which contains it: the hierarchy is recursive.`, {
          file: parentFile.path,
          sheet: sheet.name,
          fix: "Point the sheet's Sheetfile at a schematic that does not (directly or indirectly) contain this sheet.",
        });
      }
      const file = load(childPath, parentFile.path);
      const childInstance: SheetInstance = {
        path: `${instance.path}/${sheet.uuid}`,
        humanPath: `${instance.humanPath}${sheet.name}/`,
        depth: instance.depth + 1,
        page: "",
        file,
        // No edit adds or removes a sheet symbol, so its place among the parent's sheets holds.
        get sheet() {
          return parentFile.sheets[index];
        },
        parent: instance,
        children: [],
      };
      instance.children.push(childInstance);
      created.push({ instance: childInstance, chain: [...chain, childPath] });
    });
    for (let i = created.length - 1; i >= 0; i--) stack.push(created[i]!);
  }
  return new SchematicProject(absRoot, files, root, instances);
}

/** Files from before `SCHEMATIC.rootUuid` have no uuid; KiCad invents one per load, so any stand-in works. */
const LEGACY_ROOT_UUID = "00000000-0000-0000-0000-000000000000";

/**
 * A loaded schematic project, and what KiCad's loader (EESCHEMA_HELPERS::LoadSchematic) settles
 * across its files:
 *
 * - page numbers: each sheet symbol's `(instances)`, overridden by the root's `sheet_instances`
 *   (which is where KiCad 6 keeps them all), and the sheet order that follows from them, settled
 *   at load (no edit adds, removes or renumbers a sheet);
 * - references and units: each symbol's `(instances)`, overridden in a KiCad 6 project by the
 *   root's `symbol_instances` (UpdateSymbolInstanceData, which also takes the Value from there);
 * - in a project whose root predates `SCHEMATIC.modernPowerSymbols`, the Value of every legacy
 *   power symbol becomes its hidden power pin's name (FixLegacyPowerSymbolMismatches);
 * - bus aliases, pooled over every sheet.
 *
 * The last three follow edits: each file's views get them when they are read (`resolveSymbols`),
 * and again after the root changed when they depend on it. KiCad keys both version-dependent
 * steps on the root schematic's version, whatever the version of the sheet a symbol sits on.
 */
export class SchematicProject {
  readonly projectName: string;
  /** Every sheet instance, in page order (KiCad's sheet list order); the root first. */
  readonly instances: SheetInstance[];
  readonly #legacyInstances: boolean;
  readonly #legacyPower: boolean;
  #revision = 0;
  #busAliases?: { revision: number; aliases: Map<string, string[]> };
  #legacyRows?: { changes: number; rows: Map<string, LegacySymbolInstance> };
  #instancesOf?: Map<SchematicFile, SheetInstance[]>;

  constructor(
    readonly rootPath: string,
    readonly files: Map<string, SchematicFile>,
    readonly root: SheetInstance,
    instances: SheetInstance[],
  ) {
    this.projectName = basename(rootPath).replace(/\.kicad_sch$/, "");
    const rootFile = root.file;
    const rootVersion = rootFile.version;
    this.#legacyInstances = !has(rootVersion, SCHEMATIC.symbolInstancesInSymbols) && rootFile.symbolInstances.length > 0;
    this.#legacyPower = !has(rootVersion, SCHEMATIC.modernPowerSymbols);
    const pages = new Map(rootFile.sheetInstances.map((s): [string, string] => [this.fullPath(s.path, !has(rootVersion, SCHEMATIC.symbolInstancesInSymbols)), s.page]));
    for (const instance of instances) {
      const own = instance.sheet && instance.parent ? instance.sheet.pages.get(instance.parent.path) : "1";
      instance.page = pages.get(instance.path) ?? own ?? "";
    }
    this.instances = instances.sort((a, b) =>
      a === root ? -1 : b === root ? 1 : a.page.localeCompare(b.page, "en", { numeric: true }) || (a.path < b.path ? -1 : 1),
    );
    for (const file of files.values()) file.attach(this);
  }

  /** Bus aliases of every sheet, pooled (the first definition of a name wins). */
  get busAliases(): Map<string, string[]> {
    if (this.#busAliases?.revision === this.#revision) return this.#busAliases.aliases;
    const aliases = new Map<string, string[]>();
    for (const file of this.files.values()) {
      for (const [name, members] of file.busAliases) if (!aliases.has(name)) aliases.set(name, members);
    }
    this.#busAliases = { revision: this.#revision, aliases };
    return aliases;
  }

  /** Counts changes to any file of the project (see `SchematicFile.changed`). */
  get revision(): number {
    return this.#revision;
  }

  /** The sheet instances a file appears in. */
  instancesOf(file: SchematicFile): SheetInstance[] {
    this.#instancesOf ??= Map.groupBy(this.instances, (i) => i.file);
    return this.#instancesOf.get(file) ?? [];
  }

  /** @internal Called by a file of the project when its tree changed. */
  fileChanged(): void {
    this.#revision++;
  }

  /**
   * @internal What the files' resolved views depend on beyond their own tree: in a project
   * whose symbol data is settled from the root (see the class), the root's changes; else nothing.
   */
  resolutionStamp(): number {
    return this.#legacyInstances ? this.root.file.changes : 0;
  }

  /** @internal Applies what the loader settles across files to the freshly read symbols of `file`. */
  resolveSymbols(file: SchematicFile, symbols: PlacedSymbol[]): void {
    if (this.#legacyInstances) {
      const rows = this.legacyRows();
      for (const instance of this.instancesOf(file)) {
        for (const symbol of symbols) {
          const row = rows.get(`${instance.path}/${symbol.uuid}`);
          if (!row) continue;
          symbol.instances = symbol.instances.filter((i) => i.path !== instance.path);
          symbol.instances.push({ project: this.projectName, path: instance.path, reference: row.reference, unit: row.unit });
          if (row.value) symbol.value = row.value;
          if (row.footprint) symbol.footprint = row.footprint;
        }
      }
    }
    if (this.#legacyPower) {
      for (const symbol of symbols) {
        const pin = symbol.lib?.power ? symbol.lib.pins[0] : undefined;
        if (pin && pin.type === "power_in" && pin.hidden) symbol.value = pin.name;
      }
    }
  }

  /** The root's `symbol_instances` rows by full instance path, read again after the root changed. */
  private legacyRows(): Map<string, LegacySymbolInstance> {
    const rootFile = this.root.file;
    if (this.#legacyRows?.changes === rootFile.changes) return this.#legacyRows.rows;
    const rows = new Map(rootFile.symbolInstances.map((row) => [this.fullPath(row.path, true), row]));
    this.#legacyRows = { changes: rootFile.changes, rows };
    return rows;
  }

  /** KiCad 6 wrote instance paths without the root's uuid; the loader puts it in front. */
  private fullPath(path: string, addRoot: boolean): string {
    const trimmed = trimEndOf(path, "/");
    return addRoot ? this.root.path + trimmed : trimmed || this.root.path;
  }
}

/**
 * Parses one `.kicad_sch` file (no sheet following). Text that is not an s-expression
 * schematic is a `legacy_format` error when it is a KiCad 5 schematic and a `parse_error`
 * otherwise.
 */
export function readSchematicFile(path: string, source: Uint8Array | string): SchematicFile {
  if (isLegacySchematic(source)) throw legacySchematicError(path);
  return new SchematicFile(path, parseSexpr(source, { file: path }));
}

/** A library symbol as `lib_symbols` embeds it (`def`), read into a view with the file reader's rules for `version`. */
export function readLibSymbol(def: SList, version: number): LibSymbol | undefined {
  const holder: SList = { type: "list", pre: "", items: [{ type: "atom", pre: "", raw: "lib_symbols" }, def], post: "", start: -1 };
  return new Reader(version).libSymbols(holder).get(text(def, 1) ?? "");
}

/** Reads the items of a file's tree into their views, each item list visited once. */
function readItems(root: SList, version: number): FileItems {
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
        const names = members ? members.items.slice(1).map((_, i) => read.busAliasMember(text(members, i + 1) ?? "")) : [];
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
        for (const path of children(item, "path")) file.sheetInstances.push({ path: text(path, 1) ?? "", page: childText(path, "page") ?? "" });
        break;
    }
  }
  return file;
}

/** A KiCad 5 (and older) schematic starts with this header line instead of a list. */
const LEGACY_SCHEMATIC = /^\s*EESchema Schematic File/;

function isLegacySchematic(source: Uint8Array | string): boolean {
  const start = typeof source === "string" ? source.slice(0, 64) : String.fromCharCode(...source.subarray(0, 64));
  return LEGACY_SCHEMATIC.test(start);
}

export function legacySchematicError(path: string): CopperheadError {
  return new CopperheadError("legacy_format", `${path} is a KiCad 5 (legacy .sch) schematic; copperhead reads the s-expression formats of KiCad 6 and later.`, {
    file: path,
    fix: "Open the project in KiCad 6 or newer and save it (KiCad converts it to .kicad_sch), then run copperhead again.",
  });
}

// Reading runs over every item of every sheet. Each item list is visited once, by its head,
// and what is read of the lists inside it goes through `head`/`text`/`num`, which the parsed
// tree answers without building those lists' nodes.

/** The number at `index` of a list, 0 when absent. */
function numberAt(list: SList | undefined, index: number): number {
  return (list && num(list, index)) ?? 0;
}

function pointOf(list: SList | undefined): Point {
  return { x: toIU(numberAt(list, 1)), y: toIU(numberAt(list, 2)) };
}

function readAt(list: SList): Point {
  return pointOf(child(list, "at"));
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
  return { node: list, a: pointOf(a), b: pointOf(b) };
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
          children(project, "path").map((path): [string, string] => [text(path, 1) ?? "", childText(path, "page") ?? ""]),
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
        at: pointOf(at),
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
        for (const pin of unitNode.items) if (pin.type === "list" && head(pin) === "pin") pins.push(this.libPin(pin, unit, bodyStyle));
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
      at: pointOf(at),
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

/** Name and electrical type of a pin on a placed symbol, honouring a chosen alternate. */
export function effectivePin(symbol: PlacedSymbol, pin: LibPin): { name: string; type: PinElectricalType } {
  const altName = symbol.pinAlternates.get(pin.number);
  const alt = altName ? pin.alternates.find((a) => a.name === altName) : undefined;
  if (alt) return { name: alt.name, type: alt.type };
  return { name: pin.name, type: pin.type };
}

/** Value of a field by name (`Reference`, `Value`, …). */
export function fieldValue(symbol: PlacedSymbol | SheetSymbol, name: string): string | undefined {
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
