/**
 * Project discovery: which KiCad project inside a repo copperhead works on.
 *
 * An explicit `.kicad_pro` wins. Otherwise the project is the `.kicad_pro` outside hidden and
 * vendor folders at the shallowest depth, when exactly one is there: a design repo often nests
 * another project (a test fixture, an antenna in a subfolder, as KiCad's RoyalBlue54L-Feather
 * demo does), and the top one is the design. Two at the same depth are ambiguous. The root
 * schematic and the board share the project's basename. A KiCad 5 project (`.pro` and `.sch`,
 * no `.kicad_pro`) is a typed `legacy_format` error that says how to convert it.
 */
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import { runGitSync } from "./git.ts";
import { assertRepoFile } from "./repo-files.ts";
import { errorCode, lstatOrUndefined } from "./repo-path.ts";

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
  /** How the project was chosen, and the other `.kicad_pro` files discovery saw (repo-relative). */
  discovery: { how: "explicit" | "only" | "shallowest"; others: string[] };
}

/** Folders that hold someone else's projects (libraries, dependencies, outputs). */
const IGNORED_DIRS = new Set(["node_modules", "vendor", "third_party", "3rdparty", "dist", "build"]);

/**
 * Where a command works: the repository, found the way git finds it, and the folder inside it
 * the command was pointed at. KiCad users work in the folder that holds the `.kicad_pro`, often
 * a subfolder (`hw/`) of the repository; every command run anywhere inside it shares the root's
 * `.copperhead/`, and snapshots of a commit hold the whole tree from the root.
 */
export interface RepoLocation {
  /** Absolute, symlink-resolved repo root: the top of the git work tree, or the folder itself outside git. */
  root: string;
  /** The folder the command was pointed at (`--repo`, default the working directory), repo-relative, `""` at the root. */
  within: string;
}

/** Locates `--repo` (default: the working directory), which must be an existing folder. */
export function locateRepo(repo: string | undefined): RepoLocation {
  const start = resolve(repo ?? process.cwd());
  if (!existsSync(start)) {
    throw new CopperheadError("not_found", `Repository folder not found: ${start}`, {
      fix: "Pass --repo with the path of a folder that holds a KiCad project.",
    });
  }
  if (!statSync(start).isDirectory()) {
    throw new CopperheadError("bad_path", `${start} is not a folder; --repo names the repository's folder.`, {
      fix: "Pass --repo with the path of a folder that holds a KiCad project (not a file or device in it).",
    });
  }
  const folder = realpathSync(start);
  const root = workTreeTop(folder) ?? folder;
  return { root, within: relative(root, folder).split(sep).join("/") };
}

/** The repo root of `--repo` (default: the working directory); see `locateRepo`. */
export function resolveRepoRoot(repo: string | undefined): string {
  return locateRepo(repo).root;
}

/**
 * The top of the git work tree holding `folder`, as git itself finds it (`.git` files of
 * linked worktrees and submodules, `GIT_CEILING_DIRECTORIES`), or undefined outside one or
 * without git: then the folder is the repo.
 */
function workTreeTop(folder: string): string | undefined {
  let result;
  try {
    result = runGitSync(folder, ["rev-parse", "--show-toplevel"]);
  } catch {
    return undefined;
  }
  const top = result.stdout.trim();
  return result.code === 0 && isAbsolute(top) && existsSync(top) ? realpathSync(top) : undefined;
}

/**
 * Lists entries whose name ends with `suffix` (repo-relative, sorted) outside hidden and vendor
 * folders, without following symlinked folders. Every entry so named counts — a folder, a FIFO
 * or a link in a project file's place too — so that discovery says what is wrong with it rather
 * than finding no project at all.
 */
function scanRepo(repoRoot: string, suffix: string): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    let entries;
    try {
      entries = readdirSync(join(repoRoot, rel), { withFileTypes: true });
    } catch (err) {
      // A folder copperhead may not list holds nothing it could read either.
      if (rel !== "" && (errorCode(err) === "EACCES" || errorCode(err) === "EPERM")) return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name.endsWith(suffix)) found.push(path);
      else if (entry.isDirectory() && !IGNORED_DIRS.has(entry.name)) walk(path);
    }
  };
  walk("");
  return found.sort();
}

/** Lists `.kicad_pro` entries (repo-relative, sorted) outside hidden and vendor folders. */
export function findProjectFiles(repoRoot: string): string[] {
  return scanRepo(repoRoot, ".kicad_pro");
}

/**
 * Finds the project to work on, or throws a typed error that says how to choose one. `within`
 * is the repo-relative folder the command was pointed at: a relative `explicit` path is taken
 * from there, as git takes paths from the working directory, and discovery looks there first.
 */
export function discoverProject(repoRoot: string, explicit?: string, within = ""): KicadProject {
  let projectFile: string;
  let discovery: KicadProject["discovery"] = { how: "explicit", others: [] };
  if (explicit) {
    projectFile = isAbsolute(explicit) ? explicit : join(repoRoot, within, explicit);
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
    const everywhere = findProjectFiles(repoRoot);
    const inside = within === "" ? [] : everywhere.filter((path) => path.startsWith(`${within}/`));
    const candidates = inside.length > 0 ? inside : everywhere;
    if (candidates.length === 0) {
      const legacy = findLegacyProject(repoRoot);
      if (legacy) {
        throw new CopperheadError(
          "legacy_format",
          `${legacy} is a KiCad 5 project (.pro and .sch); copperhead reads the formats of KiCad 6 and later.`,
          {
            file: legacy,
            fix: "Open the project in KiCad 6 or newer and save it (KiCad converts it to .kicad_pro and .kicad_sch), then run copperhead again.",
          },
        );
      }
      throw new CopperheadError("project_not_found", `No .kicad_pro file found in ${repoRoot}`, {
        fix: "Run copperhead inside a KiCad project repository, or pass --repo PATH.",
      });
    }
    const depth = (path: string) => path.split("/").length;
    const shallowest = Math.min(...candidates.map(depth));
    const top = candidates.filter((c) => depth(c) === shallowest);
    if (top.length > 1) {
      throw new CopperheadError(
        "project_ambiguous",
        `Found ${top.length} KiCad projects at the same depth: ${top.join(", ")}`,
        {
          fix: 'Choose one with --project <path/to/name.kicad_pro>, or set "project" in .copperhead/config.json.',
          candidates,
        },
      );
    }
    const chosen = top[0]!;
    discovery = {
      how: candidates.length === 1 ? "only" : "shallowest",
      others: candidates.filter((c) => c !== chosen),
    };
    if (discovery.how === "shallowest") announce(repoRoot, chosen, discovery.others);
    projectFile = join(repoRoot, chosen);
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
  return { repoRoot, projectFile, name, schematic, board: hasBoard ? board : undefined, discovery };
}

/** The choice among several projects is said once per repo and project, on stderr. */
const announced = new Set<string>();

function announce(repoRoot: string, chosen: string, others: string[]): void {
  const key = `${repoRoot}\0${chosen}`;
  if (announced.has(key)) return;
  announced.add(key);
  log.info(
    `Using ${chosen}, the top-level KiCad project (also found: ${others.join(", ")}). Pass --project to choose another.`,
  );
}

/** A KiCad 5 project file (`name.pro` with `name.sch` beside it), repo-relative, if the repo holds one. */
function findLegacyProject(repoRoot: string): string | undefined {
  return scanRepo(repoRoot, ".pro").find((path) => existsSync(join(repoRoot, path.replace(/\.pro$/, ".sch"))));
}
