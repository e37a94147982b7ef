/**
 * What KiCad's own render says about a text: in the SVG `kicad-cli sch export svg` writes, each
 * text is a `<g class="stroked-text"><desc>TEXT</desc>` group of stroke paths (the glyphs as
 * drawn), and everything else is paths, circles and rectangles. `textOverlaps` finds the glyphs
 * of a text and names what else drawn on the sheet crosses them: judged by KiCad's drawing, not
 * by copperhead's estimate of it.
 */
import { readFileSync } from "node:fs";

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

type Segment = [number, number, number, number];

/**
 * The glyph boxes of every drawing of `text` in `svgFile`, and what else crosses each (as "path
 * M x y …" snippets). Strokes through one of `anchors` (mm) are the label's own wire, which
 * KiCad draws its text along, and are left out.
 */
export function textOverlaps(
  svgFile: string,
  text: string,
  anchors: [number, number][] = [],
): { box: Box; crossing: string[] }[] {
  const svg = readFileSync(svgFile, "utf8");
  const targets = textGroups(svg)
    .filter((g) => unescape(g[1]!) === text)
    .map((g) => ({ start: g.index!, end: g.index! + g[0].length, box: shrink(boxOf(pathSegments(g[2]!)), 0.05) }));
  const others = drawnElements(svg).filter((e) => !targets.some((t) => e.at >= t.start && e.at < t.end));
  const own = (s: Segment) => anchors.some(([x, y]) => through(s, x, y));
  return targets.map((t) => ({
    box: t.box,
    crossing: others
      .filter(
        (e) => e.segments.some((s) => !own(s) && segmentCrossesBox(s, t.box)) || (e.area && overlaps(e.area, t.box)),
      )
      .map((e) => e.what),
  }));
}

/** Every text KiCad drew in `svgFile`, with its glyphs' box (mm). */
export function drawnTexts(svgFile: string): { text: string; box: Box }[] {
  const svg = readFileSync(svgFile, "utf8");
  return textGroups(svg).flatMap((g) => {
    const segments = pathSegments(g[2]!);
    return segments.length > 0 ? [{ text: unescape(g[1]!), box: boxOf(segments) }] : [];
  });
}

/** Each text's group: its text (escaped) and its glyphs' paths. */
function textGroups(svg: string): RegExpExecArray[] {
  return [...svg.matchAll(/<g class="stroked-text"><desc>([^<]*)<\/desc>([\s\S]*?)<\/g>/g)];
}

/** Every drawn element with where it starts in the file and its strokes (or, for a circle, its area). */
function drawnElements(svg: string): { at: number; what: string; segments: Segment[]; area?: Box }[] {
  const out: { at: number; what: string; segments: Segment[]; area?: Box }[] = [];
  for (const m of svg.matchAll(/<path d="([^"]*)"/g))
    out.push({ at: m.index!, what: `path ${m[1]!.replace(/\s+/g, " ").slice(0, 40)}`, segments: pathSegments(m[0]) });
  for (const m of svg.matchAll(/<circle cx="([-\d.]+)" cy="([-\d.]+)" r="([-\d.]+)"/g)) {
    const [x, y, r] = [Number(m[1]), Number(m[2]), Number(m[3])];
    out.push({
      at: m.index!,
      what: `circle at ${x}, ${y}`,
      segments: [],
      area: { x0: x - r, y0: y - r, x1: x + r, y1: y + r },
    });
  }
  for (const m of svg.matchAll(/<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"/g)) {
    const [x, y, w, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    out.push({
      at: m.index!,
      what: `rect at ${x}, ${y}`,
      segments: [
        [x, y, x + w, y],
        [x + w, y, x + w, y + h],
        [x + w, y + h, x, y + h],
        [x, y + h, x, y],
      ],
    });
  }
  return out;
}

/** The straight strokes of the paths in `markup` (an arc is taken as the chord between its ends, with its bulge as a box). */
function pathSegments(markup: string): Segment[] {
  const segments: Segment[] = [];
  for (const d of markup.matchAll(/ d="([^"]*)"/g)) {
    const tokens = d[1]!.match(/[MLAZ]|-?[\d.]+/g) ?? [];
    let start: [number, number] | undefined;
    let at: [number, number] | undefined;
    for (let i = 0; i < tokens.length; ) {
      const op = tokens[i++]!;
      if (op === "M") at = start = [Number(tokens[i++]), Number(tokens[i++])];
      else if (op === "L") {
        const to: [number, number] = [Number(tokens[i++]), Number(tokens[i++])];
        if (at) segments.push([...at, ...to]);
        at = to;
      } else if (op === "A") {
        const r = Number(tokens[i++]);
        i += 4;
        const to: [number, number] = [Number(tokens[i++]), Number(tokens[i++])];
        if (at) {
          // The arc's whole circle: generous, and arcs are few.
          const cx = (at[0] + to[0]) / 2;
          const cy = (at[1] + to[1]) / 2;
          segments.push(
            [cx - r, cy - r, cx + r, cy - r],
            [cx + r, cy - r, cx + r, cy + r],
            [cx + r, cy + r, cx - r, cy + r],
            [cx - r, cy + r, cx - r, cy - r],
          );
        }
        at = to;
      } else if (op === "Z") {
        if (at && start) segments.push([...at, ...start]);
        at = start;
      } else i++;
    }
  }
  return segments;
}

/** True when (x, y) lies on the segment, within 0.01 mm. */
function through([x0, y0, x1, y1]: Segment, x: number, y: number): boolean {
  const cross = (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0);
  const length = Math.hypot(x1 - x0, y1 - y0);
  if (length === 0) return Math.hypot(x - x0, y - y0) < 0.01;
  const along = ((x - x0) * (x1 - x0) + (y - y0) * (y1 - y0)) / length;
  return Math.abs(cross / length) < 0.01 && along > -0.01 && along < length + 0.01;
}

function boxOf(segments: Segment[]): Box {
  const xs = segments.flatMap((s) => [s[0], s[2]]);
  const ys = segments.flatMap((s) => [s[1], s[3]]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

function shrink(b: Box, by: number): Box {
  return { x0: b.x0 + by, y0: b.y0 + by, x1: b.x1 - by, y1: b.y1 - by };
}

function overlaps(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** True when the segment enters the box (Liang–Barsky clipping). */
function segmentCrossesBox([x0, y0, x1, y1]: Segment, b: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = x1 - x0;
  const dy = y1 - y0;
  for (const [p, q] of [
    [-dx, x0 - b.x0],
    [dx, b.x1 - x0],
    [-dy, y0 - b.y0],
    [dy, b.y1 - y0],
  ] as const) {
    if (p === 0) {
      if (q <= 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 >= t1) return false;
  }
  return true;
}

function unescape(s: string): string {
  return s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}
