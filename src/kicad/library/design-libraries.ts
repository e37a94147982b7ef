/**
 * The libraries a design names, against the tables that should hold them.
 *
 * Every table entry can exist and still leave a design unresolved: a project copied from a
 * vendor names its symbols `OLIMEX_Power:…` and its footprints `OLIMEX_RLC-FP:…`, libraries
 * that were only ever in its author's global table. KiCad then reports each symbol and each
 * footprint on its own (`lib_symbol_issues`, `footprint_link_issues`, `lib_footprint_issues`),
 * hundreds of warnings for a dozen missing libraries. This answers per library: which ones the
 * design names that do not resolve, how many symbols and footprints name each, and the table
 * line that adds it.
 */
import { join } from "node:path";
import { asCopperheadError } from "../../errors.ts";
import type { Libraries, LibraryKind } from "./libraries.ts";

/** One place the design names a library: a symbol's lib id, its Footprint field, or a board footprint. */
export interface LibraryUse {
  kind: LibraryKind;
  /** `Nickname:Name`. */
  libId: string;
  /** What names it: a schematic symbol (its lib id or Footprint field) or a footprint on the board. */
  by: "symbol" | "footprint";
}

export interface UnresolvedLibrary {
  kind: LibraryKind;
  nickname: string;
  /** Schematic symbols naming it (per sheet instance, as KiCad's ERC counts them). */
  symbols: number;
  /** Footprints on the board naming it. */
  footprints: number;
  /** Why it does not resolve: not in any table, or an entry whose file is missing. */
  reason: string;
  /** The project's table for `kind`, where the line goes (it may not exist yet). */
  table: string;
  /** The `(lib …)` line that adds it, with a URI to point at the library's file. */
  line: string;
}

const TABLE: Record<LibraryKind, string> = { symbol: "sym-lib-table", footprint: "fp-lib-table" };
const EXTENSION: Record<LibraryKind, string> = { symbol: ".kicad_sym", footprint: ".pretty" };

/** The libraries `uses` name that `libraries` cannot resolve, in kind then nickname order. */
export function unresolvedLibraries(libraries: Libraries, uses: Iterable<LibraryUse>): UnresolvedLibrary[] {
  const named = new Map<string, { kind: LibraryKind; nickname: string; symbols: number; footprints: number }>();
  for (const use of uses) {
    const colon = use.libId.indexOf(":");
    // A lib id without a nickname names no library (KiCad reports it as a symbol issue).
    if (colon <= 0) continue;
    const nickname = use.libId.slice(0, colon);
    const id = `${use.kind}\0${nickname}`;
    const entry = named.get(id) ?? { kind: use.kind, nickname, symbols: 0, footprints: 0 };
    if (use.by === "symbol") entry.symbols++;
    else entry.footprints++;
    named.set(id, entry);
  }
  const unresolved: UnresolvedLibrary[] = [];
  for (const lib of named.values()) {
    let reason: string | undefined;
    try {
      libraries.library(lib.kind, lib.nickname);
    } catch (err) {
      reason = asCopperheadError(err).message;
    }
    if (reason === undefined) continue;
    const table = join(libraries.environment.projectDir, TABLE[lib.kind]);
    unresolved.push({ ...lib, reason, table, line: tableLine(lib.kind, lib.nickname) });
  }
  return unresolved.sort((a, b) =>
    a.kind === b.kind ? (a.nickname < b.nickname ? -1 : 1) : a.kind === "symbol" ? -1 : 1,
  );
}

/**
 * The entry KiCad's library manager writes, with the URI relative to the project (`${KIPRJMOD}`)
 * so the table works in every clone; only the folder is left for the user to fill in.
 */
export function tableLine(kind: LibraryKind, nickname: string): string {
  const uri = `\${KIPRJMOD}/<folder>/${nickname}${EXTENSION[kind]}`;
  return `(lib (name ${quote(nickname)})(type "KiCad")(uri ${quote(uri)})(options "")(descr ""))`;
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
