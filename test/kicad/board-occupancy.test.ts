/**
 * The occupancy raster placement uses to turn spots down unasked (`clearance/occupancy.ts`):
 * every spot it calls covered is one the exact check blocks, on a real dense board.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  circle,
  innerBox,
  rectangle,
  stroke,
  translate,
  type ShapeMm,
} from "../../src/kicad/board/clearance/geometry.ts";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { Occupancy } from "../../src/kicad/board/clearance/occupancy.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { Board, type BBox } from "../../src/kicad/board/model.ts";
import { corpusProjects } from "../support/corpora.ts";

const inside = (box: BBox, shape: ShapeMm) =>
  box.minX >= shape.box.minX && box.maxX <= shape.box.maxX && box.minY >= shape.box.minY && box.maxY <= shape.box.maxY;

describe("a box inside a pad or courtyard", () => {
  test("is the shape's own box, less the depth, for a rectangle; inside the shape for round ones; none for a shape too thin", () => {
    expect(innerBox(rectangle({ x: 1, y: 2 }, 2, 1, 0), 0.01)).toEqual({
      minX: 0.01,
      minY: 1.51,
      maxX: 1.99,
      maxY: 2.49,
    });
    const disc = circle({ x: 0, y: 0 }, 1);
    const core = innerBox(disc, 0.01)!;
    // Its corners lie inside the circle, and it is most of the inscribed square (side √2).
    expect(Math.hypot(core.maxX, core.maxY)).toBeLessThan(1);
    expect(core.maxX - core.minX).toBeGreaterThan(1.35);
    const track = stroke(
      [
        { x: 0, y: 0 },
        { x: 3, y: 3 },
      ],
      0.2,
    );
    expect(inside(innerBox(track, 0.005)!, track)).toBe(true);
    expect(innerBox(rectangle({ x: 0, y: 0 }, 0.005, 1, 0), 0.005)).toBeUndefined();
  });
});

describe("the occupancy raster", () => {
  const project = corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!;
  const board = Board.load(project.board!);
  const rules = BoardRules.load(join(project.root, project.projectFile), null);
  const obstacles = new BoardObstacles(board, rules);
  // Around the FPGA: a BGA's fan-out, the densest copper of the board.
  const fpga = boardBounds(board.footprint("U30")!.node)!;
  const area = { minX: fpga.minX - 3, minY: fpga.minY - 3, maxX: fpga.maxX + 3, maxY: fpga.maxY + 3 };
  const occupancy = Occupancy.of(obstacles, area, ["F.Cu", "B.Cu", "F.CrtYd"]);

  test("calls covered only spots the exact check blocks: a 0603's pad on a new net, its courtyard", () => {
    const pad = rectangle({ x: 0, y: 0 }, 0.9, 0.95, 0);
    const court = rectangle({ x: 0, y: 0 }, 3.2, 1.8, 0);
    const [padCore, courtCore] = [innerBox(pad, 0.005)!, innerBox(court, 0.005)!];
    const at = (box: BBox, x: number, y: number) => ({
      minX: box.minX + x,
      minY: box.minY + y,
      maxX: box.maxX + x,
      maxY: box.maxY + y,
    });
    const counted = { pads: 0, courtyards: 0, spots: 0 };
    for (let x = area.minX; x <= area.maxX; x += 0.25) {
      for (let y = area.minY; y <= area.maxY; y += 0.25) {
        counted.spots++;
        for (const layer of ["F.Cu", "B.Cu"]) {
          if (!occupancy.covers(layer, at(padCore, x, y))) continue;
          counted.pads++;
          expect(
            obstacles.copperBlocker({
              shape: translate(pad, x, y),
              net: "C900_NEW",
              layers: new Set([layer]),
              kind: "pad",
            }),
            `${layer} at ${x}, ${y}`,
          ).toBeDefined();
        }
        if (occupancy.covers("F.CrtYd", at(courtCore, x, y))) {
          counted.courtyards++;
          expect(
            obstacles.courtyardBlocker(translate(court, x, y), "F.CrtYd"),
            `courtyard at ${x}, ${y}`,
          ).toBeDefined();
        }
      }
    }
    // Most of the spots there are covered: the raster is what turns them down.
    expect(counted.pads).toBeGreaterThan(counted.spots);
    expect(counted.courtyards).toBeGreaterThan(counted.spots / 2);
  });

  test("a layer it was not drawn for covers nothing", () => {
    expect(occupancy.covers("B.CrtYd", fpga)).toBe(false);
  });
});
