/**
 * What a new pad left unrouted says, on copies of hexpansion with an LED and its resistor on a
 * net of their own: a pad the resistor's route reaches later is connected, not left; a pad whose
 * net's only other copper is the staged resistor waits for it, whatever lies on the way to the
 * staging row below the outline.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { Board, type PlacementMm } from "../../src/kicad/board/model.ts";
import { routeFootprints } from "../../src/kicad/board/route/route.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { additionPlan } from "../support/board-additions.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/** A copy of hexpansion with D900 (an LED) and R900 (its resistor) on /PWR_LED at the given spots. */
async function ledAndResistor(
  ledAt: PlacementMm,
  resistorAt: PlacementMm,
): Promise<{ board: Board; rules: BoardRules }> {
  const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/emf-hexpansion")!);
  const board = Board.load(project.board!);
  const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["/GND", "/PWR_LED"]).added[0]!;
  const resistor = additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", ["/3V3", "/PWR_LED"]).added[0]!;
  led.at = ledAt;
  resistor.at = resistorAt;
  for (const add of [led, resistor]) add.staged = false;
  const plan = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["/GND", "/PWR_LED"]);
  plan.added = [led, resistor];
  plan.renets = [{ to: "/PWR_LED", code: Math.max(...board.nets().map((n) => n.code ?? 0)) + 1 }];
  applyBoardSync(board, plan, await openLibraries(join(project.root, project.projectFile)));
  return { board, rules: BoardRules.load(join(project.root, project.projectFile), null) };
}

test("the LED's pad the resistor's route reaches is connected, not left", async () => {
  // Where placement put them on a run (107, 105.5 and 109.25, 106 turned 270°, on the front).
  const { board, rules } = await ledAndResistor(
    { x: 107, y: 105.5, rotation: 0 },
    { x: 109.25, y: 106, rotation: 270 },
  );
  const outcomes = routeFootprints(board, rules, ["D900", "R900"]);
  const left = outcomes.flatMap((o) => o.left.map((l) => `${o.ref} pad ${l.pad} (${l.net}): ${l.reason}`));
  expect(left.filter((l) => l.includes("/PWR_LED"))).toEqual([]);
  const ledPad = outcomes.find((o) => o.ref === "D900")!.connected.find((c) => c.net === "/PWR_LED");
  expect(ledPad).toBeDefined();
}, 120_000);

test("the LED's pad waits for its staged resistor, though the resistor lies within reach below the outline", async () => {
  const outline = (
    await ledAndResistor({ x: 0, y: 0, rotation: 0 }, { x: 0, y: 0, rotation: 0 })
  ).board.edgeCutsBBox()!;
  const x = (outline.minX + outline.maxX) / 2;
  const { board, rules } = await ledAndResistor(
    { x, y: outline.maxY - 3, rotation: 0 },
    { x, y: outline.maxY + 3, rotation: 0 },
  );
  const [led] = routeFootprints(board, rules, ["D900"], undefined, ["R900"]);
  expect(led!.left.filter((l) => l.net === "/PWR_LED").map((l) => l.reason)).toEqual([
    "waits for R900, staged below the outline",
  ]);
}, 120_000);
