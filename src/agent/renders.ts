/**
 * Before and after schematic renders for a run's record (`.copperhead/runs/<id>/render/`), so a
 * reviewer can see a change without opening KiCad. "Before" is plotted from the sheets as
 * committed at HEAD, "after" from the working tree. Each plot is a kicad-cli start (~0.2 s), so
 * the pipeline runs them alongside the checks rather than after them. Rendering is a courtesy:
 * when kicad-cli cannot plot, the run carries on and the transcript says why.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { exportSvg, type KicadCli } from "../kicad/kicad-cli.ts";
import { runGit } from "../repo/git.ts";
import type { KicadProject } from "../repo/project.ts";

export interface RenderOutcome {
  /** Repo-relative SVG paths. */
  files: string[];
  /** Why nothing was rendered, when nothing was. */
  skipped?: string;
}

/** Plots the sheets as committed at HEAD (the state before the run) into `outDir`. */
export async function renderCommitted(project: KicadProject, sheets: string[], outDir: string, cli: KicadCli): Promise<RenderOutcome> {
  const root = project.repoRoot;
  const scratch = mkdtempSync(join(tmpdir(), "copperhead-render-"));
  try {
    // The committed project, laid out as it is in the repo, so sheet references resolve.
    for (const file of [project.projectFile, ...sheets]) {
      const committed = await runGit(root, ["show", `HEAD:${repoRelative(root, file)}`]);
      if (committed.code !== 0) continue;
      const target = join(scratch, repoRelative(root, file));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, committed.stdout);
    }
    return await plot(root, join(scratch, repoRelative(root, project.schematic)), outDir, cli);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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

function repoRelative(root: string, file: string): string {
  return relative(root, file).split(sep).join("/");
}
