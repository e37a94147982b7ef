/**
 * The visual half of a diff (`copperhead diff --render DIR`): for every sheet that changed and
 * for the board, the before and after plots by kicad-cli; an overview that marks every change
 * on the page; and one inset per change (inset.ts): the changed item and the 20 mm around it,
 * before and after side by side, the changed field boxed in each, as SVG and PNG.
 *
 * Files land flat in the folder, named after kicad-cli's own plot names:
 * `usb-led-Regulator.before.svg`, `….after.svg`, the overview `….diff.svg`, and per change
 * `usb-led-Regulator.R3.svg` with `….R3.png` beside it (for viewers that do not open SVG);
 * `board.before.svg` … `board.R3.svg` for the board. Nothing else in the folder is touched.
 * kicad-cli plots every sheet of a state in one run (it cannot pick pages), into a scratch
 * folder, begun before the diff is known (sheet-plots.ts); only the changed sheets are kept. The board is plotted when the change draws
 * something on it (see `boardDrawn`): a value change shows on its sheet.
 *
 * The folder may hold anything already, a checked-out repo's files included: each file is
 * replaced whole (`writeFileAtomic`), never written through a symlink found at its name, so
 * `board.diff.svg -> ../elsewhere` is replaced by the render and `elsewhere` stays as it was.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { writeFileAtomic } from "../repo/atomic-write.ts";
import { footprintToBoard, type Footprint } from "../kicad/board/model.ts";
import { boardLayers, plotBoardUnfilled } from "../kicad/board/plot.ts";
import type { KicadCli } from "../kicad/cli/kicad-cli.ts";
import { svgToPng } from "../util/png.ts";
import { IU_PER_MM, placePoint } from "../kicad/schematic/geometry.ts";
import { libUnitBox, placeBox } from "../kicad/schematic/space.ts";
import { symbolInstance, unitPins } from "../kicad/schematic/model/symbols.ts";
import { child, children, childText, head, num } from "../kicad/sexpr/index.ts";
import type { BoardDiff, DesignDiff, SheetChange } from "./diff.ts";
import { insetRegion, insetSvg, type Inset } from "./inset.ts";
import type { SheetPlots } from "./sheet-plots.ts";
import type { DesignState } from "./design-state.ts";
import {
  cropped,
  overlap,
  overviewSvg,
  readFrame,
  textBoxes,
  withoutTimestamp,
  type Mark,
  type MarkKind,
  type MmBox,
} from "./svg.ts";

/** One change up close: its SVG and the PNG beside it. */
export interface InsetRender {
  /** What changed, as the inset's title says. */
  what: string;
  svg: string;
  png?: string;
}

export interface SheetRender {
  /** Human sheet path. */
  path: string;
  status: SheetChange["status"];
  /** File names inside the render folder; `before` is absent for an added sheet, `after` for a removed one. */
  before?: string;
  after?: string;
  /** The overview: the page with every change marked. */
  diff: string;
  insets: InsetRender[];
}

export interface BoardRender {
  before?: string;
  after?: string;
  diff: string;
  insets: InsetRender[];
}

export interface DiffRenders {
  sheets: SheetRender[];
  board?: BoardRender;
  /** What could not be plotted, and kicad-cli's reason. */
  skipped: string[];
}

/** Insets per page at most; past them, the overview still marks every change. */
const MAX_INSETS = 12;

/** Renders `diff` into `outDir` from `sheetPlots`, the states' sheet plots (sheet-plots.ts). */
export async function renderDiff(
  diff: DesignDiff,
  before: DesignState,
  after: DesignState,
  outDir: string,
  cli: KicadCli,
  sheetPlots: SheetPlots,
): Promise<DiffRenders> {
  mkdirSync(outDir, { recursive: true });
  const out: DiffRenders = { sheets: [], skipped: [] };
  const scratch = mkdtempSync(join(tmpdir(), "copperhead-render-"));
  try {
    const sheetsNeeded = diff.sheets.length > 0;
    const boardNeeded = diff.board !== null && boardDrawn(diff.board);
    const [platesBefore, platesAfter, boardBefore, boardAfter] = await Promise.all([
      sheetsNeeded ? sheetPlots.of(before, "before", out.skipped) : new Map<string, string>(),
      sheetsNeeded ? sheetPlots.of(after, "after", out.skipped) : new Map<string, string>(),
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
      const entry: SheetRender = {
        path: sheet.path,
        status: sheet.status,
        ...(beforeSvg ? { before: `${name}.before.svg` } : {}),
        ...(afterSvg ? { after: `${name}.after.svg` } : {}),
        diff: `${name}.diff.svg`,
        insets: [],
      };
      if (beforeSvg) writeFileAtomic(join(outDir, entry.before!), beforeSvg);
      if (afterSvg) writeFileAtomic(join(outDir, entry.after!), afterSvg);
      const changes = sheetChanges(diff, before, after, sheet.path, { before: beforeSvg, after: afterSvg });
      const plot = (afterSvg ?? beforeSvg)!;
      writeFileAtomic(
        join(outDir, entry.diff),
        overviewSvg({ plot, marks: overviewMarks(changes), title: `${sheet.path} — what changed` }),
      );
      const [x, y, w, h] = readFrame(plot).viewBox;
      entry.insets = await writeInsets(
        changes,
        { x0: x, y0: y, x1: x + w, y1: y + h },
        { before: beforeSvg, after: afterSvg },
        outDir,
        name,
        out.skipped,
      );
      out.sheets.push(entry);
    }
    if (boardNeeded && (boardBefore || boardAfter)) {
      const view = boardView(before, after);
      const read = (file: string | undefined) =>
        file ? cropped(withoutTimestamp(readFileSync(file, "utf8")), view) : undefined;
      const beforeSvg = read(boardBefore);
      const afterSvg = read(boardAfter);
      const entry: BoardRender = {
        ...(beforeSvg ? { before: "board.before.svg" } : {}),
        ...(afterSvg ? { after: "board.after.svg" } : {}),
        diff: "board.diff.svg",
        insets: [],
      };
      if (beforeSvg) writeFileAtomic(join(outDir, entry.before!), beforeSvg);
      if (afterSvg) writeFileAtomic(join(outDir, entry.after!), afterSvg);
      const changes = boardChanges(diff, before, after);
      writeFileAtomic(
        join(outDir, entry.diff),
        overviewSvg({
          plot: (afterSvg ?? beforeSvg)!,
          marks: overviewMarks(changes),
          view,
          title: "board — what changed",
        }),
      );
      entry.insets = await writeInsets(
        changes,
        view,
        { before: beforeSvg, after: afterSvg },
        outDir,
        "board",
        out.skipped,
      );
      out.board = entry;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}

/**
 * Whether a board change draws anything the board plot shows: footprints added, removed,
 * moved or swapped, pads on other nets (a renamed net's pads are marked), copper, layers, the
 * outline. A value, field or attribute change of a footprint draws nothing there (values sit
 * on fabrication layers) and shows on its sheet; zones are plotted unfilled, so zone changes
 * are in the semantic diff alone.
 */
function boardDrawn(board: BoardDiff): boolean {
  return (
    board.status !== "changed" ||
    board.footprints.some((f) => f.status !== "changed") ||
    board.pads.length + board.tracks.length + board.layers.length > 0 ||
    board.nets.some((n) => n.status === "renamed") ||
    board.outline !== null
  );
}

/** One change on a page: what it is, where it is, and what each state's panel marks. */
interface Change {
  /** Short name for its files: a reference, a pin, a net. */
  key: string;
  title: string;
  /** The changed item in either state, page millimetres. */
  focus: MmBox;
  before: Mark[];
  after: Mark[];
  /** Its marks on the overview. */
  overview: Mark[];
}

/**
 * Pixels per millimetre of an inset's PNG (KiCad's 1.27 mm text comes out 13 px high), and the
 * narrowest and widest PNG: rasterising in-process costs in proportion to the pixels.
 */
const INSET_PX_PER_MM = 10;
const INSET_MIN_PX = 800;
const INSET_MAX_PX = 1200;

/**
 * Writes one inset per change (changes whose regions overlap share one), up to `MAX_INSETS`,
 * each as SVG and PNG; a PNG that cannot be made is noted in `skipped`.
 */
async function writeInsets(
  changes: Change[],
  page: MmBox,
  plots: { before?: string; after?: string },
  outDir: string,
  name: string,
  skipped: string[],
): Promise<InsetRender[]> {
  const renders: InsetRender[] = [];
  const used = new Set<string>();
  for (const group of groupChanges(changes, page).slice(0, MAX_INSETS)) {
    const focus = group.map((c) => c.focus).reduce(union);
    const inset: Inset = {
      title: group.map((c) => c.title).join("; "),
      region: insetRegion(focus, page),
      ...(plots.before ? { before: { plot: plots.before, marks: group.flatMap((c) => c.before) } } : {}),
      ...(plots.after ? { after: { plot: plots.after, marks: group.flatMap((c) => c.after) } } : {}),
    };
    const { svg, width } = insetSvg(inset);
    let stem = `${name}.${fileSafe(group[0]!.key)}`;
    for (let n = 2; used.has(stem); n++) stem = `${name}.${fileSafe(group[0]!.key)}-${n}`;
    used.add(stem);
    const render: InsetRender = { what: inset.title, svg: `${stem}.svg` };
    writeFileAtomic(join(outDir, render.svg), svg);
    try {
      const png = await svgToPng(svg, {
        width: Math.round(Math.min(INSET_MAX_PX, Math.max(INSET_MIN_PX, width * INSET_PX_PER_MM))),
      });
      writeFileAtomic(join(outDir, (render.png = `${stem}.png`)), png.png);
    } catch (err) {
      skipped.push(`${stem}.png: ${err instanceof Error ? err.message : String(err)}`);
    }
    renders.push(render);
  }
  return renders;
}

/** Changes whose insets would overlap, together, in page order (top to bottom, left to right). */
function groupChanges(changes: Change[], page: MmBox): Change[][] {
  const groups: Change[][] = [];
  for (const change of [...changes].sort((a, b) => a.focus.y0 - b.focus.y0 || a.focus.x0 - b.focus.x0)) {
    const region = insetRegion(change.focus, page);
    const group = groups.find((g) => overlap(insetRegion(g.map((c) => c.focus).reduce(union), page), region));
    if (group) group.push(change);
    else groups.push([change]);
  }
  return groups;
}

function overviewMarks(changes: Change[]): Mark[] {
  return changes.flatMap((c) => c.overview);
}

/** A file-name part from a reference or net name: letters, digits and `+-_.` only. */
function fileSafe(key: string): string {
  return (
    key
      .replace(/[^A-Za-z0-9+_.-]+/g, "_")
      .replace(/^\.+/, "_")
      .slice(0, 60) || "change"
  );
}

function union(a: MmBox, b: MmBox): MmBox {
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

/**
 * Plots the board's copper, silkscreen and outline, without copper pours (see
 * `plotBoardUnfilled`): a filled plane covers the same tracks and pads in both states and leaves
 * nothing to compare; zone changes are in the semantic diff.
 */
async function plotBoard(
  state: DesignState,
  file: string,
  cli: KicadCli,
  skipped: string[],
  label: string,
): Promise<string | undefined> {
  if (!state.project?.board || !state.board) return undefined;
  const names = boardLayers(state.board);
  const layers = [...names]
    .filter((n) => n.endsWith(".Cu"))
    .concat(["F.SilkS", "B.SilkS", "Edge.Cuts"].filter((n) => names.has(n)));
  try {
    return await plotBoardUnfilled(state.project.board, file, cli, layers);
  } catch (err) {
    skipped.push(`${label} board: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** How far from its symbol a field's text may be drawn and still be taken for it, mm. */
const FIELD_REACH = 15;

/**
 * The changes on one sheet: every part the diff names that has a unit here (in the state that
 * shows it: a removed part where it was, everything else where it is now, a moved one in both)
 * and every pin here that moved to another net. A changed field is boxed where each plot draws
 * its old and its new text; a field drawn nowhere (hidden) boxes the symbol instead.
 */
function sheetChanges(
  diff: DesignDiff,
  before: DesignState,
  after: DesignState,
  sheet: string,
  plots: { before?: string; after?: string },
): Change[] {
  const parts = new Map(diff.components.map((c) => [c.ref, c]));
  const placed = new Map<string, { before: MmBox[]; after: MmBox[] }>();
  const changes: Change[] = [];
  const movedPins = new Map(diff.pins.map((p) => [p.member, p]));
  for (const [state, which] of [
    [before, "before"],
    [after, "after"],
  ] as const) {
    for (const instance of state.schematic?.instances ?? []) {
      if (instance.humanPath !== sheet) continue;
      for (const symbol of instance.file.symbols) {
        const { reference, unit } = symbolInstance(symbol, instance.path, state.schematic!.projectName);
        if (parts.has(reference)) {
          const lib = symbol.lib ? libUnitBox(symbol.lib.node, unit, symbol.bodyStyle) : undefined;
          const box = lib
            ? placeBox(lib, symbol.placement)
            : {
                x0: symbol.placement.at.x,
                y0: symbol.placement.at.y,
                x1: symbol.placement.at.x,
                y1: symbol.placement.at.y,
              };
          const boxes = placed.get(reference) ?? { before: [], after: [] };
          boxes[which].push(toMm(box));
          placed.set(reference, boxes);
        }
        if (which !== "after") continue;
        for (const pin of unitPins(symbol, unit)) {
          const move = movedPins.get(`${reference}.${pin.number}`);
          if (!move) continue;
          const at = placePoint(pin.at, symbol.placement);
          const box = toMm({ x0: at.x, y0: at.y, x1: at.x, y1: at.y });
          const title = `${move.member}: ${move.before} → ${move.after}`;
          changes.push({
            key: move.member,
            title,
            focus: box,
            before: [{ kind: "changed", label: "", box }],
            after: [{ kind: "changed", label: "", box }],
            overview: [{ kind: "changed", label: title, box }],
          });
        }
      }
    }
  }
  for (const [ref, boxes] of placed) {
    const part = parts.get(ref)!;
    const status = part.status;
    const shown = status === "removed" ? boxes.before : boxes.after;
    if (shown.length === 0) continue;
    const kind: MarkKind =
      status === "added" ? "added" : status === "removed" ? "removed" : status === "moved" ? "moved" : "changed";
    const beforeMarks: Mark[] = [];
    const afterMarks: Mark[] = [];
    if (status === "removed") beforeMarks.push(...boxes.before.map((box) => ({ kind, label: "", box })));
    else if (status === "added") afterMarks.push(...boxes.after.map((box) => ({ kind, label: "", box })));
    else {
      let boxed = false;
      for (const f of part.changes) {
        if (f.before === null || f.after === null) continue;
        const old = plots.before ? nearest(textBoxes(plots.before, f.before), boxes.before) : undefined;
        const now = plots.after ? nearest(textBoxes(plots.after, f.after), boxes.after) : undefined;
        if (old) beforeMarks.push({ kind: "removed", label: "", box: old });
        if (now) afterMarks.push({ kind: "added", label: "", box: now });
        boxed ||= Boolean(old || now);
      }
      // A move, or a change no field draws (an attribute, a hidden field): the symbol itself.
      if (status === "moved" || part.moves.length > 0 || !boxed) {
        beforeMarks.push(...boxes.before.map((box) => ({ kind, label: "", box })));
        afterMarks.push(...boxes.after.map((box) => ({ kind, label: "", box })));
      }
    }
    const focus = [
      ...boxes.before,
      ...boxes.after,
      ...beforeMarks.map((m) => m.box),
      ...afterMarks.map((m) => m.box),
    ].reduce(union);
    changes.push({
      key: ref,
      title: partTitle(part),
      focus,
      before: beforeMarks,
      after: afterMarks,
      overview: [{ kind, label: ref, box: shown.reduce(union) }],
    });
  }
  return changes;
}

/** `R3 Value 100k → 4k7`, `R4 added (10k)`, `D1 moved`. */
function partTitle(part: DesignDiff["components"][number]): string {
  if (part.status === "added") return `${part.ref} added${part.value ? ` (${part.value})` : ""}`;
  if (part.status === "removed") return `${part.ref} removed`;
  if (part.status === "moved") return `${part.ref} moved`;
  const show = (v: string | null) => (v === null ? "(none)" : v === "" ? '""' : v);
  const fields = part.changes.map((f) => `${f.field} ${show(f.before)} → ${show(f.after)}`);
  return `${part.ref} ${[...fields, ...(part.moves.length ? ["moved"] : [])].join(", ")}`;
}

/** Of `boxes`, the one nearest to any of `near`, if it is within `FIELD_REACH`. */
function nearest(boxes: MmBox[], near: MmBox[]): MmBox | undefined {
  let best: { box: MmBox; d: number } | undefined;
  for (const box of boxes) {
    for (const n of near) {
      const d = Math.hypot(Math.max(0, n.x0 - box.x1, box.x0 - n.x1), Math.max(0, n.y0 - box.y1, box.y0 - n.y1));
      if (d <= FIELD_REACH && (!best || d < best.d)) best = { box, d };
    }
  }
  return best?.box;
}

function toMm(box: { x0: number; y0: number; x1: number; y1: number }): MmBox {
  return { x0: box.x0 / IU_PER_MM, y0: box.y0 / IU_PER_MM, x1: box.x1 / IU_PER_MM, y1: box.y1 / IU_PER_MM };
}

/**
 * The changes on the board: each footprint added, removed, moved or swapped (where it was and
 * where it is), and the pads whose net changed, one change per footprint; a renamed net (which
 * changes no copper) on the pads of the first footprint that carries it.
 */
function boardChanges(diff: DesignDiff, before: DesignState, after: DesignState): Change[] {
  const changes: Change[] = [];
  for (const change of diff.board?.footprints ?? []) {
    if (change.status === "changed") continue;
    const was = change.status === "added" ? undefined : before.board?.footprint(change.ref);
    const is = change.status === "removed" ? undefined : after.board?.footprint(change.ref);
    if (!was && !is) continue;
    const kind: MarkKind =
      change.status === "added" || change.status === "removed"
        ? change.status
        : change.status === "moved"
          ? "moved"
          : "changed";
    const title =
      change.status === "swapped"
        ? `${change.ref}: ${change.swappedFrom} → ${change.libId}`
        : `${change.ref} ${change.status}`;
    const beforeMarks: Mark[] = was ? [{ kind, label: "", box: footprintBox(was) }] : [];
    const afterMarks: Mark[] = is ? [{ kind, label: "", box: footprintBox(is) }] : [];
    const focus = [...beforeMarks, ...afterMarks].map((m) => m.box).reduce(union);
    changes.push({
      key: change.ref,
      title,
      focus,
      before: beforeMarks,
      after: afterMarks,
      overview: [{ kind, label: title, box: (afterMarks[0] ?? beforeMarks[0])!.box }],
    });
  }
  return [...changes, ...padChanges(diff, after)];
}

/**
 * Pads on another net, one change per footprint. A renamed net changes no copper: its inset
 * shows the pads of the first footprint that carries it, and the overview boxes every pad on
 * it, labelled once.
 */
function padChanges(diff: DesignDiff, after: DesignState): Change[] {
  const board = after.board;
  if (!board || !diff.board) return [];
  const moves = new Map(diff.board.pads.map((m) => [m.member, `${m.member}: ${m.before} → ${m.after}`]));
  const renamed = new Map(
    diff.board.nets.filter((n) => n.status === "renamed").map((n) => [n.name, `${n.before} → ${n.name}`]),
  );
  const changes: Change[] = [];
  /** The change that shows each renamed net, by its title. */
  const renames = new Map<string, Change>();
  for (const fp of board.footprints()) {
    const titles = new Set<string>();
    const boxes: MmBox[] = [];
    for (const pad of fp.pads) {
      const move = moves.get(`${fp.ref}.${pad.number}`);
      const rename = pad.net ? renamed.get(pad.net.name) : undefined;
      const box = padBox(fp, pad.node);
      if (!move && rename && renames.has(rename)) {
        renames.get(rename)!.overview.push({ kind: "changed", label: "", box });
        continue;
      }
      if (!move && !rename) continue;
      titles.add((move ?? rename)!);
      boxes.push(box);
    }
    if (boxes.length === 0) continue;
    const marks: Mark[] = boxes.map((box) => ({ kind: "changed", label: "", box }));
    const title = [...titles].join(", ");
    const change: Change = {
      key: `${fp.ref}-pads`,
      title,
      focus: boxes.reduce(union),
      before: marks,
      after: marks,
      overview: marks.map((m, i) => ({ ...m, label: i === 0 ? title : "" })),
    };
    const renameTitles = new Set(renamed.values());
    for (const t of titles) if (renameTitles.has(t)) renames.set(t, change);
    changes.push(change);
  }
  return changes;
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
    if (
      item.type !== "list" ||
      !/^fp_(line|rect|poly|circle|arc)$/.test(head(item) ?? "") ||
      !/CrtYd$/.test(childText(item, "layer") ?? "")
    )
      continue;
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
