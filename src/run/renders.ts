/**
 * Before and after schematic renders for a run's record (`.copperhead/runs/<id>/render/`), so a
 * reviewer can see a change without opening KiCad. "Before" is plotted from the sheets as
 * committed at HEAD, "after" from the working tree. Each plot is a kicad-cli start (~0.2 s), so
 * the pipeline runs them alongside the checks rather than after them. Rendering is a courtesy:
 * when kicad-cli cannot plot, the run carries on and the transcript says why.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { exportSvg, type KicadCli } from "../kicad/cli/kicad-cli.ts";
import type { KicadProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { withSnapshot } from "../repo/snapshot.ts";

export interface RenderOutcome {
  /** Repo-relative SVG paths. */
  files: string[];
  /** Why nothing was rendered, when nothing was. */
  skipped?: string;
}

/** Plots the sheets as committed at HEAD (the state before the run) into `outDir`. */
export function renderCommitted(project: KicadProject, outDir: string, cli: KicadCli): Promise<RenderOutcome> {
  const root = project.repoRoot;
  return withSnapshot(root, "HEAD", (snapshot) =>
    plot(root, join(snapshot.root, repoRelative(root, project.schematic)), outDir, cli),
  ).catch((err: unknown): RenderOutcome => ({ files: [], skipped: err instanceof Error ? err.message : String(err) }));
}

/** Plots the sheets as they are in the working tree into `outDir`. */
export function renderWorkingTree(project: KicadProject, outDir: string, cli: KicadCli): Promise<RenderOutcome> {
  return plot(project.repoRoot, project.schematic, outDir, cli);
}

async function plot(root: string, schematic: string, outDir: string, cli: KicadCli): Promise<RenderOutcome> {
  try {
    rmSync(outDir, { recursive: true, force: true });
    return { files: (await exportSvg(schematic, outDir, { cli })).map((f) => repoRelative(root, f)) };
  } catch (err) {
    return { files: [], skipped: err instanceof Error ? err.message : String(err) };
  }
}
