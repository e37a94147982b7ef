/**
 * One change seen up close: the changed item and the 20 mm around it, cut out of the before
 * plot and the after plot and drawn side by side (one above the other when the region is wide),
 * under a title that says what changed. Old and new are never drawn over each other, and the
 * changed field (a value, a reference) is boxed where each state draws it.
 *
 * A region is cut out with `clipped` (svg.ts) before it is composed, so the inset holds only
 * what it shows and rasterises in a fraction of the time and memory of the whole page.
 */
import { clipped, escapeXml, fmt, MARK_COLOURS, nestedPlot, xmlnsOf, type Mark, type MmBox } from "./svg.ts";

/** Context kept around the changed item on every side, mm. */
export const INSET_CONTEXT_MM = 20;

export interface InsetPanel {
  /** The whole kicad-cli plot of that state. */
  plot: string;
  marks: Mark[];
}

export interface Inset {
  /** What changed, e.g. `R3 Value: 100k → 4k7`. */
  title: string;
  /** The region shown, page millimetres. */
  region: MmBox;
  /** Absent when the page does not exist in that state. */
  before?: InsetPanel;
  after?: InsetPanel;
}

/** The region an inset shows for `focus`: it and its context, moved (not cut) to stay on the page. */
export function insetRegion(focus: MmBox, page: MmBox): MmBox {
  const fit = (lo: number, hi: number, min: number, max: number): [number, number] => {
    let [a, b] = [lo - INSET_CONTEXT_MM, hi + INSET_CONTEXT_MM];
    if (b - a >= max - min) return [Math.max(a, min), Math.min(b, max)];
    if (a < min) [a, b] = [min, b + (min - a)];
    if (b > max) [a, b] = [a - (b - max), max];
    return [a, b];
  };
  const [x0, x1] = fit(focus.x0, focus.x1, page.x0, page.x1);
  const [y0, y1] = fit(focus.y0, focus.y1, page.y0, page.y1);
  return { x0, y0, x1, y1 };
}

/** The composed inset and its size in millimetres (the panels are at the plot's own scale). */
export function insetSvg(inset: Inset): { svg: string; width: number; height: number } {
  const { region } = inset;
  const w = region.x1 - region.x0;
  const h = region.y1 - region.y0;
  const unit = Math.max(w, h) / 100;
  const pad = unit * 3;
  const gap = unit * 4;
  const titleSize = unit * 3.6;
  const captionSize = unit * 3;
  const titleHeight = titleSize * 1.8;
  const captionHeight = captionSize * 1.6;
  const stacked = w > h * 1.4;
  const width = stacked ? pad * 2 + w : pad * 2 + w * 2 + gap;
  const height = pad * 2 + titleHeight + (stacked ? (captionHeight + h) * 2 + gap : captionHeight + h);
  const panelAt = (i: number) =>
    stacked
      ? { x: pad, y: pad + titleHeight + i * (captionHeight + h + gap) + captionHeight }
      : { x: pad + i * (w + gap), y: pad + titleHeight + captionHeight };
  const panels = (["before", "after"] as const).map((which, i) => {
    const { x, y } = panelAt(i);
    const panel = inset[which];
    const caption = `<text x="${fmt(x)}" y="${fmt(y - captionSize * 0.5)}" font-family="sans-serif" font-size="${fmt(captionSize)}" fill="#333333">${which}</text>`;
    const frame = `<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(w)}" height="${fmt(h)}" fill="none" stroke="#999999" stroke-width="${fmt(unit * 0.25)}"/>`;
    if (!panel) {
      const note = `<text x="${fmt(x + w / 2)}" y="${fmt(y + h / 2)}" text-anchor="middle" font-family="sans-serif" font-size="${fmt(captionSize)}" fill="#999999">not in this state</text>`;
      return `${caption}${note}${frame}`;
    }
    const marks = panel.marks.map((mark) => markRect(mark, unit)).join("");
    return `${caption}${nestedPlot(clipped(panel.plot, region), { x, y, width: w, height: h, box: region }, marks)}${frame}`;
  });
  const svg = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg"${xmlnsOf([inset.before?.plot, inset.after?.plot])} version="1.1" width="${fmt(width)}mm" height="${fmt(height)}mm" viewBox="0 0 ${fmt(width)} ${fmt(height)}">`,
    `<title>${escapeXml(inset.title)}</title>`,
    `<rect x="0" y="0" width="${fmt(width)}" height="${fmt(height)}" fill="#ffffff"/>`,
    `<text x="${fmt(pad)}" y="${fmt(pad + titleSize)}" font-family="sans-serif" font-size="${fmt(titleSize)}" fill="#111111">${escapeXml(inset.title)}</text>`,
    ...panels,
    `</svg>`,
    "",
  ].join("\n");
  return { svg, width, height };
}

/** A mark in a panel: a box alone (the title says what it is), clear of what it surrounds. */
function markRect(mark: Mark, unit: number): string {
  const colour = MARK_COLOURS[mark.kind];
  const pad = unit * 0.8;
  const { x0, y0, x1, y1 } = mark.box;
  return `<rect x="${fmt(x0 - pad)}" y="${fmt(y0 - pad)}" width="${fmt(x1 - x0 + 2 * pad)}" height="${fmt(y1 - y0 + 2 * pad)}" rx="${fmt(unit * 0.5)}" fill="${colour}" fill-opacity="0.1" stroke="${colour}" stroke-width="${fmt(unit * 0.35)}"${mark.kind === "moved" ? ` stroke-dasharray="${fmt(unit * 1.5)} ${fmt(unit * 0.8)}"` : ""}/>`;
}
