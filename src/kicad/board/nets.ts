/**
 * A board's nets as board sync edits them, in either encoding: KiCad 6–9's numbered table
 * (`(net 3 "GND")` at the top, the same on pads, the bare code on tracks, vias and zones) or
 * KiCad 10's names alone (`(net "GND")` everywhere, no table). Codes never change: renumbering
 * would rewrite every track of the board.
 */
import { CopperheadError } from "../../errors.ts";
import { copperLayers, footprintItems, sharesLayer } from "./clearance/items.ts";
import { circle, overlap } from "./clearance/geometry.ts";
import { readNetRef, type Board, type Footprint, type NetFormat } from "./model.ts";
import { afterLast, BOARD_HEADER } from "../sexpr/node-order.ts";
import { insertInDialect } from "./footprint/dialect.ts";
import type { BoardDialect } from "../format-versions.ts";
import { child, children, head, list, num, q, removeChild, setAtom, text, type SList } from "../sexpr/index.ts";

/** Heads of the top-level items that carry copper on a net. */
const COPPER_ITEMS = new Set(["segment", "arc", "via", "zone"]);

export class NetTable {
  private readonly board: Board;
  private readonly format: NetFormat;
  private readonly dialect: BoardDialect;
  private readonly codes = new Map<string, number>();

  constructor(board: Board, format: NetFormat, dialect: BoardDialect) {
    this.board = board;
    this.format = format;
    this.dialect = dialect;
    for (const n of board.nets()) if (n.code !== undefined) this.codes.set(n.name, n.code);
  }

  /** A `(net …)` list pointing at `name`. */
  reference(name: string): SList {
    if (this.format === "named") return list("net", q(name));
    const code = this.codes.get(name);
    if (code === undefined)
      throw new CopperheadError("internal_error", `Net ${name} is not in the board's net table.`, {
        fix: "Plan again against the current board.",
      });
    return list("net", code, q(name));
  }

  add(name: string, code: number | undefined): void {
    if (this.format === "named") return;
    const entries = children(this.board.root, "net");
    const last = entries[entries.length - 1];
    const at = last ? this.board.root.items.indexOf(last) + 1 : afterLast(this.board.root, BOARD_HEADER);
    insertInDialect(this.board.root, list("net", code!, q(name)), at, this.dialect);
    this.codes.set(name, code!);
  }

  remove(name: string): void {
    if (this.format === "named") return;
    const entry = children(this.board.root, "net").find((n) => text(n, 2) === name);
    if (entry) removeChild(this.board.root, entry);
    this.codes.delete(name);
  }

  /** Renames a net everywhere its name is written; codes never change. */
  rename(from: string, to: string): void {
    const code = this.codes.get(from);
    if (code !== undefined) {
      this.codes.delete(from);
      this.codes.set(to, code);
    }
    const stack: SList[] = [this.board.root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const item of node.items) {
        if (item.type !== "list") continue;
        const h = head(item);
        if (h === "net" || h === "net_name") {
          const nameIndex = item.items.length > 2 ? 2 : 1;
          const atom = item.items[nameIndex];
          if (atom?.type === "atom" && atom.raw.startsWith('"') && text(item, nameIndex) === from)
            setAtom(item, nameIndex, q(to));
          continue;
        }
        if (h === "footprint" || h === "pad" || COPPER_ITEMS.has(h ?? "")) stack.push(item);
      }
    }
  }
}

/** Net codes (numbered form) and names (named form) that tracks, vias and zones use. */
export function copperNets(board: Board): { codes: Set<number>; names: Set<string> } {
  const codes = new Set<number>();
  const names = new Set<string>();
  for (const item of board.root.items) {
    if (item.type !== "list" || !COPPER_ITEMS.has(head(item) ?? "")) continue;
    const net = readNetRef(child(item, "net"));
    if (net?.code !== undefined && net.code > 0) codes.add(net.code);
    if (net?.name) names.add(net.name);
    const netName = child(item, "net_name");
    if (netName && text(netName, 1)) names.add(text(netName, 1)!);
  }
  return { codes, names };
}

/**
 * Track and via ends that land on a footprint's pads: the end point lies on a pad's outline, on a
 * copper layer both are on, as a track routed to the pad ends. A via or track end that only
 * comes near a pad, clear of it, does not count (bms-c1's via 0.36 mm from a resistor's pad had
 * the part called routed, by a circle around the pad's centre).
 */
export function copperOnPads(board: Board, fp: Footprint): number {
  const copper = copperLayers(board);
  const pads = footprintItems(fp.node, copper).filter((i) => i.kind === "pad");
  let count = 0;
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const h = head(item);
    if (h !== "segment" && h !== "arc" && h !== "via") continue;
    const layers = new Set(h === "via" ? copper : [text(child(item, "layer") ?? item, 1) ?? ""]);
    for (const name of h === "via" ? ["at"] : ["start", "end"]) {
      const p = child(item, name);
      const x = p && num(p, 1);
      const y = p && num(p, 2);
      if (x === undefined || y === undefined) continue;
      const end = circle({ x, y }, 1e-4);
      if (pads.some((pad) => sharesLayer(pad.layers, layers) && overlap(pad.shape(), end))) count++;
    }
  }
  return count;
}
