/**
 * Is the board outline closed? Open Edge.Cuts ends are what make a fab house reject a board,
 * and KiCad's DRC only reports them when its own outline test runs. The test here: every end
 * of an open Edge.Cuts stroke (line, arc, curve) must meet exactly one other end; rectangles,
 * circles and polygons are closed by construction.
 */
import { footprintToBoard, type Board, type PointMm } from "./model.ts";
import { child, childText, children, head, num, type SList } from "../sexpr/index.ts";

/** Ends closer than this (mm) meet; KiCad's own outline builder allows a similar epsilon. */
const TOLERANCE_MM = 0.005;

export interface OutlineReport {
  /** Number of Edge.Cuts items on the board (footprint graphics included). */
  items: number;
  /** Stroke ends that meet no other end, in board coordinates. */
  openEnds: PointMm[];
}

export function checkOutline(board: Board): OutlineReport {
  const ends: PointMm[] = [];
  let items = 0;
  const visit = (item: SList, toBoard: (p: PointMm) => PointMm) => {
    const kind = head(item);
    if (!kind || childText(item, "layer") !== "Edge.Cuts" || !/^(gr|fp)_/.test(kind)) return;
    items++;
    const shape = kind.slice(3);
    if (shape !== "line" && shape !== "arc" && shape !== "curve") return;
    const pts =
      shape === "curve" ? children(child(item, "pts") ?? item, "xy") : [child(item, "start"), child(item, "end")];
    const first = pts[0];
    const last = pts[pts.length - 1];
    for (const p of [first, last]) {
      const x = p ? num(p, 1) : undefined;
      const y = p ? num(p, 2) : undefined;
      if (x !== undefined && y !== undefined) ends.push(toBoard({ x, y }));
    }
  };
  for (const item of board.root.items) if (item.type === "list") visit(item, (p) => p);
  for (const fp of board.footprints()) {
    for (const item of fp.node.items) if (item.type === "list") visit(item, (p) => footprintToBoard(p, fp.at));
  }
  const openEnds = ends.filter(
    (p, i) => ends.filter((q, j) => j !== i && Math.hypot(p.x - q.x, p.y - q.y) <= TOLERANCE_MM).length !== 1,
  );
  return { items, openEnds };
}
