/**
 * SVG plumbing for the visual diff: reading the frame of a kicad-cli plot, finding what it
 * draws where, cutting a region out of it, and composing the overview of a changed page.
 *
 * kicad-cli plots in millimetres with the page origin at the top left (sheets) or the board
 * origin (boards), which is also how the files store coordinates, so marks computed from the
 * model (boxes around changed parts) land on the drawing without any transform. It draws all
 * text as strokes, each string in a `<g class="stroked-text"><desc>text</desc>…</g>` group, so
 * the place where a field's value is drawn can be read off the plot itself.
 */

export interface Frame {
  width: number;
  height: number;
  viewBox: [number, number, number, number];
}

export interface MmBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export type MarkKind = "added" | "removed" | "changed" | "moved";

export interface Mark {
  kind: MarkKind;
  box: MmBox;
  label: string;
}

export const MARK_COLOURS: Record<MarkKind, string> = {
  removed: "#d62728",
  added: "#2ca02c",
  changed: "#ff7f0e",
  moved: "#1f77b4",
};

/** The plot's page, from the root element's `viewBox` (kicad-cli always writes one, in mm). */
export function readFrame(svg: string): Frame {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? "";
  const box = /viewBox="([^"]+)"/
    .exec(root)?.[1]
    ?.trim()
    .split(/[\s,]+/)
    .map(Number);
  if (!box || box.length !== 4 || box.some((n) => !Number.isFinite(n)))
    return { width: 297, height: 210, viewBox: [0, 0, 297, 210] };
  return { width: box[2]!, height: box[3]!, viewBox: box as Frame["viewBox"] };
}

/** What is inside the root element, without the plot's title and description. */
function body(svg: string): string {
  const start = svg.search(/<svg\b/);
  const open = svg.indexOf(">", start);
  const close = svg.lastIndexOf("</svg>");
  if (start < 0 || open < 0 || close < open) return "";
  return svg
    .slice(open + 1, close)
    .replace(/<title>[\s\S]*?<\/title>/, "")
    .replace(/<desc>[\s\S]*?<\/desc>/, "");
}

/**
 * kicad-cli stamps each plot with the time it was made; dropping the stamp makes the same
 * design plot to the same bytes, so renders of an unchanged sheet compare equal.
 */
export function withoutTimestamp(svg: string): string {
  return svg.replace(/(<title>[^<]*?) date \d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d ?(<\/title>)/, "$1$2");
}

/** The same plot showing only `box` (mm), e.g. a board cut out of its page. */
export function cropped(svg: string, box: MmBox): string {
  const w = fmt(box.x1 - box.x0);
  const h = fmt(box.y1 - box.y0);
  return svg.replace(/<svg\b[^>]*>/, (root) =>
    root
      .replace(/\swidth="[^"]*"/, ` width="${w}mm"`)
      .replace(/\sheight="[^"]*"/, ` height="${h}mm"`)
      .replace(/\sviewBox="[^"]*"/, ` viewBox="${fmt(box.x0)} ${fmt(box.y0)} ${w} ${h}"`),
  );
}

/**
 * The namespace declarations of a plot's root other than SVG's own (kicad-cli declares
 * `xmlns:xlink`, which the images a sheet embeds use): a composed file that carries the plot's
 * body must declare them too, or it is not well-formed XML.
 */
function namespaces(svg: string | undefined): Map<string, string> {
  const root = svg ? (/<svg\b[^>]*>/.exec(svg)?.[0] ?? "") : "";
  return new Map([...root.matchAll(/\sxmlns:([A-Za-z_][\w.-]*)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * The overview of a changed page: the plot of one state (the after state, or the before state
 * of a removed page) with `marks` drawn on top and a legend, showing `view` (default: the page).
 * It locates the changes; the insets (inset.ts) show each one before and after, side by side,
 * so old and new text are never drawn over each other.
 */
export function overviewSvg(options: { plot: string; marks: Mark[]; view?: MmBox; title: string }): string {
  const frame = readFrame(options.plot);
  const [vx, vy, vw, vh] = options.view
    ? [options.view.x0, options.view.y0, options.view.x1 - options.view.x0, options.view.y1 - options.view.y0]
    : frame.viewBox;
  const unit = Math.max(vw, vh) / 300;
  const occupied = new Occupancy();
  for (const box of drawnBoxes(options.plot)) occupied.add(box);
  const marks = markSvgs(options.marks, unit, occupied).join("\n");
  const legend = legendSvg(legendSpot(occupied, options.marks, [vx, vy, vw, vh], unit), unit);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg"${xmlnsOf([options.plot])} version="1.1" width="${fmt(vw)}mm" height="${fmt(vh)}mm" viewBox="${fmt(vx)} ${fmt(vy)} ${fmt(vw)} ${fmt(vh)}">`,
    `<title>${escapeXml(options.title)}</title>`,
    `<rect x="${fmt(vx)}" y="${fmt(vy)}" width="${fmt(vw)}" height="${fmt(vh)}" fill="#ffffff"/>`,
    nestedPlot(options.plot),
    marks,
    legend,
    `</svg>`,
    "",
  ].join("\n");
}

/** The namespace declarations composed files need for the plots they carry, as attributes. */
export function xmlnsOf(plots: (string | undefined)[]): string {
  const declared = new Map(plots.flatMap((plot) => [...namespaces(plot)]));
  declared.delete("svg");
  return [...declared].map(([prefix, uri]) => ` xmlns:${prefix}="${escapeXml(uri)}"`).join("");
}

/**
 * A plot as a nested `<svg>` in its own page coordinates, optionally showing `box` only at
 * `place`; `extra` (marks) is drawn over it in the same coordinates.
 */
export function nestedPlot(
  plot: string,
  place?: { x: number; y: number; width: number; height: number; box: MmBox },
  extra = "",
): string {
  const frame = readFrame(plot);
  const [x, y, w, h] = frame.viewBox;
  const viewBox = place
    ? [place.box.x0, place.box.y0, place.box.x1 - place.box.x0, place.box.y1 - place.box.y0]
    : frame.viewBox;
  const at = place ? [place.x, place.y, place.width, place.height] : [x, y, w, h];
  return `<svg x="${fmt(at[0]!)}" y="${fmt(at[1]!)}" width="${fmt(at[2]!)}" height="${fmt(at[3]!)}" viewBox="${viewBox.map(fmt).join(" ")}" overflow="hidden">${body(plot)}${extra}</svg>`;
}

/** Advance of one character of the labels' sans-serif font, as a share of its size (generous). */
const LABEL_ADVANCE = 0.62;

/**
 * The marks, each a box with its label above it (or below, or further up or down, when that
 * spot is taken): a label goes where it covers neither the drawing (`occupied`: a net label,
 * a value) nor a label placed before it, and where no spot is clear of the drawing, where it
 * is at least clear of the other labels, so labels of parts close together never stack into
 * an unreadable block. Each label placed is added to `occupied`. A mark with an empty label (a
 * pad of a renamed net past the first) is a box alone.
 */
function markSvgs(marks: Mark[], unit: number, occupied: Occupancy): string[] {
  const size = unit * 3;
  const pad = unit * 1.5;
  const labels = new Occupancy();
  return marks.map((mark) => {
    const { x0, y0, x1, y1 } = mark.box;
    const colour = MARK_COLOURS[mark.kind];
    const x = x0 - pad;
    const y = y0 - pad;
    const rect = `<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(x1 - x0 + 2 * pad)}" height="${fmt(y1 - y0 + 2 * pad)}" rx="${fmt(unit)}" fill="${colour}" fill-opacity="0.12" stroke="${colour}" stroke-width="${fmt(unit * 0.5)}"${mark.kind === "moved" ? ` stroke-dasharray="${fmt(unit * 2)} ${fmt(unit)}"` : ""}/>`;
    if (!mark.label) return `<g>${rect}</g>`;
    const width = mark.label.length * size * LABEL_ADVANCE;
    const above = y - unit * 0.8;
    const below = y1 + pad + size;
    const step = size * 1.2;
    const baselines = [
      above,
      below,
      ...Array.from({ length: 12 }, (_, i) => [above - (i + 1) * step, below + (i + 1) * step]).flat(),
    ];
    const boxAt = (baseline: number): MmBox => ({
      x0: x,
      y0: baseline - size,
      x1: x + width,
      y1: baseline + size * 0.25,
    });
    const baseline =
      baselines.find((b) => labels.clear(boxAt(b)) && occupied.clear(boxAt(b))) ??
      baselines.find((b) => labels.clear(boxAt(b))) ??
      above;
    labels.add(boxAt(baseline));
    occupied.add(boxAt(baseline));
    const leader =
      baseline !== above && baseline !== below
        ? `<line x1="${fmt(x)}" y1="${fmt(baseline < y ? baseline : baseline - size)}" x2="${fmt(x)}" y2="${fmt(baseline < y ? y : y1 + pad)}" stroke="${colour}" stroke-width="${fmt(unit * 0.2)}"/>`
        : "";
    return `<g>${rect}${leader}<text x="${fmt(x)}" y="${fmt(baseline)}" font-family="sans-serif" font-size="${fmt(size)}" fill="${colour}" stroke="#ffffff" stroke-width="${fmt(unit * 0.5)}" paint-order="stroke">${escapeXml(mark.label)}</text></g>`;
  });
}

/** Whether two boxes share some area. */
export function overlap(a: MmBox, b: MmBox): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** The legend's size for a view whose scale unit is `unit` (see `highlightSvg`). */
function legendSize(unit: number): { width: number; height: number } {
  const size = unit * 3;
  return { width: size * 12, height: unit * 3 + LEGEND.length * size * 1.4 + unit * 2 };
}

const LEGEND: [MarkKind, string][] = [
  ["removed", "removed"],
  ["added", "added"],
  ["changed", "changed"],
  ["moved", "moved"],
];

/** The legend, its box's top-left corner at `at`. */
function legendSvg(at: { x: number; y: number }, unit: number): string {
  const size = unit * 3;
  const { width, height } = legendSize(unit);
  return [
    `<g font-family="sans-serif" font-size="${fmt(size)}">`,
    `<rect x="${fmt(at.x)}" y="${fmt(at.y)}" width="${fmt(width)}" height="${fmt(height)}" fill="#ffffff" fill-opacity="0.9" stroke="#999999" stroke-width="${fmt(unit * 0.2)}"/>`,
    ...LEGEND.map(([kind, label], i) => {
      const ly = at.y + unit * 1.5 + i * size * 1.4;
      return `<rect x="${fmt(at.x + unit * 1.5)}" y="${fmt(ly)}" width="${fmt(size)}" height="${fmt(size)}" fill="${MARK_COLOURS[kind]}"/><text x="${fmt(at.x + unit * 1.5 + size * 1.5)}" y="${fmt(ly + size * 0.85)}" fill="#333333">${label}</text>`;
    }),
    `</g>`,
  ].join("\n");
}

/** Side of the cells drawn boxes are bucketed by, mm. */
const CELL = 10;

/** Boxes of what is drawn on a page, bucketed in square cells so "is this spot clear" is quick. */
class Occupancy {
  private readonly cells = new Map<string, MmBox[]>();

  add(box: MmBox): void {
    for (const key of cellsOf(box)) {
      const list = this.cells.get(key);
      if (list) list.push(box);
      else this.cells.set(key, [box]);
    }
  }

  clear(box: MmBox): boolean {
    for (const key of cellsOf(box)) if ((this.cells.get(key) ?? []).some((b) => overlap(b, box))) return false;
    return true;
  }
}

function cellsOf(box: MmBox): string[] {
  const keys: string[] = [];
  for (let i = Math.floor(box.x0 / CELL); i <= Math.floor(box.x1 / CELL); i++) {
    for (let j = Math.floor(box.y0 / CELL); j <= Math.floor(box.y1 / CELL); j++) keys.push(`${i},${j}`);
  }
  return keys;
}

/**
 * Where the legend goes: the first spot of the view, row by row from the top left, where the
 * plot draws nothing (frame, title block, symbols, wires, text) and no mark or label sits, so
 * it never covers the sheet's own text; the view's top-left corner when the page is full.
 */
function legendSpot(
  occupied: Occupancy,
  marks: Mark[],
  view: [number, number, number, number],
  unit: number,
): { x: number; y: number } {
  const [vx, vy, vw, vh] = view;
  const { width, height } = legendSize(unit);
  for (const mark of marks)
    occupied.add({
      x0: mark.box.x0 - unit * 2,
      y0: mark.box.y0 - unit * 2,
      x1: mark.box.x1 + unit * 2,
      y1: mark.box.y1 + unit * 2,
    });
  const step = unit * 2;
  const margin = unit * 1.5;
  for (let y = vy + margin; y + height <= vy + vh - margin; y += step) {
    for (let x = vx + margin; x + width <= vx + vw - margin; x += step) {
      if (occupied.clear({ x0: x - margin, y0: y - margin, x1: x + width + margin, y1: y + height + margin }))
        return { x, y };
    }
  }
  return { x: vx + margin, y: vy + margin };
}

/**
 * Boxes of what a kicad-cli plot draws: each segment of its paths (KiCad plots lines, text
 * strokes and outlines as `M x y L x y …` paths in page millimetres), its circles and rects.
 * Coarse on purpose: a segment's box stands for the segment (an arc's, for its chord).
 */
function drawnBoxes(svg: string): MmBox[] {
  const boxes: MmBox[] = [];
  for (const m of svg.matchAll(/<path\b[^>]*\bd="([^"]*)"/g)) {
    const points = pathPoints(m[1]!);
    if (points.length === 1) boxes.push({ x0: points[0]![0], y0: points[0]![1], x1: points[0]![0], y1: points[0]![1] });
    for (let i = 1; i < points.length; i++) {
      const [a, b] = [points[i - 1]!, points[i]!];
      boxes.push({
        x0: Math.min(a[0], b[0]),
        y0: Math.min(a[1], b[1]),
        x1: Math.max(a[0], b[0]),
        y1: Math.max(a[1], b[1]),
      });
    }
  }
  for (const m of svg.matchAll(/<circle\b[^>]*\bcx="(-?[\d.]+)"[^>]*\bcy="(-?[\d.]+)"[^>]*\br="([\d.]+)"/g)) {
    const [x, y, r] = [Number(m[1]), Number(m[2]), Number(m[3])];
    boxes.push({ x0: x - r, y0: y - r, x1: x + r, y1: y + r });
  }
  for (const m of svg.matchAll(
    /<rect\b[^>]*\bx="(-?[\d.]+)"[^>]*\by="(-?[\d.]+)"[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"/g,
  )) {
    const [x, y, w, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    boxes.push({ x0: x, y0: y, x1: x + w, y1: y + h });
  }
  return boxes;
}

/** The box of a set of points; undefined for none. */
function boxOf(points: [number, number][]): MmBox | undefined {
  if (points.length === 0) return undefined;
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

/**
 * Where a plot draws `text` (a field's value, a reference): the box of each stroked-text group
 * whose string is `text`, as kicad-cli writes one group per string it draws.
 */
export function textBoxes(svg: string, text: string): MmBox[] {
  const boxes: MmBox[] = [];
  for (const m of svg.matchAll(/<g class="stroked-text"><desc>([^<]*)<\/desc>([\s\S]*?)<\/g>/g)) {
    if (unescapeXml(m[1]!) !== text) continue;
    const box = boxOf([...m[2]!.matchAll(/\bd="([^"]*)"/g)].flatMap((d) => pathPoints(d[1]!)));
    if (box) boxes.push(box);
  }
  return boxes;
}

/** Stroke widths and text strokes reach this far past the points they are drawn through, mm. */
const CLIP_SLACK = 2;

/**
 * The plot with only what it draws in or near `box`: paths, circles and rects wholly outside
 * it are left out, and so are the invisible copies of text kicad-cli adds for searching. A
 * region rasterises in a fraction of the time and memory of the whole page it comes from
 * (a busy sheet draws tens of thousands of paths); what shows in the region is unchanged.
 */
export function clipped(svg: string, box: MmBox): string {
  const near: MmBox = {
    x0: box.x0 - CLIP_SLACK,
    y0: box.y0 - CLIP_SLACK,
    x1: box.x1 + CLIP_SLACK,
    y1: box.y1 + CLIP_SLACK,
  };
  const keep = (b: MmBox | undefined) => b === undefined || touches(b, near);
  let out = svg
    .replace(/<path\b[^>]*?\bd="([^"]*)"[^>]*?\/>/g, (element, d: string) =>
      keep(boxOf(pathPoints(d))) ? element : "",
    )
    .replace(/<circle\b[^>]*\/>/g, (element) => {
      const [cx, cy, r] = ["cx", "cy", "r"].map((name) => attribute(element, name));
      return cx === undefined ||
        cy === undefined ||
        r === undefined ||
        keep({ x0: cx - r, y0: cy - r, x1: cx + r, y1: cy + r })
        ? element
        : "";
    })
    .replace(/<rect\b[^>]*\/>/g, (element) => {
      const [x, y, w, h] = ["x", "y", "width", "height"].map((name) => attribute(element, name));
      return x === undefined ||
        y === undefined ||
        w === undefined ||
        h === undefined ||
        keep({ x0: x, y0: y, x1: x + w, y1: y + h })
        ? element
        : "";
    })
    .replace(/<text\b[^>]*\bopacity="0"[^>]*>[^<]*<\/text>/g, "");
  // Groups left with nothing in them, innermost first.
  for (let before = ""; before !== out; ) {
    before = out;
    out = out.replace(/<g\b[^>]*>\s*(?:<desc>[^<]*<\/desc>\s*)?<\/g>/g, "");
  }
  return out;
}

/** Whether `a` and `b` overlap or touch (a horizontal or vertical line has an empty box). */
function touches(a: MmBox, b: MmBox): boolean {
  return a.x0 <= b.x1 && b.x0 <= a.x1 && a.y0 <= b.y1 && b.y0 <= a.y1;
}

/** A numeric attribute of an element. */
function attribute(element: string, name: string): number | undefined {
  const m = new RegExp(`\\s${name}="(-?[\\d.]+(?:e-?\\d+)?)"`).exec(element);
  return m ? Number(m[1]) : undefined;
}

/** The vertices of an SVG path's absolute commands as kicad-cli writes them (M, L, A, Z; numbers after M/L go on as lines). */
function pathPoints(d: string): [number, number][] {
  const points: [number, number][] = [];
  let command = "M";
  let numbers: number[] = [];
  const flush = () => {
    const arity = command === "A" ? 7 : 2;
    for (let i = 0; i + arity <= numbers.length; i += arity)
      points.push([numbers[i + arity - 2]!, numbers[i + arity - 1]!]);
    numbers = [];
  };
  for (const token of d.match(/[A-Za-z]|-?\d*\.?\d+(?:e-?\d+)?/g) ?? []) {
    if (/[A-Za-z]/.test(token)) {
      flush();
      command = token.toUpperCase();
    } else numbers.push(Number(token));
  }
  flush();
  return points;
}

export function fmt(n: number): string {
  return String(Math.round(n * 10_000) / 10_000);
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
