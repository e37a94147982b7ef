/**
 * The Design model of one repo state: the schematic hierarchy, its netlist and components, and
 * the board when there is one. Checks, the requirement evaluator, generated docs and the agent's
 * read tools all read the design through it; a check run loads it once and shares it.
 */
import { Board } from "../kicad/board/model.ts";
import { listComponents, type Component } from "../kicad/netlist/components.ts";
import { buildNetlist, type DesignNetlist } from "../kicad/netlist/netlist.ts";
import { loadSchematicProject, type SchematicProject } from "../kicad/schematic/model/hierarchy.ts";
import type { KicadProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";

export interface Design {
  project: KicadProject;
  schematic: SchematicProject;
  netlist: DesignNetlist;
  components: Component[];
  board?: Board;
}

export function loadDesign(project: KicadProject): Design {
  const within = project.repoRoot;
  const schematic = loadSchematicProject(project.schematic, { within });
  return {
    project,
    schematic,
    netlist: buildNetlist(schematic),
    components: listComponents(schematic),
    board: project.board ? Board.load(project.board, { within }) : undefined,
  };
}

/** A path as findings and reports show it: relative to the repo, `/`-separated. */
export function repoPath(design: Design | KicadProject, file: string): string {
  const root = "repoRoot" in design ? design.repoRoot : design.project.repoRoot;
  return repoRelative(root, file);
}
