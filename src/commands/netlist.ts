/**
 * `copperhead netlist`: the design's nets, computed natively (no kicad-cli process).
 */
import { relative, sep } from "node:path";
import { openRepo } from "../repo/recovery.ts";
import { buildNetlist, type Net } from "../kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../kicad/schematic/model/hierarchy.ts";
import { discoverConfiguredProject } from "../config/config.ts";

export interface NetlistOptions {
  repo?: string;
  project?: string;
}

export interface NetlistResult {
  schema: "copperhead.netlist/1";
  /** The `.kicad_pro` the nets are of, repo-relative (discovery may have chosen it among several). */
  project: string;
  nets: Net[];
}

export async function runNetlist(options: NetlistOptions = {}): Promise<NetlistResult> {
  const { root, within } = await openRepo(options.repo);
  const { project } = discoverConfiguredProject(root, options.project, within);
  const { nets } = buildNetlist(loadSchematicProject(project.schematic, { within: project.repoRoot }));
  return {
    schema: "copperhead.netlist/1",
    project: relative(project.repoRoot, project.projectFile).split(sep).join("/"),
    nets,
  };
}
