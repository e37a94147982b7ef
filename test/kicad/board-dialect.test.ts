/**
 * What board sync writes into boards of older formats: a footprint added to a KiCad 6 and a
 * KiCad 7 board of the corpus is written in that release's dialect and layout, the file keeps
 * its `(version …)`, and kicad-cli loads the footprint with its pads on their nets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import {
  applyBoardSync,
  BOARD_SYNC_SCHEMA,
  footprintId,
  type BoardSyncPlan,
} from "../../src/kicad/board/sync/sync-board.ts";
import { runDrc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { child, parseSexpr, printSexpr } from "../../src/kicad/sexpr/index.ts";
import { boardDialect, RELEASES } from "../../src/kicad/format-versions.ts";
import { footprintInDialect } from "../../src/kicad/board/footprint/dialect.ts";
import { instantiateFootprint } from "../../src/kicad/board/footprint/instance.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
}, 60_000);
afterAll(cleanupTempDirs);

/** A plan that adds R99 (0603) below the board, both pads on GND. */
function addR99(board: Board): BoardSyncPlan {
  const outline = board.edgeCutsBBox()!;
  return {
    schema: BOARD_SYNC_SCHEMA,
    netFormat: board.netFormat,
    version: board.version,
    added: [
      {
        ref: "R99",
        libId: "Resistor_SMD:R_0603_1608Metric",
        value: "10k",
        path: "/00000000-0000-4000-8000-000000000099",
        sheetfile: "x.kicad_sch",
        at: { x: outline.minX + 5, y: outline.maxY + 8, rotation: 90 },
        side: "front",
        staged: true,
        fields: [{ name: "MPN", value: "RC0603FR-0710KL" }],
        flags: [],
        pads: [
          { pad: "1", net: "GND", pintype: "passive" },
          { pad: "2", net: "GND", pintype: "passive" },
        ],
        uuidSeed: "dialect-test",
      },
    ],
    updated: [],
    removed: [],
    renets: [],
    warnings: [],
    skipped: [],
  };
}

describe("an update to a footprint of a KiCad 7 board edits it in that dialect", () => {
  test("value and fields, pad nets and the sheet", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!);
    const board = Board.load(project.board!);
    const footprints = board.footprints();
    const index = footprints.findIndex((f) => f.pads.length >= 2 && f.pads[0]!.net && f.value !== "");
    const fp = footprints[index]!;
    const before = printSexpr(fp.node);
    const plan: BoardSyncPlan = {
      ...addR99(board),
      added: [],
      updated: [
        {
          ref: fp.ref,
          uuid: footprintId(fp),
          index,
          value: { from: fp.value, to: "NEW-VALUE" },
          fields: [{ name: "MPN", to: "X-1" }],
          sheetname: { from: fp.sheetname, to: "Sub" },
          pads: [{ pad: fp.pads[0]!.number, index: 0, from: fp.pads[0]!.net!.name, to: "GND", pintype: "passive" }],
        },
      ],
    };
    applyBoardSync(board, plan, await openLibraries(dirname(join(project.root, project.projectFile))));
    const after = printSexpr(board.footprints().find((f) => f.ref === fp.ref)!.node);
    expect(after).toContain('(fp_text value "NEW-VALUE"');
    expect(after).not.toContain('(property "Value"');
    expect(after).toContain('(property "MPN" "X-1")');
    expect(after).toContain('(property "Sheetname" "Sub")');
    expect(after).not.toMatch(/\t|\(uuid /);
    // One line per change: the value, the new field, the sheet name and the pad's net line.
    const changed = after.split("\n").filter((l) => !before.split("\n").includes(l));
    expect(changed.length).toBeLessThanOrEqual(4);
  });
});

describe("a footprint added to an older board is written in that board's dialect", () => {
  for (const [id, release] of [
    ["corpus/rp2040-designguide", 6],
    ["corpus/rvpc-revb", 7],
  ] as const) {
    test(`KiCad ${release}: ${id}`, async () => {
      const project = await copyCorpusProject(corpusProjects().find((p) => p.id === id)!);
      const before = readFileSync(project.board!, "utf8");
      const board = Board.load(project.board!);
      applyBoardSync(board, addR99(board), await openLibraries(dirname(join(project.root, project.projectFile))));
      writeFileSync(project.board!, printSexpr(board.doc));
      const after = readFileSync(project.board!, "utf8");
      expect(/\(version (\d+)\)/.exec(after)![1]).toBe(/\(version (\d+)\)/.exec(before)![1]);

      const r99 = Board.parse(after)
        .footprints()
        .find((f) => f.ref === "R99")!;
      const block = printSexpr(r99.node);
      // KiCad 6/7: fp_text fields, bare properties, tstamps, two-space indents, no KiCad 8+ tokens.
      expect(block).toContain('(fp_text reference "R99"');
      expect(block).toContain('(fp_text value "10k"');
      expect(block).toContain('(property "MPN" "RC0603FR-0710KL")');
      expect(block).toContain('(property "Sheetfile" "x.kicad_sch")');
      expect(block).toContain('(property "Sheetname" "")');
      expect(block).not.toMatch(/\(uuid |\(hide yes\)|\t|embedded_fonts|"Datasheet"/);
      expect(block).toMatch(release === 6 ? /\(width 0\.\d+\)/ : /\(stroke \(width 0\.\d+\) \(type solid\)\)/);
      expect(block).toMatch(/\n {4}\(pad "1" smd roundrect \(at [^\n]*\(layers [^\n]*\n {6}\(net \d+ "GND"\)/);
      // Only the footprint's lines were added.
      expect(after.length - before.length).toBe(block.length);

      const drc = await runDrc(project.board!, { cli });
      const pads = drc.report.unconnected_items
        .flatMap((v) => v.items.map((i) => i.description))
        .filter((d) => / of R99\b/.test(d));
      expect(pads.some((d) => /\[GND\]/.test(d))).toBe(true);
    }, 120_000);
  }
});

describe("(attr …) flags a board's format does not have are left out of a footprint added to it", () => {
  /** A KiCad library footprint whose `(attr …)` carries the given flags. */
  const library = (flags: string) =>
    parseSexpr(
      readFileSync("/usr/share/kicad/footprints/Resistor_SMD.pretty/R_0603_1608Metric.kicad_mod", "utf8").replace(
        /\(attr [^)]*\)/,
        `(attr ${flags})`,
      ),
    ).root;
  const attrOf = (version: number, flags: string) => {
    const node = instantiateFootprint(library(flags), {
      libId: "Resistor_SMD:R_0603_1608Metric",
      uuidSeed: "attr",
      at: { x: 0, y: 0, rotation: 0 },
      side: "front",
      reference: "R1",
      value: "1k",
      fields: [],
      flags: [],
    });
    footprintInDialect(node, boardDialect(version));
    const attr = child(node, "attr");
    return attr ? printSexpr(attr).trim().replace(/\s+/g, " ") : "(none)";
  };

  test.each([
    [RELEASES.board[0]!.version, "smd allow_soldermask_bridges", "(attr smd)"],
    [RELEASES.board[1]!.version, "smd allow_soldermask_bridges", "(attr smd allow_soldermask_bridges)"],
    [RELEASES.board[0]!.version, "allow_soldermask_bridges", "(none)"],
  ])("board %d, library (attr %s): %s", (version, flags, expected) => {
    expect(attrOf(version, flags)).toBe(expected);
  });
});

describe("a footprint added to a board whose setup asks for larger silkscreen text meets it", () => {
  test("rvpc-revb asks for 0.19 mm strokes: the library's 0.15 mm is raised, and DRC reports no text or silkscreen overlap of the new parts", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!);
    const rules = BoardRules.load(join(project.root, project.projectFile), null);
    expect(rules.silkText()).toEqual({ height: 0.762, thickness: 0.1905 });
    const board = Board.load(project.board!);
    const libraries = await openLibraries(dirname(join(project.root, project.projectFile)));
    // And a 0603 LED, whose library reference clears its own outline by a hair: raised, it moves out.
    const plan = addR99(board);
    const led = {
      ...plan.added[0]!,
      ref: "D99",
      libId: "LED_SMD:LED_0603_1608Metric",
      value: "red",
      uuidSeed: "dialect-led",
    };
    led.at = { ...led.at, x: led.at.x + 5 };
    applyBoardSync(board, { ...plan, added: [...plan.added, led] }, libraries, rules.silkText());
    writeFileSync(project.board!, printSexpr(board.doc));
    const d99 = printSexpr(board.footprints().find((f) => f.ref === "D99")!.node);
    expect(d99).toMatch(/\(fp_text reference "D99" \(at 0 -1\.4705 /);
    const r99 = printSexpr(board.footprints().find((f) => f.ref === "R99")!.node);
    // The silkscreen reference meets the board; the fabrication layer's text keeps the library's stroke.
    expect(r99).toMatch(/\(fp_text reference "R99"[^]*?\(layer "F\.SilkS"\)[^]*?\(thickness 0\.1905\)/);
    expect(r99).toMatch(/\(fp_text value "10k"[^]*?\(layer "F\.Fab"\)[^]*?\(thickness 0\.15\)/);
    const drc = await runDrc(project.board!, { cli });
    const text = drc.report.violations.filter(
      (v) => /^(text_|silk_overlap)/.test(v.type) && v.items.some((i) => / of (R|D)99\b/.test(i.description)),
    );
    expect(text).toEqual([]);
  }, 120_000);
});
