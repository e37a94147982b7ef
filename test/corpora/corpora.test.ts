import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { corpusProjects, demoProjects, fixtureCorpusProjects } from "../support/corpora.ts";

describe("the real-world corpora are present", () => {
  test("KiCad's demo projects (kicad-demos): 37 projects, all but microwave with a schematic", () => {
    const demos = demoProjects();
    expect(demos.length).toBe(37);
    expect(demos.filter((p) => !p.schematic).map((p) => p.id)).toEqual(["demos/microwave/microwave"]);
    for (const p of demos) expect(p.schematic === undefined || existsSync(p.schematic)).toBe(true);
  });

  test("the open-hardware corpus: eight projects saved by KiCad 6 to 9, each with a board", () => {
    const corpus = corpusProjects();
    expect(corpus.map((p) => p.id)).toEqual([
      "corpus/antenna-eval",
      "corpus/bms-c1",
      "corpus/emf-hexpansion",
      "corpus/glasgow-revc3",
      "corpus/rp2040-designguide",
      "corpus/rvpc-revb",
      "corpus/sweep-half-swept",
      "corpus/uext-esp32-c3",
    ]);
    for (const p of corpus) {
      expect(existsSync(p.schematic!)).toBe(true);
      expect(p.board).toBeDefined();
    }
  });

  test("the repository's corpus: eight dense, poured boards saved by KiCad 6 to 9, each with its licence", () => {
    const fixtures = fixtureCorpusProjects();
    expect(fixtures.map((p) => p.id).sort()).toEqual([
      "fixtures/bitaxe-ultra",
      "fixtures/blaustahl-v0",
      "fixtures/esp32-p4-devkit-revc",
      "fixtures/esp32-poe2-revb",
      "fixtures/pico-ice-rev3",
      "fixtures/pico2-ice-rev2",
      "fixtures/schoko-v2",
      "fixtures/sofle-v2-soldered",
    ]);
    for (const p of fixtures) {
      expect(existsSync(p.schematic!)).toBe(true);
      expect(existsSync(p.board!)).toBe(true);
      expect(existsSync(join(p.root, "LICENSE.txt"))).toBe(true);
    }
  });
});
