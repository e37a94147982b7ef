/**
 * Every board tool changes the board through the run's `BoardEditor`, all or nothing: a tool
 * that fails midway (here KiCad's refill, after the tool has placed, moved or routed in memory)
 * leaves the board file byte for byte as it was, and the next tool sees the board the file
 * holds. On KiCad's complex_hierarchy demo, whose pours need a refill after every board edit.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentDesign } from "../../src/agent/context.ts";
import { findKicadPython, KICAD_PYTHON_ENV } from "../../src/kicad/cli/python.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardEditor } from "../../src/kicad/board/editor.ts";
import { placeAdditions } from "../../src/kicad/board/placement.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { copperOnPads } from "../../src/kicad/board/nets.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { printSexpr, printSexprBytes } from "../../src/kicad/sexpr/index.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { additionPlan, addNextToMainIc, decouplingNets, mainIc } from "../support/board-additions.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { copyRepo, initialisedCorpusRepo, initialisedRepo } from "../support/repos.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { withTools, type ToolSession } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

/**
 * KiCad's Python, except that KiCad's filler crashes: its `pcbnew` is the real one with a
 * `ZONE_FILLER` that raises, however the refill program is handed to it (a fresh Python or one
 * started ahead of the refill).
 */
let failingRefill = "";
beforeAll(async () => {
  const python = await findKicadPython();
  const dir = await makeTempDir();
  writeFileSync(
    join(dir, "pcbnew.py"),
    [
      "import os, sys",
      "here = os.path.dirname(os.path.abspath(__file__))",
      "sys.path = [p for p in sys.path if os.path.abspath(p or '.') != here]",
      "del sys.modules['pcbnew']",
      "import pcbnew as real",
      "class Crashing:",
      "    def __init__(self, board): pass",
      "    def Fill(self, zones): raise RuntimeError('the filler crashed')",
      "real.ZONE_FILLER = Crashing",
      "sys.modules['pcbnew'] = real",
      "",
    ].join("\n"),
  );
  failingRefill = join(dir, "python3");
  writeFileSync(failingRefill, `#!/bin/sh\nPYTHONPATH="${dir}" exec "${python.path}" "$@"\n`, { mode: 0o755 });
});

/** Runs `fn` with the refill failing; the board file must come out byte for byte as it went in. */
async function failingMidway(boardFile: string, fn: () => Promise<string>): Promise<string> {
  const before = readFileSync(boardFile);
  const saved = process.env[KICAD_PYTHON_ENV];
  process.env[KICAD_PYTHON_ENV] = failingRefill;
  try {
    const message = await fn();
    expect(readFileSync(boardFile).equals(before)).toBe(true);
    return message;
  } finally {
    if (saved === undefined) delete process.env[KICAD_PYTHON_ENV];
    else process.env[KICAD_PYTHON_ENV] = saved;
  }
}

/** The message a tool call failed with (the loop hands the model a tool error and a typed error alike). */
async function failure(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => {
      throw new Error("the call succeeded");
    },
    (err: Error) => err.message,
  );
}

/** The board the run's tools read is the one on disk. */
function expectToolsSeeTheFile(session: ToolSession, boardFile: string): void {
  const seen = currentDesign(session.ctx).board!;
  expect(seen.footprints().map((f) => `${f.ref}@${f.at.x},${f.at.y}`)).toEqual(
    Board.load(boardFile)
      .footprints()
      .map((f) => `${f.ref}@${f.at.x},${f.at.y}`),
  );
}

/** The tracks and vias of the board file, as text. */
function copperOf(boardFile: string): string[] {
  return Board.load(boardFile).root.items.flatMap((node) =>
    node.type === "list" && /^\((segment|via|arc)\b/.test(printSexpr(node).trim()) ? [printSexpr(node).trim()] : [],
  );
}

describe("BoardEditor: a board tool that fails midway changes nothing", () => {
  test("route, place_footprint and sync_board on complex_hierarchy, each failing in KiCad's refill", async () => {
    // C900 sits unrouted beside the main IC, as a sync that left it for layout would leave it.
    const project = await demoRepo("complex_hierarchy/complex_hierarchy");
    const boardFile = join(project.root, "complex_hierarchy.kicad_pcb");
    const board = Board.load(boardFile);
    const ic = mainIc(board);
    const nets = decouplingNets(board, ic);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0805_2012Metric", nets);
    const libraries = await openLibraries(project.root);
    expect(
      placeAdditions(
        board,
        plan,
        libraries,
        () => ic.ref,
        BoardRules.load(join(project.root, "complex_hierarchy.kicad_pro"), project.root),
      ),
    ).toEqual([]);
    applyBoardSync(board, plan, libraries);
    writeFileSync(boardFile, printSexprBytes(board.doc));
    await git(project.root, "commit", "--quiet", "-am", "C900 placed, not routed");
    const unrouted = copperOf(boardFile);

    await withTools(project.root, async (session) => {
      const { call } = session;
      // route laid C900's tracks and vias in memory, then the refill failed.
      expect(await failingMidway(boardFile, () => failure(call("route", { ref: "C900" })))).toContain(
        "the filler crashed",
      );
      expectToolsSeeTheFile(session, boardFile);
      expect(printSexprBytes(currentDesign(session.ctx).board!.doc)).toEqual(new Uint8Array(readFileSync(boardFile)));

      // place_footprint moved it to the back in memory, then the refill failed.
      expect(
        await failingMidway(boardFile, () =>
          failure(call("place_footprint", { ref: "C900", near: ic.ref, side: "back" })),
        ),
      ).toContain("the filler crashed");
      expectToolsSeeTheFile(session, boardFile);
      expect(currentDesign(session.ctx).board!.footprint("C900")!.layer).toBe("F.Cu");

      // sync_board placed and routed a new part in memory, then the refill failed.
      const added = (await call("add_component", {
        lib_id: "Device:C",
        value: "100n",
        footprint: "Capacitor_SMD:C_0805_2012Metric",
        near: ic.ref,
        connect: { "1": nets[0], "2": nets[1] },
      })) as { ref: string };
      expect(await failingMidway(boardFile, () => failure(call("sync_board")))).toContain("the filler crashed");
      expectToolsSeeTheFile(session, boardFile);
      expect(currentDesign(session.ctx).board!.footprint(added.ref)).toBeUndefined();

      // With a working refill the same calls go through: the failed ones left nothing behind.
      const routed = (await call("route", { ref: "C900" })) as { routing: string[] };
      expect(routed.routing).toEqual([expect.stringMatching(/^C900: pad 1 .* pad 2 /)]);
      expect(copperOf(boardFile).length).toBeGreaterThan(unrouted.length);
      const moved = (await call("place_footprint", { ref: "C900", near: ic.ref, side: "back" })) as { side: string };
      expect(moved.side).toBe("back");
      expect(Board.load(boardFile).footprint("C900")!.layer).toBe("B.Cu");
      await call("sync_board");
      expect(Board.load(boardFile).footprint(added.ref)).toBeDefined();
    });
  }, 300_000);
});

describe("a part added like one whose footprint only the board holds", () => {
  test("on a KiCad 7 board (rvpc-revb, OLIMEX libraries in no table): synced under its own reference, not the example's", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!);
    await git(project.root, "init", "--quiet");
    await commitAll(project.root, "rvpc-revb");
    // The tools get the run's own libraries (run/run-state.ts `runLibraries`): nothing here adds the board's copies.
    await withTools(project.root, async ({ call, ctx }) => {
      // search_library says the library is missing and offers the board's footprint by name.
      const found = (await call("search_library", { query: "C2010", kind: "footprint" })) as {
        results: { libId: string; source?: string }[];
        missingLibraries: { kind: string; library: string; footprints: number }[];
        note: string;
      };
      expect(found.results).toContainEqual(expect.objectContaining({ libId: "OLIMEX_RLC-FP:C2010", source: "board" }));
      expect(found.missingLibraries).toContainEqual(
        expect.objectContaining({ kind: "footprint", library: "OLIMEX_RLC-FP" }),
      );
      expect(
        found.missingLibraries.find((m) => m.library === "OLIMEX_RLC-FP" && m.kind === "footprint")!.footprints,
      ).toBeGreaterThan(0);
      expect(found.note).toContain("in no library table");
      expect(found.note).toContain("sync_board places the board's copy");
      await call("add_component", { like: "C1", ref: "C900", connect: { "1": "+5V", "2": "GND" } });
      // It crashed: the copy of C1 kept C1's `(fp_text reference "C1")`, so no C900 was on the board.
      const synced = (await call("sync_board")) as { added: string[] };
      expect(synced.added).toEqual([expect.stringMatching(/^C900 OLIMEX_RLC-FP:C2010 /)]);
      const board = Board.load(ctx.project.board!, { within: ctx.repoRoot });
      expect(board.footprint("C900")?.libId).toBe("OLIMEX_RLC-FP:C2010");
      expect(board.footprints().filter((f) => f.ref === "C1")).toHaveLength(1);
      // The board's copy: C1's pads, under the new part's nets.
      const copy = board.footprint("C900")!;
      const example = board.footprint("C1")!;
      expect(copy.pads.map((p) => p.number)).toEqual(example.pads.map((p) => p.number));
      expect(copy.pads.map((p) => p.net?.name)).toEqual(["+5V", "GND"]);
    });
  }, 300_000);

  test("search_library on a design whose libraries all resolve names no missing library", async () => {
    const repo = await copyRepo(await initialisedRepo());
    await withTools(repo, async ({ call }) => {
      const found = (await call("search_library", { query: "R_0603", kind: "footprint" })) as Record<string, unknown>;
      expect(Object.keys(found)).toEqual(["results"]);
      expect((found.results as { source?: string }[]).every((r) => r.source !== "board")).toBe(true);
    });
  }, 120_000);
});

describe("copper on a new part's pads is not its routing", () => {
  test("a part this run put down on copper of its net moves again; a part routed before the run does not", async () => {
    const repo = await initialisedCorpusRepo(corpusProjects().find((p) => p.id === "corpus/bms-c1")!);
    await withTools(repo, async ({ call, ctx }) => {
      await call("add_component", {
        lib_id: "Device:R",
        footprint: "Resistor_SMD:R_0603_1608Metric",
        ref: "R901",
        near: "R1",
        connect: { "1": "GND" },
      });
      await call("sync_board");
      // Its ground pad on bms-c1's stitching via at (189, 63.5), which is legal: the via is ground.
      await call("place_footprint", { ref: "R901", x: 188, y: 63.5, rotation: 180 });
      const board = () => Board.load(ctx.project.board!, { within: ctx.repoRoot });
      expect(copperOnPads(board(), board().footprint("R901")!)).toBeGreaterThan(0);
      // The via is not R901's routing: it was there before the run, so R901 may move again
      // (near R1, the best spot is this one again) and the via stays.
      await call("place_footprint", { ref: "R901", near: "R1" });
      expect(printSexpr(board().root)).toContain("(at 189 63.5)");
      // R1 was routed before the run: its tracks would be left behind.
      await expect(call("place_footprint", { ref: "R1", near: "R901" })).rejects.toThrow(
        "R1 is routed with copper that was there before this run",
      );
    });
  }, 300_000);
});

/**
 * A part on a sheet of its own names its neighbour on the board: Glasgow's sheets are full, so
 * an EEPROM goes on a new sheet, beside the bus's EEPROMs U2 and U3, which are drawn on the root.
 * It is drawn in free space on its sheet, the result says U3 is its neighbour on the board
 * only, and the board sync puts it within reach of U3.
 */
describe("a part on a new sheet, next to a part drawn on another", () => {
  test("corpus/glasgow-revc3: an EEPROM on /EEPROM/ goes beside U3 on the board", async () => {
    const repo = await initialisedCorpusRepo(corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!);
    await withTools(repo, async ({ call, ctx }) => {
      await call("add_sheet", { name: "EEPROM", file: "eeprom.kicad_sch", nets: ["+3V3", "GND", "/SDA", "/SCL"] });
      const added = (await call("add_component", {
        lib_id: "Memory_EEPROM:24LC02",
        footprint: "Package_SO:TSSOP-8_4.4x3mm_P0.65mm",
        sheet: "/EEPROM/",
        near: "U3",
        connect: { A0: "+3V3", A1: "+3V3", A2: "+3V3", VCC: "+3V3", GND: "GND", WP: "GND", SDA: "/SDA", SCL: "/SCL" },
      })) as { ref: string; sheet: string; near?: string; distance?: number; note?: string };
      expect(added.sheet).toBe("/EEPROM/");
      expect(added.near).toBe("U3");
      expect(added.distance).toBeUndefined();
      expect(added.note).toContain("U3 is on another sheet");
      await call("sync_board");
      const board = Board.load(ctx.project.board!);
      const gap = (a: string, b: string) => {
        const [p, q] = [board.footprint(a)!.at, board.footprint(b)!.at];
        return Math.hypot(p.x - q.x, p.y - q.y);
      };
      expect(gap(added.ref, "U3")).toBeLessThan(20);
    });
  }, 300_000);
});

describe("the editor's placement index stays the board's across its operations", () => {
  /** Every item of an index, as text: kind, what, layers and box. */
  function itemsOf(index: BoardObstacles): string[] {
    const mm = (v: number) => v.toFixed(4);
    return index
      .all(() => true)
      .map(
        (i) =>
          `${i.kind} ${i.what} ${[...i.layers].sort().join(",")} ${[i.box.minX, i.box.minY, i.box.maxX, i.box.maxY].map(mm).join(" ")}`,
      )
      .sort();
  }

  test("complex_hierarchy: after routing a new part, and after moving it (its tracks lifted), it equals a fresh index", async () => {
    const project = await demoRepo("complex_hierarchy/complex_hierarchy");
    const boardFile = join(project.root, "complex_hierarchy.kicad_pcb");
    const projectFile = join(project.root, "complex_hierarchy.kicad_pro");
    const editor = BoardEditor.open(boardFile, { within: project.root, projectFile });
    await addNextToMainIc(editor, "C900", "Capacitor_SMD:C_0805_2012Metric");
    const laid = [...(editor.ownCopper("C900") ?? [])];
    expect(laid.length).toBeGreaterThan(0);
    const kept = editor.obstacles();
    expect(kept.all((i) => i.id !== undefined && laid.includes(i.id)).length).toBeGreaterThanOrEqual(laid.length);
    expect(itemsOf(kept)).toEqual(itemsOf(new BoardObstacles(editor.board, editor.rules)));

    const { vacated } = editor.place("C900", { near: mainIc(editor.board).ref, side: "back" });
    expect(vacated.length).toBeGreaterThan(2);
    expect(editor.obstacles()).toBe(kept);
    expect(kept.all((i) => i.id !== undefined && laid.includes(i.id))).toEqual([]);
    expect(itemsOf(kept)).toEqual(itemsOf(new BoardObstacles(editor.board, editor.rules)));
  }, 120_000);
});
