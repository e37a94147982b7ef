/**
 * Zone refill with KiCad's own filler, on copies of real boards in the KiCad 6, 7 and 9
 * formats: the fills written into copperhead's tree are the ones KiCad saves itself, and every
 * byte outside the refilled zones' `filled_polygon` nodes is kept. On a board whose saved fills
 * today's KiCad would draw otherwise, KiCad's fill replaces them only around a change.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { placeAdditions } from "../../src/kicad/board/placement.ts";
import { connectAdded } from "../../src/kicad/board/route/connect-added.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import {
  boardZones,
  filledPolygons,
  insidePolygon,
  zoneOnLayer,
  zonesTouchedBy,
  type Zone,
} from "../../src/kicad/board/zones/zones.ts";
import { fillWithKicad, refillZones } from "../../src/kicad/board/zones/refill.ts";
import { children, parseSexpr, printSexpr, printSexprBytes, removeChild } from "../../src/kicad/sexpr/index.ts";
import { additionPlan, decouplingNets, mainIc } from "../support/board-additions.ts";
import { BoardEdit } from "../support/board-edits.ts";
import { deepInside, differingArea } from "../support/board-zones.ts";
import { corpusDir, demosDir } from "../support/corpora.ts";
import { rejectedCopperheadError } from "../support/errors.ts";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { runKicadPython } from "../../src/kicad/cli/python.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/** The board's text with every zone's fills taken out: what a refill must leave alone. */
function withoutFills(bytes: Uint8Array | string): string {
  const doc = parseSexpr(bytes);
  for (const zone of children(doc.root, "zone"))
    for (const fill of children(zone, "filled_polygon")) removeChild(zone, fill);
  return printSexpr(doc);
}

/** A copy of a board with its project file and rules, in a temp dir. */
async function copyBoard(board: string): Promise<string> {
  const dir = await makeTempDir();
  const stem = basename(board, ".kicad_pcb");
  for (const ext of [".kicad_pcb", ".kicad_pro", ".kicad_dru"]) {
    const from = join(dirname(board), stem + ext);
    if (existsSync(from)) copyFileSync(from, join(dir, stem + ext));
  }
  return join(dir, `${stem}.kicad_pcb`);
}

/** A point well inside one of the zone's fills on `layer` (1 mm of fill on every side). */
function insideFill(zone: Zone, layer: string): [number, number] {
  const at = deepInside([zone], layer);
  if (!at) throw new Error(`no room inside zone ${zone.id} on ${layer}`);
  return [at.x, at.y];
}

const boards = [
  { name: "KiCad 6 (uext-esp32-c3)", path: () => join(corpusDir(), "uext-esp32-c3/kicad/uext-esp32-c3.kicad_pcb") },
  { name: "KiCad 7 (emf-hexpansion)", path: () => join(corpusDir(), "emf-hexpansion/hexpansion/hexpansion.kicad_pcb") },
  { name: "KiCad 9 (ecc83-pp demo)", path: () => join(demosDir(), "ecc83/ecc83-pp.kicad_pcb") },
];

describe("refillZones", () => {
  for (const { name, path } of boards) {
    test(`${name}: a via of another net in a pour is cut out as KiCad cuts it; nothing else changes`, async () => {
      const file = await copyBoard(path());
      const edit = new BoardEdit(file);
      const layer = ["F.Cu", "B.Cu"].find((l) =>
        boardZones(edit.board.root).some((z) => z.filled && filledPolygons(z, l).length > 0),
      )!;
      const zone = boardZones(edit.board.root).find(
        (z) => z.filled && !z.ruleArea && filledPolygons(z, layer).length > 0,
      )!;
      const other = edit.board.nets().find((n) => n.name !== zone.net)!;
      const at = insideFill(zone, layer);
      edit.addVia(at, other.name);
      const edited = printSexprBytes(edit.board.doc);
      const touched = zonesTouchedBy(
        boardZones(edit.board.root),
        [
          {
            box: { minX: at[0] - 0.3, minY: at[1] - 0.3, maxX: at[0] + 0.3, maxY: at[1] + 0.3 },
            net: other.name,
            layers: "all",
          },
        ],
        0.5,
      );
      expect(touched.map((z) => z.id)).toContain(zone.id);

      // KiCad's own fill and save of the same edited board, for comparison.
      const saved = join(dirname(file), "kicad-saved.kicad_pcb");
      await fillWithKicad(
        Board.parse(edited),
        file,
        touched.map((z) => z.id),
        saved,
      );
      const result = await refillZones(edit.board, file, touched);
      expect(result.changed).toContain(zone.id);

      const mine = printSexprBytes(edit.board.doc);
      expect(withoutFills(mine)).toBe(withoutFills(edited));
      const theirs = boardZones(Board.parse(readFileSync(saved)).root);
      for (const z of touched) {
        const written = boardZones(Board.parse(mine).root).find((w) => w.id === z.id)!;
        const kicad = theirs.find((t) => t.id === z.id)!;
        for (const layer of ["F.Cu", "B.Cu"])
          expectSamePolygons(filledPolygons(written, layer), filledPolygons(kicad, layer));
      }
      // The via is cut out of the fill now.
      const after = boardZones(Board.parse(mine).root).find((z) => z.id === zone.id)!;
      expect(filledPolygons(after, layer).some((f) => insidePolygon(f, { x: at[0], y: at[1] }))).toBe(false);
    }, 120_000);
  }

  test("a board whose saved fills today's KiCad would draw otherwise: KiCad 9's fill around the change, the saved one elsewhere", async () => {
    // rp2040-designguide was filled by KiCad 6; KiCad 9 refills its GND pour with starved
    // thermal spokes on pads far from anything a change touches, which keep their saved fill.
    const file = await copyBoard(join(corpusDir(), "rp2040-designguide/PCB/RP2040-Guide.kicad_pcb"));
    const edit = new BoardEdit(file);
    const zone = boardZones(edit.board.root).find(
      (z) => z.filled && !z.ruleArea && z.net === "GND" && filledPolygons(z, "F.Cu").length > 0,
    )!;
    const at = insideFill(zone, "F.Cu");
    edit.addVia(at, "+3V3");
    const box = { minX: at[0] - 0.3, minY: at[1] - 0.3, maxX: at[0] + 0.3, maxY: at[1] + 0.3 };
    const touched = zonesTouchedBy(boardZones(edit.board.root), [{ box, net: "+3V3", layers: "all" }], 0.5);
    const whole = join(dirname(file), "whole-refill.kicad_pcb");
    await fillWithKicad(
      Board.parse(printSexprBytes(edit.board.doc)),
      file,
      touched.map((z) => z.id),
      whole,
    );

    await refillZones(edit.board, file, touched, {
      near: [
        { box: { minX: box.minX - 1, minY: box.minY - 1, maxX: box.maxX + 1, maxY: box.maxY + 1 }, layers: "all" },
      ],
    });
    writeFileSync(file, printSexprBytes(edit.board.doc));
    const cli = await requireKicadCli();
    const starved = async (board: string) =>
      (await runDrc(board, { cli })).report.violations.filter((v) => v.type === "starved_thermal").length;
    expect(await starved(whole)).toBeGreaterThan(0);
    expect(await starved(file)).toBe(0);
    const after = boardZones(Board.parse(readFileSync(file)).root).find((z) => z.id === zone.id)!;
    expect(filledPolygons(after, "F.Cu").some((f) => insidePolygon(f, { x: at[0], y: at[1] }))).toBe(false);
  }, 180_000);

  test("outside the window every point of a fill an older KiCad saved stays where it was, and so does every teardrop's clearance", async () => {
    // The Sofle keyboard's GND pours were saved by KiCad 6, 0.507997 mm from some of its 397
    // teardrops (the rule 0.508). Unfracturing a pour moved its points by nanometres all over
    // it: raw DRC found one more teardrop too near, 30 mm from the change.
    const file = await copyBoard(
      join(import.meta.dir, "../../fixtures/corpus/sofle-v2-soldered/Sofle_v2_soldered/PCB/SofleKeyboard.kicad_pcb"),
    );
    const edit = new BoardEdit(file);
    const zone = boardZones(edit.board.root).find((z) => z.net === "GND" && zoneOnLayer(z, "F.Cu"))!;
    const at = insideFill(zone, "F.Cu");
    edit.addVia(at, "VCC");
    const box = { minX: at[0] - 0.3, minY: at[1] - 0.3, maxX: at[0] + 0.3, maxY: at[1] + 0.3 };
    const before = filledPolygons(zone, "F.Cu").flat();
    await refillZones(edit.board, file, [zone], { near: [{ box, layers: "all" }] });
    const after = boardZones(edit.board.root).find((z) => z.id === zone.id)!;
    const points = new Set(filledPolygons(after, "F.Cu").flatMap((f) => f.map((p) => `${p.x} ${p.y}`)));
    const far = before.filter((p) => Math.hypot(p.x - at[0], p.y - at[1]) > 25);
    expect(far.length).toBeGreaterThan(10_000);
    expect(far.filter((p) => !points.has(`${p.x} ${p.y}`))).toEqual([]);
    writeFileSync(file, printSexprBytes(edit.board.doc));
    const tooNear = async (board: string) =>
      (await runDrc(board, { cli: await requireKicadCli() })).report.violations
        .filter((v) => v.type === "clearance" && v.items.every((i) => i.description.startsWith("Zone")))
        .map((v) =>
          v.items
            .map((i) => i.uuid)
            .sort()
            .join(" "),
        )
        .sort();
    const base = await copyBoard(
      join(import.meta.dir, "../../fixtures/corpus/sofle-v2-soldered/Sofle_v2_soldered/PCB/SofleKeyboard.kicad_pcb"),
    );
    expect(await tooNear(file)).toEqual(await tooNear(base));
  }, 240_000);

  test("a refill around a change gives KiCad's fill of the whole board, though KiCad fills only a window around it", async () => {
    // The capacitor's tracks on complex_hierarchy cut a strip of the B.Cu GND pour off from the
    // rest of it inside the window; the strip joins its pour outside, so it must stay.
    const file = await copyBoard(join(demosDir(), "complex_hierarchy/complex_hierarchy.kicad_pcb"));
    const board = Board.load(file);
    const rules = BoardRules.load(file.replace(/\.kicad_pcb$/, ".kicad_pro"), null);
    const ic = mainIc(board);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", decouplingNets(board, ic));
    const libraries = await openLibraries(dirname(file));
    expect(placeAdditions(board, plan, libraries, () => ic.ref, rules)).toEqual([]);
    applyBoardSync(board, plan, libraries);
    const { refilled } = await connectAdded(board, file, rules, ["C900"]);
    expect(refilled.length).toBeGreaterThan(0);

    const mine = printSexprBytes(board.doc);
    const whole = join(dirname(file), "whole-refill.kicad_pcb");
    await fillWithKicad(Board.parse(mine), file, refilled, whole);
    const theirs = boardZones(Board.parse(readFileSync(whole)).root);
    for (const zone of boardZones(Board.parse(mine).root).filter((z) => refilled.includes(z.id))) {
      const kicad = theirs.find((t) => t.id === zone.id)!;
      // The same copper: what differs is rounding where the change's fill was joined in.
      for (const layer of ["F.Cu", "B.Cu"])
        expect(differingArea(filledPolygons(zone, layer), filledPolygons(kicad, layer))).toBeLessThan(0.001);
    }
  }, 180_000);

  test("a new pad of the pour's own net is refilled with its thermal relief, not left in the saved solid fill", async () => {
    // antenna-eval is poured with GND all over: a capacitor from GND to GND beside J1 left in
    // the saved fill had no spokes, and raw DRC reported each pad's thermal relief starved.
    const project = join(corpusDir(), "antenna-eval/source/antenna-evaluation-board");
    const file = await copyBoard(join(project, "antenna-evaluation-board.kicad_pcb"));
    const board = Board.load(file);
    const rules = BoardRules.load(file.replace(/\.kicad_pcb$/, ".kicad_pro"), null);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", ["GND", "GND"]);
    const libraries = await openLibraries(dirname(file));
    expect(placeAdditions(board, plan, libraries, () => "J1", rules)).toEqual([]);
    applyBoardSync(board, plan, libraries);
    const { outcomes, refilled } = await connectAdded(board, file, rules, ["C900"]);
    expect(outcomes[0]!.added).toEqual([]);
    expect(refilled.length).toBeGreaterThan(0);
    writeFileSync(file, printSexprBytes(board.doc));
    const starved = (await runDrc(file, { cli: await requireKicadCli() })).report.violations.filter(
      (v) => v.type === "starved_thermal" && v.items.some((i) => i.description.includes("of C900")),
    );
    expect(starved).toEqual([]);
  }, 180_000);

  test("a zone whose fill comes out the same keeps its bytes", async () => {
    const file = await copyBoard(join(demosDir(), "ecc83/ecc83-pp.kicad_pcb"));
    const board = Board.load(file);
    const zones = boardZones(board.root).filter((z) => z.filled);
    await refillZones(board, file, zones);
    const once = printSexprBytes(board.doc);
    const again = await refillZones(
      board,
      file,
      boardZones(board.root).filter((z) => z.filled),
    );
    expect(again.changed).toEqual([]);
    expect(Buffer.from(printSexprBytes(board.doc)).equals(Buffer.from(once))).toBe(true);
  }, 120_000);
});

test("a FIFO or a link to a device beside the board (the rules, the project) is refused at once, never copied", async () => {
  for (const [ext, put] of [
    [".kicad_dru", (abs: string) => void Bun.spawnSync(["mkfifo", abs])],
    [".kicad_pro", (abs: string) => symlinkSync("/dev/zero", abs)],
  ] as const) {
    const file = await copyBoard(join(demosDir(), "ecc83/ecc83-pp.kicad_pcb"));
    const beside = file.replace(/\.kicad_pcb$/, ext);
    rmSync(beside, { force: true });
    put(beside);
    const board = Board.load(file);
    const refused = await rejectedCopperheadError(
      refillZones(
        board,
        file,
        boardZones(board.root).filter((z) => z.filled),
      ),
    );
    expect({ ext, code: refused.code }).toEqual({ ext, code: "bad_path" });
  }
}, 60_000);

/**
 * Same polygons, point for point. KiCad's filler runs threaded and two fills of the same board
 * can differ by a nanometre at a few vertices; more than 2 nm is a real difference.
 */
function expectSamePolygons(a: { x: number; y: number }[][], b: { x: number; y: number }[][]): void {
  expect(a.map((p) => p.length)).toEqual(b.map((p) => p.length));
  a.forEach((poly, i) =>
    poly.forEach((p, j) => {
      const q = b[i]![j]!;
      expect(Math.max(Math.abs(p.x - q.x), Math.abs(p.y - q.y))).toBeLessThanOrEqual(0.000002);
    }),
  );
}

/**
 * A zone outline with rounded corners is written with `(arc …)` pieces among its points:
 * RoyalBlue54L's VSYS pour under its charger has only arcs, and was read as no outline at all,
 * so a part put on it never had it refilled (raw DRC: its pads 0 mm from the pour). Every zone's
 * outline reads with the area KiCad gives it.
 */
describe("a zone outline drawn with arcs", () => {
  test("demos/royalblue54L_feather: every zone's outline has KiCad's area", async () => {
    const file = join(demosDir(), "royalblue54L_feather", "RoyalBlue54L-Feather.kicad_pcb");
    const areas = JSON.parse(
      await runKicadPython(
        `import json, sys, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
print(json.dumps({z.m_Uuid.AsString(): z.Outline().Area() / 1e12 for z in board.Zones() if z.Outline().OutlineCount() == 1}))
`,
        "measure the zones",
        { timeoutMs: 120_000, args: [file] },
      ),
    ) as Record<string, number>;
    const zones = boardZones(Board.load(file).root).filter((z) => areas[z.id] !== undefined);
    expect(zones.some((z) => printSexpr(z.node).includes("(arc"))).toBe(true);
    const area = (pts: { x: number; y: number }[]) =>
      Math.abs(
        pts.reduce((sum, p, i) => sum + p.x * pts[(i + 1) % pts.length]!.y - pts[(i + 1) % pts.length]!.x * p.y, 0),
      ) / 2;
    const off = zones
      .filter((z) => Math.abs(area(z.outline) - areas[z.id]!) > Math.max(0.01, areas[z.id]! * 0.01))
      .map((z) => `${z.net} ${z.id}: ${area(z.outline).toFixed(3)} mm², KiCad ${areas[z.id]!.toFixed(3)} mm²`);
    expect(off).toEqual([]);
  }, 180_000);
});
