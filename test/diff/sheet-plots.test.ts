/**
 * The sheet plots of a rendered diff, with the real kicad-cli: started before the states are
 * loaded, so kicad-cli runs while copperhead reads the design; matched to the sheets of each
 * state; a failed plot said in `skipped`; the scratch plots removed on close.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { SheetPlots } from "../../src/diff/sheet-plots.ts";
import { loadDesignState, stateProject } from "../../src/diff/design-state.ts";
import { findKicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, initialisedRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const at = (root: string) => ({ root, projectFile: "usb-led.kicad_pro", docs: "docs", label: "the working tree" });

describe("SheetPlots", () => {
  test("kicad-cli has started before `started` settles and is still plotting; each state's sheets get their plot", async () => {
    const repo = await copyRepo(await initialisedRepo());
    const cli = await findKicadCli();
    const project = stateProject(at(repo));
    const plots = new SheetPlots({ before: project, after: project }, cli);
    try {
      let done = false;
      const state = (async () => {
        await plots.started;
        // Loading the design now overlaps the plot: it has not finished.
        expect(done).toBe(false);
        return loadDesignState(at(repo), project);
      })();
      const skipped: string[] = [];
      const before = plots.of(await state, "before", skipped).finally(() => (done = true));
      const sheets = await before;
      expect([...sheets.keys()]).toEqual((await state).sheets.map((s) => s.path));
      for (const file of sheets.values()) expect(file.endsWith(".svg") && existsSync(file)).toBe(true);
      expect(skipped).toEqual([]);
    } finally {
      await plots.close();
    }
  }, 60_000);

  test("a state without the project has no plots; a plot kicad-cli cannot make is said in skipped; close removes every plot", async () => {
    const repo = await copyRepo(await initialisedRepo());
    const cli = await findKicadCli();
    const project = stateProject(at(repo));
    const good = loadDesignState(at(repo), project);
    writeFileSync(project!.schematic, "(kicad_sch (version");
    const plots = new SheetPlots({ before: undefined, after: project }, cli);
    await plots.started;
    const skipped: string[] = [];
    expect((await plots.of(good, "before", skipped)).size).toBe(0);
    expect((await plots.of(good, "after", skipped)).size).toBe(0);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toStartWith("after sheets: ");
    expect(existsSync(plots.scratch)).toBe(true);
    await plots.close();
    expect(existsSync(plots.scratch)).toBe(false);
  }, 60_000);
});
