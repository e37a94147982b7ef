/**
 * The native netlist equals `kicad-cli sch export netlist` on every project of both real-world
 * corpora (KiCad's demos and the open-hardware corpus, KiCad 6 to 9 formats): same nets, same
 * names, same pins in each. kicad-cli runs once per project, on a copy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { exportNetlist, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { copyCorpusProject, everyProject } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";

afterAll(cleanupTempDirs);

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});

const projects = everyProject().filter((p) => p.schematic !== undefined);

test("both corpora have projects with schematics", () => {
  expect(projects.filter((p) => p.corpus === "demos").length).toBeGreaterThanOrEqual(36);
  expect(projects.filter((p) => p.corpus === "corpus").length).toBe(8);
});

describe("netlist equals kicad-cli's", () => {
  for (const project of projects) {
    test(project.id, async () => {
      const copy = await copyCorpusProject(project);
      const expected = parseKicadNetlist(
        await exportNetlist(copy.schematic!, { cli, timeoutMs: 300_000 }),
        copy.schematic,
      );
      const actual = buildNetlist(loadSchematicProject(copy.schematic!));
      const diff = netlistDiff(expected, actual);
      if (diff.length > 0)
        throw new Error(
          `${project.id}: ${diff.length} differences from kicad-cli:\n  ${diff.slice(0, 40).join("\n  ")}`,
        );
      expect(actual.nets.length).toBe(expected.nets.length);
      expect(actual.nets).toEqual(expected.nets);
      // The copies are large (vme-wren's board is 70 MB): free each one as soon as it is done.
      await rm(dirname(copy.root), { recursive: true, force: true });
    }, 300_000);
  }
});
