/**
 * Routing a placed part's pads to the copper of their nets (`kicad/board/route/route.ts`), on
 * real boards, checked against what is on the board around the part.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { routeFootprints } from "../../src/kicad/board/route/route.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync.ts";
import { Board } from "../../src/kicad/board/view.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { additionPlan } from "../support/board-additions.ts";
import { copyCorpusProject, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";

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
