/**
 * The clearance model: a project's rules as KiCad reads them, and the obstacles of real boards
 * answering with the item in the way.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardRules, parseCustomRules } from "../../src/kicad/board/clearance/rules.ts";
import { circle, rectangle } from "../../src/kicad/board/clearance/geometry.ts";
import { Board } from "../../src/kicad/board/view.ts";
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
    expect(custom.map((r) => r.min)).toEqual([{ clearance: 0.5 }, { edge_clearance: 20 * 0.0254 }, { clearance: 0.05 }]);
    const rules = BoardRules.fromProject(
      { net_settings: { classes: [{ name: "Default", clearance: 0.2 }, { name: "HV", clearance: 0.3 }], netclass_patterns: [{ netclass: "HV", pattern: "VBAT*" }] }, board: { design_settings: { rules: { min_copper_edge_clearance: 0.3 } } } },
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
    const pin = board.footprints().flatMap((f) => f.pads.map((p) => ({ f, p }))).find(({ p }) => p.net?.name)!;
    const items = obstacles.near({ minX: pin.f.at.x - 3, minY: pin.f.at.y - 3, maxX: pin.f.at.x + 3, maxY: pin.f.at.y + 3 }, (i) => i.kind === "pad" && i.what === `pad ${pin.p.number} of ${pin.f.ref}`);
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
    expect(obstacles.courtyardBlocker(rectangle({ x: -500, y: -500 }, 1, 1, 0), "F.CrtYd")?.reason).toBe("outside the outline");
  });

  test("copper at the board edge is blocked by the edge", () => {
    const [a] = obstacles.outline[0]!;
    const blocker = obstacles.copperBlocker({ shape: circle(a, 0.1), net: "GND", layers: new Set(["F.Cu"]), kind: "via" });
    expect(blocker?.reason).toBe("edge clearance");
    expect(blocker?.item.what).toBe("the board edge");
  });


  test("a corpus board with rule areas and holes: a hole blocks copper of other nets", () => {
    const { board: glasgow, pro } = corpusBoard("corpus/glasgow-revc3");
    const o = new BoardObstacles(glasgow, BoardRules.load(pro, null));
    const hole = o.near(glasgow.edgeCutsBBox()!, (i) => i.kind === "hole" && i.net === "")[0];
    expect(hole).toBeDefined();
    const centre = { x: (hole!.box.minX + hole!.box.maxX) / 2, y: (hole!.box.minY + hole!.box.maxY) / 2 };
    const blocker = o.copperBlocker({ shape: circle(centre, 0.05), net: "GND", layers: new Set(["F.Cu"]), kind: "via" });
    expect(blocker).toBeDefined();
  });
});
