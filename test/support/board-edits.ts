/**
 * Board edits for tests, made on the lossless tree the way pcbnew would save them: move or swap a
 * footprint, rename a net, move a pad to another net, add or remove copper, add a zone, rename
 * a layer, resize the outline. Each touches only what it names.
 */
import { Board } from "../../src/kicad/board/model.ts";
import {
  child,
  children,
  head,
  insertChild,
  list,
  num,
  q,
  removeChild,
  setAtom,
  text,
  walk,
  writeSexprFile,
  type SList,
} from "../../src/kicad/sexpr/index.ts";

export class BoardEdit {
  readonly board: Board;

  constructor(readonly path: string) {
    this.board = Board.load(path);
  }

  save(): void {
    writeSexprFile(this.path, this.board.doc);
  }

  footprint(ref: string): SList {
    const fp = this.board.footprints().find((f) => f.ref === ref);
    if (!fp) throw new Error(`no footprint ${ref} in ${this.path}`);
    return fp.node;
  }

  /** Moves (and turns) a footprint; its pads and graphics follow, since they are footprint-local. */
  moveFootprint(ref: string, dx: number, dy: number, angle?: number): void {
    const at = child(this.footprint(ref), "at")!;
    setAtom(at, 1, round(num(at, 1)! + dx));
    setAtom(at, 2, round(num(at, 2)! + dy));
    if (angle !== undefined) {
      if (at.items.length > 3) setAtom(at, 3, angle);
      else insertChild(at, angle);
    }
  }

  /** Another library footprint under the same reference, in the same place (the id only). */
  swapFootprint(ref: string, libId: string): void {
    setAtom(this.footprint(ref), 1, q(libId));
  }

  /** A footprint's Value, as KiCad's "Update PCB from Schematic" writes a new one. */
  setValue(ref: string, value: string): void {
    const fp = this.footprint(ref);
    const field =
      children(fp, "property").find((p) => text(p, 1) === "Value") ??
      children(fp, "fp_text").find((t) => text(t, 1) === "value");
    if (!field) throw new Error(`${ref} has no Value field in ${this.path}`);
    setAtom(field, 2, q(value));
  }

  /** Renames a net everywhere the board names it: the net table, pads and zones. */
  renameNet(from: string, to: string): void {
    walk(this.board.root, (node) => {
      if ((head(node) === "net" && text(node, 2) === from) || (head(node) === "net_name" && text(node, 1) === from)) {
        setAtom(node, head(node) === "net" ? 2 : 1, q(to));
      }
    });
  }

  /** Puts one pad on another (existing) net. */
  setPadNet(ref: string, pad: string, net: string): void {
    const node = children(this.footprint(ref), "pad").find((p) => text(p, 1) === pad);
    if (!node) throw new Error(`${ref} has no pad ${pad}`);
    const netRef = child(node, "net")!;
    setAtom(netRef, 1, this.netCode(net));
    setAtom(netRef, 2, q(net));
  }

  private netCode(net: string): number {
    const found = children(this.board.root, "net").find((n) => text(n, 2) === net);
    if (!found) throw new Error(`no net ${net} in ${this.path}`);
    return num(found, 1)!;
  }

  /** Inserts a new top-level item before the first item of `beforeHead` (or at the end). */
  private insert(node: SList, beforeHead: string): void {
    const anchor = this.board.root.items.findIndex((i) => i.type === "list" && head(i) === beforeHead);
    insertChild(this.board.root, node, anchor >= 0 ? anchor : this.board.root.items.length);
  }

  addSegment(start: [number, number], end: [number, number], layer: string, net: string, width = 0.25): void {
    this.insert(
      list(
        "segment",
        list("start", ...start),
        list("end", ...end),
        list("width", width),
        list("layer", q(layer)),
        list("net", this.netCode(net)),
        list("uuid", q(crypto.randomUUID())),
      ),
      "segment",
    );
  }

  /** Adds a through via; returns its id. */
  addVia(at: [number, number], net: string): string {
    const id = crypto.randomUUID();
    this.insert(
      list(
        "via",
        list("at", ...at),
        list("size", 0.6),
        list("drill", 0.3),
        list("layers", q("F.Cu"), q("B.Cu")),
        list("net", this.netCode(net)),
        list("uuid", q(id)),
      ),
      "via",
    );
    return id;
  }

  /** Removes the first segment that starts at `start`. */
  removeSegment(start: [number, number]): void {
    const found = children(this.board.root, "segment").find((s) => {
      const p = child(s, "start")!;
      return num(p, 1) === start[0] && num(p, 2) === start[1];
    });
    if (!found) throw new Error(`no segment starting at ${start} in ${this.path}`);
    removeChild(this.board.root, found);
  }

  /** A copper zone on `net` and `layer` over the rectangle `a`–`b`; `filled` as if KiCad had poured it. */
  addZone(net: string, layer: string, a: [number, number], b: [number, number], filled = false): void {
    const rect = () =>
      list("pts", list("xy", a[0], a[1]), list("xy", b[0], a[1]), list("xy", b[0], b[1]), list("xy", a[0], b[1]));
    const pts = rect();
    const fill = filled ? [list("filled_polygon", list("layer", q(layer)), rect())] : [];
    this.insert(
      list(
        "zone",
        list("net", this.netCode(net)),
        list("net_name", q(net)),
        list("layer", q(layer)),
        list("uuid", q(crypto.randomUUID())),
        list("hatch", "edge", 0.5),
        list("connect_pads", list("clearance", 0.5)),
        list("min_thickness", 0.25),
        list("filled_areas_thickness", "no"),
        list("fill", list("thermal_gap", 0.5), list("thermal_bridge_width", 0.5)),
        list("polygon", pts),
        ...fill,
      ),
      "embedded_fonts",
    );
  }

  /** Gives a layer of the layer table another user name. */
  renameLayer(layer: string, userName: string): void {
    const entry = child(this.board.root, "layers")!.items.find((i) => i.type === "list" && text(i, 1) === layer) as
      | SList
      | undefined;
    if (!entry) throw new Error(`no layer ${layer}`);
    if (entry.items.length > 3) setAtom(entry, 3, q(userName));
    else insertChild(entry, q(userName));
  }

  /** Moves the far corner of the Edge.Cuts rectangle. */
  resizeOutline(end: [number, number]): void {
    const rect = children(this.board.root, "gr_rect").find((r) => text(child(r, "layer")!, 1) === "Edge.Cuts");
    if (!rect) throw new Error(`no Edge.Cuts rectangle in ${this.path}`);
    const e = child(rect, "end")!;
    setAtom(e, 1, end[0]);
    setAtom(e, 2, end[1]);
  }
}

function round(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}
