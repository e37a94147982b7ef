/**
 * `kicad/schematic/` holds the schematic document: its model (`model/`: this hierarchy, each file
 * and what is read from it), its per-version dialect, geometry, connectivity, free space and wiring; `edit/` holds the edit operations and their transaction.
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
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { readDesignBytes } from "../../sexpr/index.ts";
import { has, SCHEMATIC } from "../../format-versions.ts";
import { trimEndOf } from "../../../util/trim.ts";
import type { LegacySymbolInstance } from "./read-items.ts";
import { readSchematicFile, type SchematicFile } from "./schematic-file.ts";
import type { PlacedSymbol } from "./symbols.ts";
import type { SheetSymbol } from "./sheet-items.ts";

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
    const sheetFix = referencedFrom
      ? `Restore ${basename(path)} or fix the Sheetfile property of the sheet in ${basename(referencedFrom)}.`
      : undefined;
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
        throw new CopperheadError(
          err.code,
          `${err.message} (the Sheetfile of a sheet in ${basename(referencedFrom)} names it)`,
          {
            ...err.details,
            referencedFrom,
            fix: `PointIu the sheet's Sheetfile in ${basename(referencedFrom)} at a schematic file inside the repository.`,
          },
        );
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
    parentFile.sheets.forEach((sheet) => {
      const childPath = resolve(dirname(parentFile.path), sheet.fileName);
      if (chain.includes(childPath)) {
        throw new CopperheadError(
          "sheet_recursion",
          `Sheet "${sheet.name}" in ${basename(parentFile.path)} includes ${basename(childPath)}, which contains it: the hierarchy is recursive.`,
          {
            file: parentFile.path,
            sheet: sheet.name,
            fix: "PointIu the sheet's Sheetfile at a schematic that does not (directly or indirectly) contain this sheet.",
          },
        );
      }
      const childInstance = childSheetInstance(instance, sheet, load(childPath, parentFile.path));
      instance.children.push(childInstance);
      created.push({ instance: childInstance, chain: [...chain, childPath] });
    });
    for (let i = created.length - 1; i >= 0; i--) stack.push(created[i]!);
  }
  return new SchematicProject(absRoot, files, root, instances);
}

/**
 * The instance of `file` that `sheet` (a sheet symbol of `parent`'s file) places. Its sheet
 * symbol is looked up by uuid as the parent's views show it now, so it follows edits to the
 * parent, a new sheet symbol inserted before it among them included.
 */
function childSheetInstance(parent: SheetInstance, sheet: SheetSymbol, file: SchematicFile): SheetInstance {
  const uuid = sheet.uuid;
  return {
    path: `${parent.path}/${uuid}`,
    humanPath: `${parent.humanPath}${sheet.name}/`,
    depth: parent.depth + 1,
    page: "",
    file,
    get sheet() {
      return parent.file.sheets.find((s) => s.uuid === uuid);
    },
    parent,
    children: [],
  };
}

/** Files from before `SCHEMATIC.rootUuid` have no uuid; KiCad invents one per load, so any stand-in works. */
const LEGACY_ROOT_UUID = "00000000-0000-0000-0000-000000000000";

/**
 * A loaded schematic project, and what KiCad's loader (EESCHEMA_HELPERS::LoadSchematic) settles
 * across its files:
 *
 * - page numbers: each sheet symbol's `(instances)`, overridden by the root's `sheet_instances`
 *   (which is where KiCad 6 keeps them all), and the sheet order that follows from them, settled
 *   at load (an edit adds a sheet only as the last page, see `addSheet`);
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
  #settings?: ProjectSettings;
  #globalPages?: { revision: number; pages: Map<string, SheetInstance[]> };

  constructor(
    readonly rootPath: string,
    readonly files: Map<string, SchematicFile>,
    readonly root: SheetInstance,
    instances: SheetInstance[],
  ) {
    this.projectName = basename(rootPath).replace(/\.kicad_sch$/, "");
    const rootFile = root.file;
    const rootVersion = rootFile.version;
    this.#legacyInstances =
      !has(rootVersion, SCHEMATIC.symbolInstancesInSymbols) && rootFile.symbolInstances.length > 0;
    this.#legacyPower = !has(rootVersion, SCHEMATIC.modernPowerSymbols);
    const pages = new Map(
      rootFile.sheetInstances.map((s): [string, string] => [
        this.fullPath(s.path, !has(rootVersion, SCHEMATIC.symbolInstancesInSymbols)),
        s.page,
      ]),
    );
    for (const instance of instances) {
      const own = instance.sheet && instance.parent ? instance.sheet.pages.get(instance.parent.path) : "1";
      instance.page = pages.get(instance.path) ?? own ?? "";
    }
    this.instances = instances.sort((a, b) =>
      a === root
        ? -1
        : b === root
          ? 1
          : a.page.localeCompare(b.page, "en", { numeric: true }) || (a.path < b.path ? -1 : 1),
    );
    for (const file of files.values()) file.attach(this);
  }

  /**
   * Makes a new sheet file part of the project, placed by `sheet` (a sheet symbol already in
   * the file of `parent`, a single-instance sheet) on page `page`; returns its instance. The
   * page order still holds: a new sheet takes the page after the last.
   */
  addSheet(parent: SheetInstance, sheet: SheetSymbol, file: SchematicFile, page: string): SheetInstance {
    const instance = childSheetInstance(parent, sheet, file);
    instance.page = page;
    parent.children.push(instance);
    this.instances.push(instance);
    this.files.set(file.path, file);
    file.attach(this);
    this.#instancesOf = undefined;
    this.fileChanged();
    return instance;
  }

  /** Takes a sheet `addSheet` added out of the project again (a rolled back edit). */
  removeSheet(instance: SheetInstance): void {
    const siblings = instance.parent?.children;
    siblings?.splice(siblings.indexOf(instance), 1);
    this.instances.splice(this.instances.indexOf(instance), 1);
    this.files.delete(instance.file.path);
    this.#instancesOf = undefined;
    this.fileChanged();
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

  /** The project's text variables, from the `.kicad_pro` beside the root (read once). */
  get textVariables(): ReadonlyMap<string, string> {
    return this.settings().textVariables;
  }

  /** What the schematics read of the `.kicad_pro` beside the root, read once. */
  private settings(): ProjectSettings {
    this.#settings ??= readProjectSettings(this.rootPath.replace(/\.kicad_sch$/, ".kicad_pro"));
    return this.#settings;
  }

  /**
   * What eeschema draws as the page references of a global label `name` on `file` (its
   * `${INTERSHEET_REFS}` field): the pages of the other sheets that have a global label of that
   * name, as the project's schematic settings format them ("[2,3]", "[2..5]"); undefined when
   * the project does not show them. A file placed on several pages gets the longest of its lists.
   */
  intersheetRefs(file: SchematicFile, name: string): string | undefined {
    const style = this.settings().pageRefs;
    if (!style) return undefined;
    if (this.#globalPages?.revision !== this.#revision) {
      const pages = new Map<string, SheetInstance[]>();
      for (const instance of this.instances) {
        const names = new Set(instance.file.labels.filter((l) => l.kind === "global").map((l) => l.text));
        for (const label of names) pages.set(label, [...(pages.get(label) ?? []), instance]);
      }
      this.#globalPages = { revision: this.#revision, pages };
    }
    const on = this.#globalPages.pages.get(name) ?? [];
    const texts = this.instancesOf(file).map((own) => {
      const listed = on.filter((i) => style.ownPage || i !== own).map((i) => i.page);
      const list = style.short && listed.length > 2 ? `${listed[0]}..${listed.at(-1)}` : listed.join(",");
      return `${style.prefix}${list}${style.suffix}`;
    });
    return texts.reduce((a, b) => (b.length > a.length ? b : a), `${style.prefix}${style.suffix}`);
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
          symbol.instances.push({
            project: this.projectName,
            path: instance.path,
            reference: row.reference,
            unit: row.unit,
          });
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

/** How a project's schematics draw global labels' page references (`schematic.drawing` in its `.kicad_pro`). */
interface PageRefStyle {
  ownPage: boolean;
  short: boolean;
  prefix: string;
  suffix: string;
}

/** What the schematics read of a `.kicad_pro`. */
interface ProjectSettings {
  /** `text_variables`. */
  textVariables: Map<string, string>;
  /** `schematic.drawing`'s page-reference style; null when the project hides them (the default). */
  pageRefs: PageRefStyle | null;
}

/**
 * The settings of the `.kicad_pro` at `path`, with eeschema's defaults ("[", "]") for a
 * page-reference prefix or suffix it leaves out; none when it is missing or unreadable.
 */
function readProjectSettings(path: string): ProjectSettings {
  let pro: { text_variables?: Record<string, unknown>; schematic?: { drawing?: Record<string, unknown> } };
  try {
    pro = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return { textVariables: new Map(), pageRefs: null };
  }
  const textVariables = new Map(
    Object.entries(pro?.text_variables ?? {}).flatMap(([k, v]): [string, string][] =>
      typeof v === "string" ? [[k, v]] : [],
    ),
  );
  const drawing = pro?.schematic?.drawing;
  if (drawing?.intersheets_ref_show !== true) return { textVariables, pageRefs: null };
  const text = (value: unknown, otherwise: string) => (typeof value === "string" ? value : otherwise);
  const pageRefs = {
    ownPage: drawing.intersheets_ref_own_page === true,
    short: drawing.intersheets_ref_short === true,
    prefix: text(drawing.intersheets_ref_prefix, "["),
    suffix: text(drawing.intersheets_ref_suffix, "]"),
  };
  return { textVariables, pageRefs };
}
