/**
 * The visual half of a diff (`copperhead diff --render DIR`): for every sheet that changed and
 * for the board, the before and after plots by kicad-cli, and one image that shows what changed
 * (see svg.ts) with boxes around the parts the semantic diff names.
 *
 * Files land flat in the folder, named after kicad-cli's own plot names:
 * `usb-led-Regulator.before.svg`, `….after.svg`, `….diff.svg` with `….diff.png` beside it (the
 * same image rasterised, for viewers that do not open SVG), and `board.before.svg` … for the
 * board. Nothing else in the folder is touched. kicad-cli plots every sheet of a state in one
 * run (it cannot pick pages), into a scratch folder; only the changed sheets are kept.
 *
 * The folder may hold anything already, a checked-out repo's files included: each file is
 * replaced whole (`writeFileAtomic`), never written through a symlink found at its name, so
 * `board.diff.svg -> ../elsewhere` is replaced by the render and `elsewhere` stays as it was.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { writeFileAtomic } from "../repo/atomic-write.ts";
import { footprintToBoard, type Footprint } from "../kicad/board/view.ts";
import { boardLayers, plotBoardUnfilled } from "../kicad/board/plot.ts";
import { exportSvg, type KicadCli } from "../kicad/cli/kicad-cli.ts";
import { svgToPng } from "../util/png.ts";
import { IU_PER_MM, placePoint } from "../kicad/schematic/geometry.ts";
import { libUnitBox, placeBox } from "../kicad/schematic/space.ts";
import { symbolInstance, unitPins } from "../kicad/schematic/view.ts";
import { child, children, childText, head, num } from "../kicad/sexpr/index.ts";
import type { DesignDiff, SheetChange } from "./diff.ts";
import type { DesignState } from "./state.ts";
import { cropped, highlightSvg, withoutTimestamp, type Mark, type MarkKind, type MmBox } from "./svg.ts";

export interface SheetRender {
  /** Human sheet path. */
  path: string;
  status: SheetChange["status"];
  /** File names inside the render folder; `before` is absent for an added sheet, `after` for a removed one. */
  before?: string;
  after?: string;
  diff: string;
  /** The what-changed image rasterised, beside its SVG. */
  png?: string;
}

export interface BoardRender {
  before?: string;
  after?: string;
  diff: string;
  png?: string;
}

export interface DiffRenders {
  sheets: SheetRender[];
  board?: BoardRender;
  /** What could not be plotted, and kicad-cli's reason. */
  skipped: string[];
}

export async function renderDiff(diff: DesignDiff, before: DesignState, after: DesignState, outDir: string, cli: KicadCli): Promise<DiffRenders> {
  mkdirSync(outDir, { recursive: true });
  const out: DiffRenders = { sheets: [], skipped: [] };
  const scratch = mkdtempSync(join(tmpdir(), "copperhead-render-"));
  try {
    const sheetsNeeded = diff.sheets.length > 0;
    const boardNeeded = diff.board !== null;
    const [platesBefore, platesAfter, boardBefore, boardAfter] = await Promise.all([
      sheetsNeeded ? plotSheets(before, join(scratch, "before"), cli, out.skipped, "before") : new Map<string, string>(),
      sheetsNeeded ? plotSheets(after, join(scratch, "after"), cli, out.skipped, "after") : new Map<string, string>(),
      boardNeeded ? plotBoard(before, join(scratch, "board-before.svg"), cli, out.skipped, "before") : undefined,
      boardNeeded ? plotBoard(after, join(scratch, "board-after.svg"), cli, out.skipped, "after") : undefined,
    ]);
    for (const sheet of diff.sheets) {
      const a = platesBefore.get(sheet.path);
      const b = platesAfter.get(sheet.path);
      if (!a && !b) continue;
      const name = basename(b ?? a!, ".svg");
      const beforeSvg = a ? withoutTimestamp(readFileSync(a, "utf8")) : undefined;
      const afterSvg = b ? withoutTimestamp(readFileSync(b, "utf8")) : undefined;
      const entry: SheetRender = { path: sheet.path, status: sheet.status, diff: `${name}.diff.svg` };
      if (beforeSvg) writeFileAtomic(join(outDir, (entry.before = `${name}.before.svg`)), beforeSvg);
      if (afterSvg) writeFileAtomic(join(outDir, (entry.after = `${name}.after.svg`)), afterSvg);
      const marks = sheetMarks(diff, before, after, sheet.path);
      const svg = highlightSvg({ before: beforeSvg, after: afterSvg, marks, title: `${sheet.path} — what changed` });
      writeFileAtomic(join(outDir, entry.diff), svg);
      entry.png = await writePng(svg, outDir, `${name}.diff.png`, out.skipped);
      out.sheets.push(entry);
    }
    if (boardNeeded && (boardBefore || boardAfter)) {
      const view = boardView(before, after);
      const read = (file: string | undefined) => (file ? cropped(withoutTimestamp(readFileSync(file, "utf8")), view) : undefined);
      const beforeSvg = read(boardBefore);
      const afterSvg = read(boardAfter);
      const entry: BoardRender = { diff: "board.diff.svg" };
      if (beforeSvg) writeFileAtomic(join(outDir, (entry.before = "board.before.svg")), beforeSvg);
      if (afterSvg) writeFileAtomic(join(outDir, (entry.after = "board.after.svg")), afterSvg);
      const svg = highlightSvg({ before: beforeSvg, after: afterSvg, marks: boardMarks(diff, before, after), view, title: "board — what changed" });
      writeFileAtomic(join(outDir, entry.diff), svg);
      entry.png = await writePng(svg, outDir, "board.diff.png", out.skipped);
      out.board = entry;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}

/** Width of the PNG beside each what-changed SVG: enough to read a sheet's references. */
const PNG_WIDTH = 2400;

/**
 * The what-changed image as a PNG too, for viewers that do not open SVG (a pull request's page,
 * a mail client); undefined, with the reason in `skipped`, when it cannot be rasterised.
 */
async function writePng(svg: string, outDir: string, name: string, skipped: string[]): Promise<string | undefined> {
  try {
    writeFileAtomic(join(outDir, name), (await svgToPng(svg, { width: PNG_WIDTH })).png);
    return name;
  } catch (err) {
    skipped.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** Sheet path → its plot in the scratch folder, matched by kicad-cli's plot order (page order). */
async function plotSheets(state: DesignState, dir: string, cli: KicadCli, skipped: string[], label: string): Promise<Map<string, string>> {
  const plots = new Map<string, string>();
  if (!state.project) return plots;
  try {
    const files = await exportSvg(state.project.schematic, dir, { cli, noBackground: true });
    if (files.length !== state.sheets.length) {
      skipped.push(`${label}: kicad-cli plotted ${files.length} sheets, the design has ${state.sheets.length}`);
      return plots;
    }
    state.sheets.forEach((sheet, i) => plots.set(sheet.path, files[i]!));
  } catch (err) {
    skipped.push(`${label} sheets: ${err instanceof Error ? err.message : String(err)}`);
  }
  return plots;
}

/**
 * Plots the board's copper, silkscreen and outline, without copper pours (see
 * `plotBoardUnfilled`): a filled plane covers the same tracks and pads in both states and leaves
 * nothing to compare; zone changes are in the semantic diff.
 */
async function plotBoard(state: DesignState, file: string, cli: KicadCli, skipped: string[], label: string): Promise<string | undefined> {
  if (!state.project?.board || !state.board) return undefined;
  const names = boardLayers(state.board);
  const layers = [...names].filter((n) => n.endsWith(".Cu")).concat(["F.SilkS", "B.SilkS", "Edge.Cuts"].filter((n) => names.has(n)));
  try {
    return await plotBoardUnfilled(state.project.board, file, cli, layers);
  } catch (err) {
    skipped.push(`${label} board: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/**
 * Boxes around the parts on one sheet that the diff names, each drawn in the state that shows
 * it (a removed part where it was, everything else where it is now), and a dot on every pin
 * that moved to another net.
 */
function sheetMarks(diff: DesignDiff, before: DesignState, after: DesignState, sheet: string): Mark[] {
  const marks: Mark[] = [];
  const kinds = new Map<string, { kind: MarkKind; label: string }>();
  for (const c of diff.components) {
    const kind: MarkKind = c.status === "added" ? "added" : c.status === "removed" ? "removed" : c.status === "moved" ? "moved" : "changed";
    const what = c.status === "changed" ? `: ${c.changes.map((f) => f.field).join(", ")}` : c.status === "moved" ? " moved" : c.status === "added" ? " added" : " removed";
    kinds.set(c.ref, { kind, label: `${c.ref}${what}` });
  }
  const movedPins = new Map(diff.pins.map((p) => [p.member, p]));
  for (const [state, which] of [
    [before, "before"],
    [after, "after"],
  ] as const) {
    for (const instance of state.schematic?.instances ?? []) {
      if (instance.humanPath !== sheet) continue;
      for (const symbol of instance.file.symbols) {
        const { reference, unit } = symbolInstance(symbol, instance.path, state.schematic!.projectName);
        const mark = kinds.get(reference);
        if (mark && (mark.kind === "removed") === (which === "before")) {
          const lib = symbol.lib ? libUnitBox(symbol.lib.node, unit, symbol.bodyStyle) : undefined;
          const box = lib ? placeBox(lib, symbol.placement) : { x0: symbol.placement.at.x, y0: symbol.placement.at.y, x1: symbol.placement.at.x, y1: symbol.placement.at.y };
          marks.push({ kind: mark.kind, label: mark.label, box: toMm(box) });
        }
        if (which !== "after") continue;
        for (const pin of unitPins(symbol, unit)) {
          const move = movedPins.get(`${reference}.${pin.number}`);
          if (!move) continue;
          const at = placePoint(pin.at, symbol.placement);
          marks.push({ kind: "changed", label: `${move.member}: ${move.before} → ${move.after}`, box: toMm({ x0: at.x, y0: at.y, x1: at.x, y1: at.y }) });
        }
      }
    }
  }
  return marks;
}

function toMm(box: { x0: number; y0: number; x1: number; y1: number }): MmBox {
  return { x0: box.x0 / IU_PER_MM, y0: box.y0 / IU_PER_MM, x1: box.x1 / IU_PER_MM, y1: box.y1 / IU_PER_MM };
}

/** Boxes around the footprints the diff names, in the state that shows them. */
function boardMarks(diff: DesignDiff, before: DesignState, after: DesignState): Mark[] {
  const marks: Mark[] = [];
  for (const change of diff.board?.footprints ?? []) {
    const state = change.status === "removed" ? before : after;
    const fp = state.board?.footprint(change.ref);
    if (!fp) continue;
    const kind: MarkKind = change.status === "added" || change.status === "removed" ? change.status : change.status === "moved" ? "moved" : "changed";
    const label = change.status === "swapped" ? `${change.ref}: ${change.swappedFrom} → ${change.libId}` : `${change.ref} ${change.status}`;
    marks.push({ kind, label, box: footprintBox(fp) });
  }
  return [...marks, ...padMarks(diff, after)];
}

/**
 * A box on every pad whose net changed: pads moved to another net, and the pads of a renamed
 * net (a rename changes no copper, so without these it would show nothing). One label per net
 * change, on its first pad; the other pads are boxes alone.
 */
function padMarks(diff: DesignDiff, after: DesignState): Mark[] {
  const board = after.board;
  if (!board || !diff.board) return [];
  const changes = new Map<string, string>();
  for (const move of diff.board.pads) changes.set(move.member, `${move.member}: ${move.before} → ${move.after}`);
  const renamed = new Map(diff.board.nets.filter((n) => n.status === "renamed").map((n) => [n.name, `${n.before} → ${n.name}`]));
  const marks: Mark[] = [];
  const labelled = new Set<string>();
  for (const fp of board.footprints()) {
    for (const pad of fp.pads) {
      const label = changes.get(`${fp.ref}.${pad.number}`) ?? (pad.net ? renamed.get(pad.net.name) : undefined);
      if (!label) continue;
      const box = padBox(fp, pad.node);
      marks.push({ kind: "changed", label: labelled.has(label) ? "" : label, box });
      labelled.add(label);
    }
  }
  return marks;
}

/** One pad's box in board millimetres. */
function padBox(fp: Footprint, node: Footprint["pads"][number]["node"]): MmBox {
  const at = child(node, "at");
  const size = child(node, "size");
  const centre = footprintToBoard({ x: num(at ?? node, 1) ?? 0, y: num(at ?? node, 2) ?? 0 }, fp.at);
  const r = Math.max(num(size ?? node, 1) ?? 0, num(size ?? node, 2) ?? 0) / 2;
  return { x0: centre.x - r, y0: centre.y - r, x1: centre.x + r, y1: centre.y + r };
}

/** A footprint's pads (and courtyard, when it has one) in board millimetres. */
function footprintBox(fp: Footprint): MmBox {
  const box = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
  const add = (x: number, y: number) => {
    const p = footprintToBoard({ x, y }, fp.at);
    box.x0 = Math.min(box.x0, p.x);
    box.y0 = Math.min(box.y0, p.y);
    box.x1 = Math.max(box.x1, p.x);
    box.y1 = Math.max(box.y1, p.y);
  };
  for (const pad of fp.pads) {
    const at = child(pad.node, "at");
    const size = child(pad.node, "size");
    const [x, y] = [num(at ?? pad.node, 1) ?? 0, num(at ?? pad.node, 2) ?? 0];
    const [w, h] = [(num(size ?? pad.node, 1) ?? 0) / 2, (num(size ?? pad.node, 2) ?? 0) / 2];
    add(x - w, y - h);
    add(x + w, y + h);
  }
  for (const item of fp.node.items) {
    if (item.type !== "list" || !/^fp_(line|rect|poly|circle|arc)$/.test(head(item) ?? "") || !/CrtYd$/.test(childText(item, "layer") ?? "")) continue;
    for (const name of ["start", "end", "mid", "center"]) {
      const p = child(item, name);
      if (p) add(num(p, 1) ?? 0, num(p, 2) ?? 0);
    }
    for (const xy of children(child(item, "pts") ?? item, "xy")) add(num(xy, 1) ?? 0, num(xy, 2) ?? 0);
  }
  if (!Number.isFinite(box.x0)) return { x0: fp.at.x - 1, y0: fp.at.y - 1, x1: fp.at.x + 1, y1: fp.at.y + 1 };
  return box;
}

/** The union of both boards' outlines, with a margin: what the board images show. */
function boardView(before: DesignState, after: DesignState): MmBox {
  const boxes = [before.board?.edgeCutsBBox(), after.board?.edgeCutsBBox()].filter((b) => b !== undefined);
  if (boxes.length === 0) return { x0: 0, y0: 0, x1: 297, y1: 210 };
  const margin = 5;
  return {
    x0: Math.min(...boxes.map((b) => b.minX)) - margin,
    y0: Math.min(...boxes.map((b) => b.minY)) - margin,
    x1: Math.max(...boxes.map((b) => b.maxX)) + margin,
    y1: Math.max(...boxes.map((b) => b.maxY)) + margin,
  };
}
