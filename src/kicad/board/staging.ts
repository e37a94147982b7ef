/**
 * Where board sync first puts the footprints it adds: a tidy row below the Edge.Cuts outline,
 * clear of every footprint — the "staging row", as KiCad's own updater drops new footprints
 * below the board. A plan's additions are then moved onto the board next to the parts they
 * belong with where they fit (kicad/board/placement.ts); the rest wait there for a person.
 */
import type { BBox, Board, PlacementMm } from "./model.ts";
import type { Side } from "./footprint/instance.ts";
import { CopperheadError } from "../../errors.ts";

interface PlacementRequest {
  ref: string;
  libId: string;
  /** The footprint's extent in its own frame (courtyard, else graphics and pads). */
  bounds: BBox;
  /** Nets its pads will carry, to find the parts it belongs next to. */
  nets: string[];
}

interface PlacementResult {
  at: PlacementMm;
  side: Side;
  /** True when parked outside the outline for a person to place and route. */
  staged: boolean;
}

interface FootprintPlacer {
  place(request: PlacementRequest): PlacementResult;
}

/**
 * Makes the placer for one sync. `obstacles` are the bounds of every footprint on the board
 * (removed ones included, so where new parts go does not depend on the order of the edits).
 */
type PlacerFactory = (board: Board, obstacles: BBox[]) => FootprintPlacer;

/** Space between staged footprints, and between the outline and the staging row (mm). */
const STAGING_GAP = 1;
const STAGING_MARGIN = 5;
/** The grid staged footprints are put on, mm. */
const STAGING_GRID = 0.1;

/**
 * The default placer: new footprints left to right in rows below the outline, each on a 0.1 mm
 * grid and pushed right past anything it would overlap (earlier staged parts included); a row
 * wraps at the board's width (at least 50 mm). A board without an outline has nowhere to stage.
 */
export const stagingPlacer: PlacerFactory = (board, obstacles) => {
  const outline = board.edgeCutsBBox();
  const placed = [...obstacles];
  let stager: Stager | undefined;
  return {
    place(request) {
      if (!outline) {
        throw new CopperheadError(
          "board_outline_missing",
          `The board has no Edge.Cuts outline, so there is nowhere to stage the new footprint ${request.ref}.`,
          {
            fix: "Draw the board outline on Edge.Cuts in KiCad, then sync again.",
            refs: [request.ref],
          },
        );
      }
      stager ??= new Stager(outline, placed);
      return { at: { ...stager.place(request.bounds), rotation: 0 }, side: "front", staged: true };
    },
  };
};

class Stager {
  private x: number;
  private y: number;
  private rowBottom: number;
  private readonly left: number;
  private readonly right: number;
  private readonly obstacles: BBox[];

  constructor(outline: BBox, obstacles: BBox[]) {
    this.left = outline.minX;
    this.right = outline.minX + Math.max(outline.maxX - outline.minX, 50);
    this.x = this.left;
    this.y = outline.maxY + STAGING_MARGIN;
    this.rowBottom = this.y;
    this.obstacles = obstacles;
  }

  place(local: BBox): { x: number; y: number } {
    const width = local.maxX - local.minX;
    for (;;) {
      const ox = Math.ceil((this.x - local.minX) / STAGING_GRID) * STAGING_GRID;
      const oy = Math.ceil((this.y - local.minY) / STAGING_GRID) * STAGING_GRID;
      const box = { minX: ox + local.minX, minY: oy + local.minY, maxX: ox + local.maxX, maxY: oy + local.maxY };
      const hit = this.obstacles.find((o) => overlaps(o, box, STAGING_GAP));
      if (hit) {
        // At least one grid step on: past an obstacle's edge by a rounding error, the box on the
        // grid is the same box again (multichannel's 98.39999999999999 against 97.4 + 1).
        this.x = Math.max(hit.maxX + STAGING_GAP, this.x + STAGING_GRID);
      } else if (box.maxX > this.right && this.x > this.left) {
        // Wrap; a part wider than the row still goes at the start of its own row.
      } else {
        this.obstacles.push(box);
        this.x = box.maxX + STAGING_GAP;
        this.rowBottom = Math.max(this.rowBottom, box.maxY);
        return { x: ox, y: oy };
      }
      if (this.x + width > this.right && this.x > this.left) {
        this.x = this.left;
        this.y = this.rowBottom + STAGING_GAP;
        this.rowBottom = this.y;
      }
    }
  }
}

function overlaps(a: BBox, b: BBox, gap: number): boolean {
  return a.minX < b.maxX + gap && b.minX < a.maxX + gap && a.minY < b.maxY + gap && b.minY < a.maxY + gap;
}
