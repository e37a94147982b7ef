/**
 * What a person sees on a sheet, as boxes in millimetres, computed straight from a `.kicad_sch`
 * tree and independently of the placement engine, so placement tests judge the engine by the
 * file it wrote: symbols (their library drawing and pins, transformed by position, rotation and
 * mirror), their visible fields, wires, labels, junctions, text and graphics.
 *
 * Text is measured at 0.7 of its font size per character (KiCad's stroke font averages a little
 * less), justified as KiCad draws it for upright and upside-down symbols, centred otherwise.
 */
import { readFileSync } from "node:fs";
import { child, children, head, num, parseSexpr, text, walk, type SList } from "../../src/kicad/sexpr/index.ts";

export interface MmBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface DrawnItem {
  kind: "symbol" | "field" | "wire" | "label" | "junction" | "graphic" | "text" | "sheet";
  /** The item's uuid (for fields: the symbol's) — how a test tells new items from old. */
  uuid: string;
  box: MmBox;
  /** For symbols: reference, lib id, position and rotation. */
  symbol?: {
    reference: string;
    libId: string;
    x: number;
    y: number;
    rotation: number;
    mirror?: string;
    power: boolean;
  };
}

interface Transform {
  x: number;
  y: number;
  rotation: number;
  mirror?: string;
}

function place(lx: number, ly: number, t: Transform): [number, number] {
  let x = lx;
  let y = -ly;
  for (let i = 0; i < ((Math.round(t.rotation / 90) % 4) + 4) % 4; i++) [x, y] = [y, -x];
  if (t.mirror === "x") y = -y;
  if (t.mirror === "y") x = -x;
  return [t.x + x, t.y + y];
}

function boxOf(points: [number, number][]): MmBox {
  return {
    x0: Math.min(...points.map((p) => p[0])),
    y0: Math.min(...points.map((p) => p[1])),
    x1: Math.max(...points.map((p) => p[0])),
    y1: Math.max(...points.map((p) => p[1])),
  };
}

export function overlaps(a: MmBox, b: MmBox, margin = 0): boolean {
  return a.x0 < b.x1 + margin && b.x0 < a.x1 + margin && a.y0 < b.y1 + margin && b.y0 < a.y1 + margin;
}

/** Gap between two boxes, mm (0 when they touch or overlap). */
export function gap(a: MmBox, b: MmBox): number {
  return Math.hypot(Math.max(0, b.x0 - a.x1, a.x0 - b.x1), Math.max(0, b.y0 - a.y1, a.y0 - b.y1));
}

/** Library-coordinate points of one unit's drawing and pins. */
function unitPoints(lib: SList, unit: number): [number, number][] {
  const points: [number, number][] = [];
  const name = (text(lib, 1) ?? "").split(":").pop()!;
  for (const sub of children(lib, "symbol")) {
    const m = /_(\d+)_(\d+)$/.exec((text(sub, 1) ?? "").slice(name.length));
    const u = m ? Number(m[1]) : 0;
    const style = m ? Number(m[2]) : 0;
    if ((u !== 0 && u !== unit) || style > 1) continue;
    walk(sub, (node) => {
      const h = head(node);
      if (h === "pin") {
        const at = child(node, "at")!;
        const [x, y, angle] = [num(at, 1) ?? 0, num(at, 2) ?? 0, ((num(at, 3) ?? 0) * Math.PI) / 180];
        const length = num(child(node, "length") ?? node, 1) ?? 0;
        points.push([x, y], [x + Math.cos(angle) * length, y + Math.sin(angle) * length]);
        return false;
      }
      if (h === "circle") {
        const c = child(node, "center")!;
        const r = num(child(node, "radius") ?? node, 1) ?? 0;
        points.push([(num(c, 1) ?? 0) - r, (num(c, 2) ?? 0) - r], [(num(c, 1) ?? 0) + r, (num(c, 2) ?? 0) + r]);
        return false;
      }
      if (h === "xy" || h === "start" || h === "end" || h === "mid") {
        points.push([num(node, 1) ?? 0, num(node, 2) ?? 0]);
        return false;
      }
      return h !== "property" && h !== "text";
    });
  }
  return points;
}

function hidden(item: SList): boolean {
  const effects = child(item, "effects");
  const hide = (n: SList | undefined) =>
    !!n &&
    (n.items.some((i) => i.type === "atom" && i.raw === "hide") ||
      (child(n, "hide") !== undefined && text(child(n, "hide")!, 1) !== "no"));
  return hide(item) || hide(effects);
}

/** A text's box from its anchor; `flip` mirrors left/right justification (symbols turned 180°). */
function textBox(item: SList, value: string, turned: boolean, flip: boolean): MmBox | undefined {
  const at = child(item, "at");
  if (!at || value === "") return undefined;
  const x = num(at, 1) ?? 0;
  const y = num(at, 2) ?? 0;
  const effects = child(item, "effects");
  const size = child(child(effects ?? item, "font") ?? item, "size");
  const h = size ? (num(size, 1) ?? 1.27) : 1.27;
  const lines = value.split("\n");
  const width = Math.max(...lines.map((l) => l.length)) * h * 0.7;
  const height = lines.length * h * 1.2;
  const justify = new Set(
    (child(effects ?? item, "justify")?.items.slice(1) ?? []).flatMap((a) => (a.type === "atom" ? [a.raw] : [])),
  );
  const horizontal = ((num(at, 3) ?? 0) % 180 === 0) !== turned;
  if (!horizontal) return { x0: x - height / 2, y0: y - width / 2, x1: x + height / 2, y1: y + width / 2 };
  let left = justify.has("left");
  let right = justify.has("right");
  if (flip) [left, right] = [right, left];
  const x0 = turned ? x - width / 2 : left ? x : right ? x - width : x - width / 2;
  const y0 = justify.has("bottom") ? y - height : justify.has("top") ? y : y - height / 2;
  return { x0, y0, x1: x0 + width, y1: y0 + height };
}

function pointsOf(node: SList): [number, number][] {
  return children(child(node, "pts") ?? node, "xy").map((xy) => [num(xy, 1) ?? 0, num(xy, 2) ?? 0]);
}

/** Every item drawn on one sheet file; `instancePath` picks the references of a shared sheet's instance. */
export function drawnItems(file: string, instancePath?: string): DrawnItem[] {
  const root = parseSexpr(readFileSync(file, "utf8"), { file }).root;
  const libs = new Map(children(child(root, "lib_symbols") ?? root, "symbol").map((s) => [text(s, 1) ?? "", s]));
  const items: DrawnItem[] = [];
  for (const node of root.items) {
    if (node.type !== "list") continue;
    const uuid = text(child(node, "uuid") ?? node, 1) ?? "";
    switch (head(node)) {
      case "symbol": {
        const at = child(node, "at")!;
        const t: Transform = {
          x: num(at, 1) ?? 0,
          y: num(at, 2) ?? 0,
          rotation: num(at, 3) ?? 0,
          mirror: text(child(node, "mirror") ?? node, 1),
        };
        const libKey = text(child(node, "lib_name") ?? child(node, "lib_id")!, 1) ?? "";
        const lib = libs.get(libKey);
        const unit = num(child(node, "unit") ?? node, 1) ?? 1;
        const points = lib ? unitPoints(lib, unit).map(([x, y]) => place(x, y, t)) : [];
        const paths = children(child(child(node, "instances") ?? node, "project") ?? node, "path");
        const path = paths.find((p) => text(p, 1) === instancePath) ?? paths[0];
        const reference = path ? (text(child(path, "reference") ?? path, 1) ?? "") : "";
        const power = lib ? child(lib, "power") !== undefined : false;
        items.push({
          kind: "symbol",
          uuid,
          box: points.length > 0 ? boxOf(points) : boxOf([[t.x, t.y]]),
          symbol: { reference, libId: libKey, x: t.x, y: t.y, rotation: t.rotation, mirror: t.mirror, power },
        });
        const turned = t.rotation % 180 !== 0;
        const flip = !turned && place(1, 0, { ...t, x: 0, y: 0 })[0] < 0;
        for (const prop of children(node, "property")) {
          if (hidden(prop)) continue;
          const box = textBox(prop, text(prop, 2) ?? "", turned, flip);
          if (box) items.push({ kind: "field", uuid, box });
        }
        break;
      }
      case "wire":
      case "bus":
      case "polyline": {
        const pts = pointsOf(node);
        for (let i = 1; i < pts.length; i++)
          items.push({
            kind: head(node) === "polyline" ? "graphic" : "wire",
            uuid,
            box: boxOf([pts[i - 1]!, pts[i]!]),
          });
        break;
      }
      case "rectangle": {
        const a = child(node, "start")!;
        const b = child(node, "end")!;
        const [x0, y0, x1, y1] = [num(a, 1)!, num(a, 2)!, num(b, 1)!, num(b, 2)!];
        for (const edge of [
          [
            [x0, y0],
            [x1, y0],
          ],
          [
            [x1, y0],
            [x1, y1],
          ],
          [
            [x1, y1],
            [x0, y1],
          ],
          [
            [x0, y1],
            [x0, y0],
          ],
        ] as [number, number][][])
          items.push({ kind: "graphic", uuid, box: boxOf(edge) });
        break;
      }
      case "junction":
      case "no_connect": {
        const at = child(node, "at")!;
        const [x, y] = [num(at, 1) ?? 0, num(at, 2) ?? 0];
        items.push({ kind: "junction", uuid, box: { x0: x - 0.5, y0: y - 0.5, x1: x + 0.5, y1: y + 0.5 } });
        break;
      }
      case "label":
      case "global_label":
      case "hierarchical_label": {
        const at = child(node, "at")!;
        const [x, y, angle] = [num(at, 1) ?? 0, num(at, 2) ?? 0, num(at, 3) ?? 0];
        const length = ((text(node, 1) ?? "").length * 0.7 + (head(node) === "label" ? 0.3 : 2)) * 1.27;
        const h = 0.7;
        const box =
          angle === 0
            ? { x0: x, y0: y - h, x1: x + length, y1: y + h }
            : angle === 180
              ? { x0: x - length, y0: y - h, x1: x, y1: y + h }
              : angle === 90
                ? { x0: x - h, y0: y - length, x1: x + h, y1: y }
                : { x0: x - h, y0: y, x1: x + h, y1: y + length };
        items.push({ kind: "label", uuid, box });
        break;
      }
      case "text": {
        const box = textBox(node, text(node, 1) ?? "", false, false);
        if (box) items.push({ kind: "text", uuid, box });
        break;
      }
      case "sheet": {
        const at = child(node, "at")!;
        const size = child(node, "size")!;
        items.push({
          kind: "sheet",
          uuid,
          box: { x0: num(at, 1)!, y0: num(at, 2)!, x1: num(at, 1)! + num(size, 1)!, y1: num(at, 2)! + num(size, 2)! },
        });
        break;
      }
    }
  }
  return items;
}

/** True when wires alone lead from `a` to `b` (mm) on a sheet, end to end, read from the file. */
export function wiredTogether(file: string, a: [number, number], b: [number, number]): boolean {
  const root = parseSexpr(readFileSync(file, "utf8"), { file }).root;
  const key = (p: [number, number]) => `${p[0].toFixed(3)},${p[1].toFixed(3)}`;
  const wires = children(root, "wire").map((w) =>
    children(child(w, "pts")!, "xy").map((xy): [number, number] => [num(xy, 1) ?? 0, num(xy, 2) ?? 0]),
  );
  const seen = new Set([key(a)]);
  const queue = [a];
  while (queue.length > 0) {
    const p = queue.shift()!;
    if (key(p) === key(b)) return true;
    for (const [u, v] of wires) {
      const next = key(u!) === key(p) ? v! : key(v!) === key(p) ? u! : undefined;
      if (next && !seen.has(key(next))) {
        seen.add(key(next));
        queue.push(next);
      }
    }
  }
  return false;
}
