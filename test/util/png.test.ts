/**
 * svgToPng on a real kicad-cli plot: the strokes kicad-cli draws one element each are drawn as
 * runs of one path, and the picture is the one resvg draws from the plot as written, but for
 * the anti-aliased edges where two strokes meet.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { clipped, cropped } from "../../src/diff/svg.ts";
import { exportSvg, findKicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { svgToPng } from "../../src/util/png.ts";
import { cleanupTempDirs, copyFixture, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const AREA = { x0: 90, y0: 60, x1: 190, y1: 130 };

test("a kicad-cli sheet plot's strokes are drawn as runs of one path: the same drawing but for where strokes meet", async () => {
  const dir = await copyFixture("usb-led");
  const [plot] = await exportSvg(join(dir, "usb-led.kicad_sch"), await makeTempDir(), { cli: await findKicadCli() });
  // The part of the page that holds the circuit, as an inset of a diff shows it.
  const svg = cropped(clipped(readFileSync(plot!, "utf8"), AREA), AREA);
  expect(svg.match(/<path d="M[^"]*L[^"]*"\s*\/>/g)!.length).toBeGreaterThan(300);
  const ours = await svgToPng(svg, { width: 800 });
  // The same plot with every stroke an element of its own, as written (two spaces keep svgToPng from joining them).
  const asWritten = await svgToPng(svg.replaceAll("<path d=", "<path  d="), { width: 800 });
  expect([ours.width, ours.height]).toEqual([asWritten.width, asWritten.height]);
  let ink = 0;
  let differ = 0;
  for (let i = 0; i < ours.pixels.length; i += 4) {
    const channel = (k: number) => Math.abs(ours.pixels[i + k]! - asWritten.pixels[i + k]!);
    if (asWritten.pixels[i]! < 250 || asWritten.pixels[i + 1]! < 250 || asWritten.pixels[i + 2]! < 250) ink++;
    if (Math.max(channel(0), channel(1), channel(2)) > 8) differ++;
  }
  expect(ink).toBeGreaterThan(5_000);
  // Joined (some edge pixels differ where strokes meet), and the same drawing.
  expect(differ).toBeGreaterThan(0);
  expect(differ / ink).toBeLessThan(0.05);
}, 60_000);
