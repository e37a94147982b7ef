/**
 * Before and after schematic renders for a run's record (`.copperhead/runs/<id>/render/`), so a
 * reviewer can see a change without opening KiCad. "Before" is plotted from the sheets as
 * committed at HEAD, "after" from the working tree. Rendering is a courtesy: when kicad-cli
 * cannot plot, the run carries on and the transcript says why.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { exportSvg, type KicadCli } from "../kicad/kicad-cli.ts";
import { runGit } from "../repo/git.ts";
import type { KicadProject } from "../repo/project.ts";

export interface RenderOutcome {
  /** Repo-relative SVG paths, before then after. */
  files: string[];
  /** Why nothing was rendered, when nothing was. */
  skipped?: string;
}

export async function renderChangedSheets(
  project: KicadProject,
  sheets: string[],
  touched: string[],
  outDir: string,
  cli: KicadCli,
): Promise<RenderOutcome> {
  if (!touched.some((f) => f.endsWith(".kicad_sch"))) return { files: [], skipped: "no schematic sheet changed" };
  const root = project.repoRoot;
  const rel = (abs: string) => relative(root, abs).split(sep).join("/");
  const scratch = mkdtempSync(join(tmpdir(), "copperhead-render-"));
  try {
    // The committed project, laid out as it is in the repo, so sheet references resolve.
    for (const file of [project.projectFile, ...sheets]) {
      const committed = await runGit(root, ["show", `HEAD:${rel(file)}`]);
      if (committed.code !== 0) continue;
      const target = join(scratch, rel(file));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, committed.stdout);
    }
    const [before, after] = await Promise.all([
      exportSvg(join(scratch, rel(project.schematic)), join(outDir, "before"), { cli }),
      exportSvg(project.schematic, join(outDir, "after"), { cli }),
    ]);
    return { files: [...before, ...after].map(rel) };
  } catch (err) {
    return { files: [], skipped: err instanceof Error ? err.message : String(err) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
