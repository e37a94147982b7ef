/**
 * Every board edit leaves the fills KiCad would: a part added, moved twice and removed again by
 * the run's tools, and after each call every zone it touched is KiCad's own refill of the board
 * on disk around the edit (where the part is and where it was), and raw DRC finds no isolated
 * copper the board did not have. On a poured demo (KiCad 9 fills) and on a corpus board whose
 * fills KiCad 6 saved (KiCad 9 draws them a little otherwise).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync } from "node:fs";
import { basename, join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { copperLayers, footprintItems } from "../../src/kicad/board/clearance/items.ts";
import { growBox } from "../../src/kicad/board/clearance/geometry.ts";
import { Board, type BBox } from "../../src/kicad/board/model.ts";
import { boardZones, filledPolygons } from "../../src/kicad/board/zones/zones.ts";
import { fillWithKicad } from "../../src/kicad/board/zones/refill.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { decouplingNets, mainIc } from "../support/board-additions.ts";
import { addedKeys, capacitorSession, powerLedSession, sessionTarget } from "../support/board-finish.ts";
import { differingArea } from "../support/board-zones.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

/** Area, mm², a zone may differ from KiCad's refill by inside the window: rounding, not copper. */
const SAME_FILL = 0.01;

/** Where to compare fills: a box on some copper layers. */
interface Around {
  box: BBox;
  layers: ReadonlySet<string>;
}

/**
 * Where `ref`'s pads are on the board file, grown by 1 mm, on their layers: where the refill
 * reaches from them (`connect-added.ts`), so every pad connection there is KiCad's. Farther
 * away, or on a layer the pads are not on, a connection the change does not reach keeps its
 * saved fill, and KiCad 9 draws those of a board KiCad 6 filled otherwise.
 */
function around(boardFile: string, ref: string): Around[] {
  const board = Board.load(boardFile);
  const fp = board.footprint(ref);
  if (!fp) return [];
  return footprintItems(fp.node, copperLayers(board))
    .filter((i) => i.kind === "pad")
    .map((p) => ({ box: growBox(p.box, 1), layers: p.layers }));
}

/** Every zone of the board file against KiCad's refill of every zone of the same file, inside `within` on its layers: the zones that differ, with by how much. */
async function differingFromKicad(boardFile: string, within: Around[]): Promise<string[]> {
  const board = Board.load(boardFile);
  const dir = await makeTempDir();
  const whole = join(dir, basename(boardFile));
  for (const ext of [".kicad_pro", ".kicad_dru"]) {
    const beside = boardFile.replace(/\.kicad_pcb$/, ext);
    if (existsSync(beside)) copyFileSync(beside, whole.replace(/\.kicad_pcb$/, ext));
  }
  const zones = boardZones(board.root).filter((z) => z.filled && !z.ruleArea);
  await fillWithKicad(
    board,
    boardFile,
    zones.map((z) => z.id),
    whole,
  );
  const theirs = boardZones(Board.load(whole).root);
  return zones.flatMap((zone) => {
    const kicad = theirs.find((t) => t.id === zone.id)!;
    return copperLayers(board).flatMap((layer) => {
      const boxes = within.filter((w) => w.layers.has(layer)).map((w) => w.box);
      if (boxes.length === 0) return [];
      const area = differingArea(filledPolygons(zone, layer), filledPolygons(kicad, layer), boxes);
      return area > SAME_FILL ? [`${zone.net} on ${layer}: ${area.toFixed(4)} mm²`] : [];
    });
  });
}

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
