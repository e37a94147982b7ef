/**
 * The single choke point for "every file the agent touches is confined to the repo"
 * (ARCHITECTURE.md, "Invariants"). The journal runs every write through it, and read tools should too.
 *
 * A path is repo-relative and `/`-separated. Refused, as `bad_path`:
 * - absolute paths (`/x`, `C:x`, `\x`) and any `..` segment, even one that would stay inside;
 * - anything under a `.git` folder, at the top or in a nested repository;
 * - a symlinked folder that leads outside the repo, or into a `.git` folder;
 * - a path that is itself a symlink: writing through one would replace the link with a file,
 *   and reading through one could leave the repo;
 * - a dangling symlink among the folders still to be created.
 *
 * Symlinked folders that stay inside the repo are resolved, so the canonical path is the one
 * git knows the file by (git does not follow symlinked folders) and two spellings of one file
 * share one journal entry.
 */
import { lstatSync, realpathSync, type Stats } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { CopperheadError } from "../errors.ts";

export interface RepoPath {
  /** Canonical repo-relative, `/`-separated path. */
  path: string;
  /** Absolute path under the symlink-resolved repo root. */
  abs: string;
  /** How many of the path's folders exist already; the rest are to be created. */
  existingDirs: number;
}

export function resolveRepoPath(repoRoot: string, relPath: string): RepoPath {
  const root = realpathSync(repoRoot);
  if (typeof relPath !== "string" || relPath.includes("\0")) throw badPath(String(relPath), "it is not a path");
  if (relPath.startsWith("/") || /^[A-Za-z]:/.test(relPath)) {
    throw badPath(relPath, "it is absolute; give a path relative to the repo root, with / separators");
  }
  if (relPath.includes("\\"))
    throw badPath(relPath, "it contains a backslash; give a path relative to the repo root, with / separators");
  const parts = relPath.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.length === 0) throw badPath(relPath, "it names no file");
  if (parts.includes("..")) throw badPath(relPath, "it contains '..'");
  if (parts.some(isGitFolder)) throw badPath(relPath, "it is inside a .git folder");

  // The deepest existing folder, symlinks resolved; the folders below it are to be created.
  let existing = parts.length - 1;
  let dir: string | undefined;
  while (dir === undefined) {
    try {
      dir = realpathSync(join(root, ...parts.slice(0, existing)));
    } catch (err) {
      if (errorCode(err) === "ENOTDIR")
        throw badPath(relPath, `${parts.slice(0, existing).join("/")} is a file, not a folder`);
      if (errorCode(err) !== "ENOENT") throw err;
      existing--;
    }
  }
  if (existing < parts.length - 1 && lstatOrUndefined(join(dir, parts[existing]!))) {
    throw badPath(relPath, `${parts.slice(0, existing + 1).join("/")} is a dangling symlink`);
  }
  const inside = relative(root, dir);
  if (inside.startsWith("..") || isAbsolute(inside))
    throw badPath(relPath, "a symlinked folder leads outside the repository");
  const canonical = [...(inside === "" ? [] : inside.split(sep)), ...parts.slice(existing)];
  if (canonical.some(isGitFolder)) throw badPath(relPath, "a symlinked folder leads into a .git folder");

  const abs = join(root, ...canonical);
  if (lstatOrUndefined(abs)?.isSymbolicLink())
    throw badPath(relPath, "it is a symlink; copperhead does not follow file symlinks");
  return { path: canonical.join("/"), abs, existingDirs: canonical.length - 1 - (parts.length - 1 - existing) };
}

/** An absolute path inside `root` as the repo names it: relative to the root, `/`-separated. */
export function repoRelative(root: string, file: string): string {
  return relative(root, file).split(sep).join("/");
}

export function lstatOrUndefined(abs: string): Stats | undefined {
  try {
    return lstatSync(abs);
  } catch (err) {
    if (errorCode(err) === "ENOENT") return undefined;
    throw err;
  }
}

export function errorCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

function isGitFolder(part: string): boolean {
  return part.toLowerCase() === ".git";
}

function badPath(path: string, why: string): CopperheadError {
  return new CopperheadError("bad_path", `Refused path ${JSON.stringify(path)}: ${why}.`, {
    fix: "Only files inside the repository can be changed, never through .git, '..' or a symlink that leaves it.",
    path,
  });
}
