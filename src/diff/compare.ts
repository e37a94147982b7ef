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
import { loadDesignState, type DesignState } from "./design-state.ts";

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
  const inState = (root: string, label: string) => loadDesignState({ root, projectFile, docs, label });
  return withSnapshot(repoRoot, options.base, async (base) => {
    const before = inState(base.root, options.base);
    const compare = async (after: DesignState, headCommit: string | null): Promise<Comparison> => {
      if (!before.project && !after.project) {
        throw new CopperheadError("project_not_found", `${projectFile} exists neither in ${options.base} nor in ${options.head ?? "the working tree"}.`, {
          fix: "Pass --project with the .kicad_pro to compare, relative to the repo.",
        });
      }
      const diff = diffStates(before, after);
      const comparison: Comparison = { diff, base: { commit: base.commit }, head: { commit: headCommit } };
      if (options.render) comparison.renders = await renderDiff(diff, before, after, resolve(options.render.dir), options.render.cli);
      return comparison;
    };
    if (options.head === undefined) return compare(inState(repoRoot, "the working tree"), null);
    return withSnapshot(repoRoot, options.head, (head) => compare(inState(head.root, options.head!), head.commit));
  });
}
