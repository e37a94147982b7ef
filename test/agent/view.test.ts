/**
 * The `view` and `find_space` read tools on a real corpus project, with the real kicad-cli:
 * the PNG is decoded and its size and inked pixels checked, the legend names what is in the
 * region, and a second view of the unchanged design comes from the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { currentDesign } from "../../src/agent/context.ts";
import { WithImages } from "../../src/agent/tools/tool.ts";
import { drawingOrder } from "../../src/agent/view/board.ts";
import { boardZones, insidePolygon, zoneFills, type Zone } from "../../src/kicad/board/zones/zones.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";
import { pngInfo } from "../support/png.ts";

let repo: string;

beforeAll(async () => {
  await requireKicadCli();
  const project = corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!;
  repo = (await copyCorpusProject(project)).root;
});
afterAll(cleanupTempDirs);

function image(answer: unknown) {
  expect(answer).toBeInstanceOf(WithImages);
  const { result, images } = answer as WithImages;
  expect(images).toHaveLength(1);
  expect(images[0]!.mediaType).toBe("image/png");
  return { legend: result as Record<string, unknown>, png: pngInfo(Buffer.from(images[0]!.data, "base64")) };
}

/** A point with a millimetre of `layer`'s fill on every side, in one of `zones`. */
function deepInside(zones: Zone[], layer: string): { x: number; y: number } {
  for (const zone of zones) {
    const fills = zoneFills(zone).filter((f) => f.layer === layer).map((f) => f.points);
    for (let x = Math.ceil(zone.box.minX); x < zone.box.maxX; x += 0.5) {
      for (let y = Math.ceil(zone.box.minY); y < zone.box.maxY; y += 0.5) {
        const around = [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]].map(([dx, dy]) => ({ x: x + dx!, y: y + dy! }));
        if (fills.some((f) => around.every((p) => insidePolygon(f, p)))) return { x, y };
      }
    }
  }
  throw new Error(`no point deep inside a fill on ${layer}`);
}

describe("view", () => {
  test("a region of a sheet around a part: a PNG with ink, and a legend of what is there", async () => {
    await withTools(repo, async ({ call }) => {
      const { legend, png } = image(await call("view", { ref: "R1" }));
      expect(png.width).toBeGreaterThanOrEqual(480);
      expect(png.height).toBeGreaterThan(200);
      // A drawing, not a blank page: a good share of pixels differ from the paper.
      expect(png.inked).toBeGreaterThan(0.01);
      expect(png.inked).toBeLessThan(0.9);
      const parts = legend.parts as { ref: string; x: number; y: number }[];
      expect(parts.map((p) => p.ref)).toContain("R1");
      expect(legend.nets).toBeArray();
      expect((legend.freeAreas as unknown[]).length).toBeGreaterThan(0);
      expect(legend.sheet).toBe("/");
    });
  });

  test("the board around a footprint, with the courtyard layers and the legend's footprints", async () => {
    await withTools(repo, async ({ call }) => {
      const { legend, png } = image(await call("view", { document: "board", ref: "R1" }));
      expect(png.width).toBeGreaterThanOrEqual(480);
      expect(png.inked).toBeGreaterThan(0.01);
      expect((legend.footprints as { ref: string }[]).map((f) => f.ref)).toContain("R1");
      expect(legend.layers).toContain("F.CrtYd");
    });
  });

  test("the board's pours: drawn under the plot in their layer's colour, and listed in the legend", async () => {
    await withTools(repo, async ({ call, ctx }) => {
      const { legend, png } = image(await call("view", { document: "board" }));
      const zones = legend.zones as { net: string | null; layers: string[]; priority: number; filled: boolean }[];
      const board = currentDesign(ctx).board!;
      const filled = boardZones(board.root).filter((z) => z.filled && !z.ruleArea && zoneFills(z).length > 0);
      expect(filled.length).toBeGreaterThan(0);
      expect(zones.filter((z) => z.filled).map((z) => z.net).sort()).toEqual(filled.map((z) => z.net).sort());
      expect(zones.every((z) => Array.isArray(z.layers) && typeof z.priority === "number")).toBe(true);
      // A spot with a millimetre of the front pour all round, where kicad-cli drew nothing: tinted, not bare board.
      const region = legend.region as { x: number; y: number; width: number; height: number };
      const spot = deepInside(filled, "F.Cu");
      const px = Math.round(((spot.x - region.x) / region.width) * (png.width - 1));
      const py = Math.round(((spot.y - region.y) / region.height) * (png.height - 1));
      expect(png.rgb(px, py)).not.toBe("ffffff");
      // The front is drawn on top when the question names no part on the back.
      expect(legend.layers).toEqual(["B.Cu", "F.Cu", "F.SilkS", "F.CrtYd", "B.CrtYd", "Edge.Cuts"]);
      expect(drawingOrder(["F.Cu", "In1.Cu", "B.Cu", "B.SilkS"], "back")).toEqual(["In1.Cu", "F.Cu", "B.Cu", "B.SilkS"]);
    });
  });

  test("an unchanged design re-views from the cache, without kicad-cli", async () => {
    await withTools(repo, async ({ call }) => {
      const first = image(await call("view", { net: "GND" }));
      const plots = readdirSync(join(repo, ".copperhead/cache/plots"));
      const second = image(await call("view", { net: "GND" }));
      expect(second.legend).toEqual(first.legend);
      expect(readdirSync(join(repo, ".copperhead/cache/plots"))).toEqual(plots);
    });
  });

  test("a sheet or ref that is not there is a tool error naming what is", async () => {
    await withTools(repo, async ({ call }) => {
      await expect(call("view", { ref: "NOPE1" })).rejects.toThrow(/no symbol NOPE1/);
      await expect(call("view", { sheet: "/Nowhere/", x: 10, y: 10 })).rejects.toThrow(/sheets: \//);
    });
  });
});

describe("get_component", () => {
  test("says where each unit is drawn and how its fields are laid out", async () => {
    await withTools(repo, async ({ call }) => {
      const r1 = (await call("get_component", { ref: "R1" })) as { schematic: { sheet: string; x: number; y: number; rotation: number; fields: { name: string; visible: boolean; reads: string; box?: unknown }[] }[] };
      expect(r1.schematic).toHaveLength(1);
      expect(r1.schematic[0]).toMatchObject({ sheet: "/", x: 60.96, y: 72.39, rotation: 270 });
      const reference = r1.schematic[0]!.fields.find((f) => f.name === "Reference")!;
      expect(reference).toMatchObject({ visible: true, reads: "vertical" });
      expect(reference.box).toBeDefined();
    });
  });
});

describe("find_space", () => {
  test("a free area on the sheet near a part is clear of everything drawn", async () => {
    await withTools(repo, async ({ call, ctx }) => {
      const spot = (await call("find_space", { width: 20, height: 10, near: "R1" })) as { x: number; y: number; width: number; height: number };
      expect(spot.width).toBe(20);
      const { legend } = image(await call("view", { x: spot.x + 10, y: spot.y + 5, width: 20, height: 10 }));
      const inside = (legend.parts as { box: { x: number; y: number; width: number; height: number } }[]).filter(
        (p) => p.box.x < spot.x + 20 && p.box.x + p.box.width > spot.x && p.box.y < spot.y + 10 && p.box.y + p.box.height > spot.y,
      );
      expect(inside).toEqual([]);
      expect(existsSync(ctx.project.schematic)).toBe(true);
    });
  });

  test("on the board near a footprint", async () => {
    await withTools(repo, async ({ call }) => {
      const spot = (await call("find_space", { document: "board", width: 3, height: 2, near: "R1" })) as { centre: { x: number; y: number } };
      expect(Number.isFinite(spot.centre.x)).toBe(true);
    });
  });
});

