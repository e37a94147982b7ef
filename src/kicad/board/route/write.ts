/**
 * New tracks and vias in the board's own dialect: `(uuid "…")` and KiCad 9's layout from KiCad 8
 * on, `(tstamp …)` and one line per item in KiCad 6 and 7 files; the net by code in numbered
 * boards, by name in KiCad 10's. They go after the board's last track or via (where KiCad
 * writes them), else before its zones. Their ids are derived from what they are, so the same
 * route writes the same bytes.
 */
import { boardDialect } from "../../format-versions.ts";
import { ownId } from "../clearance/items.ts";
import { insertInDialect } from "../footprint/dialect.ts";
import { uuidSource } from "../../uuids.ts";
import type { BBox, Board, PointMm } from "../model.ts";
import { child, childText, head, list, num, q, removeChild, sym, type SList, type SValue } from "../../sexpr/index.ts";

/** Writes a track segment; returns its id. */
export function writeTrack(board: Board, a: PointMm, b: PointMm, width: number, layer: string, net: string): string {
  return insert(
    board,
    "segment",
    [list("start", a.x, a.y), list("end", b.x, b.y), list("width", width), list("layer", q(layer))],
    net,
    `${a.x},${a.y},${b.x},${b.y},${layer}`,
  );
}

/** Writes a through via; returns its id. */
export function writeVia(board: Board, at: PointMm, diameter: number, drill: number, net: string): string {
  return insert(
    board,
    "via",
    [list("at", at.x, at.y), list("size", diameter), list("drill", drill), list("layers", q("F.Cu"), q("B.Cu"))],
    net,
    `${at.x},${at.y}`,
  );
}

const TRACKS = new Set(["segment", "arc", "via"]);
const AFTER_TRACKS = new Set(["zone", "group", "generated", "embedded_fonts", "embedded_files"]);

function insert(board: Board, kind: string, geometry: SList[], net: string, identity: string): string {
  const dialect = boardDialect(board.version);
  const netNode =
    dialect.nets === "named" ? list("net", q(net)) : list("net", board.nets().find((n) => n.name === net)?.code ?? 0);
  const id = uuidSource(`${kind}:${net}:${identity}`)();
  const idNode = dialect.ids === "uuid" ? list("uuid", q(id)) : list("tstamp", sym(id));
  const node = list(kind, ...([...geometry, netNode, idNode] as SValue[]));
  const items = board.root.items;
  let at = -1;
  items.forEach((item, i) => {
    if (item.type === "list" && TRACKS.has(head(item) ?? "")) at = i + 1;
  });
  if (at < 0) {
    const next = items.findIndex((item) => item.type === "list" && AFTER_TRACKS.has(head(item) ?? ""));
    at = next >= 0 ? next : items.length;
  }
  insertInDialect(board.root, node, at, dialect);
  return id;
}

/**
 * Takes the tracks and vias with the given ids out of the board (copper a run laid and now
 * lifts to route a part again); returns where they were, for the refill.
 */
export function liftCopper(
  board: Board,
  ids: ReadonlySet<string>,
): { box: BBox; net: string; layers: Set<string> | "all" }[] {
  const lifted = copperWithIds(board, ids);
  for (const { node } of lifted) removeChild(board.root, node);
  return lifted.map(({ box, layers }) => ({ box, net: "", layers }));
}

/** The tracks and vias with the given ids, with where they are. */
export function copperWithIds(
  board: Board,
  ids: ReadonlySet<string>,
): { node: SList; box: BBox; layers: Set<string> | "all" }[] {
  const found: { node: SList; box: BBox; layers: Set<string> | "all" }[] = [];
  for (const item of board.root.items) {
    if (item.type !== "list" || !TRACKS.has(head(item) ?? "")) continue;
    const id = ownId(item);
    if (!id || !ids.has(id)) continue;
    const points = ["start", "end", "at"].flatMap((name) => {
      const at = child(item, name);
      return at ? [{ x: num(at, 1) ?? 0, y: num(at, 2) ?? 0 }] : [];
    });
    const size = num(child(item, "width") ?? child(item, "size") ?? item, 1) ?? 0;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const box = {
      minX: Math.min(...xs) - size / 2,
      minY: Math.min(...ys) - size / 2,
      maxX: Math.max(...xs) + size / 2,
      maxY: Math.max(...ys) + size / 2,
    };
    const layer = childText(item, "layer");
    found.push({ node: item, box, layers: head(item) === "via" || !layer ? "all" : new Set([layer]) });
  }
  return found;
}
