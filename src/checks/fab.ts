/**
 * The `fab` family (`check --fab`): what a board needs before it is sent to a fab house —
 * a closed outline, a footprint for every placed symbol, an MPN on every BOM line, and
 * Gerber and drill files that export cleanly. (Unconnected items become errors in `routing`.)
 */
import { asCopperheadError } from "../errors.ts";
import type { Libraries } from "../kicad/library/libraries.ts";
import { checkOutline } from "../kicad/board/outline.ts";
import { componentMpn } from "../spec/bom.ts";
import { repoPath, type Design } from "../design/design.ts";
import type { FabExport } from "./kicad-run.ts";
import { familyResult } from "./result.ts";
import type { CheckResult, Finding } from "./types.ts";

export function checkFab(design: Design, exported: FabExport | undefined, libraries: Libraries): CheckResult {
  const findings: Finding[] = [];
  const schematicFile = (file: string) => repoPath(design, file);
  const add = (rule: string, id: string, message: string, location: Finding["location"]) =>
    findings.push({ check: "fab", rule, severity: "error", message, key: `fab:${rule}:${id}`, location });

  const board = design.board;
  const boardFile = design.project.board ? repoPath(design, design.project.board) : undefined;
  if (!board || !boardFile) {
    add(
      "no_board",
      design.project.name,
      `${design.project.name} has no board (${design.project.name}.kicad_pcb) to fabricate`,
      {
        file: repoPath(design, design.project.projectFile),
      },
    );
  } else {
    const outline = checkOutline(board);
    if (outline.items === 0)
      add("outline_missing", "Edge.Cuts", "the board has no outline on Edge.Cuts", { file: boardFile });
    for (const end of outline.openEnds) {
      add(
        "outline_open",
        `${end.x.toFixed(3)},${end.y.toFixed(3)}`,
        `the Edge.Cuts outline is open at (${end.x}, ${end.y}) mm`,
        {
          file: boardFile,
          x: end.x,
          y: end.y,
        },
      );
    }
    if (exported && !exported.ok)
      add("export_failed", "gerbers", `Gerber/drill export failed: ${exported.error ?? "unknown error"}`, {
        file: boardFile,
      });
  }

  // A library missing from the tables is one finding naming its parts, not one per part.
  const missingLibraries = new Map<string, { refs: string[]; message: string; file: string }>();
  for (const c of design.components) {
    const where = { file: schematicFile(c.file), ref: c.ref, sheet: c.sheet };
    if (c.onBoard && !c.footprint)
      add("footprint_missing", c.ref, `${c.ref} (${c.value}) has no footprint assigned`, where);
    else if (c.onBoard) {
      try {
        libraries.resolveFootprint(c.footprint);
      } catch (err) {
        const typed = asCopperheadError(err);
        const library = typed.code === "library_not_found" ? typed.details.library : undefined;
        if (typeof library !== "string")
          add(
            "footprint_unresolved",
            c.ref,
            `${c.ref} footprint ${c.footprint} does not resolve: ${typed.message}`,
            where,
          );
        else {
          const missing = missingLibraries.get(library) ?? { refs: [], message: typed.message, file: where.file };
          missing.refs.push(c.ref);
          missingLibraries.set(library, missing);
        }
      }
    }
    if (c.inBom && !c.dnp && !componentMpn(c))
      add("mpn_missing", c.ref, `${c.ref} (${c.value}) has no MPN field`, where);
  }
  for (const [library, { refs, message, file }] of missingLibraries) {
    const parts =
      refs.length > REFS_NAMED
        ? `${refs.slice(0, REFS_NAMED).join(", ")} and ${refs.length - REFS_NAMED} more`
        : refs.join(", ");
    const count = refs.length === 1 ? "1 footprint does" : `${refs.length} footprints do`;
    add("footprint_unresolved", `library:${library}`, `${count} not resolve (${parts}): ${message}`, { file });
  }
  return familyResult("fab", findings, { cleanSummary: "ready for fabrication" });
}

/** Parts a missing library's finding names before it counts the rest. */
const REFS_NAMED = 10;
