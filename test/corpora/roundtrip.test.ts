/**
 * Every KiCad S-expression file of the real-world corpora (KiCad's demos, the open-hardware
 * corpus and the repository's own) parses and prints back byte for byte. Files are collected
 * per copied folder, so a folder that holds several projects (the demos' `simulation/`)
 * contributes each file once.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { children, parseSexpr, printSexprBytes } from "../../src/kicad/sexpr/index.ts";
import {
  corpusProjects,
  demoProjects,
  demosDir,
  fixtureCorpusProjects,
  type CorpusProject,
} from "../support/corpora.ts";

const SEXPR_FILE = /\.(kicad_sch|kicad_pcb|kicad_sym|kicad_mod|kicad_wks|kicad_dru)$|^(sym|fp)-lib-table$/;

/** Every S-expression file under the projects' folders, each once, sorted. */
function sexprFiles(projects: CorpusProject[]): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && SEXPR_FILE.test(entry.name)) found.add(path);
    }
  };
  for (const root of new Set(projects.map((p) => p.root))) walk(root);
  return [...found].sort();
}

const corpora = { demos: demoProjects(), corpus: corpusProjects(), fixtures: fixtureCorpusProjects() };

/** The kinds of file each corpus ships: the repository's copies carry no worksheet of their own. */
const KINDS = ["kicad_sch", "kicad_pcb", "kicad_mod", "kicad_sym", "kicad_wks", "fp-lib-table", "sym-lib-table"];
const SHIPPED: Record<keyof typeof corpora, { kinds: string[]; files: number }> = {
  demos: { kinds: KINDS, files: 400 },
  corpus: { kinds: KINDS, files: 70 },
  fixtures: { kinds: KINDS.filter((k) => k !== "kicad_wks"), files: 70 },
};

for (const [name, projects] of Object.entries(corpora) as [keyof typeof corpora, CorpusProject[]][]) {
  describe(`${name}: byte-identical round trip`, () => {
    const files = sexprFiles(projects);
    const base = name === "demos" ? demosDir() : join(projects[0]!.root, "..");

    test("the corpus has KiCad files of every kind it ships", () => {
      const kinds = new Set(files.map((f) => basename(f).replace(/^.*\./, "")));
      for (const kind of SHIPPED[name].kinds) expect(kinds).toContain(kind);
      expect(files.length).toBeGreaterThan(SHIPPED[name].files);
    });

    for (const file of files) {
      test(relative(base, file), () => {
        const bytes = readFileSync(file);
        const printed = printSexprBytes(parseSexpr(bytes, { file }));
        expect(Buffer.compare(printed, bytes)).toBe(0);
      });
    }
  });
}

describe("files KiCad 9.0.0 wrote with a missing '(' read in full, as KiCad reads them", () => {
  const demo = join(demosDir(), "royalblue54L_feather");

  test("the RoyalBlue54L-Feather board: every footprint, nothing left after the root", () => {
    const doc = parseSexpr(readFileSync(join(demo, "RoyalBlue54L-Feather.kicad_pcb")));
    expect(doc.trailing).toBe("\n");
    expect(children(doc.root, "footprint").length).toBe(71);
  });

  test("the FFC connector footprint: all seven pads", () => {
    const file = join(
      demo,
      "lib/footprints/RoyalBlue54L-Feather-Connector_FFC-FPC.pretty/CONN-SMD_5P-P0.50_HCTL_HC-FPC-05-09-5RLTAG.kicad_mod",
    );
    const doc = parseSexpr(readFileSync(file));
    expect(doc.trailing).toBe("\n");
    expect(children(doc.root, "pad").length).toBe(7);
    expect(children(doc.root, "model").length).toBe(1);
  });
});
