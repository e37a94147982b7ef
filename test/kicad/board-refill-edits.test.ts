/**
 * Every board edit leaves the fills KiCad would: a part added, moved twice and removed again by
 * the run's tools, and after each call every zone it touched is KiCad's own refill of the board
 * on disk around the edit (where the part is and where it was), and raw DRC finds no isolated
 * copper the board did not have. On a poured demo (KiCad 9 fills) and on a corpus board whose
 * fills KiCad 6 saved (KiCad 9 draws them a little otherwise).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { runDrc, type DrcReport } from "../../src/kicad/cli/kicad-cli.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { BoardEditor } from "../../src/kicad/board/editor.ts";
import { boardZones } from "../../src/kicad/board/zones/zones.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { addNextToMainIc } from "../support/board-additions.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import {
  addedKeys,
  capacitorSession,
  finishAdditions,
  otherLoad,
  powerLedSession,
  sessionTarget,
} from "../support/board-finish.ts";
import { around, copperItems, differingFromKicad, withoutAdditions } from "../support/board-zones.ts";
import { copyCorpusProject, corpusProjects, everyProject } from "../support/corpora.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

/** Raw DRC of the board file, or, given the project's id, of the project as shipped (its shared, cached one). */
async function drc(boardFile: string, asShipped?: string): Promise<DrcReport> {
  const cli = await requireKicadCli();
  const project = asShipped && everyProject().find((p) => p.id === asShipped)!;
  return project
    ? (await cachedParityDrc(cli, project.root, project.board!, 600_000)).report
    : (await runDrc(boardFile, { cli, timeoutMs: 600_000 })).report;
}

/** Raw DRC's findings of `types`: each type with the items it names. */
function findingsOf(report: DrcReport, ...types: string[]): string[] {
  return report.violations
    .filter((v) => types.includes(v.type))
    .map((v) => `${v.type}: ${v.description} ${v.items.map((i) => i.description).join(" | ")}`)
    .sort();
}

async function committed(root: string): Promise<void> {
  await git(root, "init", "--quiet");
  await commitAll(root, "base");
}

/**
 * Adds a capacitor beside the main IC, moves it next to another load on its rail and back, then
 * removes it, all in one run: after each board call the fills are KiCad's around where it is
 * and where it was, and at the end raw DRC finds no more isolated copper than before.
 */
async function addMoveRemove(root: string, boardFile: string, projectId: string): Promise<void> {
  const before = findingsOf(await drc(boardFile, projectId), "isolated_copper").length;
  const board = Board.load(boardFile);
  const target = sessionTarget(projectId, board);
  const [capacitor] = finishAdditions(board, target).capacitor;
  const anchor = "near" in capacitor! ? target.ic : undefined;
  const ref = capacitor!.ref as string;
  await withTools(root, async ({ call }) => {
    await call("add_component", capacitor);
    await call("sync_board");
    let window = around(boardFile, ref);
    expect(window.length).toBeGreaterThan(0);
    expect(await differingFromKicad(boardFile, window)).toEqual([]);

    for (const near of [otherLoad(board, target)!, ...(anchor ? [anchor] : [])]) {
      const was = around(boardFile, ref);
      await call("place_footprint", { ref, near });
      window = [...was, ...around(boardFile, ref)];
      expect({ near, differing: await differingFromKicad(boardFile, window) }).toEqual({ near, differing: [] });
    }

    const was = around(boardFile, ref);
    await call("remove_component", { ref });
    await call("sync_board");
    expect(Board.load(boardFile).footprint(ref)).toBeUndefined();
    expect(await differingFromKicad(boardFile, was)).toEqual([]);
  });
  // Removed where it went: the board is as it was but for the refills, and no piece of pour is
  // left joined to nothing (on custom_pads_test a pocket of GND pour that only the moved
  // capacitor's ground pad held stayed, reaching out past the refill window, until islands were
  // judged on the merged fill).
  expect(findingsOf(await drc(boardFile), "isolated_copper").length).toBeLessThanOrEqual(before);
}

/**
 * The two requests of the finished-part acceptance (`support/board-finish.ts`) one after the
 * other: a decoupling capacitor beside the main IC, then a power LED with its series resistor.
 * On rp2040-designguide the LED's refill window used to end inside a ground via of U3's exposed
 * pad: KiCad 9's spokes on one side of the edge, KiCad 6's relief gap on the other, and raw DRC
 * found the pad starved.
 */
async function decouplingThenPowerLed(root: string, boardFile: string, projectId: string): Promise<void> {
  const before = findingsOf(await drc(boardFile, projectId), "starved_thermal");
  const board = Board.load(boardFile);
  const { ic, supply, ground } = sessionTarget(projectId, board);
  const capacitor = capacitorSession(board, { ic, supply, ground }).added[0]!.ref;
  const [led, resistor] = powerLedSession(board, { ic, supply, ground }).added.map((a) => a.ref);
  await withTools(root, async ({ call }) => {
    await call("add_component", {
      ref: capacitor,
      lib_id: "Device:C",
      value: "100n",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      near: ic,
      connect: { "1": supply, "2": ground },
    });
    await call("sync_board");
    await call("add_component", {
      ref: led,
      lib_id: "Device:LED",
      value: "LED",
      footprint: "LED_SMD:LED_0603_1608Metric",
      near: ic,
      connect: { A: "PWR_LED", K: ground },
    });
    await call("add_component", {
      ref: resistor,
      lib_id: "Device:R",
      value: "1k",
      footprint: "Resistor_SMD:R_0603_1608Metric",
      near: led,
      connect: { "1": supply, "2": "PWR_LED" },
    });
    await call("sync_board");
  });
  const added = [capacitor, led!, resistor!];
  expect(addedKeys(findingsOf(await drc(boardFile), "starved_thermal"), before)).toEqual([]);
  expect(
    await differingFromKicad(
      boardFile,
      added.flatMap((ref) => around(boardFile, ref)),
    ),
  ).toEqual([]);
}

describe("a refill window never cuts a pad's connection to its zone", () => {
  for (const id of ["corpus/rp2040-designguide", "corpus/uext-esp32-c3"]) {
    test(`${id}: a decoupling capacitor, then a power LED and its resistor, starve no thermal relief`, async () => {
      const project = await copyCorpusProject(corpusProjects().find((p) => p.id === id)!);
      await committed(project.root);
      await decouplingThenPowerLed(project.root, project.board!, id);
    }, 600_000);
  }
});

describe("a part added, moved twice and removed leaves KiCad's fills where it is and where it was", () => {
  for (const [id, what] of [
    ["demos/custom_pads_test/custom_pads_test", "KiCad 9 fills, custom pad shapes"],
    ["fixtures/pico2-ice-rev2", "KiCad 9 fills on a dense four-layer board poured on both sides"],
    [
      "corpus/rp2040-designguide",
      "fills saved by KiCad 6: inside the window KiCad 9's fill, never the old one cut at its edge",
    ],
  ]) {
    test(`${id} (${what})`, async () => {
      const repo = await initialisedCorpusRepo(everyProject().find((p) => p.id === id)!);
      await addMoveRemove(repo, discoverProject(repo).board!, id!);
    }, 600_000);
  }
});

describe("a move refills the layers its part's pads were on, not every layer", () => {
  test("corpus/glasgow-revc3: a capacitor moved on the front leaves the inner planes as saved, which is KiCad's fill there", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!);
    const boardFile = project.board!;
    const editor = BoardEditor.open(boardFile, {
      within: project.root,
      projectFile: boardFile.replace(/\.kicad_pcb$/, ".kicad_pro"),
    });
    await addNextToMainIc(editor, "C900", "Capacitor_SMD:C_0603_1608Metric");
    editor.save(writeFileSync);
    const inner = boardZones(editor.board.root).filter((z) => z.filled && z.layers.every((l) => /^In\d+\.Cu$/.test(l)));
    expect(inner.map((z) => `${z.net} ${z.layers}`)).toEqual(expect.arrayContaining(["GND In1.Cu", "+3V3 In2.Cu"]));
    const fillsOf = (board: Board) =>
      boardZones(board.root)
        .filter((z) => inner.some((i) => i.id === z.id))
        .map((z) => printSexpr(z.node));
    const saved = fillsOf(editor.board);
    const was = around(boardFile, "C900");

    const { vacated, rerouted } = editor.place("C900", { near: "C30" });
    expect(vacated.map((v) => (v.layers === "all" ? "all" : [...v.layers].join()))).toEqual(["F.Cu", "F.Cu"]);
    const { refilled } = await editor.connect(["C900", ...rerouted], { vacated });
    expect(refilled.filter((id) => inner.some((z) => z.id === id))).toEqual([]);
    editor.save(writeFileSync);
    expect(fillsOf(Board.load(boardFile))).toEqual(saved);
    // Where the part was, on every layer, the fills are KiCad's own refill of the moved board.
    const everyLayer = was.map((w) => ({ ...w, layers: new Set(["F.Cu", "In1.Cu", "In2.Cu", "B.Cu"]) }));
    expect(await differingFromKicad(boardFile, everyLayer)).toEqual([]);
  }, 300_000);
});

/**
 * Run one adds a decoupling capacitor and commits; run two removes it. What served only its pads
 * (the tracks and vias run one laid, copper from before run two) goes with it, as KiCad's track
 * cleanup would take it: the board is run one's without them but for the fills, raw DRC finds no
 * dangling track or via the base did not have, and the pours are KiCad's where it was.
 */
async function removedByALaterRun(root: string, boardFile: string, projectId: string): Promise<void> {
  const base = readFileSync(boardFile);
  const before = findingsOf(await drc(boardFile, projectId), "track_dangling", "via_dangling");
  const board = Board.load(boardFile);
  const { ic, supply, ground } = sessionTarget(projectId, board);
  const [capacitor] = finishAdditions(board, { ic, supply, ground }).capacitor;
  const ref = capacitor!.ref as string;
  await withTools(root, async ({ call }) => {
    await call("add_component", capacitor);
    await call("sync_board");
  });
  await commitAll(root, "run one");
  const runOne = readFileSync(boardFile);
  const added = Board.parse(runOne);
  const laid = [...copperItems(runOne)].filter((t) => !copperItems(base).has(t));
  expect(laid.length, "run one routed the capacitor").toBeGreaterThan(0);
  const was = around(boardFile, ref);
  const sync = await withTools(root, async ({ call }) => {
    await call("remove_component", { ref });
    return (await call("sync_board")) as { warnings?: string[] };
  });
  expect(added.footprint(ref)).toBeDefined();
  expect(Board.load(boardFile).footprint(ref)).toBeUndefined();
  expect(JSON.stringify(sync)).toContain("laid before this run that served only its pads");
  expect(JSON.stringify(sync)).not.toContain("now dangle");
  // Run one's board without the capacitor and the copper it laid (its sync may have updated
  // other drift too, which stays).
  expect(withoutAdditions(readFileSync(boardFile))).toBe(withoutAdditions(runOne, [ref], copperItems(base)));
  expect(findingsOf(await drc(boardFile), "track_dangling", "via_dangling")).toEqual(before);
  expect(await differingFromKicad(boardFile, was)).toEqual([]);
}

describe("a part another run placed is removed with the copper that served only it", () => {
  for (const id of ["corpus/rp2040-designguide", "demos/complex_hierarchy/complex_hierarchy"]) {
    test(id, async () => {
      const repo = await initialisedCorpusRepo(everyProject().find((p) => p.id === id)!);
      const boardFile = discoverProject(repo).board!;
      await removedByALaterRun(repo, boardFile, id);
    }, 600_000);
  }
});
