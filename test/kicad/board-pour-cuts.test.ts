/**
 * A new route never cuts a pour in two (route/pour-cuts.ts, and the router's own search,
 * route.ts). On Blaustahl the new LED and its resistor sit on the back GND pour beside the
 * capacitor an earlier run added, and the shortest way between them crosses the neck through
 * which a pocket of the pour (U4's ground pin, C19's) reaches the rest: refilled, the pocket
 * would be joined to the net by nothing. The router searches again with that way barred and goes
 * round, and the net stays whole. With the tools called as the model calls them, on a copy of
 * the real board; raw DRC has the word. Where the router's judgement misses a cut, the watch
 * after the refill names what was cut off, and takes the route up; so it does with a route that
 * would leave a piece of a pour joined to nothing where the zone keeps its islands.
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { connectAdded } from "../../src/kicad/board/route/connect-added.ts";
import { child, num, printSexprBytes } from "../../src/kicad/sexpr/index.ts";
import { additionPlan, placedIndicator } from "../support/board-additions.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/apply.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { PourWatch } from "../../src/kicad/board/route/pour-cuts.ts";
import { writeTrack } from "../../src/kicad/board/route/write.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { netIslands } from "../../src/kicad/board/connectivity.ts";
import { footprintItems, trackItems } from "../../src/kicad/board/clearance/items.ts";
import { Clipper, EndType, FillRule, JoinType, type PathsD } from "clipper2-ts";
import { inflate } from "../../src/kicad/board/clearance/geometry.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { splitWatch } from "../../src/kicad/board/zones/pour-splits.ts";
import { boardZones, zoneFillRules, zoneFills, zoneOnLayer } from "../../src/kicad/board/zones/zones.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { drcKeys, finishAdditions, sessionTarget } from "../support/board-finish.ts";
import { allProjects, copyCorpusProject, corpusProjects, fixtureCorpusProjects } from "../support/corpora.ts";
import { kicadRefill } from "../support/board-zones.ts";
import { BoardEdit } from "../support/board-edits.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { cleanupTempDirs, FIXTURES_DIR, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

const groundIslands = (file: string) => netIslands(Board.load(file), (n) => n === "GND")[0]!.islands.length;

test("blaustahl-v0: the LED's route goes round the neck of the back GND pour, and the pour stays whole", async () => {
  const project = await copyCorpusProject(fixtureCorpusProjects().find((p) => p.id === "fixtures/blaustahl-v0")!);
  await git(project.root, "init", "--quiet");
  await commitAll(project.root, "base");
  const boardFile = project.board!;
  const board = Board.load(boardFile);
  const { capacitor, led } = finishAdditions(board, sessionTarget("fixtures/blaustahl-v0", board));
  const cli = await requireKicadCli();
  const unconnected = async () => drcKeys((await runDrc(boardFile, { cli })).report).unconnected;
  const ground = groundIslands(boardFile);

  await withTools(project.root, async ({ call }) => {
    for (const input of capacitor) await call("add_component", input);
    await call("sync_board");
  });
  const before = await unconnected();
  await commitAll(project.root, "capacitor");

  const pending = await withTools(project.root, async ({ call, ctx }) => {
    for (const input of led) await call("add_component", input);
    await call("sync_board");
    return ctx.layoutPending;
  });
  expect([...pending]).toEqual([]);
  // Routed: a track joins the LED to its resistor.
  const routed = trackItems(Board.load(boardFile), ["B.Cu", "F.Cu"]).filter((t) => /PWR_LED$/.test(t.net));
  expect(routed.length).toBeGreaterThan(0);
  // The pour is one piece of GND as before, and DRC finds nothing newly unconnected.
  expect(groundIslands(boardFile)).toBe(ground);
  expect((await unconnected()).filter((k) => !before.includes(k))).toEqual([]);
}, 300_000);

/**
 * Where the router's own judgement misses a cut, the watch after the refill has the last word.
 * The LED and its resistor where the run above puts them, joined by hand along the way the router
 * bars there (between the LED's ground pad and the resistor), with KiCad's own refill: the watch
 * names U4's ground pad cut off, and raw DRC finds the two parts of the GND zone apart.
 */
test("blaustahl-v0: the pour-cut watch names what a track across the back GND pour's neck cuts off, as DRC does", async () => {
  const cli = await requireKicadCli();
  const project = await copyCorpusProject(fixtureCorpusProjects().find((p) => p.id === "fixtures/blaustahl-v0")!);
  const boardFile = project.board!;
  const board = Board.load(boardFile);
  const libraries = await openLibraries(join(project.root, project.projectFile));
  const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["GND", "PWR_LED"]);
  const resistor = additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", ["/PWR3V3", "PWR_LED"]);
  const code = Math.max(...board.nets().map((n) => n.code ?? 0)) + 1;
  const plan = { ...led, added: [...led.added, ...resistor.added], renets: [{ to: "PWR_LED", code }] };
  for (const [add, at] of [
    [plan.added[0]!, { x: 114.75, y: 110.75, rotation: 90 }],
    [plan.added[1]!, { x: 113.75, y: 113.75, rotation: 0 }],
  ] as const)
    Object.assign(add, { at, side: "back", staged: false });
  applyBoardSync(board, plan, libraries);
  const way = [
    [114.575, 113.75],
    [115.775, 112.55],
    [116.275, 112.55],
    [116.975, 111.85],
    [116.975, 111.15],
    [116.175, 110.35],
    [115.175, 110.35],
    [114.75, 109.9625],
  ].map(([x, y]) => ({ x: x!, y: y! }));
  // The way runs from the resistor's pad 2 to the LED's.
  const padAt = (ref: string) =>
    footprintItems(board.footprint(ref)!.node, ["B.Cu"]).find((i) => i.pad === "2")!.ends![0]!;
  for (const [ref, end] of [
    ["R900", way[0]!],
    ["D900", way.at(-1)!],
  ] as const)
    expect([padAt(ref).x, padAt(ref).y].map((v) => v.toFixed(3))).toEqual([end.x, end.y].map((v) => v.toFixed(3)));
  const ids = way.slice(1).map((end, i) => writeTrack(board, way[i]!, end, 0.15, "B.Cu", "PWR_LED"));
  const box = { minX: 114.5, minY: 109.9, maxX: 117.1, maxY: 113.9 };
  const watch = new PourWatch(board, ["D900", "R900"], [{ box, net: "PWR_LED", layers: new Set(["B.Cu"]), ids }]);
  writeFileSync(boardFile, printSexprBytes(board.doc));

  const refilled = await kicadRefill(boardFile, board);
  const cuts = watch.cuts(Board.load(refilled));
  expect(cuts.map((c) => c.net)).toEqual(["GND"]);
  expect(cuts[0]!.cutOff).toContain("pad 4 of U4");
  const apart = (await runDrc(refilled, { cli })).report.unconnected_items.filter((u) =>
    u.items.some((i) => i.description.includes("Zone [GND]")),
  );
  expect(apart.length).toBeGreaterThan(0);
}, 300_000);

// On sweep-half-swept the gnd pour keeps its islands, so a piece of it a route boxes in stays, and
// KiCad's DRC reports it as isolated copper. The way from an LED by J2 to its resistor by U1 runs
// along the narrow strip of pour between the keys' tracks and the Pro Micro's pins, and would box
// in two pieces of it: the route is taken up again, naming where the pieces would be.
test("sweep-half-swept: a route that would leave pieces of the gnd pour joined to nothing is left for layout", async () => {
  const cli = await requireKicadCli();
  const project = corpusProjects().find((p) => p.id === "corpus/sweep-half-swept")!;
  const { ic, supply, ground } = sessionTarget(project.id, Board.load(project.board!));
  const { copy, board, rules } = await placedIndicator(
    project,
    { ground, supply, net: "NEW_IND" },
    { ledBy: "J2", resistorBy: ic },
  );
  const done = await connectAdded(board, copy.board!, rules, ["D900", "R900"]);
  const left = done.outcomes.flatMap((o) => o.left.map((l) => `${o.ref}.${l.pad} ${l.reason}`));
  expect(left).toHaveLength(2);
  for (const reason of left)
    expect(reason).toMatch(
      /^(D|R)900\.2 a route would leave pieces of the gnd pour on F\.Cu joined to nothing \(at [\d.]+, [\d.]+ on F\.Cu; [\d.]+, [\d.]+ on F\.Cu\) \(in the way: the gnd pour on F\.Cu\)$/,
    );
  expect(done.outcomes.flatMap((o) => o.added).filter((a) => a.net === "NEW_IND")).toEqual([]);

  writeFileSync(copy.board!, printSexprBytes(board.doc));
  const before = drcKeys((await cachedParityDrc(cli, project.root, project.board!, 900_000)).report);
  const after = drcKeys((await runDrc(copy.board!, { cli })).report);
  expect(after.isolated).toBe(before.isolated);
}, 300_000);

test("the islands before a route are the board's with the route's tracks and vias left out by id", () => {
  const board = Board.load(join(FIXTURES_DIR, "usb-led", "usb-led.kicad_pcb"));
  const route = new Set(trackItems(board, ["F.Cu", "B.Cu"]).flatMap((i) => (i.net === "/LED_A" && i.id ? [i.id] : [])));
  const islands = (withoutCopper?: Set<string>) =>
    netIslands(board, (n) => n === "/LED_A", { withoutCopper })[0]!
      .islands.map((i) => i.map((p) => p.name).sort())
      .sort();
  expect(islands()).toEqual([["D1.2", "R3.2", "a track of /LED_A on F.Cu"].sort()]);
  expect(route.size).toBe(1);
  expect(islands(route)).toEqual([["D1.2"], ["R3.2"]]);
});

/**
 * A new part's own pad can cut a pour as a route can, and a pad cannot be taken up: placement
 * asks first (zones/pour-splits.ts). On pico-ice the front GND pour reaches the board's right
 * side through a neck beside U3, where the nearest spot for a capacitor by U3 put its 3V3 pad:
 * refilled (by copperhead or by KiCad's own filler), DRC found the pour's two parts joined by
 * nothing. The spot is now not free: the capacitor goes where its pad cuts nothing, and raw DRC
 * finds no zone apart; asked for that spot by x, y, `place_footprint` refuses it, naming the pour.
 */
test("pico-ice-rev3: a capacitor's 3V3 pad is not put where it would cut the front GND pour in two", async () => {
  const project = fixtureCorpusProjects().find((p) => p.id === "fixtures/pico-ice-rev3")!;
  const repo = await initialisedCorpusRepo(project);
  const boardFile = join(repo, basename(project.board!));
  const board = Board.load(boardFile);
  const { capacitor } = finishAdditions(board, sessionTarget(project.id, board));
  const cli = await requireKicadCli();

  const ref = capacitor[0]!.ref as string;
  const { synced, moved } = await withTools(repo, async ({ call }) => {
    for (const input of capacitor) await call("add_component", input);
    const synced = (await call("sync_board")) as { added: string[] };
    const moved = await call("place_footprint", { ref, x: 75.7057, y: 100.1891, rotation: 90 }).catch(
      (err: Error) => err.message,
    );
    return { synced, moved };
  });

  expect(moved).toContain("the GND pour on F.Cu is in the way (its pads would cut it in two)");
  expect(synced.added[0]).toStartWith(`${ref} Capacitor_SMD:C_0402_1005Metric at `);
  const unconnected = drcKeys((await runDrc(boardFile, { cli })).report).unconnected;
  expect(unconnected.filter((k) => k.includes("Zone"))).toEqual([]);
  expect(groundIslands(boardFile)).toBe(groundIslands(project.board!));
}, 300_000);

/**
 * A pad that leaves pieces of a pour is a cut only where the net falls apart (connectivity.ts
 * `FillJoins`): a piece holding no copper of the net is dropped by KiCad's filler, and pieces
 * whose copper still joins the long way round are one net to DRC. On the multichannel mixer the
 * GND pour spans both layers, and the regulator at (179.1, 94.5) beside J5 leaves its front fill
 * in pieces. Counted by pieces alone, that and the spots round it were refused, and the
 * regulator went where its ground pad's thermal relief was starved. The watch finds no cut
 * there, and with the regulator moved there, KiCad's own refill and raw DRC find no zone apart.
 */
test("multichannel: pads that leave the front GND pour in pieces, its net still whole, are no cut", async () => {
  const project = allProjects().find((p) => p.id === "demos/multichannel/multichannel_mixer")!;
  const repo = await initialisedCorpusRepo(project);
  const boardFile = join(repo, basename(project.board!));
  const before = Board.load(boardFile);
  await withTools(repo, async ({ call }) => {
    await call("add_component", {
      lib_id: "Regulator_Linear:AMS1117-5.0",
      value: "AMS1117-5.0",
      footprint: "Package_TO_SOT_SMD:SOT-223-3_TabPin2",
      ref: "U900",
      near: "J5",
      connect: { VI: "+12V", VO: "+5V", GND: "GND" },
    });
    await call("sync_board");
  });
  const edit = new BoardEdit(boardFile);
  const at = child(edit.footprint("U900"), "at")!;
  // Turned a quarter, as the search turns it there; pads keep their angles when only moved.
  expect(num(at, 3)).toBe(90);
  edit.moveFootprint("U900", 179.1 - num(at, 1)!, 94.5 - num(at, 2)!);
  edit.save();
  const pads = footprintItems(Board.load(boardFile).footprint("U900")!.node, ["F.Cu", "B.Cu"]).filter(
    (i) => i.kind === "pad",
  );

  // The saved front fill less the other nets' pads with their clearance, and less what is then
  // thinner than the zone's minimum width (as KiCad's fill leaves it), falls apart.
  const rules = BoardRules.load(join(repo, project.projectFile), repo);
  const frontGround = boardZones(before.root).filter((z) => z.net === "GND" && zoneOnLayer(z, "F.Cu"));
  const { clearance, minThickness } = zoneFillRules(frontGround[0]!.node);
  const fills = frontGround.flatMap((z) =>
    zoneFills(z)
      .filter((f) => f.layer === "F.Cu")
      .map((f) => f.points),
  );
  const knockout = pads
    .filter((p) => p.net !== "GND")
    .flatMap((p) => inflate(p.shape(), Math.max(clearance, rules.clearance(p.net, "GND"))).paths);
  const open = (paths: PathsD, by: number) => Clipper.inflatePathsD(paths, by, JoinType.Round, EndType.Polygon, 2, 6);
  const left = open(
    open(Clipper.differenceD(fills, knockout, FillRule.NonZero, 6), -minThickness / 2),
    minThickness / 2,
  );
  expect(left.filter((p) => Clipper.areaD(p) > 0.01).length).toBeGreaterThan(fills.length);

  const watch = splitWatch(before, rules);
  expect(watch(pads.map((p) => ({ shape: p.shape(), net: p.net, layers: p.layers })))).toBeUndefined();

  const cli = await requireKicadCli();
  const refilled = await kicadRefill(boardFile);
  expect(drcKeys((await runDrc(refilled, { cli })).report).unconnected.filter((k) => k.includes("Zone"))).toEqual([]);
}, 300_000);
