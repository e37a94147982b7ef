/**
 * The staging row below the outline, where board sync first puts the footprints it adds
 * (kicad/board/staging.ts): each on the 0.1 mm grid, clear of what is there, one after another.
 */
import { describe, expect, test } from "bun:test";
import { Board } from "../../src/kicad/board/model.ts";
import { stagingPlacer } from "../../src/kicad/board/staging.ts";

/** A board whose Edge.Cuts outline runs from x 89.46 to 199.46 (multichannel's width) and down to y 150. */
const board = Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user))
  (gr_rect (start 89.46 100) (end 199.46 150) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts") (uuid "00000000-0000-0000-0000-000000000001"))
)`);

describe("the staging row", () => {
  test("a footprint stops past an obstacle whose edge is a rounding error from the grid", () => {
    // multichannel: 97.4 + 1 mm of gap is 98.4, and the box on the grid starts at
    // 98.39999999999999, so it met the same obstacle again, for ever.
    const obstacle = { minX: 94, minY: 155, maxX: 97.4, maxY: 157 };
    const placer = stagingPlacer(board, [obstacle]);
    const spot = placer.place({
      ref: "U900",
      libId: "Package_TO_SOT_SMD:SOT-223-3_TabPin2",
      bounds: { minX: -4.4, minY: -3.6, maxX: 4.4, maxY: 3.6 },
      nets: [],
    });
    expect(spot.staged).toBe(true);
    expect(spot.at.x - 4.4).toBeGreaterThanOrEqual(obstacle.maxX + 1);
    expect(Math.round(spot.at.x * 10) / 10).toBeCloseTo(spot.at.x, 9);
    expect(spot.at.y - 3.6).toBeGreaterThanOrEqual(150);
  });

  test("footprints in a row do not overlap, and the row wraps at the board's width", () => {
    const placer = stagingPlacer(board, []);
    const bounds = { minX: -10, minY: -2, maxX: 10, maxY: 2 };
    const spots = Array.from({ length: 8 }, (_, i) => placer.place({ ref: `R${i}`, libId: "R", bounds, nets: [] }));
    for (const [i, a] of spots.entries())
      for (const b of spots.slice(i + 1))
        expect(Math.abs(a.at.x - b.at.x) >= 21 || Math.abs(a.at.y - b.at.y) >= 5).toBe(true);
    expect(Math.max(...spots.map((s) => s.at.x + 10))).toBeLessThanOrEqual(199.46);
    expect(new Set(spots.map((s) => s.at.y)).size).toBeGreaterThan(1);
  });
});
