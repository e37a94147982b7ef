/**
 * One side of a diff: the design as the native model reads it from a folder (the working tree
 * or a snapshot of a commit), plus the two docs a reviewer watches — the Requirements section
 * of SPEC.md and the generated BOM table. Loading never runs kicad-cli.
 *
 * A project that does not exist in a state (a diff against a commit from before the project
 * was added) is an empty state rather than an error, so everything shows up as added.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join, posix } from "node:path";
import { loadDesign } from "../design/design.ts";
import type { Board } from "../kicad/board/model.ts";
import type { Component } from "../kicad/netlist/components.ts";
import type { Netlist } from "../kicad/netlist/netlist.ts";
import type { SchematicProject } from "../kicad/schematic/model/hierarchy.ts";
import { discoverProject, type KicadProject } from "../repo/project.ts";
import { readRepoBytes, readRepoDoc } from "../repo/repo-files.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { parseBom, BOM_FILE, type BomTable } from "../spec/bom.ts";
import { parseRequirements, type ParsedSpec } from "../spec/requirements.ts";
import { CopperheadError } from "../errors.ts";

export interface SheetState {
  /** Human sheet path: `/` for the root, `/Regulator/` below it. */
  path: string;
  /** Repo-relative, `/`-separated path of the sheet's file. */
  file: string;
  /** Page number as KiCad prints it (what `sch export svg --pages` selects). */
  page: string;
  /** sha256 of the file's bytes: a sheet changed when its file did. */
  hash: string;
}

export interface DesignState {
  /** Folder the state was read from (the repo, or a snapshot of a commit). */
  root: string;
  /** The project as it lies in `root`; absent when the project does not exist there. */
  project?: KicadProject;
  schematic?: SchematicProject;
  components: Component[];
  netlist: Netlist;
  sheets: SheetState[];
  board?: Board;
  /** sha256 of the board file's bytes. */
  boardHash?: string;
  /** The Requirements section of SPEC.md, when the spec has one. */
  spec?: ParsedSpec;
  /** The generated table of BOM.md, when the file has one. */
  bom?: BomTable;
  /** What could not be read, said once in the diff rather than failing it (a broken BOM table). */
  problems: string[];
}

export interface StateLocation {
  /** Folder holding the repo's files in this state. */
  root: string;
  /** The `.kicad_pro`, relative to `root`. */
  projectFile: string;
  /** The docs folder, relative to `root`. */
  docs: string;
  /** How the state is named in problems: `HEAD`, `the working tree`. */
  label: string;
}

/** The project as it lies in the state's folder, vetted like every project; undefined when it is not there. */
export function stateProject(at: StateLocation): KicadProject | undefined {
  return existsSync(join(at.root, at.projectFile)) ? discoverProject(at.root, at.projectFile) : undefined;
}

/** Loads the state; `project` is `stateProject(at)`, passed by a caller that needed it first. */
export function loadDesignState(at: StateLocation, project = stateProject(at)): DesignState {
  const state: DesignState = {
    root: at.root,
    project,
    components: [],
    netlist: { nets: [] },
    sheets: [],
    problems: [],
  };
  if (project) {
    const design = loadDesign(project);
    Object.assign(state, {
      schematic: design.schematic,
      components: design.components,
      netlist: design.netlist,
      board: design.board,
    });
    state.sheets = design.schematic.instances.map((instance) => ({
      path: instance.humanPath,
      file: repoRelative(at.root, instance.file.path),
      page: instance.page,
      hash: hashFile(at.root, instance.file.path),
    }));
    if (project.board) state.boardHash = hashFile(at.root, project.board);
  }
  const specPath = posix.join(at.docs, "SPEC.md");
  const specText = readRepoDoc(at.root, specPath);
  if (specText !== undefined) state.spec = parseRequirements(specText, specPath);
  const bomPath = posix.join(at.docs, BOM_FILE);
  const bomText = readRepoDoc(at.root, bomPath);
  if (bomText !== undefined) {
    try {
      state.bom = parseBom(bomText, bomPath);
    } catch (err) {
      if (!(err instanceof CopperheadError)) throw err;
      state.problems.push(`${at.label}: ${err.message}; its BOM rows are not compared`);
    }
  }
  return state;
}

/** Design files are read confined and capped, like every repo file (repo-files.ts). */
function hashFile(root: string, path: string): string {
  return createHash("sha256")
    .update(readRepoBytes(path, { within: root }))
    .digest("hex");
}
