/**
 * A diff between two states of a repository, each named by a git ref or the working tree: the
 * one entry point `copperhead diff` and the gated run share. Commits are read from snapshots
 * (`repo/snapshot.ts`), never checked out.
 */
import { resolve } from "node:path";
import { CopperheadError } from "../errors.ts";
import type { KicadCli } from "../kicad/cli/kicad-cli.ts";
import { withSnapshot } from "../repo/snapshot.ts";
import { diffStates, type DesignDiff } from "./diff.ts";
import { renderDiff, type DiffRenders } from "./render.ts";
import { SheetPlots } from "./sheet-plots.ts";
import { loadDesignState, stateProject } from "./design-state.ts";

export interface CompareOptions {
  repoRoot: string;
  /** The `.kicad_pro`, repo-relative; it may be missing from one of the states. */
  projectFile: string;
  /** The docs folder, repo-relative. */
  docs: string;
  /** The state before, a commit-ish. */
  base: string;
  /** The state after, a commit-ish; undefined for the working tree. */
  head?: string;
  /** Plot what changed into this folder with this kicad-cli. */
  render?: { dir: string; cli: KicadCli };
}

export interface Comparison {
  diff: DesignDiff;
  base: { commit: string };
  /** `commit` is null for the working tree. */
  head: { commit: string | null };
  renders?: DiffRenders;
}

export function compareStates(options: CompareOptions): Promise<Comparison> {
  const { repoRoot, projectFile, docs } = options;
  return withSnapshot(repoRoot, options.base, async (base) => {
    const compare = async (headRoot: string, headLabel: string, headCommit: string | null): Promise<Comparison> => {
      const at = {
        before: { root: base.root, projectFile, docs, label: options.base },
        after: { root: headRoot, projectFile, docs, label: headLabel },
      };
      const projects = { before: stateProject(at.before), after: stateProject(at.after) };
      if (!projects.before && !projects.after) {
        throw new CopperheadError(
          "project_not_found",
          `${projectFile} exists neither in ${options.base} nor in ${headLabel}.`,
          {
            fix: "Pass --project with the .kicad_pro to compare, relative to the repo.",
          },
        );
      }
      // kicad-cli plots while the states load and compare (sheet-plots.ts says why).
      const plots = options.render ? new SheetPlots(projects, options.render.cli) : undefined;
      try {
        await plots?.started;
        const before = loadDesignState(at.before, projects.before);
        const after = loadDesignState(at.after, projects.after);
        const diff = diffStates(before, after);
        const comparison: Comparison = { diff, base: { commit: base.commit }, head: { commit: headCommit } };
        if (options.render && plots)
          comparison.renders = await renderDiff(
            diff,
            before,
            after,
            resolve(options.render.dir),
            options.render.cli,
            plots,
          );
        return comparison;
      } finally {
        await plots?.close();
      }
    };
    if (options.head === undefined) return compare(repoRoot, "the working tree", null);
    return withSnapshot(repoRoot, options.head, (head) => compare(head.root, options.head!, head.commit));
  });
}
