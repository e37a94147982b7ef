/**
 * Where the agent may point its doc tools: files under the docs folder, and nothing else —
 * no `..`, no absolute paths, no `.git` or `.copperhead`, no symlink that leads out of the repo.
 * (Writes are confined once more by the journal, the single choke point for repo writes.)
 */
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, normalize, sep } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { repoRelative, resolveRepoPath } from "../../repo/repo-path.ts";
import type { RunContext } from "../context.ts";
import { ToolError } from "./tool.ts";

/**
 * Repo-relative, `/`-separated path of `path` inside the docs folder, or a ToolError.
 *
 * The answer names the file by where it really is: symlinked folders are resolved (as the
 * journal resolves them), so `self/CHANGELOG.md` through a `docs/self -> .` link is
 * `docs/CHANGELOG.md`, and the callers' rules about which docs the model may write (never the
 * pipeline's own) cannot be dodged by spelling a path another way. File symlinks are refused.
 */
export function docPath(ctx: RunContext, path: string): string {
  if (path.includes("\0")) throw new ToolError("the path contains a NUL byte");
  if (path.includes("\\")) throw new ToolError(`${path}: separate folders with /, not \\`);
  if (isAbsolute(path) || /^[a-zA-Z]:/.test(path))
    throw new ToolError(`${path}: give a path relative to the ${ctx.docs}/ folder`);
  const normalised = normalize(path).split(sep).join("/");
  if (normalised === ".." || normalised.startsWith("../") || normalised.split("/").includes("..")) {
    throw new ToolError(`${path}: paths may not leave the ${ctx.docs}/ folder`);
  }
  const rel = `${ctx.docs}/${normalised.replace(/^\.\//, "")}`;
  if (rel.split("/").some((part) => part.toLowerCase() === ".git" || part.toLowerCase() === ".copperhead"))
    throw new ToolError(`${path}: .git and .copperhead are off limits`);
  if (!rel.endsWith(".md"))
    throw new ToolError(`${path}: only markdown files (.md) under ${ctx.docs}/ can be read or edited`);
  let canonical: string;
  try {
    canonical = resolveRepoPath(ctx.repoRoot, rel).path;
  } catch (err) {
    if (err instanceof CopperheadError) throw new ToolError(`${path}: ${err.message}`);
    throw err;
  }
  const docsAbs = join(ctx.repoRoot, ctx.docs);
  const docsDir = existsSync(docsAbs) ? repoRelative(realpathSync(ctx.repoRoot), realpathSync(docsAbs)) : ctx.docs;
  if (!canonical.startsWith(`${docsDir}/`))
    throw new ToolError(`${path}: a symlink that leads outside ${ctx.docs}/ (to ${canonical})`);
  return `${ctx.docs}/${canonical.slice(docsDir.length + 1)}`;
}
