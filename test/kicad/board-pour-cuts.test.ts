/**
 * A new route never cuts a pour in two (route/pour-cuts.ts). On Blaustahl the new LED and its
 * resistor sit on the back GND pour beside the capacitor an earlier run added, and the track
 * between them crosses the neck through which a pocket of the pour (U4's ground pin, C19's)
 * reaches the rest: refilled, the pocket would be joined to the net by nothing. The route is
 * taken up again, its pads are left for layout naming the pour, and the net stays whole. With
 * the tools called as the model calls them, on a copy of the real board; raw DRC has the word.
 * A route that would leave a piece of a pour joined to nothing is taken up the same way.
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
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
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

const groundIslands = (file: string) => netIslands(Board.load(file), (n) => n === "GND")[0]!.islands.length;

test("blaustahl-v0: the LED's route that would cut the back GND pour is left for layout, the pour whole", async () => {
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
  for (const ref of [diode, resistor]) {
    expect(pending.get(ref!), ref).toMatch(
      /^pad 2 \(\/?PWR_LED\): a route would cut the GND pour on B\.Cu in two, leaving pad 4 of U4, .* apart from the rest \(in the way: the GND pour on B\.Cu\)$/,
    );
  }
  // The pour is one piece of GND as before; what DRC finds unconnected is the LED's own net.
  expect(groundIslands(boardFile)).toBe(ground);
  const added = (await unconnected()).filter((k) => !before.includes(k));
  expect(added.length).toBeGreaterThan(0);
  expect(added.every((k) => k.includes("PWR_LED") && !k.includes("Zone"))).toBe(true);
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
