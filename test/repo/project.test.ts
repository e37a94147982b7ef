import { afterAll, describe, expect, test } from "bun:test";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { discoverProject } from "../../src/repo/project.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR, makeTempDir } from "../support/kicad.ts";
import { copyCorpusProject, demoProjects } from "../support/corpora.ts";

afterAll(cleanupTempDirs);

describe("project discovery", () => {
  test("the only project", async () => {
    const repo = await copyFixture("usb-led");
    const project = discoverProject(repo);
    expect(project.name).toBe("usb-led");
    expect(project.discovery).toEqual({ how: "only", others: [] });
  });

  test("a nested project does not hide the top-level one, and the choice is recorded", async () => {
    const repo = await copyFixture("usb-led");
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "jig"), { recursive: true });
    const project = discoverProject(repo);
    expect(project.name).toBe("usb-led");
    expect(project.discovery).toEqual({ how: "shallowest", others: ["jig/kicad8.kicad_pro"] });
  });

  test("the shallowest wins even below the repo root", async () => {
    const repo = await makeTempDir();
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "hw"), { recursive: true });
    await cp(join(FIXTURES_DIR, "netlist", "kicad6"), join(repo, "hw", "sub", "deeper"), { recursive: true });
    expect(discoverProject(repo).name).toBe("kicad8");
  });

  test("two projects at the same depth are ambiguous, naming both", async () => {
    const repo = await makeTempDir();
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "a"), { recursive: true });
    await cp(join(FIXTURES_DIR, "netlist", "kicad6"), join(repo, "b"), { recursive: true });
    const error = thrownCopperheadError(() => discoverProject(repo));
    expect(error.code).toBe("project_ambiguous");
    expect(error.message).toContain("a/kicad8.kicad_pro");
    expect(error.message).toContain("b/kicad6.kicad_pro");
    expect(error.fix).toContain("--project");
  });

  test("an explicit project wins over discovery", async () => {
    const repo = await copyFixture("usb-led");
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "jig"), { recursive: true });
    const project = discoverProject(repo, "jig/kicad8.kicad_pro");
    expect(project.name).toBe("kicad8");
    expect(project.discovery.how).toBe("explicit");
  });

  test("a KiCad 5 project is a typed error that says how to convert it", async () => {
    const repo = await makeTempDir();
    await mkdir(join(repo, "hw"));
    await writeFile(join(repo, "hw", "board.pro"), "update=22/05/2015 07:44:53\n");
    await writeFile(join(repo, "hw", "board.sch"), "EESchema Schematic File Version 4\n$EndSCHEMATC\n");
    const error = thrownCopperheadError(() => discoverProject(repo));
    expect(error.code).toBe("legacy_format");
    expect(error.message).toContain("hw/board.pro");
    expect(error.fix).toContain("KiCad 6 or newer");
  });

  test("the RoyalBlue54L-Feather demo: the board project, not the antenna nested in it", async () => {
    const demo = demoProjects().find((p) => p.id === "demos/royalblue54L_feather/RoyalBlue54L-Feather")!;
    const copy = await copyCorpusProject(demo);
    const project = discoverProject(copy.root);
    expect(project.name).toBe("RoyalBlue54L-Feather");
    expect(project.discovery.others).toEqual([
      "nfc_antenna/RoyalBlue54L-NFC-Antenna/RoyalBlue54L-NFC-Antenna.kicad_pro",
    ]);
  });
});
