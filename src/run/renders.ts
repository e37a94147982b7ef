/**
 * Before and after schematic renders for a run's record (`.copperhead/runs/<id>/render/`), so a
 * reviewer can see a change without opening KiCad. "Before" is plotted from the sheets as
 * committed at HEAD, "after" from the working tree. Each plot is a kicad-cli start (~0.2 s), so
 * the pipeline runs them alongside the checks rather than after them, and kicad-cli plots every
 * sheet; the record keeps the sheets the run changed (`keepChangedSheets`). Rendering is a
 * courtesy: when kicad-cli cannot plot, the run carries on and the transcript says why.
 */
import { readFileSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
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

/**
 * Drops the plots of the sheets the run left as they were, on both sides: a sheet plotted alike
 * before and after shows a reviewer nothing, and on a large design such sheets are nearly all
 * of the plots (vme-wren: 71 of its 73 sheets, 150 MB a run, for a part added on two). Plots
 * pair by file name, which kicad-cli makes from the sheet's path; a sheet on one side only
 * (added or removed) is kept. With no "after" (a run that ended before it verified) the
 * "before" plots are only HEAD's sheets and go too; with no "before", every "after" plot stays.
 * Returns what is left, and how many sheets were dropped.
 */
export function keepChangedSheets(
  root: string,
  before: RenderOutcome,
  after: RenderOutcome,
): { before: RenderOutcome; after: RenderOutcome; unchanged: number } {
  const afterByName = new Map(after.files.map((f) => [basename(f), f]));
  const dropped = new Set<string>();
  let unchanged = 0;
  for (const file of before.files) {
    const twin = afterByName.get(basename(file));
    if (twin && samePlot(join(root, file), join(root, twin))) {
      dropped.add(file).add(twin);
      unchanged++;
    } else if (after.files.length === 0) dropped.add(file);
  }
  for (const file of dropped) rmSync(join(root, file), { force: true });
  const kept = (r: RenderOutcome) => ({ ...r, files: r.files.filter((f) => !dropped.has(f)) });
  return { before: kept(before), after: kept(after), unchanged };
}

/** kicad-cli's SVG title names the time of the plot; the rest of two plots of one sheet is byte for byte alike. */
const PLOT_TITLE = /<title>SVG Image created as [^<]*<\/title>/;

function samePlot(a: string, b: string): boolean {
  if (statSync(a).size !== statSync(b).size) return false;
  return readFileSync(a, "utf8").replace(PLOT_TITLE, "") === readFileSync(b, "utf8").replace(PLOT_TITLE, "");
}
