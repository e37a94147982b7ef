/**
 * A part copied in from another design: its Reference field reads "C?" and its only instance
 * carries the other project's path, so in this project it is not annotated (as KiCad shows it),
 * while its footprint on the board still bears the reference it had there. On a copy of a
 * corpus board (rvpc-revb, its C1 made such a part), through the tools as the loop calls them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentDesign } from "../../src/agent/context.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, initialisedCorpusRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

const project = corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!;
const SCHEMATIC = project.projectFile.replace(/\.kicad_pro$/, ".kicad_sch");
const BOARD = project.projectFile.replace(/\.kicad_pro$/, ".kicad_pcb");
/** C1's symbol, and the footprint linked to it by its path. */
const C1_PATH = "/00000000-0000-0000-0000-00006429c9cc";

let template: string;
beforeAll(async () => {
  template = await initialisedCorpusRepo(project);
  const file = join(template, SCHEMATIC);
  const text = readFileSync(file, "utf8");
  const start = text.indexOf('(property "Reference" "C1"');
  const end = text.indexOf('(reference "C1")', start);
  const symbol = text.slice(start, end);
  const foreign = symbol
    .replace('(property "Reference" "C1"', '(property "Reference" "C?"')
    .replace(
      '(project "RVPC_Rev_B"\n        (path "/61827188-a485-403a-89e3-b210d5eae0ab"',
      '(project "Other"\n        (path "/0cc5d1fe-ac5d-4ccd-80d6-bd00bc463a7b"',
    );
  expect(foreign).not.toBe(symbol);
  writeFileSync(file, text.slice(0, start) + foreign + text.slice(end));
}, 120_000);

const footprintsOf = (repo: string) => Board.parse(readFileSync(join(repo, BOARD))).footprints();

describe("a part another project annotated", () => {
  test("is not annotated here, and the board sync leaves its footprint as it is", async () => {
    const repo = await copyRepo(template);
    await withTools(repo, async ({ ctx, call }) => {
      expect(currentDesign(ctx).components.find((c) => c.symbolPath === C1_PATH)?.ref).toBe("C?");
      const sync = (await call("sync_board")) as {
        removed: string[];
        updated: string[];
        warnings: { byKind: Record<string, unknown> };
      };
      // It was removed as "symbol deleted", its 9 track ends left dangling.
      expect(sync.removed).toEqual([]);
      expect(sync.updated).toEqual([]);
      expect(Object.keys(sync.warnings.byKind)).toEqual(["unannotated"]);
    });
    expect(
      footprintsOf(repo)
        .filter((f) => f.ref === "C1")
        .map((f) => f.path),
    ).toEqual([C1_PATH]);
  }, 120_000);

  test("a new part like it takes no reference a footprint on the board bears, and gets a footprint of its own", async () => {
    const repo = await copyRepo(template);
    await withTools(repo, async ({ call }) => {
      const added = (await call("add_component", {
        like: "C?",
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        near: "C?",
        connect: { "1": "GND", "2": "+5V" },
      })) as { ref: string };
      // It was given C1, and the sync handed it C1's footprint, swapped and re-linked.
      expect(added.ref).toBe("C2");
      const sync = (await call("sync_board")) as { added: string[]; updated: string[]; removed: string[] };
      expect(sync.added).toHaveLength(1);
      expect(sync.added[0]).toStartWith("C2 Capacitor_SMD:C_0603_1608Metric at ");
      expect(sync.updated).toEqual([]);
      expect(sync.removed).toEqual([]);
    });
    const footprints = footprintsOf(repo);
    expect(footprints.filter((f) => f.ref === "C1").map((f) => [f.libId, f.path])).toEqual([
      ["OLIMEX_RLC-FP:C2010", C1_PATH],
    ]);
    expect(footprints.filter((f) => f.ref === "C2").map((f) => f.libId)).toEqual(["Capacitor_SMD:C_0603_1608Metric"]);
  }, 240_000);
});
