/**
 * `kicad/library/` owns symbol and footprint libraries: the lib tables and search. It reads only
 * `sexpr/` and the KiCad install (`cli/`).
 *
 * Footprint and symbol libraries, resolved the way KiCad resolves them.
 *
 * A library id `Nick:Name` is looked up by nickname in the project's lib table (next to the
 * `.kicad_pro`) and then in the global one; the first table that names the nickname wins, as
 * in KiCad. The global table is the user's (`$KICAD_CONFIG_HOME` or the platform config dir,
 * `<major>.0/`); when the user never ran KiCad there is none, and KiCad's own template table
 * from the installation's share dir stands in — the same table a first KiCad start would copy,
 * and the one copperhead seeds kicad-cli's config home with, so a fresh CI box resolves the
 * stock libraries exactly like a desktop.
 *
 * URIs expand `${VAR}` (and the older `$(VAR)`) from, in order: the environment, the path
 * variables the user set in KiCad (`kicad_common.json`), `KIPRJMOD`, and the stock-library
 * defaults derived from the share dir (`KICAD9_FOOTPRINT_DIR`, …; older majors' names map to the
 * same dirs so a KiCad 8 project table keeps working).
 *
 * Every failure is a typed error that names what was searched, because the same module answers
 * `doctor` ("do the tables resolve?") and the `fab` check ("does every footprint resolve?").
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { log } from "../../log.ts";
import { findKicadCli } from "../cli/install.ts";
import {
  children,
  childText,
  cloneNode,
  flag,
  head,
  parseSexpr,
  q,
  readDesignBytes,
  readSexprFile,
  text,
  type SDocument,
  type SList,
  type SNode,
} from "../sexpr/index.ts";

export type LibraryKind = "footprint" | "symbol";

export interface LibTableEntry {
  nickname: string;
  type: string;
  /** The URI as written, before expansion. */
  uri: string;
  /** The URI with every known variable expanded. */
  path: string;
  descr: string;
  /** The table file the entry came from. */
  table: string;
}

export interface LibraryEnvironment {
  /** Folder holding the `.kicad_pro`: `${KIPRJMOD}` and the project tables. */
  projectDir: string;
  /** KiCad's major version, for `KICAD<n>_*` names and the config dir. */
  major: number;
  /** KiCad's shared data dir (`template/`, `symbols/`, `footprints/`), if known. */
  shareDir: string | null;
  /** KiCad's config dir (holds `<major>.0/`); default: `$KICAD_CONFIG_HOME` or the platform's. */
  configHome?: string;
  /** Variables to expand; default: `process.env`. */
  env?: Record<string, string | undefined>;
}

export interface ResolvedFootprint {
  libId: string;
  /** Absolute path of the `.kicad_mod` (or of the board whose copy stood in for it). */
  file: string;
  doc: SDocument;
}

const TABLE_FILE: Record<LibraryKind, string> = { footprint: "fp-lib-table", symbol: "sym-lib-table" };
const TABLE_ROOT: Record<LibraryKind, string> = { footprint: "fp_lib_table", symbol: "sym_lib_table" };

/** Stock-library variables, suffix → subdir of the share dir (as kicad/cli/process.ts seeds them). */
const STOCK_DIRS: ReadonlyArray<readonly [string, string]> = [
  ["SYMBOL_DIR", "symbols"],
  ["FOOTPRINT_DIR", "footprints"],
  ["3DMODEL_DIR", "3dmodels"],
  ["TEMPLATE_DIR", "template"],
];

/** KiCad 6 introduced versioned variable names; older majors' names still appear in tables. */
const OLDEST_VERSIONED_MAJOR = 6;

/**
 * `${VAR}` or `$(VAR)` in a library URI. A name holds no `$` or brackets, so a table full of
 * unclosed `${` is scanned once, not from every `$` to its end.
 */
const VARIABLE_RE = /\$\{([^${}]+)\}|\$\(([^$()]+)\)/;
const VARIABLES_RE = new RegExp(VARIABLE_RE.source, "g");

/**
 * The libraries of one project. Tables, variables and parsed files are read lazily and cached
 * for the life of the object, so a board sync that adds fifty resistors parses
 * `R_0603_1608Metric.kicad_mod` once.
 */
export class Libraries {
  readonly environment: LibraryEnvironment;
  private readonly tables = new Map<LibraryKind, { searched: string[]; entries: Map<string, LibTableEntry> }>();
  private readonly footprints = new Map<string, ResolvedFootprint>();
  private readonly symbolFiles = new Map<string, SList>();
  private vars?: Map<string, string>;

  constructor(environment: LibraryEnvironment) {
    this.environment = { ...environment, projectDir: resolve(environment.projectDir) };
  }

  /** The table files consulted for `kind`, in lookup order (missing ones are left out). */
  tableFiles(kind: LibraryKind): string[] {
    return this.table(kind).searched;
  }

  /** Every library a table offers for `kind`; project entries shadow global ones. */
  entries(kind: LibraryKind): LibTableEntry[] {
    return [...this.table(kind).entries.values()];
  }

  /** The table entry for a nickname, or a `library_not_found` error naming the tables searched. */
  library(kind: LibraryKind, nickname: string): LibTableEntry {
    const { searched, entries } = this.table(kind);
    const entry = entries.get(nickname);
    if (!entry) {
      throw new CopperheadError(
        "library_not_found",
        `No ${kind} library "${nickname}" in ${describeTables(searched, kind)}.`,
        {
          fix: `Add "${nickname}" to the project's ${TABLE_FILE[kind]} (next to the .kicad_pro), or fix the library nickname.`,
          kind,
          library: nickname,
          tables: searched,
        },
      );
    }
    if (entry.type !== "KiCad") {
      throw new CopperheadError(
        "library_not_found",
        `${kind} library "${nickname}" in ${entry.table} has type "${entry.type}"; copperhead reads only KiCad libraries.`,
        {
          fix: "Convert the library to KiCad format, or point the table entry at a KiCad library.",
          kind,
          library: nickname,
          tables: [entry.table],
        },
      );
    }
    if (!existsSync(entry.path)) {
      throw new CopperheadError(
        "library_not_found",
        `${kind} library "${nickname}" points at ${entry.path}, which does not exist (URI ${entry.uri} in ${entry.table}).`,
        {
          fix: unresolvedVariable(entry.path)
            ? `Set ${unresolvedVariable(entry.path)} in the environment, or fix the URI in ${entry.table}.`
            : `Fix the URI in ${entry.table}, or install the library.`,
          kind,
          library: nickname,
          path: entry.path,
          tables: [entry.table],
        },
      );
    }
    return entry;
  }

  /**
   * Where footprints come from when no library holds them (the board itself, which carries a
   * copy of every footprint it uses): asked only after the tables failed, with the lib id.
   */
  footprintFallback?: (libId: string) => { file: string; doc: SDocument } | undefined;

  /** Reads and parses the footprint `libId` (`Lib:Name`) from its `.kicad_mod`, else from `footprintFallback`. */
  resolveFootprint(libId: string): ResolvedFootprint {
    const cached = this.footprints.get(libId);
    if (cached) return cached;
    try {
      return this.resolveFromLibrary(libId);
    } catch (err) {
      const copy =
        err instanceof CopperheadError && (err.code === "library_not_found" || err.code === "footprint_not_found")
          ? this.footprintFallback?.(libId)
          : undefined;
      if (!copy) throw err;
      log.debug(
        `footprint ${libId}: not in the libraries (${(err as CopperheadError).message}); using the copy in ${copy.file}`,
      );
      const resolved = { libId, ...copy };
      this.footprints.set(libId, resolved);
      return resolved;
    }
  }

  private resolveFromLibrary(libId: string): ResolvedFootprint {
    const { nickname, name } = splitLibId(libId, "footprint");
    const entry = this.library("footprint", nickname);
    const file = join(entry.path, `${name}.kicad_mod`);
    if (!existsSync(file) || !statSync(entry.path).isDirectory()) {
      throw new CopperheadError(
        "footprint_not_found",
        `Footprint "${name}" is not in library "${nickname}" (${entry.path}).`,
        {
          fix: `Check the symbol's Footprint field ("${libId}") against the footprints in ${entry.path}.`,
          libId,
          library: nickname,
          path: entry.path,
        },
      );
    }
    const doc = readLibraryFile(file, libId, entry.path);
    if (head(doc.root) !== "footprint" && head(doc.root) !== "module") {
      throw new CopperheadError(
        "library_unreadable",
        `${file} is not a KiCad footprint (its root is "${head(doc.root) ?? "?"}").`,
        {
          fix: "Restore the .kicad_mod file from the library, or re-save it in KiCad's footprint editor.",
          libId,
          file,
        },
      );
    }
    const resolved = { libId, file, doc };
    this.footprints.set(libId, resolved);
    return resolved;
  }

  /**
   * The symbol `libId` as a schematic's `lib_symbols` cache holds it: named by lib id, a derived
   * symbol flattened onto its parent like `LIB_SYMBOL::Flatten`. The drawing and flags come from
   * the parent; the parent's fields keep their order with the child's values winning; the
   * parent's other properties are kept; the child's extra fields follow; unit sub-symbols are
   * renamed to the child. Anything else makes ERC report `lib_symbol_mismatch`. The result is a
   * fresh tree the caller may insert anywhere.
   */
  resolveSymbol(libId: string): SList {
    const { nickname, name } = splitLibId(libId, "symbol");
    const entry = this.library("symbol", nickname);
    let lib = this.symbolFiles.get(entry.path);
    if (!lib) {
      if (statSync(entry.path).isDirectory()) {
        throw new CopperheadError(
          "library_unreadable",
          `Symbol library "${nickname}" is a folder (${entry.path}); copperhead reads single-file .kicad_sym libraries.`,
          {
            fix: "Point the table entry at a .kicad_sym file.",
            libId,
            file: entry.path,
          },
        );
      }
      lib = readLibraryFile(entry.path, libId).root;
      this.symbolFiles.set(entry.path, lib);
    }
    const find = (symbolName: string): SList => {
      const found = children(lib!, "symbol").find((s) => text(s, 1) === symbolName);
      if (!found) {
        throw new CopperheadError(
          "symbol_not_found",
          `Symbol "${symbolName}" is not in library "${nickname}" (${entry.path}).`,
          {
            fix: `Check the lib id "${libId}" against the symbols in ${entry.path}.`,
            libId,
            library: nickname,
            path: entry.path,
          },
        );
      }
      return found;
    };
    const own = find(name);
    const parentName = childText(own, "extends");
    let body: SNode[] = own.items.slice(2);
    if (parentName !== undefined) {
      const parent = find(parentName);
      const ownFields = children(own, "property");
      const parentFields = children(parent, "property");
      const fieldName = (p: SList) => text(p, 1);
      body = [];
      let fieldsPlaced = false;
      for (const node of parent.items.slice(2)) {
        if (node.type === "list" && head(node) === "property") {
          if (fieldsPlaced) continue;
          body.push(
            ...parentFields.map((pf) => ownFields.find((f) => fieldName(f) === fieldName(pf)) ?? pf),
            ...ownFields.filter((f) => !parentFields.some((pf) => fieldName(pf) === fieldName(f))),
          );
          fieldsPlaced = true;
        } else if (node.type === "list" && head(node) === "symbol") {
          const unitName = text(node, 1) ?? "";
          const unit = cloneNode(node);
          unit.items[1] = { ...q(name + unitName.slice(parentName.length)), pre: " " };
          body.push(unit);
        } else {
          body.push(node);
        }
      }
    }
    const embedded: SList = {
      type: "list",
      pre: "",
      items: [own.items[0]!, { ...q(libId), pre: " " }, ...body],
      post: "",
      start: -1,
    };
    // Inserting a tree lays it out again, so never hand out the cached library's own nodes.
    return cloneNode(embedded);
  }

  /** Expands `${VAR}` and `$(VAR)`; unknown variables are left in place. */
  expand(uri: string): string {
    const vars = this.variables();
    return uri.replace(
      VARIABLES_RE,
      (whole, a: string | undefined, b: string | undefined) => vars.get((a ?? b)!) ?? whole,
    );
  }

  private variables(): Map<string, string> {
    if (this.vars) return this.vars;
    const { major, shareDir, projectDir } = this.environment;
    const vars = new Map<string, string>();
    if (shareDir) {
      for (const [suffix, subdir] of STOCK_DIRS) {
        for (let m = OLDEST_VERSIONED_MAJOR; m <= major; m++) vars.set(`KICAD${m}_${suffix}`, join(shareDir, subdir));
      }
    }
    vars.set("KIPRJMOD", projectDir);
    for (const [key, value] of Object.entries(userPathVariables(this.configDir()))) vars.set(key, value);
    const env = this.environment.env ?? process.env;
    for (const [key, value] of Object.entries(env)) {
      if (value !== undefined && value !== "" && key !== "KIPRJMOD") vars.set(key, value);
    }
    // An explicitly set current-major variable also stands in for the older names, so a
    // relocated library tree is found whichever name a table uses.
    for (const [suffix] of STOCK_DIRS) {
      const current = env[`KICAD${major}_${suffix}`];
      if (!current) continue;
      for (let m = OLDEST_VERSIONED_MAJOR; m < major; m++)
        if (!env[`KICAD${m}_${suffix}`]) vars.set(`KICAD${m}_${suffix}`, current);
    }
    this.vars = vars;
    return vars;
  }

  /** `<config home>/<major>.0`, where KiCad keeps the global tables and `kicad_common.json`. */
  private configDir(): string {
    const env = this.environment.env ?? process.env;
    const home = this.environment.configHome ?? env.KICAD_CONFIG_HOME ?? defaultConfigHome(env);
    return join(home, `${this.environment.major}.0`);
  }

  private table(kind: LibraryKind): { searched: string[]; entries: Map<string, LibTableEntry> } {
    const cached = this.tables.get(kind);
    if (cached) return cached;
    const candidates = [join(this.environment.projectDir, TABLE_FILE[kind])];
    const global = join(this.configDir(), TABLE_FILE[kind]);
    if (existsSync(global)) candidates.push(global);
    else if (this.environment.shareDir) candidates.push(join(this.environment.shareDir, "template", TABLE_FILE[kind]));
    const searched = candidates.filter((file) => existsSync(file));
    const entries = new Map<string, LibTableEntry>();
    for (const file of searched) {
      for (const entry of readLibTable(file, kind, (uri) => this.expand(uri))) {
        if (!entries.has(entry.nickname)) entries.set(entry.nickname, entry);
      }
    }
    const result = { searched, entries };
    this.tables.set(kind, result);
    return result;
  }
}

/** What a project's libraries need of the KiCad install: its major version and share dir. */
export interface KicadInstall {
  version: { major: number };
  shareDir: string | null;
}

/**
 * The libraries of the project whose `.kicad_pro` (or folder) is given, the one way every
 * command and tool builds them. The KiCad `install` names the `${KICADn_*_DIR}` variables and
 * holds the stock tables; without one, KiCad 9's variables are read and no stock table is seeded.
 */
export function projectLibraries(project: string, install?: KicadInstall | null): Libraries {
  const projectDir = project.endsWith(".kicad_pro") ? dirname(project) : project;
  return new Libraries({
    projectDir,
    major: install?.version.major ?? CURRENT_MAJOR,
    shareDir: install?.shareDir ?? null,
  });
}

/**
 * The project's libraries for the installed kicad-cli. Without a kicad-cli the stock libraries
 * are found only through `KICADn_*_DIR` variables in the environment.
 */
export async function openLibraries(project: string): Promise<Libraries> {
  try {
    return projectLibraries(project, await findKicadCli());
  } catch (err) {
    if (!(err instanceof CopperheadError) || (err.code !== "kicad_cli_missing" && err.code !== "kicad_cli_too_old"))
      throw err;
    log.debug(`library tables without kicad-cli: ${err.message}`);
    return projectLibraries(project);
  }
}

/** The KiCad major copperhead is written against; used only when no kicad-cli says otherwise. */
const CURRENT_MAJOR = 9;

/** Reads one lib table: `(fp_lib_table (version 7) (lib (name …) (type …) (uri …) …))`. */
export function readLibTable(
  file: string,
  kind: LibraryKind,
  expand: (uri: string) => string = (u) => u,
): LibTableEntry[] {
  let doc: SDocument;
  try {
    doc = readSexprFile(file, { within: null });
  } catch (err) {
    if (err instanceof CopperheadError) throw err;
    throw new CopperheadError("library_unreadable", `Cannot read ${file}: ${(err as Error).message}`, {
      fix: "Check the file's permissions, or restore it.",
      file,
    });
  }
  if (head(doc.root) !== TABLE_ROOT[kind]) {
    throw new CopperheadError(
      "library_unreadable",
      `${file} is not a ${TABLE_FILE[kind]} (its root is "${head(doc.root) ?? "?"}").`,
      {
        fix: `Restore ${TABLE_FILE[kind]} from git, or re-create it in KiCad's library manager.`,
        file,
      },
    );
  }
  const entries: LibTableEntry[] = [];
  for (const lib of children(doc.root, "lib")) {
    if (flag(lib, "disabled")) continue;
    const nickname = childText(lib, "name");
    const uri = childText(lib, "uri");
    if (!nickname || uri === undefined) continue;
    entries.push({
      nickname,
      type: childText(lib, "type") ?? "KiCad",
      uri,
      path: expand(uri),
      descr: childText(lib, "descr") ?? "",
      table: file,
    });
  }
  return entries;
}

/**
 * A lib id's library nickname and item name. The name is a name, not a path: it is joined to
 * the library folder (`<name>.kicad_mod`), so one with a separator, a `..` or a control
 * character is refused here, before any file is looked at (`Capacitor_SMD:../../../x` would
 * otherwise read any `.kicad_mod` on the machine into the board).
 */
function splitLibId(libId: string, kind: LibraryKind): { nickname: string; name: string } {
  const colon = libId.indexOf(":");
  const code = kind === "footprint" ? "footprint_not_found" : "symbol_not_found";
  if (colon <= 0 || colon === libId.length - 1) {
    throw new CopperheadError(code, `"${libId}" is not a ${kind} id; KiCad ids have the form Library:Name.`, {
      fix:
        kind === "footprint"
          ? "Set the symbol's Footprint field to Library:Name, e.g. Resistor_SMD:R_0603_1608Metric."
          : "Use a lib id of the form Library:Name.",
      libId,
    });
  }
  const name = libId.slice(colon + 1);
  if (/[/\\\x00-\x1f\x7f]/.test(name) || name.includes("..") || name === ".") {
    throw new CopperheadError(
      code,
      `${JSON.stringify(libId)} is not a ${kind} id: the name after the colon must be a plain name, without "/", "\\", ".." or control characters.`,
      {
        fix: `Name a ${kind} in the library, e.g. ${kind === "footprint" ? "Capacitor_SMD:C_0603_1608Metric" : "Device:C"}; search the libraries for it.`,
        libId,
      },
    );
  }
  return { nickname: libId.slice(0, colon), name };
}

/** A library file; a footprint's must resolve inside its library folder (`within`). */
function readLibraryFile(file: string, libId: string, within: string | null = null): SDocument {
  let source: Uint8Array;
  try {
    source = readDesignBytes(file, { within });
  } catch (err) {
    throw new CopperheadError("library_unreadable", `Cannot read ${file} (for ${libId}): ${(err as Error).message}`, {
      fix: "Check the file's permissions, or reinstall the library.",
      libId,
      file,
    });
  }
  try {
    return parseSexpr(source, { file });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new CopperheadError("library_unreadable", `Cannot parse ${file} (for ${libId}): ${reason}`, {
      fix: "The library file is damaged; restore it from the library's source or re-save it in KiCad.",
      libId,
      file,
    });
  }
}

/** Path variables the user defined in KiCad's preferences (`environment.vars`). */
function userPathVariables(configDir: string): Record<string, string> {
  const file = join(configDir, "kicad_common.json");
  if (!existsSync(file)) return {};
  try {
    const vars = (JSON.parse(readFileSync(file, "utf8")) as { environment?: { vars?: Record<string, unknown> | null } })
      .environment?.vars;
    if (!vars) return {};
    return Object.fromEntries(Object.entries(vars).filter((e): e is [string, string] => typeof e[1] === "string"));
  } catch {
    log.debug(`ignoring unreadable ${file}`);
    return {};
  }
}

function defaultConfigHome(env: Record<string, string | undefined>): string {
  if (process.platform === "darwin") return join(homedir(), "Library", "Preferences", "kicad");
  if (process.platform === "win32") return join(env.APPDATA ?? join(homedir(), "AppData", "Roaming"), "kicad");
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "kicad");
}

function describeTables(searched: string[], kind: LibraryKind): string {
  return searched.length === 0 ? `any ${TABLE_FILE[kind]} (none found)` : searched.join(" or ");
}

function unresolvedVariable(path: string): string | undefined {
  return VARIABLE_RE.exec(path)?.slice(1).find(Boolean);
}
