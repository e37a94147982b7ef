/**
 * The clearance model: a project's rules as KiCad reads them, and the obstacles of real boards
 * answering with the item in the way.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardRules, parseCustomRules } from "../../src/kicad/board/clearance/rules.ts";
import { circle, overlap, rectangle, stroke } from "../../src/kicad/board/clearance/geometry.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { corpusProjects } from "../support/corpora.ts";
import { FIXTURES_DIR } from "../support/kicad.ts";

const USB_LED = join(FIXTURES_DIR, "usb-led");

function corpusBoard(id: string): { board: Board; pro: string } {
  const project = corpusProjects().find((p) => p.id === id)!;
  return { board: Board.load(project.board!), pro: join(project.root, project.projectFile) };
}

describe("board rules", () => {
  test("net classes, board minimums and edge clearance from the .kicad_pro", () => {
    const { pro } = corpusBoard("corpus/glasgow-revc3");
    const rules = BoardRules.load(pro, null);
    expect(rules.netClass("GND").name).toBe("Power");
    expect(rules.clearance("GND", "+3V3")).toBeCloseTo(0.1499, 4);
    expect(rules.edgeClearance("GND")).toBeCloseTo(0.05, 4);
    expect(rules.holeClearance("GND", "")).toBeCloseTo(0.25, 4);
  });

  test("a net class pattern (KiCad 9) and the demo's custom rules", () => {
    const rules = BoardRules.load("/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pro", null);
    expect(rules.netClass("/VMEPX.A1").name).toBe("VMEPX");
    expect(rules.custom.length).toBeGreaterThan(5);
    // The board minimum (0.125) is above the Default class (0.1).
    expect(rules.clearance("GND", "")).toBeCloseTo(0.125, 4);
  });

  test("a custom rule applies where its condition may hold, and only raises a minimum", () => {
    const custom = parseCustomRules(`(version 1)
(rule hv (constraint clearance (min 0.5mm)) (condition "A.NetClass == 'HV'"))
(rule area (constraint edge_clearance (min 20mil)) (condition "A.intersectsArea('x')"))
(rule low (constraint clearance (min 0.05mm)))`);
    expect(custom.map((r) => r.min)).toEqual([
      { clearance: 0.5 },
      { edge_clearance: 20 * 0.0254 },
      { clearance: 0.05 },
    ]);
    const rules = BoardRules.fromProject(
      {
        net_settings: {
          classes: [
            { name: "Default", clearance: 0.2 },
            { name: "HV", clearance: 0.3 },
          ],
          netclass_patterns: [{ netclass: "HV", pattern: "VBAT*" }],
        },
        board: { design_settings: { rules: { min_copper_edge_clearance: 0.3 } } },
      },
      `(rule hv (constraint clearance (min 0.5mm)) (condition "A.NetClass == 'HV'"))
       (rule area (constraint edge_clearance (min 0.6mm)) (condition "A.intersectsArea('x')"))`,
    );
    expect(rules.clearance("GND", "SDA")).toBeCloseTo(0.2, 6);
    expect(rules.clearance("VBAT_IN", "GND")).toBeCloseTo(0.5, 6);
    expect(rules.clearance("GND", "VBAT_IN")).toBeCloseTo(0.5, 6);
    expect(rules.edgeClearance("GND")).toBeCloseTo(0.6, 6);
  });

  test("a project that sets nothing keeps KiCad's defaults", () => {
    const rules = BoardRules.fromProject({});
    expect(rules.clearance("A", "B")).toBe(0.2);
    expect(rules.edgeClearance("A")).toBe(0.5);
    expect(rules.via("A")).toEqual({ diameter: 0.6, drill: 0.3 });
  });
});

describe("board obstacles", () => {
  const board = Board.load(join(USB_LED, "usb-led.kicad_pcb"));
  const rules = BoardRules.load(join(USB_LED, "usb-led.kicad_pro"), null);
  const obstacles = new BoardObstacles(board, rules);
  const r3 = board.footprints().find((f) => f.ref === "R3")!;
  const pad = r3.pads[0]!;
  const padAt = { x: r3.at.x, y: r3.at.y };

  test("copper of another net over a pad is blocked by that pad; the pad's own net is not", () => {
    const pin = board
      .footprints()
      .flatMap((f) => f.pads.map((p) => ({ f, p })))
      .find(({ p }) => p.net?.name)!;
    const items = obstacles.near(
      { minX: pin.f.at.x - 3, minY: pin.f.at.y - 3, maxX: pin.f.at.x + 3, maxY: pin.f.at.y + 3 },
      (i) => i.kind === "pad" && i.what === `pad ${pin.p.number} of ${pin.f.ref}`,
    );
    expect(items).toHaveLength(1);
    const shape = items[0]!.shape();
    const other = obstacles.copperBlocker({ shape, net: "NOT_A_NET", layers: items[0]!.layers, kind: "track" });
    expect(other?.reason).toBe("clearance");
    const same = obstacles.copperBlocker({ shape, net: pin.p.net!.name, layers: items[0]!.layers, kind: "track" });
    expect(same?.item.what).not.toBe(`pad ${pin.p.number} of ${pin.f.ref}`);
    expect(pad.number).toBe("1");
  });

  test("a courtyard over R3's is blocked by R3's courtyard; one off the board is outside the outline", () => {
    const blocker = obstacles.courtyardBlocker(rectangle(padAt, 1, 1, 0), "F.CrtYd");
    expect(blocker?.item.what).toBe("the courtyard of R3");
    expect(obstacles.courtyardBlocker(rectangle(padAt, 1, 1, 0), "B.CrtYd")?.reason).not.toBe("courtyard");
    expect(obstacles.courtyardBlocker(rectangle({ x: -500, y: -500 }, 1, 1, 0), "F.CrtYd")?.reason).toBe(
      "outside the outline",
    );
  });

  test("copper at the board edge is blocked by the edge", () => {
    const [a] = obstacles.outline[0]!;
    const blocker = obstacles.copperBlocker({
      shape: circle(a, 0.1),
      net: "GND",
      layers: new Set(["F.Cu"]),
      kind: "via",
    });
    expect(blocker?.reason).toBe("edge clearance");
    expect(blocker?.item.what).toBe("the board edge");
  });

  test("a corpus board with rule areas and holes: a hole blocks copper of other nets", () => {
    const { board: glasgow, pro } = corpusBoard("corpus/glasgow-revc3");
    const o = new BoardObstacles(glasgow, BoardRules.load(pro, null));
    const hole = o.near(glasgow.edgeCutsBBox()!, (i) => i.kind === "hole" && i.net === "")[0];
    expect(hole).toBeDefined();
    const centre = { x: (hole!.box.minX + hole!.box.maxX) / 2, y: (hole!.box.minY + hole!.box.maxY) / 2 };
    const blocker = o.copperBlocker({
      shape: circle(centre, 0.05),
      net: "GND",
      layers: new Set(["F.Cu"]),
      kind: "via",
    });
    expect(blocker).toBeDefined();
  });
});

describe("a custom pad", () => {
  // custom_pads_test's SW1 pad 2 (/PAD2) is a ring pad reaching some 18 mm from its anchor.
  const board = Board.load("/usr/share/kicad/demos/custom_pads_test/custom_pads_test.kicad_pcb");
  const obstacles = new BoardObstacles(
    board,
    BoardRules.load("/usr/share/kicad/demos/custom_pads_test/custom_pads_test.kicad_pro", null),
  );
  const pad = obstacles.near(board.edgeCutsBBox()!, (i) => i.kind === "pad" && i.what === "pad 2 of SW1")[0]!;
  const copperAt = (p: { x: number; y: number }) => overlap(pad.shape(), circle(p, 0.05));

  test("is its primitives turned with the pad, not the square of its reach", () => {
    const shape = pad.shape();
    expect(shape.box.maxX - shape.box.minX).toBeLessThan(pad.box.maxX - pad.box.minX);
    // A corner of the square of reach, where a route once ended believing it had reached /PAD2.
    expect(copperAt({ x: pad.box.maxX - 0.3, y: pad.box.minY + 0.3 })).toBe(false);
    // Its anchor is copper.
    expect(copperAt(pad.ends![0]!)).toBe(true);
  });
});

describe("thermal spokes", () => {
  // A 1 mm ground pad at (10, 10) inside a ground pour: four spokes, two needed.
  const board = Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user))
  (net 0 "") (net 1 "GND") (net 2 "SIG")
  (footprint "T:P" (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000001") (at 10 10)
    (property "Reference" "TP1" (at 0 0 0) (layer "F.SilkS") (uuid "00000000-0000-0000-0000-000000000002"))
    (pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu") (net 1 "GND") (uuid "00000000-0000-0000-0000-000000000003")))
  (zone (net 1) (net_name "GND") (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000004") (hatch edge 0.5)
    (connect_pads (clearance 0.2)) (min_thickness 0.25) (filled_areas_thickness no)
    (fill (thermal_gap 0.5) (thermal_bridge_width 0.5))
    (polygon (pts (xy 0 0) (xy 20 0) (xy 20 20) (xy 0 20))))
  (gr_rect (start 0 0) (end 20 20) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts") (uuid "00000000-0000-0000-0000-000000000005"))
)`);
  const obstacles = new BoardObstacles(board, BoardRules.fromProject({}));
  const track = (...points: [number, number][]) => ({
    shape: stroke(
      points.map(([x, y]) => ({ x, y })),
      0.25,
    ),
    net: "SIG",
    layers: new Set(["F.Cu"]),
    kind: "track" as const,
  });

  test("a track of another net may cut one spoke off a pad in its pour: three are left", () => {
    expect(obstacles.copperBlocker(track([5, 11.3], [15, 11.3]))).toBeUndefined();
  });

  test("a track that cuts three spokes off is stopped by the pad's room for its spokes", () => {
    const blocker = obstacles.copperBlocker(track([8.7, 8], [8.7, 11.3], [11.3, 11.3], [11.3, 8]));
    expect(blocker?.reason).toBe("room for its thermal spokes");
    expect(blocker?.item.what).toBe("pad 1 of TP1");
  });

  // antenna-eval's H2 at (50, 64): a 6 mm pad ringed by 0.8 mm via pads, in a GND pour whose own
  // clearance is 0. The ring pad at (50, 66.25) has two spokes into fill, both pointing down
  // (its other two end inside the large pad); KiCad's DRC starved it when a pad sat below.
  test("a via pad inside a larger pad of its net keeps the two spokes that reach fill", () => {
    const { board: antenna, pro } = corpusBoard("corpus/antenna-eval");
    const o = new BoardObstacles(antenna, BoardRules.load(pro, null));
    const ring = o.near(
      { minX: 49.9, minY: 66.2, maxX: 50.1, maxY: 66.3 },
      (i) => i.kind === "pad" && i.box.maxX - i.box.minX < 2,
    )[0]!;
    expect(o.freeSpokes(ring)).toHaveLength(2);
    const pad = {
      shape: rectangle({ x: 50.775, y: 68 }, 0.9, 0.95, 0),
      net: "SIG",
      layers: new Set(["F.Cu"]),
      kind: "pad" as const,
    };
    expect(o.copperBlocker(pad)?.reason).toBe("room for its thermal spokes");
  });
});

describe("a pad's own clearance", () => {
  // A mounting hole with a 1.85 mm clearance of its own (pad "57" of H1) and a pad "57" of U1 without one.
  const board = Board.parse(`(kicad_pcb (version 20211014) (generator pcbnew)
  (layers (0 "F.Cu" signal) (31 "B.Cu" signal) (44 "Edge.Cuts" user))
  (net 0 "") (net 1 "GND") (net 2 "SIG")
  (footprint "T:H" (layer "F.Cu") (tstamp 00000000-0000-0000-0000-000000000001) (at 10 10)
    (fp_text reference "H1" (at 0 0) (layer "F.SilkS") (effects (font (size 1 1) (thickness 0.15))) (tstamp 00000000-0000-0000-0000-000000000002))
    (pad "" np_thru_hole circle (at 0 0) (size 3.3 3.3) (drill 3.3) (layers *.Cu *.Mask) (clearance 1.85) (tstamp 00000000-0000-0000-0000-000000000003)))
  (footprint "T:U" (layer "F.Cu") (tstamp 00000000-0000-0000-0000-000000000004) (at 30 10)
    (fp_text reference "U1" (at 0 0) (layer "F.SilkS") (effects (font (size 1 1) (thickness 0.15))) (tstamp 00000000-0000-0000-0000-000000000005))
    (pad "57" smd rect (at 0 0) (size 1 1) (layers "F.Cu") (net 1 "GND") (tstamp 00000000-0000-0000-0000-000000000006)))
  (gr_rect (start 0 0) (end 40 20) (layer "Edge.Cuts") (width 0.1) (tstamp 00000000-0000-0000-0000-000000000007))
)`);
  const obstacles = new BoardObstacles(board, BoardRules.fromProject({}));
  const track = (x: number) => ({
    shape: stroke(
      [
        { x, y: 5 },
        { x, y: 15 },
      ],
      0.25,
    ),
    net: "SIG",
    layers: new Set(["F.Cu"]),
    kind: "track" as const,
  });

  test("a track 1.5 mm from the mounting hole's edge is within its 1.85 mm", () => {
    const blocker = obstacles.copperBlocker(track(10 + 1.65 + 1.5 + 0.125));
    expect(blocker?.reason).toBe("hole clearance");
    expect(blocker?.item.what).toBe("a mounting hole of H1");
    expect(obstacles.copperBlocker(track(10 + 1.65 + 1.9 + 0.125))).toBeUndefined();
  });

  test("a pad without one keeps the net class's, whatever its number", () => {
    expect(obstacles.copperBlocker(track(30 + 0.5 + 0.3 + 0.125))).toBeUndefined();
  });
});
