/**
 * The board side of the `view` tool: the region around a footprint or a point, the ratsnest
 * drawn over kicad-cli's plot (kicad-cli plots no ratsnest), and the legend of what is there.
 *
 * Pours are drawn under the plot (kicad-cli plots a copy without fills, whose planes would
 * cover every track and pad), translucent in their layer's colour, so a pad on a pour shows on
 * it and the tracks stay readable.
 *
 * The ratsnest is the one a designer reads in KiCad: each net's islands, as KiCad's
 * connectivity joins its copper, linked by the shortest lines between them.
 */
import type { Design } from "../../design/design.ts";
import { boardBounds } from "../../kicad/board/footprint/instance.ts";
import { footprintToBoard, type BBox, type Board, type Footprint, type PointMm } from "../../kicad/board/model.ts";
import { netIslands, type CopperPiece } from "../../kicad/board/connectivity.ts";
import { boardZones, zoneFills, type Zone } from "../../kicad/board/zones/zones.ts";
import { child, num } from "../../kicad/sexpr/index.ts";
import { ToolError } from "../tools/tool.ts";
import { freeRectangles, type Rect } from "./free.ts";

export interface BoardQuestion {
  ref?: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
}

const DEFAULT_SPAN_MM = 30;
const MARGIN_MM = 3;

/** The region a board question is about, mm. */
export function boardRegion(board: Board, q: BoardQuestion): Rect {
  let focus: Rect | undefined;
  if (q.ref) {
    const fp = board.footprint(q.ref);
    if (!fp) throw new ToolError(`no footprint ${q.ref} on the board (sync_board adds the schematic's new parts)`);
    focus = rect(boardBounds(fp.node) ?? { minX: fp.at.x, minY: fp.at.y, maxX: fp.at.x, maxY: fp.at.y });
  } else if (q.x !== undefined && q.y !== undefined) focus = { x0: q.x, y0: q.y, x1: q.x, y1: q.y };
  if (!focus) {
    const outline = board.edgeCutsBBox();
    if (!outline) throw new ToolError("the board has no outline on Edge.Cuts; give ref or x and y");
    return grow(rect(outline), MARGIN_MM);
  }
  const box = grow(focus, MARGIN_MM);
  const cx = (box.x0 + box.x1) / 2;
  const cy = (box.y0 + box.y1) / 2;
  const w = Math.max(box.x1 - box.x0, q.width ?? DEFAULT_SPAN_MM) / 2;
  const h = Math.max(box.y1 - box.y0, q.height ?? DEFAULT_SPAN_MM) / 2;
  return { x0: cx - w, y0: cy - h, x1: cx + w, y1: cy + h };
}

function rect(b: BBox): Rect {
  return { x0: b.minX, y0: b.minY, x1: b.maxX, y1: b.maxY };
}

function grow(r: Rect, by: number): Rect {
  return { x0: r.x0 - by, y0: r.y0 - by, x1: r.x1 + by, y1: r.y1 + by };
}

function within(p: PointMm, r: Rect): boolean {
  return p.x >= r.x0 && p.x <= r.x1 && p.y >= r.y0 && p.y <= r.y1;
}

interface PadPoint {
  net: string;
  at: PointMm;
}

function padPoints(fp: Footprint): PadPoint[] {
  return fp.pads.flatMap((pad) => {
    if (!pad.net?.name) return [];
    const at = child(pad.node, "at");
    return [
      {
        net: pad.net.name,
        at: footprintToBoard({ x: num(at ?? pad.node, 1) ?? 0, y: num(at ?? pad.node, 2) ?? 0 }, fp.at),
      },
    ];
  });
}

export interface RatsLine {
  net: string;
  from: string;
  to: string;
  a: PointMm;
  b: PointMm;
}

/**
 * Unrouted connections of every net with a pad in `region` (at least one end inside it): each
 * net's islands as KiCad's connectivity finds them (`kicad/board/connectivity.ts`), joined by
 * the shortest lines between them (a spanning tree), so the lines are as many as KiCad's DRC
 * lists unconnected items.
 */
export function ratsnest(board: Board, region: Rect): RatsLine[] {
  const wanted = new Set(
    board
      .footprints()
      .flatMap(padPoints)
      .filter((p) => within(p.at, region))
      .map((p) => p.net),
  );
  const lines = netIslands(board, (net) => wanted.has(net)).flatMap(({ net, islands }) => spanningLines(net, islands));
  return lines.filter((l) => within(l.a, region) || within(l.b, region));
}

/** Prim's tree over a net's islands: repeatedly join the island nearest the grown tree, anchor to anchor. */
function spanningLines(net: string, islands: CopperPiece[][]): RatsLine[] {
  if (islands.length < 2) return [];
  const points = (island: CopperPiece[]) =>
    island.flatMap((piece) => piece.anchors.map((at) => ({ name: piece.name, at })));
  const lines: RatsLine[] = [];
  const tree = points(islands[0]!);
  const rest = islands.slice(1).map(points);
  while (rest.length > 0) {
    let best: { d: number; a: (typeof tree)[number]; b: (typeof tree)[number]; k: number } | undefined;
    rest.forEach((island, k) => {
      for (const a of tree)
        for (const b of island) {
          const d = Math.hypot(a.at.x - b.at.x, a.at.y - b.at.y);
          if (!best || d < best.d) best = { d, a, b, k };
        }
    });
    const { a, b, k } = best!;
    lines.push({ net, from: a.name, to: b.name, a: a.at, b: b.at });
    tree.push(...rest.splice(k, 1)[0]!);
  }
  return lines;
}

/** The ratsnest as SVG lines, in board millimetres, to lay over the plot. */
export function ratsnestSvg(lines: RatsLine[]): string {
  if (lines.length === 0) return "";
  const f = (n: number) => String(Math.round(n * 1000) / 1000);
  const body = lines.map((l) => `<line x1="${f(l.a.x)}" y1="${f(l.a.y)}" x2="${f(l.b.x)}" y2="${f(l.b.y)}"/>`).join("");
  return `<g stroke="#0050d0" stroke-width="0.12" stroke-opacity="0.9" fill="none">${body}</g>`;
}

/** KiCad's default colours of the copper layers; inner layers past these take the last. */
const COPPER_COLOURS: Record<string, string> = {
  "F.Cu": "#C83434",
  "B.Cu": "#4D7FC4",
  "In1.Cu": "#7FC87F",
  "In2.Cu": "#CE7D2C",
  "In3.Cu": "#4FCBCB",
  "In4.Cu": "#DB628B",
};

function copperColour(layer: string): string {
  return COPPER_COLOURS[layer] ?? "#A8A8A8";
}

/**
 * The copper layers of `layers` in drawing order, the last on top: the side of the part the
 * question is about (the front when it names none) goes last, as KiCad shows the active layer
 * over the others. Other layers keep their order, after the copper.
 */
export function drawingOrder(layers: string[], side: "front" | "back"): string[] {
  const top = side === "back" ? "B.Cu" : "F.Cu";
  const copper = layers.filter((l) => l.endsWith(".Cu"));
  const ordered = [...copper.filter((l) => l !== top).reverse(), ...copper.filter((l) => l === top)];
  return [...ordered, ...layers.filter((l) => !l.endsWith(".Cu"))];
}

/** The side of the part a question is about. */
export function questionSide(board: Board, q: BoardQuestion): "front" | "back" {
  return q.ref && board.footprint(q.ref)?.layer.startsWith("B.") ? "back" : "front";
}

/** The zones with an outline in `region`, and whether each is filled there. */
function zonesIn(board: Board, region: Rect): Zone[] {
  return boardZones(board.root).filter(
    (z) =>
      z.outline.length > 0 &&
      !(z.box.maxX < region.x0 || z.box.minX > region.x1 || z.box.maxY < region.y0 || z.box.minY > region.y1),
  );
}

/**
 * The fills of the zones in `region` on the plotted copper layers, as translucent SVG polygons
 * in board millimetres, bottom layer first (`layers` in drawing order).
 */
export function zoneFillsSvg(board: Board, region: Rect, layers: string[]): string {
  const zones = zonesIn(board, region).filter((z) => !z.ruleArea);
  const f = (n: number) => String(Math.round(n * 1000) / 1000);
  const groups = layers.flatMap((layer) => {
    const paths = zones.flatMap((z) =>
      zoneFills(z)
        .filter((fill) => fill.layer === layer && fill.points.length > 2)
        .map((fill) => `M${fill.points.map((p) => `${f(p.x)} ${f(p.y)}`).join("L")}Z`),
    );
    return paths.length
      ? [
          `<path fill="${copperColour(layer)}" fill-opacity="0.35" fill-rule="evenodd" stroke="none" d="${paths.join("")}"/>`,
        ]
      : [];
  });
  return groups.length ? `<g class="zone-fills">${groups.join("")}</g>` : "";
}

/** What is in the region: footprints, nets, zones, unrouted connections, free rectangles. */
export function boardLegend(design: Design, region: Rect, lines: RatsLine[], layers: string[]) {
  const board = design.board!;
  const footprints = board.footprints().flatMap((fp) => {
    const bounds = boardBounds(fp.node);
    const box = bounds ? rect(bounds) : { x0: fp.at.x, y0: fp.at.y, x1: fp.at.x, y1: fp.at.y };
    if (box.x1 < region.x0 || box.x0 > region.x1 || box.y1 < region.y0 || box.y0 > region.y1) return [];
    return [
      {
        ref: fp.ref,
        value: fp.value,
        footprint: fp.libId,
        x: fp.at.x,
        y: fp.at.y,
        rotation: fp.at.rotation,
        side: fp.layer.startsWith("B.") ? "back" : "front",
        locked: fp.locked,
        courtyard: mmRect(box),
      },
    ];
  });
  const nets = new Set(
    board
      .footprints()
      .flatMap(padPoints)
      .filter((p) => within(p.at, region))
      .map((p) => p.net),
  );
  const obstacles = board.footprints().flatMap((fp) => {
    const b = boardBounds(fp.node);
    return b ? [rect(b)] : [];
  });
  const outline = board.edgeCutsBBox();
  return {
    document: "board",
    region: mmRect(region),
    units: "mm, board coordinates (x right, y down), as place_footprint takes them",
    layers,
    footprints,
    nets: [...nets].sort(),
    zones: zonesIn(board, region).map((z) => ({
      net: z.ruleArea ? null : z.net,
      ...(z.ruleArea ? { ruleArea: true } : {}),
      layers: z.layers,
      priority: z.priority,
      filled: z.filled && zoneFills(z).length > 0,
      ...(layers.some(
        (l) =>
          z.layers.includes(l) ||
          z.layers.includes("*.Cu") ||
          (z.layers.includes("F&B.Cu") && (l === "F.Cu" || l === "B.Cu")),
      )
        ? {}
        : { drawn: false }),
    })),
    unrouted: lines.slice(0, 40).map((l) => ({ net: l.net, from: l.from, to: l.to })),
    ...(lines.length > 40 ? { unroutedTotal: lines.length } : {}),
    freeAreas: freeRectangles(
      obstacles.map((o) => grow(o, 0.25)),
      region,
      { cell: 0.5, perMm: 1 },
      outline ? grow(rect(outline), -0.5) : undefined,
    ),
  };
}

function mmRect(r: Rect) {
  const round = (v: number) => Math.round(v * 100) / 100;
  return { x: round(r.x0), y: round(r.y0), width: round(r.x1 - r.x0), height: round(r.y1 - r.y0) };
}
