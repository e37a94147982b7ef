/**
 * A change never cuts a pour in two: a new route that would is taken up (route/pour-cuts.ts), and
 * placement puts no pad where it would (zones/pour-splits.ts). On Blaustahl a new LED and its
 * resistor once sat on the back GND pour where the track between them crossed the neck through
 * which a pocket of the pour (U4's ground pin, C19's) reaches the rest, and the route was taken
 * up; placement, now judging what the capacitor's pads cut, leaves room for them where neither
 * their pads nor their route cut it. With the tools called as the model calls them, on copies of
 * the real boards; raw DRC has the word. A route that would leave a piece of a pour joined to
 * nothing is taken up the same way (sweep-half-swept).
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { connectAdded } from "../../src/kicad/board/route/connect-added.ts";
import { printSexprBytes } from "../../src/kicad/sexpr/index.ts";
import { placedIndicator } from "../support/board-additions.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { netIslands } from "../../src/kicad/board/connectivity.ts";
import { trackItems } from "../../src/kicad/board/clearance/items.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { drcKeys, finishAdditions, sessionTarget } from "../support/board-finish.ts";
import { copyCorpusProject, corpusProjects, fixtureCorpusProjects } from "../support/corpora.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { cleanupTempDirs, FIXTURES_DIR, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

const groundIslands = (file: string) => netIslands(Board.load(file), (n) => n === "GND")[0]!.islands.length;

test("blaustahl-v0: the LED and its resistor go where neither their pads nor their route cut the back GND pour, and are routed", async () => {
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
  const [diode, resistor] = led.map((input) => input.ref as string);
  for (const ref of [diode, resistor]) expect(pending.get(ref!), ref).toBeUndefined();
  // The pour is one piece of GND as before, and DRC finds nothing new unconnected.
  expect(groundIslands(boardFile)).toBe(ground);
  expect((await unconnected()).filter((k) => !before.includes(k))).toEqual([]);
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
 * refilled, DRC found the pour's two parts joined by nothing. The spot is now not free: the
 * capacitor goes where its pad cuts nothing, and raw DRC finds no zone apart.
 */
test("pico-ice-rev3: a capacitor's 3V3 pad is not put where it would cut the front GND pour in two", async () => {
  const project = fixtureCorpusProjects().find((p) => p.id === "fixtures/pico-ice-rev3")!;
  const repo = await initialisedCorpusRepo(project);
  const boardFile = join(repo, basename(project.board!));
  const board = Board.load(boardFile);
  const { capacitor } = finishAdditions(board, sessionTarget(project.id, board));
  const cli = await requireKicadCli();

  const synced = await withTools(repo, async ({ call }) => {
    for (const input of capacitor) await call("add_component", input);
    return (await call("sync_board")) as { added: string[] };
  });

  const ref = capacitor[0]!.ref as string;
  expect(synced.added[0]).toStartWith(`${ref} Capacitor_SMD:C_0402_1005Metric at `);
  const unconnected = drcKeys((await runDrc(boardFile, { cli })).report).unconnected;
  expect(unconnected.filter((k) => k.includes("Zone"))).toEqual([]);
  expect(groundIslands(boardFile)).toBe(groundIslands(project.board!));
}, 300_000);
