/**
 * Where a symbol goes on a sheet, the way a designer would put it: near the part or net it
 * belongs with, in free space (clear of every symbol, field, wire, label, text and graphic),
 * inside the designer's block around that anchor when there is room, with its origin on the
 * sheet's grid, and turned so that its supply pins face up and its ground pins face down.
 *
 * The caller describes the symbol as a few candidate shapes (one per orientation it would
 * accept, each with everything it will occupy: drawing, fields and the wiring still to come);
 * the search returns the candidate nearest the anchor that fits.
 */
import {
  blocks,
  BoxIndex,
  distance,
  drawingArea,
  grow,
  inside,
  intersects,
  occupiedBoxes,
  pageArea,
  translate,
  union,
  type Box,
} from "../space.ts";
import { CONNECTION_GRID, toIU, type PointIu } from "../geometry.ts";
import { naturalCompare } from "../../../util/natural-compare.ts";
import type { Netlist } from "../../netlist/netlist.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { PlacedSymbol } from "../model/symbols.ts";

/** One orientation a symbol would accept, with what it occupies there, in eeschema's integer units. */
export interface ShapeIu {
  rotation: number;
  mirror?: "x" | "y";
  /** Extra distance (IU) this orientation costs; the preferred one costs nothing. */
  penalty: number;
  /** The symbol's drawing relative to its origin: what "near" is measured from. */
  body: Box;
  /** Everything the placed symbol will occupy relative to its origin: drawing, fields, wiring to come. */
  boxes: Box[];
}

export interface Spot {
  at: PointIu;
  shape: ShapeIu;
  /** Gap between the placed drawing and the anchor, IU. */
  distance: number;
  /** The designer's block around the anchor, if any, and whether the spot is inside it. */
  block?: { box: Box; inside: boolean };
}

/** Clearance kept between anything new and anything drawn. */
export const CLEARANCE = toIU(1.27);
/**
 * Grids new symbols are placed on, coarsest first (100 and 50 mil): never finer than the
 * connection grid, so a sheet drawn on 25 mil or off any grid still gets its new pins on it.
 */
const GRIDS = [toIU(2.54), CONNECTION_GRID];
/** Share of symbol origins that must sit on a grid for the sheet to count as drawn on it. */
const GRID_SHARE = 0.8;
/** The first search looks this far from the anchor; the second, the whole page. */
const NEAR_MM = 60;
/**
 * A shape is placed in steps of at least its longer side over this: a symbol keeps its grid,
 * a free area a metre wide is tried a centimetre apart, not at every grid point.
 */
const SHAPE_STEPS = 100;
/** Positions per shape a search tries at most (the step grows to keep to it): an A0 page on the 100 mil grid is 155,000. */
const MOST_POSITIONS = 160_000;

/** The grid a sheet's symbols are placed on: the coarsest most of their origins sit on, else the connection grid. */
export function sheetGrid(file: SchematicFile): number {
  const origins = file.symbols.map((s) => s.placement.at);
  const grid = GRIDS.find(
    (g) => origins.filter((p) => p.x % g === 0 && p.y % g === 0).length >= origins.length * GRID_SHARE,
  );
  return origins.length > 0 && grid ? grid : CONNECTION_GRID;
}

/** The free space of one sheet, for placing one symbol at a time. */
export class SheetSpace {
  readonly page: { area: Box; titleBlock: Box };
  /** Where a new item may go (see `drawingArea`): an anchor beyond the frame gets its part beside it, not on the page far away. */
  readonly area: Box;
  readonly grid: number;
  readonly blocks: Box[];
  /** Everything drawn, as one box (undefined on an empty sheet). */
  readonly content?: Box;
  private readonly index: BoxIndex;

  /** The symbols left out of the space (see the constructor). */
  readonly leftOut?: Set<PlacedSymbol>;

  /** `except`: symbols to leave out (the one being moved, with what moves along). */
  constructor(
    readonly file: SchematicFile,
    except: { symbols?: Set<PlacedSymbol>; boxes?: Box[] } = {},
  ) {
    this.leftOut = except.symbols;
    this.page = pageArea(file);
    this.grid = sheetGrid(file);
    this.blocks = blocks(file);
    const skip = except.boxes ?? [];
    const boxes = occupiedBoxes(file, except.symbols).filter(
      (b) => !skip.some((s) => s.x0 === b.x0 && s.y0 === b.y0 && s.x1 === b.x1 && s.y1 === b.y1),
    );
    this.index = new BoxIndex(boxes);
    let content: Box | undefined;
    for (const b of boxes) content = union(content, b);
    this.content = content;
    this.area = drawingArea(this.page.area, boxes);
  }

  /** True when `box` is in the drawing area, off the title block, and `clearance` clear of everything drawn. */
  free(box: Box, clearance = CLEARANCE): boolean {
    return inside(box, this.area) && !intersects(box, this.page.titleBlock) && !this.index.hits(box, clearance);
  }

  /** Marks `box` as taken (a unit just placed, so the next one goes beside it). */
  occupy(box: Box): void {
    this.index.add(box);
  }

  /** The smallest block that holds `box`, if any. */
  blockOf(box: Box): Box | undefined {
    return this.blocks
      .filter((b) => inside(box, b))
      .sort((a, b) => (a.x1 - a.x0) * (a.y1 - a.y0) - (b.x1 - b.x0) * (b.y1 - b.y0))[0];
  }

  /**
   * The fitting spot nearest `anchor` over every shape, on the grid: inside the designer's
   * block around the anchor when one is drawn and a spot there fits (drawing, fields and wiring
   * all within it), else first within a generous reach of the anchor, then anywhere in the
   * drawing area. Shapes are compared by distance plus their penalty.
   */
  findSpot(shapes: ShapeIu[], anchor: Box): Spot | undefined {
    const block = this.blockOf(anchor);
    if (block) {
      const inside = this.search(shapes, anchor, block, this.grid, block);
      if (inside) return { ...inside, block: { box: block, inside: true } };
    }
    const reach = toIU(NEAR_MM);
    const spot =
      this.search(shapes, anchor, grow(anchor, reach), this.grid) ??
      this.search(shapes, anchor, this.area, Math.max(this.grid, GRIDS[0]!));
    return spot && block ? { ...spot, block: { box: block, inside: false } } : spot;
  }

  /**
   * `grid`: the step the positions tried keep to; a large shape or area takes a multiple of it.
   * `within`: a box everything the shape occupies must stay inside (the anchor's block).
   */
  private search(shapes: ShapeIu[], anchor: Box, area: Box, grid: number, within?: Box): Spot | undefined {
    const candidates: { at: PointIu; shape: ShapeIu; score: number; gap: number; centre: number }[] = [];
    const centre = { x: (anchor.x0 + anchor.x1) / 2, y: (anchor.y0 + anchor.y1) / 2 };
    for (const shape of shapes) {
      const side = Math.max(shape.body.x1 - shape.body.x0, shape.body.y1 - shape.body.y0);
      const wanted = Math.max(
        side / SHAPE_STEPS,
        Math.sqrt(((area.x1 - area.x0) * (area.y1 - area.y0)) / MOST_POSITIONS),
      );
      const step = grid * Math.max(1, Math.ceil(wanted / grid - 1e-9));
      const first = (v: number) => Math.ceil(v / step) * step;
      for (let y = first(area.y0 - shape.body.y0); y + shape.body.y1 <= area.y1; y += step) {
        for (let x = first(area.x0 - shape.body.x0); x + shape.body.x1 <= area.x1; x += step) {
          const body = translate(shape.body, { x, y });
          const gap = distance(body, anchor);
          candidates.push({
            at: { x, y },
            shape,
            score: gap + shape.penalty,
            gap,
            centre: Math.hypot((body.x0 + body.x1) / 2 - centre.x, (body.y0 + body.y1) / 2 - centre.y),
          });
        }
      }
    }
    candidates.sort((a, b) => a.score - b.score || a.centre - b.centre || a.at.y - b.at.y || a.at.x - b.at.x);
    for (const c of candidates) {
      const boxes = c.shape.boxes.map((b) => translate(b, c.at));
      if (within && !boxes.every((b) => inside(b, within))) continue;
      if (boxes.every((b) => this.free(b))) return { at: c.at, shape: c.shape, distance: c.gap };
    }
    return undefined;
  }
}

/** References of parts that bring a supply in: connectors, battery holders, terminal blocks. */
const CONNECTOR = /^(J|P|CN|X|BT|CON|TB)\d/i;

/**
 * The part to place next to when `near` names a net rather than a part: among the parts with a
 * pin on `net`, the one sharing the most of the new part's `others` nets (where that net meets
 * them), then the net's source (a part whose power output drives it or one of those nets, a
 * regulator; else a connector that brings it in), then the one with the most pins. Any point of
 * a ground net would do otherwise, however far from the supply the part belongs with.
 */
export function netAnchorPart(
  netlist: Netlist,
  net: string,
  others: string[],
  allowed: (ref: string) => boolean,
): string | undefined {
  const nets = new Map<string, Set<string>>();
  const pins = new Map<string, number>();
  const drives = new Set<string>();
  const wanted = new Set([net, ...others]);
  for (const n of netlist.nets) {
    for (const node of n.nodes) {
      nets.set(node.ref, (nets.get(node.ref) ?? new Set()).add(n.name));
      pins.set(node.ref, (pins.get(node.ref) ?? 0) + 1);
      if (node.pintype === "power_out" && wanted.has(n.name)) drives.add(node.ref);
    }
  }
  const source = (ref: string) => (drives.has(ref) ? 2 : CONNECTOR.test(ref) ? 1 : 0);
  const shared = (ref: string) => others.filter((o) => o !== net && nets.get(ref)?.has(o)).length;
  const candidates = [...new Set(netlist.nets.find((n) => n.name === net)?.nodes.map((n) => n.ref) ?? [])].filter(
    allowed,
  );
  return candidates.sort(
    (a, b) =>
      shared(b) - shared(a) || source(b) - source(a) || (pins.get(b) ?? 0) - (pins.get(a) ?? 0) || naturalCompare(a, b),
  )[0];
}
