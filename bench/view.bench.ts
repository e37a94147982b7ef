/**
 * `view` of one region of a vme-wren sub-sheet (around a part) against one
 * `kicad-cli sch export svg` of that sheet (kicad-cli 9.0.8 plots a sub-sheet only with all of
 * them: `--pages` always plots the root). Cold: the cache is empty, so the view plots, loads the
 * design, cuts and rasterises. Cached: the sheet is unchanged since the last view, so the view
 * hashes the files and reads its answer. Targets: ≤ 1.5× cold, ≤ 0.1× cached.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDesign } from "../src/design/design.ts";
import { viewRegion } from "../src/agent/view/render.ts";
import { exportSvg, findKicadCli } from "../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../src/repo/project.ts";
import { demosDir } from "../test/support/corpora.ts";
import { ms, ratio, report } from "./lib/measure.ts";

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export async function benchView(): Promise<void> {
  const cli = await findKicadCli();
  const repo = join(mkdtempSync(join(tmpdir(), "copperhead-bench-")), "vme-wren");
  try {
    cpSync(join(demosDir(), "vme-wren"), repo, { recursive: true });
    const project = discoverProject(repo);
    const question = { document: "schematic" as const, ref: "C1", sheet: "/power-supply-1/" };
    const scratch = mkdtempSync(join(tmpdir(), "copperhead-bench-svg-"));
    const raw = await time(() => exportSvg(project.schematic, scratch, { cli }));
    rmSync(scratch, { recursive: true, force: true });
    const cold = await time(() => viewRegion(project, () => loadDesign(project), question));
    const cached = await time(() => viewRegion(project, () => loadDesign(project), question));
    report(`view: one region of vme-wren /power-supply-1/ vs one kicad-cli ${cli.version.raw} sch export svg`);
    report(`  kicad-cli ${ms(raw).padStart(9)}  view cold ${ms(cold).padStart(9)}  ${ratio(cold / raw, { max: 1.5 })}`);
    report(
      `  kicad-cli ${ms(raw).padStart(9)}  view cached ${ms(cached).padStart(7)}  ${ratio(cached / raw, { max: 0.1 })}`,
    );
  } finally {
    rmSync(join(repo, ".."), { recursive: true, force: true });
  }
}

if (import.meta.main) await benchView();
