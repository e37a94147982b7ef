/**
 * Finding parts in the symbol and footprint libraries by words, for the agent's
 * `search_library` tool. Symbol libraries are large (KiCad's stock set is ~200 MB), so their
 * names, descriptions and keywords are indexed once per library file and kept in memory; the
 * index reads the files as text with a shallow scan instead of parsing every symbol.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { Libraries, LibraryKind } from "./libraries.ts";
import { children, text, type SList } from "../sexpr/index.ts";
import { readDesignText } from "../sexpr/index.ts";

export interface LibraryHit {
  kind: LibraryKind;
  /** `Nickname:Name`, ready for `add_component` or a Footprint field. */
  libId: string;
  description: string;
  keywords: string;
  /**
   * `design` for a symbol the design's sheets embed, `board` for a footprint the board carries
   * from a library no table holds: usable by name all the same (board sync takes the board's copy).
   */
  source?: "design" | "board";
}

interface IndexedSymbol {
  name: string;
  description: string;
  keywords: string;
}

const symbolIndex = new Map<string, { mtime: number; symbols: IndexedSymbol[] }>();

/** Top-level symbols of a `.kicad_sym` file with their Description and ki_keywords. */
function indexSymbolFile(path: string): IndexedSymbol[] {
  const mtime = statSync(path).mtimeMs;
  const cached = symbolIndex.get(path);
  if (cached && cached.mtime === mtime) return cached.symbols;
  const text = readDesignText(path, { within: null });
  const symbols: IndexedSymbol[] = [];
  const marker = '\n\t(symbol "';
  let at = text.indexOf(marker);
  while (at >= 0) {
    const nameStart = at + marker.length;
    const name = text.slice(nameStart, text.indexOf('"', nameStart));
    const next = text.indexOf(marker, nameStart);
    const body = text.slice(nameStart, next < 0 ? text.length : next);
    symbols.push({ name, description: property(body, "Description"), keywords: property(body, "ki_keywords") });
    at = next;
  }
  symbolIndex.set(path, { mtime, symbols });
  return symbols;
}

function property(body: string, name: string): string {
  const m = new RegExp(`\\(property "${name}" "((?:[^"\\\\]|\\\\.)*)"`).exec(body);
  return m ? m[1]!.replace(/\\(.)/g, "$1") : "";
}

/** The symbols a design's sheets embed, as search candidates. */
export function designSymbols(
  files: Iterable<{ libSymbols: Map<string, { node: SList; power?: string }> }>,
): LibraryHit[] {
  const hits: LibraryHit[] = [];
  for (const file of files) {
    for (const [libId, symbol] of file.libSymbols) {
      const field = (name: string) =>
        text(children(symbol.node, "property").find((p) => text(p, 1) === name) ?? symbol.node, 2) ?? "";
      hits.push({ kind: "symbol", libId, description: field("Description"), keywords: field("ki_keywords") });
    }
  }
  return hits;
}

/**
 * Library parts matching every word of `query` (case-insensitive) in their id, description or
 * keywords; exact name matches first, then shorter ids.
 */
export function searchLibraries(
  libraries: Libraries,
  query: string,
  options: { kind?: LibraryKind; limit?: number; design?: LibraryHit[]; board?: LibraryHit[] } = {},
): LibraryHit[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const limit = options.limit ?? 20;
  const hits: LibraryHit[] = [];
  const matches = (hit: LibraryHit) => {
    const hay = `${hit.libId} ${hit.description} ${hit.keywords}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  };
  const own = new Set<string>();
  for (const [source, found] of [
    ["design", options.design],
    ["board", options.board],
  ] as const) {
    for (const hit of found ?? []) {
      if ((options.kind === undefined || options.kind === hit.kind) && matches(hit) && !own.has(hit.libId)) {
        own.add(hit.libId);
        hits.push({ ...hit, source });
      }
    }
  }
  if (options.kind !== "footprint") {
    for (const entry of libraries.entries("symbol")) {
      if (!existsSync(entry.path) || !entry.path.endsWith(".kicad_sym")) continue;
      for (const s of indexSymbolFile(entry.path)) {
        const hit: LibraryHit = {
          kind: "symbol",
          libId: `${entry.nickname}:${s.name}`,
          description: s.description,
          keywords: s.keywords,
        };
        if (matches(hit) && !own.has(hit.libId)) hits.push(hit);
      }
    }
  }
  if (options.kind !== "symbol") {
    for (const entry of libraries.entries("footprint")) {
      if (!existsSync(entry.path)) continue;
      for (const file of readdirSync(entry.path)) {
        if (!file.endsWith(".kicad_mod")) continue;
        const hit: LibraryHit = {
          kind: "footprint",
          libId: `${entry.nickname}:${basename(file, ".kicad_mod")}`,
          description: "",
          keywords: "",
        };
        if (matches(hit) && !own.has(hit.libId)) hits.push(hit);
      }
    }
  }
  const exact = (h: LibraryHit) => (words.includes(h.libId.split(":")[1]!.toLowerCase()) ? 0 : 1);
  return hits
    .sort((a, b) => exact(a) - exact(b) || a.libId.length - b.libId.length || (a.libId < b.libId ? -1 : 1))
    .slice(0, limit);
}
