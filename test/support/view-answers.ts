/** Reading what the `view` tool answers in a test: its legend and its decoded PNG, and where to look in a pour. */
import { expect } from "bun:test";
import { WithImages } from "../../src/agent/tools/tool.ts";
import { insidePolygon, zoneFills, type Zone } from "../../src/kicad/board/zones/zones.ts";
import { pngInfo } from "./png.ts";

/** A view answer's legend and its one PNG, decoded. */
export function image(answer: unknown) {
  expect(answer).toBeInstanceOf(WithImages);
  const { result, images } = answer as WithImages;
  expect(images).toHaveLength(1);
  expect(images[0]!.mediaType).toBe("image/png");
  return { legend: result as Record<string, unknown>, png: pngInfo(Buffer.from(images[0]!.data, "base64")) };
}

/** A point with a millimetre of `layer`'s fill on every side, in one of `zones`, if there is one. */
export function deepInside(zones: Zone[], layer: string): { x: number; y: number } | undefined {
  for (const zone of zones) {
    const fills = zoneFills(zone)
      .filter((f) => f.layer === layer)
      .map((f) => f.points);
    if (fills.length === 0) continue;
    for (let x = Math.ceil(zone.box.minX); x < zone.box.maxX; x += 0.5) {
      for (let y = Math.ceil(zone.box.minY); y < zone.box.maxY; y += 0.5) {
        const around = [
          [0, 0],
          [1, 0],
          [-1, 0],
          [0, 1],
          [0, -1],
        ].map(([dx, dy]) => ({ x: x + dx!, y: y + dy! }));
        if (fills.some((f) => around.every((p) => insidePolygon(f, p)))) return { x, y };
      }
    }
  }
  return undefined;
}
