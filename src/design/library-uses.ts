/**
 * The libraries a design names, as doctor reports them and `search_library` warns of them: a
 * design from another machine often names libraries that were only in its author's global
 * table. Its symbols are embedded in its sheets and its footprints are on its board, so the
 * parts stay usable by name; only the tables cannot find them.
 */
import type { Board } from "../kicad/board/model.ts";
import { unresolvedLibraries, type LibraryUse, type UnresolvedLibrary } from "../kicad/library/design-libraries.ts";
import type { Libraries } from "../kicad/library/libraries.ts";
import type { SchematicProject } from "../kicad/schematic/model/hierarchy.ts";

/**
 * Every place the design names a library: each symbol's lib id and Footprint field (once per
 * sheet instance, as ERC reports them), and each footprint on the board.
 */
export function designLibraryUses(schematic: SchematicProject, board?: Board): LibraryUse[] {
  const uses: LibraryUse[] = [];
  for (const instance of schematic.instances) {
    for (const symbol of instance.file.symbols) {
      uses.push({ kind: "symbol", libId: symbol.libId, by: "symbol" });
      if (symbol.footprint) uses.push({ kind: "footprint", libId: symbol.footprint, by: "symbol" });
    }
  }
  for (const fp of board?.footprints() ?? []) uses.push({ kind: "footprint", libId: fp.libId, by: "footprint" });
  return uses;
}

/** The libraries the design names that `libraries` cannot resolve (see `unresolvedLibraries`). */
export function missingDesignLibraries(
  libraries: Libraries,
  schematic: SchematicProject,
  board?: Board,
): UnresolvedLibrary[] {
  return unresolvedLibraries(libraries, designLibraryUses(schematic, board));
}
