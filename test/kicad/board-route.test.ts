/**
 * Routing a placed part's pads to the copper of their nets (`kicad/board/route/route.ts`), on
 * real boards, checked against what is on the board around the part.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { boxesOverlap, growBox } from "../../src/kicad/board/clearance/geometry.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { connectAdded } from "../../src/kicad/board/route/connect-added.ts";
import { fillJoinsNet, noShortLastStep, routeFootprints, type CopperPlan } from "../../src/kicad/board/route/route.ts";
import { boardZones, zoneFills } from "../../src/kicad/board/zones/zones.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { placeAdditions } from "../../src/kicad/board/placement.ts";
import { child, children, printSexprBytes, text } from "../../src/kicad/sexpr/index.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { additionPlan, eepromPlan, placedIndicator } from "../support/board-additions.ts";
import { copyCorpusProject, corpusProjects, demoProjects, fixtureCorpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { around, differingFromKicad } from "../support/board-zones.ts";
import {
  addedErrors,
  addedUnconnected,
  drcKeys,
  finishAdditions,
  grownWarnings,
  sessionTarget,
} from "../support/board-finish.ts";
import { withTools } from "../support/tool-context.ts";
import { commitAll, git } from "../repo/git-repo.ts";

afterAll(cleanupTempDirs);

describe("the copper a route may end on", () => {
  // flat_hierarchy pours GND over all of B.Cu, but tracks fence off an unfilled patch by its PIC
  // sockets; C6 and C8's GND pads stand 7 mm from a part put in that patch.
  test("demos/flat_hierarchy: a pad in a hole of the net's board-wide fill is routed to the net's pads nearby", async () => {
    const copy = await copyCorpusProject(demoProjects().find((p) => p.id === "demos/flat_hierarchy/flat_hierarchy")!);
    const board = Board.load(copy.board!);
    const plan = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["GND", "VCC_PIC"]);
    plan.added[0]!.at = { x: 203.2, y: 124.46, rotation: 0 };
    plan.added[0]!.staged = false;
    applyBoardSync(board, plan, await openLibraries(join(copy.root, copy.projectFile)));
    const [outcome] = routeFootprints(board, BoardRules.load(join(copy.root, copy.projectFile), null), ["D900"]);
    expect(outcome!.left.filter((l) => l.net === "GND")).toEqual([]);
    expect(outcome!.connected.find((c) => c.net === "GND")?.how).toBe("routed");
  });
});

describe("a pad whose other end is staged", () => {
  // The LED goes in flat_hierarchy's free patch; its resistor found no spot and stays staged.
  test("demos/flat_hierarchy: the LED's pad says it waits for the staged resistor, not that its net has no copper", async () => {
    const copy = await copyCorpusProject(demoProjects().find((p) => p.id === "demos/flat_hierarchy/flat_hierarchy")!);
    const board = Board.load(copy.board!);
    const libraries = await openLibraries(join(copy.root, copy.projectFile));
    const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["GND", "/PWR_LED"]);
    led.added[0]!.at = { x: 203.2, y: 124.46, rotation: 0 };
    led.added[0]!.staged = false;
    led.renets = [{ to: "/PWR_LED", code: Math.max(...board.nets().map((n) => n.code ?? 0)) + 1 }];
    applyBoardSync(board, led, libraries);
    applyBoardSync(
      board,
      additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", ["VCC_PIC", "/PWR_LED"]),
      libraries,
    );
    const rules = BoardRules.load(join(copy.root, copy.projectFile), null);
    const left = (staged: string[]) => routeFootprints(board, rules, ["D900"], undefined, staged)[0]!.left;
    expect(left(["R900"])).toEqual([{ pad: "2", net: "/PWR_LED", reason: "waits for R900, staged below the outline" }]);
    expect(left([])).toEqual([{ pad: "2", net: "/PWR_LED", reason: "no /PWR_LED copper within 15 mm" }]);
  });
});

describe("a pour a pad may rely on", () => {
  // A GND zone whose fill has two pieces: one around TP1's GND pad, one (an island, which this
  // zone keeps) with no GND copper in it.
  const board = Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user))
  (net 0 "") (net 1 "GND")
  (footprint "T:P" (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000001") (at 5 5)
    (property "Reference" "TP1" (at 0 0 0) (layer "F.SilkS") (uuid "00000000-0000-0000-0000-000000000002"))
    (pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu") (net 1 "GND") (uuid "00000000-0000-0000-0000-000000000003")))
  (zone (net 1) (net_name "GND") (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000004") (hatch edge 0.5)
    (connect_pads (clearance 0.2)) (min_thickness 0.25) (filled_areas_thickness no)
    (fill yes (thermal_gap 0.5) (thermal_bridge_width 0.5) (island_removal_mode 1))
    (polygon (pts (xy 0 0) (xy 20 0) (xy 20 10) (xy 0 10)))
    (filled_polygon (layer "F.Cu") (pts (xy 0 0) (xy 8 0) (xy 8 10) (xy 0 10)))
    (filled_polygon (layer "F.Cu") (pts (xy 12 0) (xy 20 0) (xy 20 10) (xy 12 10))))
  (gr_rect (start 0 0) (end 20 10) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts") (uuid "00000000-0000-0000-0000-000000000005"))
)`);
  const obstacles = new BoardObstacles(board, BoardRules.fromProject({}));
  const [main, island] = zoneFills(boardZones(board.root)[0]!).map((f) => f.points);

  test("is a piece of fill that reaches other copper of its net, not an island", () => {
    expect(fillJoinsNet(obstacles, main!, "GND", "F.Cu", [])).toBe(true);
    expect(fillJoinsNet(obstacles, island!, "GND", "F.Cu", [])).toBe(false);
    // The new part's own pad does not make a connection of it.
    expect(fillJoinsNet(obstacles, main!, "GND", "F.Cu", ["TP1"])).toBe(false);
  });
});

/**
 * Pads of one net on one new part (an EEPROM's three address pins and VCC, all +3V3): each
 * route may end on the ones laid before it, and no via stands on another. On Glasgow two of
 * them dropped a via each on the same spot, and raw DRC found the drills 0 mm apart.
 */
describe("pads of one net routed one after the other", () => {
  /** A copy of Glasgow whose `place` puts a TSSOP-8 EEPROM on its I2C bus beside `anchor`, unrouted. */
  async function glasgowEeprom() {
    const copy = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!);
    const board = Board.load(copy.board!);
    const project = join(copy.root, copy.projectFile);
    const rules = BoardRules.load(project, null);
    const libraries = await openLibraries(project);
    const place = (anchor: string) => {
      const plan = eepromPlan(board, "+3V3", "/SDA", "/SCL");
      expect(placeAdditions(board, plan, libraries, () => anchor, rules)).toEqual([]);
      applyBoardSync(board, plan, libraries);
    };
    return { board, rules, place };
  }

  test("corpus/glasgow-revc3: a TSSOP-8 EEPROM's +3V3 pins share their way to the pour, no drill on another", async () => {
    const { board, rules, place } = await glasgowEeprom();
    const vias = () =>
      children(board.root, "via").map((v) => {
        const at = child(v, "at")!;
        return { x: Number(text(at, 1)), y: Number(text(at, 2)), drill: Number(text(child(v, "drill")!, 1)) };
      });
    const before = new Set(vias().map((v) => `${v.x},${v.y}`));
    place("U30");
    const outcomes = routeFootprints(board, rules, ["U900"]);
    const supply = outcomes[0]!.connected.filter((c) => c.net === "+3V3");
    expect(supply.map((c) => c.pad).sort()).toEqual(["1", "2", "3", "8"]);
    const all = vias();
    const added = all.filter((v) => !before.has(`${v.x},${v.y}`));
    expect(added.length).toBeGreaterThan(0);
    const tooClose = added.flatMap((a) =>
      all
        .filter((b) => b !== a && Math.hypot(a.x - b.x, a.y - b.y) - (a.drill + b.drill) / 2 < rules.holeToHole())
        .map((b) => `${a.x}, ${a.y} and ${b.x}, ${b.y}`),
    );
    expect(tooClose).toEqual([]);
  }, 120_000);

  test("corpus/glasgow-revc3: by U3, the first +3V3 pin finds no way of its own and ends on its neighbours' routes", async () => {
    const { board, rules, place } = await glasgowEeprom();
    place("U3");
    const [outcome] = routeFootprints(board, rules, ["U900"]);
    expect(outcome!.left).toEqual([]);
    expect(outcome!.connected.map((c) => c.pad).sort()).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
  }, 120_000);
});

/**
 * A net made only of new parts is routed pad to pad at any distance on the board: an indicator
 * LED by pic_programmer's serial connector J1 and its resistor by the regulator U3, about
 * 35 mm apart, where the route looked no farther than 15 mm from the pad and left both.
 */
describe("a net of new parts only", () => {
  test("demos/pic_programmer: an LED by J1 and its resistor by U3 are joined across the board", async () => {
    const { board, rules, plan } = await placedIndicator(
      demoProjects().find((p) => p.id === "demos/pic_programmer/pic_programmer")!,
      { ground: "GND", supply: "VCC", net: "VCC_IND" },
      { ledBy: "J1", resistorBy: "U3" },
    );
    const [d, r] = plan.added;
    const apart = Math.hypot(d!.at.x - r!.at.x, d!.at.y - r!.at.y);
    expect(apart).toBeGreaterThan(20);
    const outcomes = routeFootprints(board, rules, ["D900", "R900"]);
    const joined = outcomes.flatMap((o) =>
      o.connected.filter((c) => c.net === "VCC_IND").map((c) => `${o.ref}.${c.pad}`),
    );
    expect(joined.sort()).toEqual(["D900.2", "R900.2"]);
    expect(outcomes.flatMap((o) => o.left)).toEqual([]);
    console.log(`D900 and R900 ${apart.toFixed(1)} mm apart, joined`);
  }, 120_000);

  // StickHub pours GND over both sides and +5V on the back: no way from the LED by J1 to its
  // resistor by U1 keeps off the pours, and the track crosses them as a designer's does, the
  // pours refilled round it. KiCad's DRC of the result finds nothing new, and its refill draws
  // the pours there as the committed board has them.
  test("demos/stickhub: an LED by J1 and its resistor by U1 are joined across the GND pours", async () => {
    const cli = await requireKicadCli();
    const project = demoProjects().find((p) => p.id === "demos/stickhub/StickHub")!;
    const base = readFileSync(project.board!);
    const { ic, supply, ground } = sessionTarget(project.id, Board.parse(base));
    const { copy, board, rules } = await placedIndicator(
      project,
      { ground, supply, net: "NEW_IND" },
      { ledBy: "J1", resistorBy: ic },
    );
    const pours = boardZones(board.root).filter((z) => z.filled && z.net === ground);
    const done = await connectAdded(board, copy.board!, rules, ["D900", "R900"]);
    // R900's +1V8 pad finds no way out (as in the finished-part acceptance); the new net is joined.
    const leftNets = new Set(done.outcomes.flatMap((o) => o.left.map((l) => l.net)));
    expect([...leftNets]).toEqual(["+1V8"]);
    const routes = done.outcomes.flatMap((o) => o.added).filter((a) => a.net === "NEW_IND");
    const crossed = routes.filter((a) =>
      pours.some(
        (z) => boxesOverlap(z.box, a.box) && (a.layers === "all" || [...a.layers].some((l) => z.layers.includes(l))),
      ),
    );
    expect(crossed.length).toBeGreaterThan(0);

    writeFileSync(copy.board!, printSexprBytes(board.doc));
    const before = drcKeys((await cachedParityDrc(cli, project.root, project.board!, 900_000)).report);
    const after = drcKeys((await runDrc(copy.board!, { cli })).report);
    expect(addedErrors({ drc: after, bytes: readFileSync(copy.board!) }, { drc: before, bytes: base })).toEqual([]);
    const unconnected = addedUnconnected(after.unconnected, before.unconnected, ["D900", "R900"]);
    expect(unconnected.filter((k) => ![...leftNets].some((net) => k.includes(`[${net}]`)))).toEqual([]);
    expect(grownWarnings(after.warnings, before.warnings)).toEqual([]);
    const window = [
      ...around(copy.board!, "D900"),
      ...around(copy.board!, "R900"),
      ...routes.map((a) => ({
        box: growBox(a.box, 1),
        layers: new Set(a.layers === "all" ? ["F.Cu", "B.Cu"] : a.layers),
      })),
    ];
    expect(await differingFromKicad(copy.board!, window)).toEqual([]);
  }, 300_000);

  // uext-esp32-c3 pours GND over both sides of a 14 × 32 mm module: the LED's resistor is 10 mm
  // off, in the pad's neighbourhood, but the UEXT signals' tracks run between them on the back
  // and the module's pads hold the front. The route looks across the board as it does for
  // copper farther off, over the pours too, and the reason names the tracks in the way.
  test("corpus/uext-esp32-c3: an LED and its resistor that no way joins are left naming the tracks between them", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/uext-esp32-c3")!);
    await git(project.root, "init", "--quiet");
    await commitAll(project.root, "base");
    const { led } = finishAdditions(
      Board.load(project.board!),
      sessionTarget("corpus/uext-esp32-c3", Board.load(project.board!)),
    );
    const pending = await withTools(project.root, async ({ call, ctx }) => {
      for (const input of led) await call("add_component", input);
      await call("sync_board");
      return ctx.layoutPending;
    });
    for (const ref of led.map((input) => input.ref as string))
      expect(pending.get(ref), ref).toMatch(
        /^pad 2 \(\/PWR_LED\): no rule-clean path to \/PWR_LED copper [\d.]+ mm away \(in the way: .*a track of \/UEXT_TX on B\.Cu, a track of \/UEXT_RX on B\.Cu\)$/,
      );
  }, 300_000);
});

describe("a pad its pour does not reach once refilled", () => {
  test("fixtures/esp32-p4-devkit-revc: a capacitor's ground pad beside the 5 V regulator is routed once the fill is known", async () => {
    // Beside U4 the GND pour on B.Cu holds C900's ground pad, but once refilled its clearance
    // keeps off the pad and no spoke lands: the pad was left for layout. Routed again, it finds
    // its way to GND's other copper.
    const copy = await copyCorpusProject(
      fixtureCorpusProjects().find((p) => p.id === "fixtures/esp32-p4-devkit-revc")!,
    );
    const board = Board.load(copy.board!);
    const project = join(copy.root, copy.projectFile);
    const rules = BoardRules.load(project, null);
    const libraries = await openLibraries(project);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", ["+5V", "GND"]);
    expect(placeAdditions(board, plan, libraries, () => "U4", rules)).toEqual([]);
    applyBoardSync(board, plan, libraries);
    const done = await connectAdded(board, copy.board!, rules, ["C900"]);
    const [outcome] = done.outcomes;
    expect(outcome!.left).toEqual([]);
    expect(outcome!.connected.map((c) => `${c.pad} ${c.net} ${c.how}`).sort()).toEqual([
      "1 +5V routed",
      "2 GND routed",
    ]);
  }, 180_000);
});

describe("a route's last step", () => {
  /** A 0.25 mm route that runs 2 mm along x, then turns to step `step` mm along y into the copper it reaches. */
  const planEndingIn = (step: number, endsInPour = false): CopperPlan => ({
    width: 0.25,
    tracks: [
      {
        layer: "F.Cu",
        points: [
          { x: 0, y: 0 },
          { x: 2, y: 0 },
          { x: 2, y: step },
        ],
      },
    ],
    vias: [],
    length: 2 + step,
    endsInPour,
  });

  test("shorter than half the width, it goes: the run before it already meets that copper", () => {
    const plan = planEndingIn(0.1);
    noShortLastStep(plan);
    expect(plan.tracks[0]!.points).toEqual([
      { x: 0, y: 0 },
      { x: 2, y: 0 },
    ]);
    expect(plan.length).toBeCloseTo(2, 9);
  });

  test("shorter than the width, it is folded into the run: no corner a stub's length from its end", () => {
    const plan = planEndingIn(0.2);
    noShortLastStep(plan);
    expect(plan.tracks[0]!.points).toEqual([
      { x: 0, y: 0 },
      { x: 2, y: 0.2 },
    ]);
    expect(plan.length).toBeCloseTo(Math.hypot(2, 0.2), 9);
  });

  test("as long as the width or more, or down into a pour, it stays", () => {
    for (const plan of [planEndingIn(0.25), planEndingIn(0.1, true)]) {
      const before = structuredClone(plan);
      noShortLastStep(plan);
      expect(plan).toEqual(before);
    }
  });
});
