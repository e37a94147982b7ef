/**
 * docs/PINOUT.md on real designs: on every project of both corpora the generated tables read
 * back as the design's connectors, pin for pin; on the open-hardware projects (KiCad 6 to 9)
 * `init` writes it and the drift check finds it in agreement, until a connector's net is
 * renamed in the schematic.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { scanDrift } from "../../src/checks/drift.ts";
import { runInit } from "../../src/commands/init.ts";
import { loadDesign } from "../../src/design/design.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { parsePinout, pinoutConnectors, pinoutDifferences, renderPinout } from "../../src/spec/pinout.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const projects = everyProject().filter((p) => p.schematic !== undefined);

describe("the pinout reads back as the design's connectors", () => {
  for (const project of projects) {
    test(project.id, () => {
      const design = loadDesign(discoverProject(project.root, project.projectFile));
      const connectors = pinoutConnectors(design);
      const table = parsePinout(renderPinout(design))!;
      expect(table.edited).toBe(false);
      expect(pinoutDifferences(connectors, table)).toEqual([]);
      expect(table.rows.length).toBe(connectors.reduce((n, c) => n + c.pins.length, 0));
    }, 60_000);
  }
});

describe("init writes it; drift follows the schematic", () => {
  for (const project of projects.filter((p) => p.corpus !== "demos")) {
    test(project.id, async () => {
      const copy = await copyCorpusProject(project);
      await runInit({ repo: copy.root, project: project.projectFile, hooks: false });
      const drift = () =>
        scanDrift(loadDesign(discoverProject(copy.root, project.projectFile)), { docsDir: "docs" }).items.filter((i) =>
          i.kind.startsWith("pinout_"),
        );
      expect(drift()).toEqual([]);
      // A connector pin's net, renamed in the doc's stead: the row is drift until regenerated.
      const design = loadDesign(discoverProject(copy.root, project.projectFile));
      const pin = pinoutConnectors(design).flatMap((c) => c.pins.map((p) => ({ ref: c.ref, ...p })))[0];
      expect(pin, `${project.id} has a connector`).toBeDefined();
      const file = join(copy.root, "docs", "PINOUT.md");
      const text = await Bun.file(file).text();
      writeFileSync(
        file,
        text.replace(`| ${pin!.pin} | ${pin!.name} | ${pin!.net} |`, `| ${pin!.pin} | ${pin!.name} | RENAMED |`),
      );
      expect(drift().map((i) => i.key)).toEqual([`drift:pinout:${pin!.ref}.${pin!.pin}:net`]);
    }, 60_000);
  }
});
