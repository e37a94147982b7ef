/**
 * The routing grid: a window of the board in square cells, one plane per routing layer, where a
 * cell is free when a track centred on it keeps its clearance to everything in the way, and a
 * via may stand on a cell when a via centred there does on every layer. Obstacles are drawn in
 * by scanline over their outlines grown by the distance they must be kept at (Clipper2 offsets,
 * `clearance/geometry.ts`), plus one cell of margin so the straight track between two free
 * cells is clear too; the routes found are checked exactly afterwards anyway (`route.ts`).
 * Obstacles are drawn lazily, a tile at a time, when the search first looks at a cell of the
 * tile: a pad boxed in by other copper is answered after a few tiles, not the whole window.
 *
 * The search is A* over (cell, layer, heading): eight headings, so tracks run at 0°, 45° and
 * 90°; a turn costs a little so the path has few corners, a layer change costs a via.
 */
import { fillCells, type CellRect, type CellWindow } from "../clearance/cells.ts";
import type { ShapeMm } from "../clearance/geometry.ts";
import type { BBox, PointMm } from "../model.ts";

/** The window's origin is the pad the route starts from, so it starts exactly there. */
export interface GridWindow extends CellWindow {
  layers: number;
}

/** Edge of a tile, cells. */
const TILE = 16;

/** A cell of one layer. */
export interface GridPoint {
  x: number;
  y: number;
  layer: number;
}

export class RouteGrid {
  readonly size: number;
  /** Per layer: 1 where a track may not be centred. */
  readonly blocked: Uint8Array[];
  /** 1 where a via may not stand. */
  readonly noVia: Uint8Array;
  /** Per layer: 1 where the route may end (own-net copper there). */
  readonly goal: Uint8Array[];
  /** 1 where a via ends the route (it lands in a pour of the net on another layer). */
  readonly viaGoal: Uint8Array;
  private readonly tiles: number;
  /** Per tile: the obstacles that reach it (`defer`), undefined once drawn. */
  private readonly waiting: (((clip: CellRect) => void)[] | undefined)[];

  constructor(readonly window: GridWindow) {
    this.size = 2 * window.half + 1;
    const cells = this.size * this.size;
    this.blocked = Array.from({ length: window.layers }, () => new Uint8Array(cells));
    this.goal = Array.from({ length: window.layers }, () => new Uint8Array(cells));
    this.noVia = new Uint8Array(cells);
    this.viaGoal = new Uint8Array(cells);
    this.tiles = Math.ceil(this.size / TILE);
    this.waiting = Array.from({ length: this.tiles * this.tiles }, () => []);
  }

  /**
   * Draws an obstacle when the search first needs a cell it may cover: `draw` fills the planes
   * within the clip it is given, once per tile that `box` (board mm, what it may cover) meets.
   * Every plane is only ever set, so drawing late changes nothing but when.
   */
  defer(box: BBox, draw: (clip: CellRect) => void): void {
    const { origin, half, step } = this.window;
    const reach = (half + 1) * step;
    if (
      box.maxX < origin.x - reach ||
      box.minX > origin.x + reach ||
      box.maxY < origin.y - reach ||
      box.minY > origin.y + reach
    )
      return;
    const cell = (v: number, o: number) => Math.min(this.size - 1, Math.max(0, Math.floor((v - o) / step + half)));
    // A cell of margin each side: an offset reaches a little past the box grown by its distance.
    const [c0, c1] = [cell(box.minX - step, origin.x), cell(box.maxX + step, origin.x)];
    const [r0, r1] = [cell(box.minY - step, origin.y), cell(box.maxY + step, origin.y)];
    for (let ty = Math.floor(r0 / TILE); ty <= Math.floor(r1 / TILE); ty++) {
      for (let tx = Math.floor(c0 / TILE); tx <= Math.floor(c1 / TILE); tx++)
        this.waiting[ty * this.tiles + tx]!.push(draw);
    }
  }

  /**
   * Makes the cells round (col, row) ready to read: its own tile is, so only a cell on a tile's
   * border has neighbours elsewhere, and the four diagonal ones lie in every tile they touch.
   */
  readyAround(col: number, row: number): void {
    if (((col + 1) & (TILE - 1)) >= 2 && ((row + 1) & (TILE - 1)) >= 2) return;
    const [c0, c1] = [Math.max(0, col - 1), Math.min(this.size - 1, col + 1)];
    const [r0, r1] = [Math.max(0, row - 1), Math.min(this.size - 1, row + 1)];
    this.ready(c0, r0);
    this.ready(c1, r0);
    this.ready(c0, r1);
    this.ready(c1, r1);
  }

  /** Draws the obstacles of the tile holding cell (col, row), the first time it is asked. */
  ready(col: number, row: number): void {
    const t = Math.floor(row / TILE) * this.tiles + Math.floor(col / TILE);
    const draws = this.waiting[t];
    if (!draws) return;
    this.waiting[t] = undefined;
    const col0 = (t % this.tiles) * TILE;
    const row0 = Math.floor(t / this.tiles) * TILE;
    const clip = {
      col0,
      col1: Math.min(this.size - 1, col0 + TILE - 1),
      row0,
      row1: Math.min(this.size - 1, row0 + TILE - 1),
    };
    for (const draw of draws) draw(clip);
  }

  /** Board coordinates of cell (col, row). */
  point(col: number, row: number): PointMm {
    const { origin, half, step } = this.window;
    return { x: origin.x + (col - half) * step, y: origin.y + (row - half) * step };
  }

  /** Marks every cell whose centre lies inside `shape` (`clearance/cells.ts`). */
  fill(plane: Uint8Array, shape: ShapeMm, clip?: CellRect): void {
    fillCells(plane, this.window, shape, clip);
  }

  /**
   * Marks the cells of `plane` (a layer's `blocked`, or `noVia`) inside `shape` but those inside
   * `spare`: a way barred to the search that still lets it leave the pad it starts from.
   */
  bar(plane: Uint8Array, shape: ShapeMm, spare: ShapeMm): void {
    const cells = this.size * this.size;
    const [barred, spared] = [new Uint8Array(cells), new Uint8Array(cells)];
    this.fill(barred, shape);
    this.fill(spared, spare);
    for (let i = 0; i < cells; i++) if (barred[i] && !spared[i]) plane[i] = 1;
  }

  /**
   * Blocks every cell outside the board outline (given as its segments, cut-outs included,
   * even-odd), on every layer and for vias.
   */
  keepInsideOutline(segments: [PointMm, PointMm][]): void {
    const inside = new Uint8Array(this.size * this.size);
    const { origin, half, step } = this.window;
    const crossings: number[] = [];
    for (let row = 0; row < this.size; row++) {
      const y = origin.y + (row - half) * step;
      crossings.length = 0;
      for (const [a, b] of segments)
        if (a.y > y !== b.y > y) crossings.push(a.x + ((y - a.y) * (b.x - a.x)) / (b.y - a.y));
      crossings.sort((p, q) => p - q);
      for (let k = 0; k + 1 < crossings.length; k += 2) {
        const c0 = Math.max(0, Math.ceil((crossings[k]! - origin.x) / step + half));
        const c1 = Math.min(this.size - 1, Math.floor((crossings[k + 1]! - origin.x) / step + half));
        for (let col = c0; col <= c1; col++) inside[row * this.size + col] = 1;
      }
    }
    for (let i = 0; i < inside.length; i++) {
      if (inside[i]) continue;
      this.noVia[i] = 1;
      for (const plane of this.blocked) plane[i] = 1;
    }
  }

  /** Whether any goal is reachable at all: a free goal cell, or a via goal where a via may stand. */
  hasGoal(): boolean {
    const free = (plane: Uint8Array, i: number) => {
      this.ready(i % this.size, Math.floor(i / this.size));
      return !plane[i];
    };
    for (let layer = 0; layer < this.goal.length; layer++) {
      const goal = this.goal[layer]!;
      const blocked = this.blocked[layer]!;
      for (let i = 0; i < goal.length; i++) if (goal[i] && free(blocked, i)) return true;
    }
    for (let i = 0; i < this.viaGoal.length; i++) if (this.viaGoal[i] && free(this.noVia, i)) return true;
    return false;
  }

  /**
   * The cheapest path from the origin on one of `startLayers` to a goal, as cells; undefined
   * when none exists within `maxLength` mm of track (vias count `viaCost`).
   */
  search(startLayers: number[], viaCost: number, maxLength: number): GridPoint[] | undefined {
    this.ready(this.window.half, this.window.half);
    return astar(this, startLayers, viaCost, maxLength);
  }
}

const DIRECTIONS: ReadonlyArray<readonly [number, number]> = [
  [1, 0],
  [1, 1],
  [0, 1],
  [-1, 1],
  [-1, 0],
  [-1, -1],
  [0, -1],
  [1, -1],
];
/** Cost of a 45° turn, in cells of length: enough to prefer straight runs, not to detour. */
const TURN_COST = 0.3;
/** Heading index for "no heading yet" (the start) and after a via. */
const ANY = 8;

function astar(grid: RouteGrid, startLayers: number[], viaCost: number, maxLength: number): GridPoint[] | undefined {
  if (!reachable(grid, startLayers, maxLength / grid.window.step)) return undefined;
  const { size } = grid;
  const layers = grid.window.layers;
  const step = grid.window.step;
  const cells = size * size;
  const states = cells * layers * 9;
  const cost = new Float32Array(states).fill(Infinity);
  const from = new Int32Array(states).fill(-1);
  const heap = new StateHeap();
  const toGoal = goalDistances(grid);
  const heuristic = (cell: number) => toGoal[cell]!;
  const centre = grid.window.half * size + grid.window.half;
  for (const layer of startLayers) {
    const s = (layer * cells + centre) * 9 + ANY;
    cost[s] = 0;
    heap.push(s, heuristic(centre));
  }
  const limit = maxLength / step;
  const viaCells = viaCost / step;
  while (heap.size > 0) {
    const state = heap.pop();
    const heading = state % 9;
    const layerCell = (state - heading) / 9;
    const cell = layerCell % cells;
    const layer = (layerCell - cell) / cells;
    const here = cost[state]!;
    if (grid.goal[layer]![cell] || (grid.viaGoal[cell] && !grid.noVia[cell])) return trace(grid, from, state, cells);
    const col = cell % size;
    const row = (cell - col) / size;
    grid.readyAround(col, row);
    for (let d = 0; d < 8; d++) {
      const [dc, dr] = DIRECTIONS[d]!;
      const nc = col + dc;
      const nr = row + dr;
      if (nc < 0 || nr < 0 || nc >= size || nr >= size) continue;
      const next = nr * size + nc;
      if (grid.blocked[layer]![next]) continue;
      // A diagonal step must not cut the corner between two blocked cells.
      if (dc !== 0 && dr !== 0 && grid.blocked[layer]![row * size + nc] && grid.blocked[layer]![nr * size + col])
        continue;
      const turn = heading === ANY ? 0 : Math.min((d - heading + 8) % 8, (heading - d + 8) % 8);
      if (turn > 2) continue;
      const length = dc !== 0 && dr !== 0 ? Math.SQRT2 : 1;
      const total = here + length + turn * TURN_COST;
      if (total > limit) continue;
      const s = (layer * cells + next) * 9 + d;
      if (total < cost[s]!) {
        cost[s] = total;
        from[s] = state;
        heap.push(s, total + heuristic(next));
      }
    }
    if (grid.noVia[cell] || cell === centre) continue;
    for (let other = 0; other < layers; other++) {
      if (other === layer || grid.blocked[other]![cell]) continue;
      const s = (other * cells + cell) * 9 + ANY;
      const total = here + viaCells;
      if (total < cost[s]!) {
        cost[s] = total;
        from[s] = state;
        heap.push(s, total + heuristic(cell));
      }
    }
  }
  return undefined;
}

/**
 * Whether a goal lies within `limit` steps of the origin at all, by breadth-first search over
 * cells with every move (a step either way, a via) counted as one: no more than A* would pay,
 * and no turn limit. A spot boxed in by other copper, the common case when placement asks
 * spot after spot whether it routes, is answered here at a ninth of the A* states.
 *
 * A flood from the goals runs beside it, one state for each of the search's: when the goals
 * are the ones boxed in (a supply pin inside a BGA's fan-out, glasgow's PLL pins), it runs dry
 * long before the search has flooded the window, and a flood that never met the origin proves
 * there is no way. The answer is the search's alone otherwise, so it is the same either way.
 */
function reachable(grid: RouteGrid, startLayers: number[], limit: number): boolean {
  const { size } = grid;
  const layers = grid.window.layers;
  const cells = size * size;
  const centre = grid.window.half * size + grid.window.half;
  const starts = new Set(startLayers.map((layer) => layer * cells + centre));
  const isGoal = (state: number) => {
    const cell = state % cells;
    return grid.goal[(state - cell) / cells]![cell] === 1 || (grid.viaGoal[cell] === 1 && !grid.noVia[cell]);
  };
  const forward = new Flood(grid, starts, limit);
  for (const state of starts) forward.visit(state, 0);
  const backward = new Flood(grid, starts, Infinity);
  for (let state = 0; state < cells * layers; state++) if (isGoal(state)) backward.visit(state, 0);
  let metOrigin = false;
  for (;;) {
    const state = forward.next();
    if (state === undefined) return false;
    if (isGoal(state)) return true;
    if (!metOrigin) {
      const back = backward.next();
      if (back === undefined) return false;
      metOrigin = starts.has(back);
    }
  }
}

/**
 * One breadth-first flood over a route grid's cells and layers, a state at a time: steps to
 * the eight neighbours (no corner cut between two blocked cells) up to `limit` deep, and vias
 * at any depth but at the origin. The origin's cells may be entered though a pad blocks them.
 */
class Flood {
  private readonly depth: Int32Array;
  private readonly queue: Int32Array;
  private head = 0;
  private tail = 0;
  /** The window's middle cell, where the route starts: no via there. */
  private readonly centre: number;

  constructor(
    private readonly grid: RouteGrid,
    private readonly origin: Set<number>,
    private readonly limit: number,
  ) {
    this.centre = grid.window.half * grid.size + grid.window.half;
    const states = grid.size * grid.size * grid.window.layers;
    this.depth = new Int32Array(states).fill(-1);
    this.queue = new Int32Array(states);
  }

  visit(state: number, depth: number): void {
    if (this.depth[state] !== -1) return;
    this.depth[state] = depth;
    this.queue[this.tail++] = state;
  }

  /** Takes the next state and queues its neighbours; undefined when the flood has run dry. */
  next(): number | undefined {
    if (this.head === this.tail) return undefined;
    const { grid } = this;
    const { size } = grid;
    const cells = size * size;
    const state = this.queue[this.head++]!;
    const cell = state % cells;
    const layer = (state - cell) / cells;
    const d = this.depth[state]! + 1;
    const blocked = grid.blocked[layer]!;
    const col = cell % size;
    const row = (cell - col) / size;
    grid.readyAround(col, row);
    grid.ready(col, row);
    // A goal the flood from the goals starts on may be in a pad or another net's clearance.
    if (blocked[cell] && !this.origin.has(state)) return state;
    for (const [dc, dr] of d > this.limit ? [] : DIRECTIONS) {
      const nc = col + dc;
      const nr = row + dr;
      if (nc < 0 || nr < 0 || nc >= size || nr >= size) continue;
      const next = nr * size + nc;
      if (
        (blocked[next] && !this.origin.has(layer * cells + next)) ||
        (dc !== 0 && dr !== 0 && blocked[row * size + nc] && blocked[nr * size + col])
      )
        continue;
      this.visit(layer * cells + next, d);
    }
    // A* does not hold a via to the length limit, so neither does this.
    if (grid.noVia[cell] || cell === this.centre) return state;
    for (let other = 0; other < grid.window.layers; other++)
      if (other !== layer && !grid.blocked[other]![cell]) this.visit(other * cells + cell, d);
    return state;
  }
}

/**
 * For each cell, the octile distance (in cells) to the nearest goal of any layer, obstacles
 * ignored: the A* heuristic, never more than the true cost. Two chamfer passes over the grid.
 */
function goalDistances(grid: RouteGrid): Float32Array {
  const { size } = grid;
  const d = new Float32Array(size * size).fill(Infinity);
  for (const plane of [...grid.goal, grid.viaGoal]) for (let i = 0; i < plane.length; i++) if (plane[i]) d[i] = 0;
  const relax = (i: number, j: number, w: number) => {
    if (d[j]! + w < d[i]!) d[i] = d[j]! + w;
  };
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const i = row * size + col;
      if (col > 0) relax(i, i - 1, 1);
      if (row > 0) {
        relax(i, i - size, 1);
        if (col > 0) relax(i, i - size - 1, Math.SQRT2);
        if (col < size - 1) relax(i, i - size + 1, Math.SQRT2);
      }
    }
  }
  for (let row = size - 1; row >= 0; row--) {
    for (let col = size - 1; col >= 0; col--) {
      const i = row * size + col;
      if (col < size - 1) relax(i, i + 1, 1);
      if (row < size - 1) {
        relax(i, i + size, 1);
        if (col < size - 1) relax(i, i + size + 1, Math.SQRT2);
        if (col > 0) relax(i, i + size - 1, Math.SQRT2);
      }
    }
  }
  return d;
}

function trace(grid: RouteGrid, from: Int32Array, end: number, cells: number): GridPoint[] {
  const out: GridPoint[] = [];
  for (let s = end; s >= 0; s = from[s]!) {
    const layerCell = (s - (s % 9)) / 9;
    const cell = layerCell % cells;
    const col = cell % grid.size;
    out.push({ x: col, y: (cell - col) / grid.size, layer: (layerCell - cell) / cells });
  }
  return out.reverse();
}

/** A binary min-heap of states by priority, in typed arrays grown by doubling (a search pushes hundreds of thousands). */
class StateHeap {
  private ids = new Int32Array(1024);
  private keys = new Float64Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(id: number, key: number): void {
    if (this.count === this.ids.length) {
      const ids = new Int32Array(this.count * 2);
      const keys = new Float64Array(this.count * 2);
      ids.set(this.ids);
      keys.set(this.keys);
      this.ids = ids;
      this.keys = keys;
    }
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent]! <= key) break;
      this.ids[i] = this.ids[parent]!;
      this.keys[i] = this.keys[parent]!;
      i = parent;
    }
    this.ids[i] = id;
    this.keys[i] = key;
  }

  pop(): number {
    const top = this.ids[0]!;
    const n = --this.count;
    const lastId = this.ids[n]!;
    const lastKey = this.keys[n]!;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && this.keys[right]! < this.keys[left]! ? right : left;
        if (this.keys[child]! >= lastKey) break;
        this.ids[i] = this.ids[child]!;
        this.keys[i] = this.keys[child]!;
        i = child;
      }
      this.ids[i] = lastId;
      this.keys[i] = lastKey;
    }
    return top;
  }
}
