/**
 * Every board edit leaves the fills KiCad would: a part added, moved twice and removed again by
 * the run's tools, and after each call every zone it touched is KiCad's own refill of the board
 * on disk around the edit (where the part is and where it was), and raw DRC finds no isolated
 * copper the board did not have. On a poured demo (KiCad 9 fills) and on a corpus board whose
 * fills KiCad 6 saved (KiCad 9 draws them a little otherwise).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { decouplingNets, mainIc } from "../support/board-additions.ts";
import { addedKeys, capacitorSession, powerLedSession, sessionTarget } from "../support/board-finish.ts";
import { around, differingFromKicad } from "../support/board-zones.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

async function isolatedCopper(boardFile: string): Promise<number> {
  const { report } = await runDrc(boardFile, { cli: await requireKicadCli(), timeoutMs: 600_000 });
  return report.violations.filter((v) => v.type === "isolated_copper").length;
}

/** Raw DRC's starved thermal reliefs: the pad, zone and layer each names. */
async function starvedThermals(boardFile: string): Promise<string[]> {
  const { report } = await runDrc(boardFile, { cli: await requireKicadCli(), timeoutMs: 600_000 });
  return report.violations
    .filter((v) => v.type === "starved_thermal")
    .map((v) => `${v.description} ${v.items.map((i) => i.description).join(" | ")}`);
}

async function committed(root: string): Promise<void> {
  await git(root, "init", "--quiet");
  await commitAll(root, "base");
}

/**
 * Adds a capacitor beside the main IC, moves it to the back, then to the front beside another
 * part, then removes it: after each board call the fills are KiCad's around where it is and
 * where it was.
 */
async function addMoveRemove(root: string, boardFile: string): Promise<void> {
  const before = await isolatedCopper(boardFile);
  const board = Board.load(boardFile);
  const ic = mainIc(board);
  const nets = decouplingNets(board, ic);
  const other = board
    .footprints()
    .filter((f) => f.ref !== ic.ref && f.pads.length >= 2 && !f.ref.startsWith("#"))
    .sort(
      (a, b) => Math.hypot(b.at.x - ic.at.x, b.at.y - ic.at.y) - Math.hypot(a.at.x - ic.at.x, a.at.y - ic.at.y),
    )[0]!;
  await withTools(root, async ({ call }) => {
    const { ref } = (await call("add_component", {
      lib_id: "Device:C",
      value: "100n",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      near: ic.ref,
      connect: { "1": nets[0], "2": nets[1] },
    })) as { ref: string };
    await call("sync_board");
    let window = around(boardFile, ref);
    expect(window.length).toBeGreaterThan(0);
    expect(await differingFromKicad(boardFile, window)).toEqual([]);

    for (const move of [
      { near: ic.ref, side: "back" },
      { near: other.ref, side: "front" },
    ]) {
      const was = around(boardFile, ref);
      await call("place_footprint", { ref, ...move });
      window = [...was, ...around(boardFile, ref)];
      expect({ move, differing: await differingFromKicad(boardFile, window) }).toEqual({ move, differing: [] });
    }

    const was = around(boardFile, ref);
    await call("remove_component", { ref });
    await call("sync_board");
    expect(Board.load(boardFile).footprint(ref)).toBeUndefined();
    expect(await differingFromKicad(boardFile, was)).toEqual([]);
  });
  // Removed where it went: the board is as it was but for the refills, and no piece of pour is cut off.
  expect(await isolatedCopper(boardFile)).toBeLessThanOrEqual(before);
}

/**
 * The two requests of the finished-part acceptance (`support/board-finish.ts`) one after the
 * other: a decoupling capacitor beside the main IC, then a power LED with its series resistor.
 * On rp2040-designguide the LED's refill window used to end inside a ground via of U3's exposed
 * pad: KiCad 9's spokes on one side of the edge, KiCad 6's relief gap on the other, and raw DRC
 * found the pad starved.
 */
async function decouplingThenPowerLed(root: string, boardFile: string, projectId: string): Promise<void> {
  const before = await starvedThermals(boardFile);
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
  expect(addedKeys(await starvedThermals(boardFile), before)).toEqual([]);
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
  test("complex_hierarchy (KiCad 9 fills on both sides)", async () => {
    const project = await demoRepo("complex_hierarchy/complex_hierarchy");
    await addMoveRemove(project.root, join(project.root, "complex_hierarchy.kicad_pcb"));
  }, 600_000);

  test("rp2040-designguide (fills saved by KiCad 6): inside the window KiCad 9's fill, never the old one cut at its edge", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rp2040-designguide")!);
    await committed(project.root);
    await addMoveRemove(project.root, project.board!);
  }, 600_000);
});
