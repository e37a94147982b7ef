/**
 * `copperhead diff`: what a change did to the design, between two states of the repo — by
 * default the last commit (`--base HEAD`) and the working tree. The semantic part comes from
 * the native model alone (no kicad-cli); `render` adds before/after plots and a "what changed"
 * image per changed sheet and for the board, which does need kicad-cli.
 *
 * A commit is read from a snapshot in a temporary folder, never by checking it out, so the
 * command is safe in the middle of someone's work. Like `check`, it makes no network calls.
 */
import { resolve } from "node:path";
import { discoverConfiguredProject, loadConfig } from "../config/config.ts";
import { compareStates } from "../diff/compare.ts";
import type { DesignDiff } from "../diff/diff.ts";
import type { DiffRenders } from "../diff/render.ts";
import { CopperheadError } from "../errors.ts";
import { findKicadCli } from "../kicad/cli/kicad-cli.ts";
import { openRepo } from "../repo/recovery.ts";
import { repoRelative } from "../repo/repo-path.ts";

export interface DiffOptions {
  repo?: string;
  project?: string;
  /** The state before: a commit-ish. Default `HEAD`. */
  base?: string;
  /** The state after: a commit-ish; default the working tree. */
  head?: string;
  /** Folder for the before/after plots and the highlight images. */
  render?: string;
}

export interface DiffResult extends DesignDiff {
  /** The `.kicad_pro` compared, repo-relative. */
  project: string;
  base: { commit: string };
  /** `commit` is null for the working tree. */
  head: { commit: string | null };
  /** With `render`: the files written there, by sheet path and for the board. */
  renders?: DiffRenders;
}

export async function runDiff(options: DiffOptions = {}): Promise<DiffResult> {
  const { root: repoRoot, within } = await openRepo(options.repo);
  const { projectFile, docs } = locateProject(repoRoot, within, options.project);
  const render = options.render !== undefined ? { dir: options.render, cli: await findKicadCli() } : undefined;
  const { diff, base, head, renders } = await compareStates({
    repoRoot,
    projectFile,
    docs,
    base: options.base ?? "HEAD",
    head: options.head,
    render,
  });
  const { schema, ...changes } = diff;
  return { schema, project: projectFile, base, head, ...changes, ...(renders ? { renders } : {}) };
}

/**
 * Which project to compare, repo-relative: `--project`, else the config's, else the only one
 * in the working tree. An explicit project need not exist in the working tree (it may have
 * been deleted, which the diff then shows).
 */
function locateProject(
  repoRoot: string,
  within: string,
  explicit: string | undefined,
): { projectFile: string; docs: string } {
  if (explicit) {
    const rel = repoRelative(repoRoot, resolve(repoRoot, within, explicit));
    if (!rel.endsWith(".kicad_pro") || rel.startsWith("../")) {
      throw new CopperheadError("usage", `--project must name a .kicad_pro inside the repo, not ${explicit}.`, {
        fix: "Pass the project's path relative to the repo, e.g. --project hw/board.kicad_pro.",
      });
    }
    return { projectFile: rel, docs: loadConfig(repoRoot).config.docs };
  }
  const { config, project } = discoverConfiguredProject(repoRoot, undefined, within);
  return { projectFile: repoRelative(repoRoot, project.projectFile), docs: config.docs };
}
