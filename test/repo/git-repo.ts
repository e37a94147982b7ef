/**
 * Real git repos in temp dirs for the src/repo tests, and a fingerprint of a working tree
 * (every file's bytes and mode, untracked ones included, plus every folder) to assert that a
 * rollback left it byte-identical.
 */
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { runGit } from "../../src/repo/git.ts";
import { makeTempDir } from "../support/kicad.ts";

/** No user or system git config: tests see the same git on every machine. */
export async function isolatedGitEnv(): Promise<Record<string, string>> {
  const home = await makeTempDir();
  return { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: home, XDG_CONFIG_HOME: home };
}

export interface RepoFile {
  content: string | Uint8Array;
  mode?: number;
}

/** A fresh repo with `files` committed (identity set in the repo's own config). */
export async function makeRepo(files: Record<string, string | Uint8Array | RepoFile>): Promise<string> {
  const root = await makeTempDir();
  await git(root, "init", "--quiet", "--initial-branch=main");
  await git(root, "config", "user.name", "Test User");
  await git(root, "config", "user.email", "test@example.com");
  writeFiles(root, files);
  await git(root, "add", "-A");
  await git(root, "commit", "--quiet", "-m", "initial");
  return root;
}

export function writeFiles(root: string, files: Record<string, string | Uint8Array | RepoFile>): void {
  for (const [path, file] of Object.entries(files)) {
    const { content, mode } =
      typeof file === "string" || file instanceof Uint8Array ? { content: file, mode: undefined } : file;
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    if (mode !== undefined) chmodSync(abs, mode);
  }
}

/** Runs git in the test's isolation and fails the test on a non-zero exit. */
export async function git(root: string, ...args: string[]): Promise<string> {
  const result = await runGit(root, args, { env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
  if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Stages everything under `root` and commits it as a test author, with `message`. */
export async function commitAll(root: string, message: string): Promise<void> {
  await git(root, "add", "-A");
  await git(root, "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", message);
}

/**
 * `path → sha256 + mode` for every file and symlink under `root`, and `path/` for every
 * folder; `.git` and the entries under `skip` (e.g. `.copperhead`) are left out.
 */
export function treeFingerprint(root: string, skip: string[] = [".git"]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (skip.includes(path)) continue;
      const stat = lstatSync(join(root, path));
      if (stat.isDirectory()) {
        out[`${path}/`] = (stat.mode & 0o7777).toString(8);
        walk(path);
      } else if (stat.isSymbolicLink()) {
        out[path] = "symlink";
      } else {
        out[path] = `${createHash("sha256")
          .update(readFileSync(join(root, path)))
          .digest("hex")} ${(stat.mode & 0o7777).toString(8)}`;
      }
    }
  };
  walk("");
  return out;
}
