/**
 * One `.kicad_sch` file of a project: its lossless tree and the views read from it (by
 * `read-items.ts`), and telling a KiCad 5 schematic from one this reads.
 */
import { basename } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { childText, isList, parseSexpr, type SDocument } from "../../sexpr/index.ts";
import { OLDEST_SCHEMATIC_VERSION } from "../../format-versions.ts";
import type { BusEntry, Label, Line, Marker, SheetSymbol } from "./sheet-items.ts";
import { readItems, type FileItems, type LegacySymbolInstance } from "./read-items.ts";
import { contentSeed, uuidSource } from "../../uuids.ts";
import type { LibSymbol, PlacedSymbol } from "./symbols.ts";

/**
 * What a file asks of the project it belongs to (`SchematicProject` in `hierarchy.ts`, which
 * loads its files, so they know it only by this).
 */
export interface FileProject {
  resolutionStamp(): number;
  resolveSymbols(file: SchematicFile, symbols: PlacedSymbol[]): void;
  fileChanged(): void;
  /** The project's text variables (the `.kicad_pro`'s `text_variables`). */
  readonly textVariables: ReadonlyMap<string, string>;
  /** What a global label `name` on `file` draws as its page references, if the project shows them. */
  intersheetRefs(file: SchematicFile, name: string): string | undefined;
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
const NO_VARIABLES: ReadonlyMap<string, string> = new Map();

export class SchematicFile {
  /** The file's `(version …)`; see format.ts for what each version means. */
  readonly version: number;
  readonly uuid: string;
  #doc: SDocument;
  #items?: FileItems;
  /** The project's resolution stamp the items were resolved for; -1 for none. */
  #stamp = -1;
  #changes = 0;
  #project?: FileProject;
  #uuids?: () => string;

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
      throw new CopperheadError(
        "parse_error",
        `${path}: schematic format version ${childText(root, "version") ?? "(none)"} is not one KiCad ever wrote`,
        {
          file: path,
          fix: "Open the project in KiCad 6 or newer, save it, and run copperhead again.",
        },
      );
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

  /**
   * A uuid for an item put into this file, from a seed of the file's name and its bytes when
   * first asked (see `uuids.ts`): the same edit of the same file gets the same uuids, and a file
   * that changed gets new ones.
   */
  newUuid(): string {
    this.#uuids ??= uuidSource(`${basename(this.path)}\n${contentSeed(this.#doc.bytes)}`);
    return this.#uuids();
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

  /** The text variables of the project the file is part of (none for a file read on its own). */
  get textVariables(): ReadonlyMap<string, string> {
    return this.#project?.textVariables ?? NO_VARIABLES;
  }

  /** What a global label `name` here draws as its page references; undefined when none are drawn (a file read on its own has none). */
  intersheetRefs(name: string): string | undefined {
    return this.#project?.intersheetRefs(this, name);
  }

  /** Makes the file part of `project`, whose load-time resolution its views then get. */
  attach(project: FileProject): void {
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

/**
 * Parses one `.kicad_sch` file (no sheet following). Text that is not an s-expression
 * schematic is a `legacy_format` error when it is a KiCad 5 schematic and a `parse_error`
 * otherwise.
 */
export function readSchematicFile(path: string, source: Uint8Array | string): SchematicFile {
  if (isLegacySchematic(source)) throw legacySchematicError(path);
  return new SchematicFile(path, parseSexpr(source, { file: path }));
}

/** A KiCad 5 (and older) schematic starts with this header line instead of a list. */
const LEGACY_SCHEMATIC = /^\s*EESchema Schematic File/;

function isLegacySchematic(source: Uint8Array | string): boolean {
  const start = typeof source === "string" ? source.slice(0, 64) : String.fromCharCode(...source.subarray(0, 64));
  return LEGACY_SCHEMATIC.test(start);
}

export function legacySchematicError(path: string): CopperheadError {
  return new CopperheadError(
    "legacy_format",
    `${path} is a KiCad 5 (legacy .sch) schematic; copperhead reads the s-expression formats of KiCad 6 and later.`,
    {
      file: path,
      fix: "Open the project in KiCad 6 or newer and save it (KiCad converts it to .kicad_sch), then run copperhead again.",
    },
  );
}
