/**
 * Generates large, valid KiCad 9 boards for benchmarks by tiling the routed usb-led fixture:
 * every tile gets its own references, nets and UUIDs, and one outline surrounds them all, so
 * kicad-cli loads and checks the result like any real board.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  child,
  children,
  cloneNode,
  head,
  insertChild,
  list,
  num,
  printSexprBytes,
  q,
  readSexprFile,
  setAtom,
  text,
  writeSexprFile,
  type SList,
} from "../../src/kicad/sexpr/index.ts";

const FIXTURE = join(import.meta.dir, "../../fixtures/usb-led/usb-led.kicad_pcb");
const TILE_PITCH = { x: 45, y: 25 };
const TILE_ITEMS = new Set(["footprint", "segment", "via", "arc", "zone"]);
const HEADER_ITEMS = new Set([
  "version",
  "generator",
  "generator_version",
  "general",
  "paper",
  "title_block",
  "layers",
  "setup",
  "property",
  "embedded_fonts",
]);

export interface BigBoard {
  path: string;
  bytes: number;
  footprints: number;
  tiles: number;
}

/** Writes a board of `tiles` usb-led copies into a fresh temp dir and describes it. */
export function generateBigBoard(tiles: number, name = "big"): BigBoard {
  const source = readSexprFile(FIXTURE);
  const netNames = new Map<number, string>();
  // Net 0 is "no net": it stays net 0 in every tile.
  for (const n of children(source.root, "net")) if (num(n, 1) !== 0) netNames.set(num(n, 1)!, text(n, 2)!);
  const tileItems = source.root.items.filter((i): i is SList => i.type === "list" && TILE_ITEMS.has(head(i)!));
  const outline = source.root.items.find((i): i is SList => i.type === "list" && head(i) === "gr_rect")!;

  const root = list("kicad_pcb");
  for (const item of source.root.items.slice(1)) {
    if (item.type === "list" && HEADER_ITEMS.has(head(item)!)) insertChild(root, cloneNode(item));
  }
  insertChild(root, list("net", 0, q("")));
  let nextNet = 1;
  let nextUuid = 1;
  const cols = Math.ceil(Math.sqrt(tiles));
  const newItems: SList[] = [];
  for (let t = 0; t < tiles; t++) {
    const dx = (t % cols) * TILE_PITCH.x;
    const dy = Math.floor(t / cols) * TILE_PITCH.y;
    const codes = new Map<number, number>();
    for (const [code, netName] of netNames) {
      codes.set(code, nextNet);
      insertChild(root, list("net", nextNet++, q(`${netName}_T${t}`)));
    }
    for (const original of tileItems) {
      const item = cloneNode(original);
      retile(item, { dx, dy, tile: t, codes, netNames, uuid: () => tileUuid(nextUuid++) });
      newItems.push(item);
    }
  }
  for (const item of newItems) insertChild(root, item);
  const box = cloneNode(outline);
  const rows = Math.ceil(tiles / cols);
  setAtom(child(box, "end")!, 1, num(child(box, "start")!, 1)! + (cols - 1) * TILE_PITCH.x + 40);
  setAtom(child(box, "end")!, 2, num(child(box, "start")!, 2)! + (rows - 1) * TILE_PITCH.y + 19);
  insertChild(root, box);

  const dir = mkdtempSync(join(tmpdir(), "copperhead-bench-"));
  const path = join(dir, `${name}.kicad_pcb`);
  const bytes = Buffer.concat([printSexprBytes(root), Buffer.from("\n")]);
  writeSexprFile(path, bytes);
  return {
    path,
    bytes: bytes.length,
    footprints: tiles * tileItems.filter((i) => head(i) === "footprint").length,
    tiles,
  };
}

/** The number of tiles needed for a board of at least `bytes`. */
export function tilesForBytes(bytes: number): number {
  const one = generateBigBoard(1);
  const two = generateBigBoard(2);
  const perTile = two.bytes - one.bytes;
  return Math.max(1, Math.ceil((bytes - one.bytes) / perTile) + 1);
}

function tileUuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

interface Retile {
  dx: number;
  dy: number;
  tile: number;
  codes: Map<number, number>;
  netNames: Map<number, string>;
  uuid: () => string;
}

/** Moves one copied item into its tile and gives it the tile's refs, nets and UUIDs. */
function retile(item: SList, r: Retile): void {
  const kind = head(item);
  for (const part of ["at", "start", "end", "mid", "center"]) {
    if (kind !== "footprint" && kind !== "via" && part === "at") continue;
    const p = child(item, part);
    if (p) shift(p, r);
  }
  if (kind === "zone")
    for (const poly of children(item, "polygon")) for (const xy of children(child(poly, "pts")!, "xy")) shift(xy, r);
  const stack: SList[] = [item];
  while (stack.length) {
    const node = stack.pop()!;
    const h = head(node);
    if (h === "uuid") setAtom(node, 1, q(r.uuid()));
    else if (h === "net") renet(node, r);
    else if (h === "path") setAtom(node, 1, q(`/${r.uuid()}`));
    else if (h === "property" && text(node, 1) === "Reference") setAtom(node, 2, q(retileRef(text(node, 2)!, r.tile)));
    for (const c of node.items) if (c.type === "list" && head(c) !== "at") stack.push(c);
  }
}

function shift(p: SList, r: Retile): void {
  setAtom(p, 1, num(p, 1)! + r.dx);
  setAtom(p, 2, num(p, 2)! + r.dy);
}

function renet(node: SList, r: Retile): void {
  const code = num(node, 1);
  if (code === undefined || !r.codes.has(code)) return;
  setAtom(node, 1, r.codes.get(code)!);
  if (node.items.length > 2) setAtom(node, 2, q(`${r.netNames.get(code)}_T${r.tile}`));
}

/** The reference a part gets in tile `tile`: R3 becomes R103 in tile 1, R503 in tile 5. */
export function retileRef(ref: string, tile: number): string {
  const m = /^([A-Za-z#]+)(\d+)$/.exec(ref);
  return m ? `${m[1]}${tile * 100 + Number(m[2])}` : `${ref}_${tile}`;
}
