/**
 * A pad left unrouted that a later route of its net reaches is connected. On a copy of
 * hexpansion, an LED and its resistor side by side on a net of their own: the LED's pad has no
 * way out towards the resistor, the resistor's route comes to it, and neither is left for layout.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { routeFootprints } from "../../src/kicad/board/route/route.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { additionPlan } from "../support/board-additions.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

test("hexpansion: the LED's pad the resistor's route reaches is connected, not left", async () => {
  const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/emf-hexpansion")!);
  const board = Board.load(project.board!);
  const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["/GND", "/PWR_LED"]).added[0]!;
  const resistor = additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", ["/3V3", "/PWR_LED"]).added[0]!;
  // Where placement put them on a run (107, 105.5 and 109.25, 106 turned 270°, on the front).
  led.at = { x: 107, y: 105.5, rotation: 0 };
  resistor.at = { x: 109.25, y: 106, rotation: 270 };
  for (const add of [led, resistor]) add.staged = false;
  const plan = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["/GND", "/PWR_LED"]);
  plan.added = [led, resistor];
  plan.renets = [{ to: "/PWR_LED", code: Math.max(...board.nets().map((n) => n.code ?? 0)) + 1 }];
  applyBoardSync(board, plan, await openLibraries(join(project.root, project.projectFile)));
  const rules = BoardRules.load(join(project.root, project.projectFile), null);
  const outcomes = routeFootprints(board, rules, ["D900", "R900"]);
  const left = outcomes.flatMap((o) => o.left.map((l) => `${o.ref} pad ${l.pad} (${l.net}): ${l.reason}`));
  expect(left.filter((l) => l.includes("/PWR_LED"))).toEqual([]);
  const ledPad = outcomes.find((o) => o.ref === "D900")!.connected.find((c) => c.net === "/PWR_LED");
  expect(ledPad).toBeDefined();
}, 120_000);
