/**
 * The ratsnest lengths placement ranks spots by (`board/ratsnest.ts`) are the exact distances
 * to the nearest copper of each net, checked point by point on real boards: glasgow's ground
 * net has thousands of pad, via and track-end points, a supply net a handful.
 */
import { describe, expect, test } from "bun:test";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { NetCopper } from "../../src/kicad/board/ratsnest.ts";
import { Board, type PointMm } from "../../src/kicad/board/model.ts";
import { corpusProjects } from "../support/corpora.ts";

const glasgow = corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!.board!;

/** The nearest point of `points` to `p` by trying every one, capped as the ratsnest caps it. */
function bruteForce(points: PointMm[], p: PointMm): number {
  return Math.min(100, ...points.map((q) => Math.hypot(q.x - p.x, q.y - p.y)));
}

describe("ratsnest lengths", () => {
  const board = Board.load(glasgow);
  const obstacles = new BoardObstacles(board, BoardRules.load(glasgow.replace(/\.kicad_pcb$/, ".kicad_pro"), null));
  const box = board.edgeCutsBBox()!;
  // A walk over the board in grid steps, as the spot search asks, then jumps across it.
  const walk: PointMm[] = [];
  for (let i = 0; i < 400; i++)
    walk.push({ x: box.minX + 10 + (i % 20) * 0.25, y: box.minY + 10 + Math.floor(i / 20) * 0.25 });
  for (let i = 0; i < 100; i++)
    walk.push({
      x: box.minX + (((i * 37) % 100) / 100) * (box.maxX - box.minX),
      y: box.minY + (((i * 61) % 100) / 100) * (box.maxY - box.minY),
    });

  for (const net of ["GND", "/VCCPLL1"]) {
    test(`${net}: every answer is the nearest of its copper's points`, () => {
      const points = obstacles.all((i) => i.net === net).flatMap((i) => i.ends ?? []);
      expect(points.length).toBeGreaterThan(0);
      const copper = new NetCopper(obstacles, [net]);
      for (const p of walk) expect(copper.distance(net, p)).toBeCloseTo(bruteForce(points, p), 9);
    });
  }

  test("copper added later counts from the next answer on", () => {
    const copper = new NetCopper(obstacles, ["GND"]);
    const p = walk[0]!;
    expect(copper.distance("GND", p)).toBeGreaterThan(0);
    copper.add({
      kind: "pad",
      what: "a pad of C900",
      net: "GND",
      layers: new Set(["F.Cu"]),
      ref: "C900",
      box: { minX: p.x, minY: p.y, maxX: p.x, maxY: p.y },
      ends: [p],
      shape: () => ({ paths: [], box: { minX: p.x, minY: p.y, maxX: p.x, maxY: p.y } }),
    });
    expect(copper.distance("GND", p)).toBe(0);
    expect(copper.distance("nothing here", p)).toBe(0);
  });
});
