/**
 * The `view` and `find_space` read tools on a real corpus project, with the real kicad-cli:
 * the PNG is decoded and its size and inked pixels checked, the legend names what is in the
 * region, and a second view of the unchanged design comes from the cache.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentDesign } from "../../src/agent/context.ts";
import { drawingOrder } from "../../src/agent/view/board-view.ts";
import { boardZones, zoneFills } from "../../src/kicad/board/zones/zones.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";
import { deepInside } from "../support/board-zones.ts";
import { image } from "../support/view-answers.ts";
import { pageArea } from "../../src/kicad/schematic/space.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";

let repo: string;

beforeAll(async () => {
  await requireKicadCli();
  const project = corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!;
  repo = (await copyCorpusProject(project)).root;
});
afterAll(cleanupTempDirs);

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
      expect(
        zones
          .filter((z) => z.filled)
          .map((z) => z.net)
          .sort(),
      ).toEqual(filled.map((z) => z.net).sort());
      expect(zones.every((z) => Array.isArray(z.layers) && typeof z.priority === "number")).toBe(true);
      // A spot with a millimetre of the front pour all round, where kicad-cli drew nothing: tinted, not bare board.
      const region = legend.region as { x: number; y: number; width: number; height: number };
      const spot = deepInside(filled, "F.Cu")!;
      const px = Math.round(((spot.x - region.x) / region.width) * (png.width - 1));
      const py = Math.round(((spot.y - region.y) / region.height) * (png.height - 1));
      expect(png.rgb(px, py)).not.toBe("ffffff");
      // The front is drawn on top when the question names no part on the back.
      expect(legend.layers).toEqual(["B.Cu", "F.Cu", "F.SilkS", "F.CrtYd", "B.CrtYd", "Edge.Cuts"]);
      expect(drawingOrder(["F.Cu", "In1.Cu", "B.Cu", "B.SilkS"], "back")).toEqual([
        "In1.Cu",
        "F.Cu",
        "B.Cu",
        "B.SilkS",
      ]);
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
      const r1 = (await call("get_component", { ref: "R1" })) as {
        schematic: {
          sheet: string;
          x: number;
          y: number;
          rotation: number;
          fields: { name: string; visible: boolean; reads: string; box?: unknown }[];
        }[];
      };
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
      const spot = (await call("find_space", { width: 20, height: 10, near: "R1" })) as {
        x: number;
        y: number;
        width: number;
        height: number;
      };
      expect(spot.width).toBe(20);
      const { legend } = image(await call("view", { x: spot.x + 10, y: spot.y + 5, width: 20, height: 10 }));
      const inside = (legend.parts as { box: { x: number; y: number; width: number; height: number } }[]).filter(
        (p) =>
          p.box.x < spot.x + 20 &&
          p.box.x + p.box.width > spot.x &&
          p.box.y < spot.y + 10 &&
          p.box.y + p.box.height > spot.y,
      );
      expect(inside).toEqual([]);
      expect(existsSync(ctx.project.schematic)).toBe(true);
    });
  });

  test("on the board near a footprint", async () => {
    await withTools(repo, async ({ call }) => {
      const spot = (await call("find_space", { document: "board", width: 3, height: 2, near: "R1" })) as {
        centre: { x: number; y: number };
      };
      expect(Number.isFinite(spot.centre.x)).toBe(true);
    });
  });
});

/** Replaces `from` (which must be there) in a file of `dir`. */
function edit(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to));
}

/** Seconds `fn` takes, with what it answered or the error it threw. */
async function timed(fn: () => Promise<unknown>): Promise<{ seconds: number; answer: unknown }> {
  const start = performance.now();
  const answer = await fn().catch((e: unknown) => e);
  return { seconds: (performance.now() - start) / 1000, answer };
}

describe("find_space on a 2 m design", () => {
  // usb-led's parts sit in the middle of an outline (or a page) 2,000 mm a side: a metre-wide
  // area asked for there took 100 s to 5 minutes a call, each check of it walking hundreds of
  // thousands of empty index buckets, at tens of thousands of positions 0.25 mm apart.
  test("on the board, a 1,000 mm area is searched on a coarse grid, in seconds", async () => {
    const big = await copyFixture("usb-led");
    edit(big, "usb-led.kicad_pcb", "(start 100 83)\n\t\t(end 140 102)", "(start -880 -907)\n\t\t(end 1120 1093)");
    await withTools(big, async ({ call }) => {
      const blocked = await timed(() =>
        call("find_space", { document: "board", width: 1000, height: 1000, near: "R1" }),
      );
      expect(String(blocked.answer)).toContain(
        "no free area of 1000 × 1000 mm on the front within 15 mm of R1: the courtyard of",
      );
      expect(blocked.seconds).toBeLessThan(10);

      // J2, a through-hole header, keeps its courtyard on the back too: the area is asked away from it.
      const back = await timed(() =>
        call("find_space", { document: "board", side: "back", width: 600, height: 600, x: 700, y: 650 }),
      );
      const spot = back.answer as { centre: { x: number; y: number }; distance: number };
      // Tried 6 mm apart (a hundredth of the area), from the grid's origin: a few dozen positions.
      expect(spot.centre).toEqual({ x: 690, y: 636 });
      // From the centre to the point asked about.
      expect(spot.distance).toBe(17.2);
      expect(back.seconds).toBeLessThan(10);

      // A small area keeps the fine search: the same spot as on the board at its own size.
      const small = (await call("find_space", { document: "board", width: 3, height: 2, near: "R1" })) as {
        centre: { x: number; y: number };
      };
      expect(small.centre).toEqual({ x: 109, y: 84.5 });
    });
  }, 60_000);

  test("on a sheet, a 1,000 mm area that fits nowhere is turned down in seconds", async () => {
    const big = await copyFixture("usb-led");
    edit(big, "usb-led.kicad_sch", '(paper "A4")', '(paper "User" 2000 2000)');
    // A small rectangle in the middle of the page: no metre square clears it.
    edit(
      big,
      "usb-led.kicad_sch",
      "\n\t(symbol\n",
      '\n\t(rectangle (start 1000 1000) (end 1001 1001) (stroke (width 0) (type default)) (fill (type none)) (uuid "5b0c3a52-8d7e-4f0e-9a43-2f6f7e1d9c11"))\n\t(symbol\n',
    );
    await withTools(big, async ({ call }) => {
      const full = await timed(() => call("find_space", { width: 1000, height: 1000, near: "R1" }));
      expect(String(full.answer)).toContain("no free area of 1000 × 1000 mm on sheet /");
      expect(full.seconds).toBeLessThan(10);
      const fits = (await call("find_space", { width: 900, height: 900, near: "R1" })) as { x: number; y: number };
      expect(fits.x + 900).toBeLessThan(1000);
      const small = (await call("find_space", { width: 20, height: 10, near: "R1" })) as { x: number; y: number };
      expect(small).toMatchObject({ x: 96.52, y: 106.68 });
    });
  }, 60_000);

  test("a user page size is clamped as eeschema clamps it", async () => {
    const big = await copyFixture("usb-led");
    edit(big, "usb-led.kicad_sch", '(paper "A4")', '(paper "User" 1000000000 1)');
    const { area } = pageArea(loadSchematicProject(join(big, "usb-led.kicad_sch")).root.file);
    // 3,048 mm by 25.4 mm less the 12.7 mm frame, in IU (10,000 a mm).
    expect(area).toEqual({ x0: 127_000, y0: 127_000, x1: 30_353_000, y1: 127_000 });
  });
});
