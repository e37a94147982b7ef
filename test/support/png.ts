/**
 * Reads a PNG the way a test needs to: its size, and the share of pixels that are not the paper
 * colour (the most common one). Handles what resvg writes (8-bit RGBA, not interlaced): the
 * IDAT stream is inflated and its scanline filters undone.
 */
import { inflateSync } from "node:zlib";

export interface PngInfo {
  width: number;
  height: number;
  /** Share of pixels that differ from the most common colour. */
  inked: number;
  /** The colour at pixel (x, y), as RGB hex ("ffffff"). */
  rgb(x: number, y: number): string;
}

export function pngInfo(png: Uint8Array): PngInfo {
  const bytes = Buffer.from(png);
  if (bytes.toString("latin1", 1, 4) !== "PNG") throw new Error("not a PNG");
  let width = 0;
  let height = 0;
  let colourType = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString("latin1", at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      colourType = data[9]!;
      if (data[8] !== 8 || data[12] !== 0) throw new Error("only 8-bit, non-interlaced PNGs are read here");
    } else if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  const channels = colourType === 6 ? 4 : colourType === 2 ? 3 : colourType === 4 ? 2 : 1;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter]!;
      pixels[y * stride + x] = (v + predicted) & 0xff;
    }
  }
  const counts = new Map<string, number>();
  for (let i = 0; i < width * height; i++) {
    const colour = pixels.toString("hex", i * channels, (i + 1) * channels);
    counts.set(colour, (counts.get(colour) ?? 0) + 1);
  }
  const paper = Math.max(...counts.values());
  const rgb = (x: number, y: number) =>
    pixels.toString("hex", (y * width + x) * channels, (y * width + x) * channels + Math.min(3, channels));
  return { width, height, inked: 1 - paper / (width * height), rgb };
}
