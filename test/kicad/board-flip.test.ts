/**
 * A footprint flipped to the other side is the footprint KiCad's own `FOOTPRINT::Flip` makes:
 * compared item by item (layers of every pad, text and drawing, pad positions and angles, text
 * positions, angles, mirroring and justification) against KiCad's Python flipping the same
 * footprint of the same board. Also `place_footprint side: "back"` on a corpus board.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { flipFootprint } from "../../src/kicad/board/footprint/instance.ts";
import { placeAdditions, placeFootprint } from "../../src/kicad/board/placement.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { runKicadPython } from "../../src/kicad/cli/python.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { additionPlan, decouplingNets, mainIc } from "../support/board-additions.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const TIMEOUT = 300_000;

/**
 * Prints, as JSON, each named footprint of a board: its layer, position and orientation, and
 * every pad, text and drawing with its layers and geometry in nanometres and degrees. With
 * "flip" first, each is flipped by KiCad (optionally then moved to x, y, rotation) before.
 * With "refval", fields other than Reference and Value are left out: a KiCad 6 board keeps
 * them as bare properties with no position, so KiCad makes up one at each load.
 */
const DESCRIBE = `
import json, sys, pcbnew
mode, path, fields = sys.argv[1], sys.argv[2], sys.argv[3]
board = pcbnew.LoadBoard(path)
out = {}
for spec in sys.argv[4:]:
    ref, *place = spec.split(",")
    fp = board.FindFootprintByReference(ref)
    if mode == "flip":
        fp.Flip(fp.GetPosition(), pcbnew.FLIP_DIRECTION_TOP_BOTTOM)
        if place:
            fp.SetPosition(pcbnew.VECTOR2I(pcbnew.FromMM(float(place[0])), pcbnew.FromMM(float(place[1]))))
            fp.SetOrientationDegrees(float(place[2]))
    names = lambda item: sorted(item.GetLayerSet().Seq()) and [pcbnew.BOARD.GetStandardLayerName(l) for l in item.GetLayerSet().Seq()]
    pads = sorted([p.GetNumber(), p.GetPosition().x, p.GetPosition().y, round(p.GetOrientationDegrees() % 360, 3), names(p)] for p in fp.Pads())
    texts, shapes = [], []
    for t in list(fp.GraphicalItems()) + list(fp.GetFields()):
        if t.GetClass() == "PCB_FIELD" and fields == "refval" and not (t.IsReference() or t.IsValue()):
            continue
        if t.GetClass() in ("PCB_FIELD", "PCB_TEXT"):
            texts.append([t.GetClass(), t.GetText(), t.GetLayerName(), t.GetTextPos().x, t.GetTextPos().y, round(t.GetTextAngleDegrees() % 360, 3), t.IsMirrored(), int(t.GetHorizJustify())])
        else:
            shapes.append([t.GetClass(), t.GetLayerName(), t.GetStart().x, t.GetStart().y, t.GetEnd().x, t.GetEnd().y])
    out[ref] = {"layer": fp.GetLayerName(), "pos": [fp.GetPosition().x, fp.GetPosition().y], "orient": round(fp.GetOrientationDegrees() % 360, 3), "pads": pads, "texts": sorted(texts), "shapes": sorted(shapes)}
print(json.dumps(out))
`;

async function describe_(
  mode: "flip" | "as-is",
  board: string,
  specs: string[],
  fields: "all" | "refval" = "all",
): Promise<Record<string, unknown>> {
  return JSON.parse(
    await runKicadPython(DESCRIBE, "describe footprints", {
      timeoutMs: 120_000,
      args: [mode, board, fields, ...specs],
    }),
  );
}

/** Equal up to 1 nm of rounding in positions (KiCad keeps nanometres; the file keeps 1e-6 mm). */
function close(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") return Math.abs(a - b) <= 1;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object")
    return Object.keys(a).every((k) => close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  return a === b;
}

function corpusBoard(id: string) {
  return corpusProjects().find((p) => p.id === id)!;
}

describe("flipping a footprint as KiCad does", () => {
  test(
    "front to back at 0°, 90° and 45°, and back to front, on KiCad 8 and 6 boards",
    async () => {
      for (const [id, refs, fields] of [
        ["corpus/glasgow-revc3", ["C30", "R9", "U1", "U30"], "all"],
        ["corpus/rp2040-designguide", [], "refval"],
      ] as const) {
        const project = corpusBoard(id);
        const board = Board.load(project.board!);
        // Every back-side footprint of the board goes to the front, too (the first three).
        const back = board
          .footprints()
          .filter((f) => f.layer === "B.Cu")
          .slice(0, 3)
          .map((f) => f.ref);
        const chosen = [...refs, ...back];
        expect(chosen.length).toBeGreaterThan(0);
        for (const ref of chosen) flipFootprint(board.footprints().find((f) => f.ref === ref)!.node);
        const mine = join(await makeTempDir(), "flipped.kicad_pcb");
        writeFileSync(mine, printSexpr(board.doc));
        const kicad = await describe_("flip", project.board!, chosen, fields);
        const ours = await describe_("as-is", mine, chosen, fields);
        for (const ref of chosen) {
          if (!close(ours[ref], kicad[ref])) expect(ours[ref]).toEqual(kicad[ref]);
        }
      }
    },
    TIMEOUT,
  );

  test(
    'place_footprint side: "back" puts an unrouted capacitor on B.Cu, mirrored as KiCad mirrors it',
    async () => {
      const copy = await copyCorpusProject(corpusBoard("corpus/bms-c1"));
      const file = copy.board!;
      const board = Board.load(file);
      const ic = mainIc(board);
      const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", decouplingNets(board, ic));
      const pro = join(copy.root, copy.projectFile);
      const libraries = await openLibraries(pro);
      const rules = BoardRules.load(pro, null);
      expect(placeAdditions(board, plan, libraries, () => ic.ref, rules)).toEqual([]);
      applyBoardSync(board, plan, libraries);
      // Placement may already have put it on the back (where it can be routed): it starts on the front.
      if (board.footprints().find((f) => f.ref === "C900")!.layer !== "F.Cu")
        placeFootprint(board, "C900", { near: ic.ref, side: "front" }, rules);
      expect(board.footprints().find((f) => f.ref === "C900")!.layer).toBe("F.Cu");
      writeFileSync(file, printSexpr(board.doc));

      const spot = placeFootprint(board, "C900", { near: ic.ref, side: "back" }, rules);
      expect(spot.side).toBe("back");
      const moved = join(await makeTempDir(), "moved.kicad_pcb");
      writeFileSync(moved, printSexpr(board.doc));
      const placed = board.footprints().find((f) => f.ref === "C900")!;
      expect(placed.layer).toBe("B.Cu");
      const kicad = await describe_("flip", file, [`C900,${spot.x},${spot.y},${spot.rotation}`]);
      const ours = await describe_("as-is", moved, ["C900"]);
      if (!close(ours.C900, kicad.C900)) expect(ours.C900).toEqual(kicad.C900);
      console.log(
        `bms-c1: C900 flipped to the back at ${spot.x}, ${spot.y} rot ${spot.rotation}, ${spot.distance} mm from ${ic.ref}`,
      );
    },
    TIMEOUT,
  );
});
