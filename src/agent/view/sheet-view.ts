/**
 * The sheet side of the `view` tool: which sheet and which part of it a question is about
 * (around a part, a net, or a point), and the legend of what is drawn there — parts, nets,
 * labels, and the largest free rectangles, all in sheet millimetres, so the model can name
 * places in `move_symbol`/`add_component` without guessing.
 */
import { ToolError } from "../tools/tool.ts";
import type { Design } from "../../design/design.ts";
import { child, flag, num } from "../../kicad/sexpr/index.ts";
import { IU_PER_MM, placePoint, toIU } from "../../kicad/schematic/geometry.ts";
import {
  drawingArea,
  fieldBox,
  grow,
  intersects,
  occupiedBoxes,
  pageArea,
  symbolBodyBox,
  union,
  type Box,
} from "../../kicad/schematic/space.ts";
import type { SheetInstance } from "../../kicad/schematic/model/hierarchy.ts";
import { symbolInstance, unitPins, type PlacedSymbol } from "../../kicad/schematic/model/symbols.ts";
import { freeRectangles, type MmRect } from "./free.ts";
import { sheetResolver, symbolResolver } from "../../kicad/schematic/text-vars.ts";

export interface SheetQuestion {
  ref?: string;
  net?: string;
  /** A point on the sheet, mm, with `sheet`. */
  x?: number;
  y?: number;
  /** Sheet path (`/`, `/Power/`) or file name; default the sheet of `ref`/`net`, else the root. */
  sheet?: string;
  /** Smallest region shown around the focus, mm. */
  width?: number;
  height?: number;
}

export interface SheetRegion {
  instance: SheetInstance;
  /** Index of the sheet in page order (kicad-cli's plot order). */
  page: number;
  /** What is shown, IU. */
  box: Box;
}

const DEFAULT_SPAN_MM = 50;
const MARGIN = toIU(5);

/** A symbol placed on one sheet instance, under its reference there. */
interface Placed {
  instance: SheetInstance;
  symbol: PlacedSymbol;
  ref: string;
  unit: number;
}

function placedSymbols(design: Design, instance?: SheetInstance): Placed[] {
  const out: Placed[] = [];
  for (const inst of instance ? [instance] : design.schematic.instances) {
    for (const symbol of inst.file.symbols) {
      const { reference, unit } = symbolInstance(symbol, inst.path, design.schematic.projectName);
      out.push({ instance: inst, symbol, ref: reference, unit });
    }
  }
  return out;
}

/** A symbol's drawing with its visible fields, IU. */
function symbolBox({ symbol, instance }: Placed): Box {
  let box = symbolBodyBox(symbol);
  const own = symbolResolver(symbol, sheetResolver(instance.file));
  for (const field of symbol.fields) {
    const f = fieldBox(field.node, symbol.placement, own);
    if (f) box = union(box, f);
  }
  return box;
}

function findSheet(design: Design, name: string): SheetInstance {
  const all = design.schematic.instances;
  const wanted = name.replace(/\\/g, "/");
  const hit =
    all.find((i) => i.humanPath === wanted || i.humanPath === `/${wanted.replace(/^\/|\/$/g, "")}/`) ??
    all.find((i) => i.file.path.endsWith(`/${wanted}`) || i.file.path === wanted);
  if (!hit) throw new ToolError(`no sheet ${name}; sheets: ${all.map((i) => i.humanPath).join(", ")}`);
  return hit;
}

/** The sheet and region a question is about. */
export function sheetRegion(design: Design, q: SheetQuestion): SheetRegion {
  const span = { x: toIU(q.width ?? DEFAULT_SPAN_MM), y: toIU(q.height ?? DEFAULT_SPAN_MM) };
  let instance: SheetInstance;
  let focus: Box | undefined;
  if (q.ref) {
    const units = placedSymbols(design).filter(
      (p) => p.ref === q.ref && (!q.sheet || p.instance === findSheet(design, q.sheet)),
    );
    if (units.length === 0) throw new ToolError(`no symbol ${q.ref} on ${q.sheet ? `sheet ${q.sheet}` : "any sheet"}`);
    instance = units[0]!.instance;
    for (const u of units.filter((p) => p.instance === instance)) focus = union(focus, symbolBox(u));
  } else if (q.net) {
    ({ instance, focus } = netFocus(design, q.net, q.sheet));
  } else {
    instance = q.sheet ? findSheet(design, q.sheet) : design.schematic.root;
    if (q.x !== undefined && q.y !== undefined) focus = { x0: toIU(q.x), y0: toIU(q.y), x1: toIU(q.x), y1: toIU(q.y) };
  }
  const page = pageArea(instance.file);
  const paper = grow(page.area, toIU(12.7));
  let box: Box;
  if (!focus) box = paper;
  else {
    box = grow(focus, MARGIN);
    const cx = (box.x0 + box.x1) / 2;
    const cy = (box.y0 + box.y1) / 2;
    box = union(box, { x0: cx - span.x / 2, y0: cy - span.y / 2, x1: cx + span.x / 2, y1: cy + span.y / 2 });
  }
  return { instance, page: design.schematic.instances.indexOf(instance), box };
}

/** Where a net is drawn: the sheet with most of its pins and labels, and their extent there. */
function netFocus(design: Design, net: string, sheet: string | undefined): { instance: SheetInstance; focus: Box } {
  const points = new Map<SheetInstance, Box>();
  const add = (instance: SheetInstance, at: { x: number; y: number }) =>
    points.set(instance, union(points.get(instance), { x0: at.x, y0: at.y, x1: at.x, y1: at.y }));
  const count = new Map<SheetInstance, number>();
  const only = sheet ? findSheet(design, sheet) : undefined;
  for (const p of placedSymbols(design, only)) {
    for (const pin of unitPins(p.symbol, p.unit)) {
      if (design.netlist.pinNets.get(`${p.ref}.${pin.number}`) !== net) continue;
      add(p.instance, placePoint(pin.at, p.symbol.placement));
      count.set(p.instance, (count.get(p.instance) ?? 0) + 1);
    }
  }
  const local = net.replace(/^.*\//, "");
  for (const instance of only ? [only] : design.schematic.instances) {
    for (const label of instance.file.labels) {
      if (label.text !== local) continue;
      add(instance, label.at);
      count.set(instance, (count.get(instance) ?? 0) + 1);
    }
  }
  const best = [...count].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!best)
    throw new ToolError(
      `net ${net} is not drawn on ${sheet ? `sheet ${sheet}` : "any sheet"} (list_nets gives the names)`,
    );
  return { instance: best, focus: points.get(best)! };
}

const mm = (iu: number) => Math.round((iu / IU_PER_MM) * 100) / 100;

export function mmBox(box: Box): { x: number; y: number; width: number; height: number } {
  return { x: mm(box.x0), y: mm(box.y0), width: mm(box.x1 - box.x0), height: mm(box.y1 - box.y0) };
}

/** What is in the region: parts, the nets their pins are on, labels, free rectangles. */
export function sheetLegend(design: Design, region: SheetRegion) {
  const { instance, box } = region;
  const parts = placedSymbols(design, instance)
    .filter((p) => intersects(symbolBox(p), box))
    .map((p) => ({
      ref: p.ref,
      value: p.symbol.value,
      x: mm(p.symbol.placement.at.x),
      y: mm(p.symbol.placement.at.y),
      rotation: p.symbol.placement.rotation,
      ...(p.symbol.placement.mirror ? { mirror: p.symbol.placement.mirror } : {}),
      box: mmBox(symbolBox(p)),
    }));
  const nets = new Set<string>();
  for (const p of placedSymbols(design, instance)) {
    for (const pin of unitPins(p.symbol, p.unit)) {
      const at = placePoint(pin.at, p.symbol.placement);
      if (at.x < box.x0 || at.x > box.x1 || at.y < box.y0 || at.y > box.y1) continue;
      const net = design.netlist.pinNets.get(`${p.ref}.${pin.number}`);
      if (net && !net.startsWith("unconnected-")) nets.add(net);
    }
  }
  const labels = instance.file.labels
    .filter((l) => l.at.x >= box.x0 && l.at.x <= box.x1 && l.at.y >= box.y0 && l.at.y <= box.y1)
    .map((l) => ({ text: l.text, kind: l.kind, x: mm(l.at.x), y: mm(l.at.y), rotation: l.rotation }));
  const page = pageArea(instance.file);
  const occupied = occupiedBoxes(instance.file);
  const free: MmRect[] = freeRectangles(
    [...occupied.map((b) => grow(b, toIU(1.27))), page.titleBlock],
    box,
    { cell: toIU(2.54), perMm: IU_PER_MM },
    drawingArea(page.area, occupied),
  );
  return {
    document: "schematic",
    sheet: instance.humanPath,
    file: instance.file.path.replace(/^.*\//, ""),
    region: mmBox(box),
    units: "mm, sheet coordinates (x right, y down), as move_symbol and add_component take them",
    parts,
    nets: [...nets].sort(),
    labels,
    freeAreas: free,
  };
}

/**
 * Where each unit of `ref` is drawn: its sheet, origin, rotation and mirror, and every field's
 * place, as KiCad draws it (a field of a symbol turned by a quarter reads at the other angle
 * than the one stored), in sheet mm.
 */
export function symbolLayout(design: Design, ref: string) {
  return placedSymbols(design)
    .filter((p) => p.ref === ref)
    .map(({ instance, symbol, unit }) => {
      const vars = symbolResolver(symbol, sheetResolver(instance.file));
      return {
        sheet: instance.humanPath,
        unit,
        x: mm(symbol.placement.at.x),
        y: mm(symbol.placement.at.y),
        rotation: symbol.placement.rotation,
        ...(symbol.placement.mirror ? { mirror: symbol.placement.mirror } : {}),
        body: mmBox(symbolBodyBox(symbol)),
        fields: symbol.fields.map((field) => {
          const at = child(field.node, "at");
          const effects = child(field.node, "effects");
          const font = effects ? child(effects, "font") : undefined;
          const size = font ? child(font, "size") : undefined;
          const hidden = flag(field.node, "hide") || (effects !== undefined && flag(effects, "hide"));
          const stored = (at && num(at, 3)) ?? 0;
          const box = fieldBox(field.node, symbol.placement, vars);
          return {
            name: field.name,
            value: field.value,
            x: (at && num(at, 1)) ?? 0,
            y: (at && num(at, 2)) ?? 0,
            reads: (stored % 180 === 0) !== (symbol.placement.rotation % 180 !== 0) ? "horizontal" : "vertical",
            size: (size && num(size, 1)) ?? 1.27,
            visible: !hidden && field.value !== "",
            ...(box ? { box: mmBox(box) } : {}),
          };
        }),
      };
    });
}
