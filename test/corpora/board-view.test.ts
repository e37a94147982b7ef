/**
 * The model's view of a poured board, on every board of both corpora (the shared one and the
 * repository's): `view` of the whole board lists each filled zone in its legend (net, layers,
 * priority, filled) and draws the pours, so a spot a millimetre inside an outer layer's fill is
 * tinted in the PNG, not bare board. Whether its ratsnest lists what DRC does is
 * connectivity.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { currentDesign } from "../../src/agent/context.ts";
import { boardZones, zoneFills } from "../../src/kicad/board/zones/zones.ts";
import { copyCorpusProject, corpusProjects, fixtureCorpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";
import { deepInside } from "../support/board-zones.ts";
import { image } from "../support/view-answers.ts";

beforeAll(async () => {
  await requireKicadCli();
});
afterAll(cleanupTempDirs);

describe("view of the whole board draws its pours and lists them", () => {
  for (const project of [...corpusProjects(), ...fixtureCorpusProjects()].filter((p) => p.board)) {
    test(project.id, async () => {
      const repo = (await copyCorpusProject(project)).root;
      await withTools(repo, async ({ call, ctx }) => {
        const { legend, png } = image(await call("view", { document: "board" }));
        const board = currentDesign(ctx).board!;
        const filled = boardZones(board.root).filter((z) => z.filled && !z.ruleArea && zoneFills(z).length > 0);
        expect(filled.length).toBeGreaterThan(0);
        const zones = legend.zones as { net: string | null; layers: string[]; priority: number; filled: boolean }[];
        expect(
          zones
            .filter((z) => z.filled)
            .map((z) => z.net ?? "")
            .sort(),
        ).toEqual(filled.map((z) => z.net).sort());
        const region = legend.region as { x: number; y: number; width: number; height: number };
        const spots = ["F.Cu", "B.Cu"].flatMap((layer) => deepInside(filled, layer) ?? []);
        expect(spots.length).toBeGreaterThan(0);
        // Beyond the board, the corner of the picture, is paper.
        expect(png.rgb(0, 0)).toBe("ffffff");
        for (const spot of spots) {
          const px = Math.round(((spot.x - region.x) / region.width) * (png.width - 1));
          const py = Math.round(((spot.y - region.y) / region.height) * (png.height - 1));
          expect(png.rgb(px, py), `${spot.x}, ${spot.y}`).not.toBe("ffffff");
        }
      });
    }, 300_000);
  }
});
