/**
 * copperhead's board connectivity against KiCad's: on every corpus board and demo, each net's
 * islands, less one, are as many as raw `kicad-cli pcb drc` lists unconnected items for it, so
 * the `view` tool's ratsnest of the whole board lists what DRC does (none on a fully routed
 * board). Its pieces of pour joined to nothing are as many as the isolated copper DRC reports
 * (what a refill drops as islands). The raw reports are shared with the other corpus tests
 * (support/kicad-cache.ts). A board edited to leave connections open is checked against a fresh
 * DRC of the edited copy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { ratsnest } from "../../src/agent/view/board-view.ts";
import { isolatedFills, netIslands } from "../../src/kicad/board/connectivity.ts";
import { boardZones } from "../../src/kicad/board/zones/zones.ts";
import { Board, readNetRef } from "../../src/kicad/board/model.ts";
import { runDrc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { child, head, printSexprBytes, type SNode } from "../../src/kicad/sexpr/index.ts";
import { copyCorpusProject, demoProjects, everyProject } from "../support/corpora.ts";
import { cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

/** Unconnected items per net, as KiCad's DRC report names the first item's net ("Pad 1 [GND] of C4"). */
function perNet(unconnected: { items: { description: string }[] }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const u of unconnected) {
    const net = /\[([^\]]*)\]/.exec(u.items[0]?.description ?? "")?.[1] ?? "?";
    counts[net] = (counts[net] ?? 0) + 1;
  }
  return counts;
}

/** Islands less one, per net that has more than one. */
function openPerNet(board: Board): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { net, islands } of netIslands(board)) if (islands.length > 1) counts[net] = islands.length - 1;
  return counts;
}

describe("connections left open and isolated copper: copperhead's connectivity against raw DRC", () => {
  for (const project of everyProject().filter((p) => p.board)) {
    const timeoutMs = project.id.includes("vme-wren") ? 3_600_000 : 300_000;
    test(
      project.id,
      async () => {
        const { report } = await cachedParityDrc(cli, project.root, project.board!, timeoutMs);
        const board = Board.load(project.board!, { within: project.root });
        expect(openPerNet(board)).toEqual(perNet(report.unconnected_items.filter((u) => !u.excluded)));
        const zones = new Set(boardZones(board.root).map((z) => z.id));
        const everywhere = { minX: -1e4, minY: -1e4, maxX: 1e4, maxY: 1e4 };
        expect(isolatedFills(board, zones, [everywhere]).length).toBe(
          report.violations.filter((v) => v.type === "isolated_copper" && !v.excluded).length,
        );
        const outline = board.edgeCutsBBox();
        if (outline) {
          const lines = ratsnest(board, {
            x0: outline.minX - 1,
            y0: outline.minY - 1,
            x1: outline.maxX + 1,
            y1: outline.maxY + 1,
          });
          expect(lines.length).toBe(report.unconnected_items.filter((u) => !u.excluded).length);
        }
      },
      timeoutMs,
    );
  }
});

describe("an edited board", () => {
  test("the tracks of one net taken out leave as many open connections as KiCad finds", async () => {
    const project = await copyCorpusProject(
      demoProjects().find((p) => p.id === "demos/complex_hierarchy/complex_hierarchy")!,
    );
    const file = project.board!;
    const board = Board.load(file, { within: project.root });
    const netOf = (node: SNode) =>
      node.type === "list" && head(node) === "segment" ? readNetRef(child(node, "net"))?.code : undefined;
    const target = board.root.items.map(netOf).find((code) => code !== undefined && code > 0);
    board.root.items = board.root.items.filter((node) => netOf(node) !== target);
    writeFileSync(file, printSexprBytes(board.doc));
    const { report } = await runDrc(file, { cli, timeoutMs: 300_000 });
    expect(report.unconnected_items.length).toBeGreaterThan(0);
    expect(openPerNet(Board.load(file, { within: project.root }))).toEqual(perNet(report.unconnected_items));
  }, 600_000);
});
