/**
 * Project discovery: which KiCad project inside a repo copperhead works on.
 *
 * An explicit `.kicad_pro` wins. Otherwise the repo must hold exactly one `.kicad_pro` outside
 * hidden and vendor folders; the root schematic and the board share its basename.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CopperheadError } from "../errors.ts";
import { assertRepoFile } from "./repo-files.ts";
import { lstatOrUndefined } from "./repo-path.ts";

export interface KicadProject {
  /** Absolute, symlink-resolved repo root. */
  repoRoot: string;
  /** Absolute path of the `.kicad_pro`. */
  projectFile: string;
  /** Project name (basename without extension). */
  name: string;
  /** Absolute path of the root schematic; always present. */
  schematic: string;
  /** Absolute path of the board, when the project has one. */
  board?: string;
}

/** Folders that hold someone else's projects (libraries, dependencies, outputs). */
const IGNORED_DIRS = new Set(["node_modules", "vendor", "third_party", "3rdparty", "dist", "build"]);

/** Resolves `--repo` (default: the working directory) to an existing directory. */
export function resolveRepoRoot(repo: string | undefined): string {
  const root = resolve(repo ?? process.cwd());
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new CopperheadError("not_found", `Repository folder not found: ${root}`, {
      fix: "Pass --repo with the path of a folder that holds a KiCad project.",
    });
  }
  return realpathSync(root);
}

/** Lists `.kicad_pro` files (repo-relative, sorted) outside hidden and vendor folders. */
export function findProjectFiles(repoRoot: string): string[] {
  const found: string[] = [];
  for (const path of new Bun.Glob("**/*.kicad_pro").scanSync({ cwd: repoRoot, dot: false, followSymlinks: false })) {
    const parts = path.split(/[\\/]/);
    if (parts.slice(0, -1).some((part) => IGNORED_DIRS.has(part) || part.startsWith("."))) continue;
    found.push(path.split(sep).join("/"));
  }
  return found.sort();
}

/** Finds the project to work on, or throws a typed error that says how to choose one. */
export function discoverProject(repoRoot: string, explicit?: string): KicadProject {
  let projectFile: string;
  if (explicit) {
    projectFile = isAbsolute(explicit) ? explicit : join(repoRoot, explicit);
    if (!projectFile.endsWith(".kicad_pro") || !existsSync(projectFile)) {
      throw new CopperheadError("project_not_found", `Project file not found: ${explicit}`, {
        fix: "Pass --project with the path of an existing .kicad_pro file, relative to the repo.",
      });
    }
    if (relative(repoRoot, realpathSync(projectFile)).startsWith("..")) {
      throw new CopperheadError("bad_path", `Project file is outside the repository: ${explicit}`, {
        fix: "Point --project at a .kicad_pro inside the repo.",
      });
    }
  } else {
    const candidates = findProjectFiles(repoRoot);
    if (candidates.length === 0) {
      throw new CopperheadError("project_not_found", `No .kicad_pro file found in ${repoRoot}`, {
        fix: "Run copperhead inside a KiCad project repository, or pass --repo PATH.",
      });
    }
    if (candidates.length > 1) {
      throw new CopperheadError("project_ambiguous", `Found ${candidates.length} KiCad projects: ${candidates.join(", ")}`, {
        fix: "Choose one with --project <path/to/name.kicad_pro>, or set \"project\" in .copperhead/config.json.",
        candidates,
      });
    }
    projectFile = join(repoRoot, candidates[0]!);
  }
  const name = basename(projectFile, ".kicad_pro");
  const dir = dirname(projectFile);
  const schematic = join(dir, `${name}.kicad_sch`);
  if (!lstatOrUndefined(schematic)) {
    throw new CopperheadError("project_not_found", `Root schematic not found: ${relative(repoRoot, schematic)}`, {
      fix: `The root schematic must share the project's basename: ${name}.kicad_sch next to ${name}.kicad_pro.`,
    });
  }
  const board = join(dir, `${name}.kicad_pcb`);
  const hasBoard = lstatOrUndefined(board) !== undefined;
  // kicad-cli is handed these paths and would read (or block on) whatever they lead to: each
  // must be a regular file inside the repo, however it is linked.
  for (const file of [projectFile, schematic, ...(hasBoard ? [board] : [])]) assertRepoFile(file, { within: repoRoot });
  return { repoRoot, projectFile, name, schematic, board: hasBoard ? board : undefined };
}
