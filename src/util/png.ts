/**
 * SVG → PNG in-process, with resvg's WebAssembly build. The `.wasm` file is imported as a
 * file, so `bun build --compile` embeds it and the one executable rasterises on every release
 * target with nothing beside it (the native resvg binding would need a prebuilt addon per
 * target).
 *
 * kicad-cli draws all KiCad text as strokes, so a plot needs no font; the invisible `<text>`
 * copies it adds for searching are dropped before rendering, which also saves resvg shaping
 * them. Text copperhead adds itself (diff labels, legends) uses the first common sans-serif
 * font found on the machine; without one that text is left out of the PNG and the SVG beside
 * it still has it.
 */
import { existsSync, readFileSync } from "node:fs";
import { initWasm, Resvg } from "@resvg/resvg-wasm";
import wasmPath from "@resvg/resvg-wasm/index_bg.wasm" with { type: "file" };

/** Sans-serif fonts found on Linux, macOS and Windows installs, in order of preference. */
const FONT_CANDIDATES = [
  "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
  "/usr/share/fonts/TTF/DejaVuSans.ttf",
  "/usr/share/fonts/dejavu/DejaVuSans.ttf",
  "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
  "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
  "/System/Library/Fonts/Supplemental/Arial.ttf",
  "/Library/Fonts/Arial.ttf",
  "C:\\Windows\\Fonts\\arial.ttf",
];

let ready: Promise<void> | undefined;
let fonts: Uint8Array[] | undefined;

function init(): Promise<void> {
  ready ??= (async () => initWasm(await Bun.file(wasmPath).arrayBuffer()))();
  return ready;
}

function fontBuffers(): Uint8Array[] {
  if (!fonts) {
    const found = FONT_CANDIDATES.find((path) => existsSync(path));
    fonts = found ? [readFileSync(found)] : [];
  }
  return fonts;
}

export interface PngOptions {
  /** Width of the PNG in pixels (the height follows the SVG's aspect). */
  width: number;
  /** Paper colour behind the drawing; default white. */
  background?: string;
}

export interface Png {
  png: Uint8Array;
  width: number;
  height: number;
  /** RGBA, row by row. */
  pixels: Uint8Array;
}

/** Rasterises `svg` at `width` pixels wide. */
export async function svgToPng(svg: string, options: PngOptions): Promise<Png> {
  await init();
  const resvg = new Resvg(joinedSegments(withoutHiddenText(svg)), {
    fitTo: { mode: "width", value: Math.round(options.width) },
    background: options.background ?? "#ffffff",
    font: { fontBuffers: fontBuffers(), defaultFontFamily: "DejaVu Sans", sansSerifFamily: "DejaVu Sans" },
  });
  try {
    const image = resvg.render();
    try {
      return { png: image.asPng(), width: image.width, height: image.height, pixels: image.pixels };
    } finally {
      image.free();
    }
  } finally {
    resvg.free();
  }
}

/** kicad-cli's invisible search copies of stroked text (`opacity="0"`): nothing to draw. */
function withoutHiddenText(svg: string): string {
  return svg.replace(/<text\b[^>]*\sopacity="0"[^>]*>[\s\S]*?<\/text>/g, "");
}

/** One straight stroke as kicad-cli draws text and wires: `<path d="M x y L x y" />`, styled by its group. */
const SEGMENT = /<path d="(M\s*-?[\d.]+[\s,]+-?[\d.]+\s*L\s*-?[\d.]+[\s,]+-?[\d.]+)\s*"\s*\/>/g;
const SEGMENT_RUN = new RegExp(`(?:${SEGMENT.source}\\s*){2,}`, "g");

/**
 * kicad-cli draws every stroke of its text as an element of its own, thousands on a dense
 * sheet, and resvg's cost goes with the number of elements more than with their length: a run
 * of such segments in one group becomes one path of the same strokes (a two-point segment has
 * no area to fill), drawn in about two thirds of the time. Only where two strokes meet do the
 * pixels differ: their anti-aliased edges blend once instead of twice.
 */
function joinedSegments(svg: string): string {
  return svg.replace(
    SEGMENT_RUN,
    (run) => `<path d="${[...run.matchAll(SEGMENT)].map((m) => m[1]!.replace(/\s+/g, " ")).join(" ")}"/>`,
  );
}
