/**
 * A run's record keeps the schematic plots of the sheets it changed (run/renders.ts), judged on
 * real kicad-cli plots of KiCad's hierarchical demo: one sheet edited, the others plotted alike.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { renderCommitted, renderWorkingTree, keepChangedSheets } from "../../src/run/renders.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

describe("keepChangedSheets", () => {
  test("of complex_hierarchy's three sheets, the one whose value changed is kept, before and after; the two plotted alike go", async () => {
    const cli = await requireKicadCli();
    const demo = demoProjects().find((p) => p.id === "demos/complex_hierarchy/complex_hierarchy")!;
    const repo = await initialisedCorpusRepo(demo);
    const project = discoverProject(repo, "complex_hierarchy.kicad_pro");
    // The root sheet's last Value field belongs to a placed symbol (its library symbols come first).
    const root = project.schematic;
    const text = readFileSync(root, "utf8");
    const at = text.lastIndexOf('(property "Value" "');
    writeFileSync(
      root,
      `${text.slice(0, at)}(property "Value" "changed${text.slice(at + '(property "Value" "'.length)}`,
    );

    const out = join(repo, ".copperhead", "runs", "r", "render");
    const before = await renderCommitted(project, join(out, "before"), cli);
    const after = await renderWorkingTree(project, join(out, "after"), cli);
    expect([before.files.length, after.files.length]).toEqual([3, 3]);

    const kept = keepChangedSheets(repo, before, after);
    expect(kept.unchanged).toBe(2);
    expect(kept.before.files.map((f) => basename(f))).toEqual(["complex_hierarchy.svg"]);
    expect(kept.after.files.map((f) => basename(f))).toEqual(["complex_hierarchy.svg"]);
    for (const file of [...before.files, ...after.files])
      expect(existsSync(join(repo, file)), file).toBe(basename(file) === "complex_hierarchy.svg");
  }, 60_000);

  test("with no before plots every after plot stays; with no after plots the before plots (HEAD's sheets) go", async () => {
    const after = { files: ["a.svg", "b.svg"] };
    expect(keepChangedSheets("/nonexistent", { files: [], skipped: "no baseline" }, after)).toEqual({
      before: { files: [], skipped: "no baseline" },
      after,
      unchanged: 0,
    });
    const root = await makeTempDir();
    mkdirSync(join(root, "before"));
    for (const name of ["a.svg", "b.svg"]) writeFileSync(join(root, "before", name), "<svg/>");
    const before = { files: ["before/a.svg", "before/b.svg"] };
    expect(keepChangedSheets(root, before, { files: [], skipped: "not verified" })).toEqual({
      before: { files: [] },
      after: { files: [], skipped: "not verified" },
      unchanged: 0,
    });
    expect(readdirSync(join(root, "before"))).toEqual([]);
  });
});
