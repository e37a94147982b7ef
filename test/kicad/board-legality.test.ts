/**
 * One legality for placement and `find_space`: the spot `find_space` offers a footprint is one
 * `place_footprint` accepts, on every corpus board, and the rules that decide it are DRC's:
 * same-net copper, pads joined solid to a pour, courtyards per side but a mounting hole's on both,
 * silkscreen on the board and off exposed copper, a footprint's copper drawings.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { rectangle, stroke } from "../../src/kicad/board/clearance/geometry.ts";
import { FAR, placeAdditions, placeFootprint, spotNear } from "../../src/kicad/board/placement.ts";
import { footprintItems, textShape } from "../../src/kicad/board/clearance/items.ts";
import { runKicadPython } from "../../src/kicad/cli/python.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { additionPlan, decouplingNets, mainIc } from "../support/board-additions.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { copperOnPads } from "../../src/kicad/board/nets.ts";
import { child, children, childText, cloneNode, text, type SList } from "../../src/kicad/sexpr/index.ts";
import { boardBounds, moveFootprint } from "../../src/kicad/board/footprint/instance.ts";
import { corpusProjects, demoProjects, fixtureCorpusProjects } from "../support/corpora.ts";
import { seededRandom } from "../support/seeded-random.ts";

/**
 * A copy of the board's first footprint `like` accepts as a new part `ref`, unlocked, with no
 * net on its pads (or its source's with `nets`), parked beside the outline: a part placement may move.
 */
function newPart(board: Board, ref: string, like: (fp: SList) => boolean, nets = false): SList | undefined {
  const source = children(board.root, "footprint").find(like);
  if (!source) return undefined;
  const node = cloneNode(source);
  node.items = node.items.filter(
    (i) => !(i.type === "atom" && i.raw === "locked") && !(i.type === "list" && text(i, 0) === "locked"),
  );
  const named = [
    ...children(node, "property").filter((p) => text(p, 1) === "Reference"),
    ...children(node, "fp_text").filter((t) => text(t, 1) === "reference"),
  ];
  for (const p of named) (p.items[2] as { raw: string }).raw = `"${ref}"`;
  if (!nets)
    for (const pad of children(node, "pad"))
      pad.items = pad.items.filter((i) => !(i.type === "list" && text(i, 0) === "net"));
  const box = board.edgeCutsBBox()!;
  moveFootprint(node, { x: box.maxX + 50, y: box.maxY + 50, rotation: 0 });
  board.root.items.push(node);
  return source;
}

const padTypes = (fp: SList) => children(fp, "pad").map((p) => text(p, 2));
const smdPassive = (fp: SList) => padTypes(fp).length === 2 && padTypes(fp).every((t) => t === "smd");
const throughHole = (fp: SList) =>
  padTypes(fp).length >= 2 && padTypes(fp).length <= 8 && padTypes(fp).every((t) => t === "thru_hole");

describe("find_space and place_footprint agree", () => {
  for (const project of [...corpusProjects(), ...fixtureCorpusProjects()].filter((p) => p.board)) {
    test(`${project.id}: every spot find_space offers, place_footprint accepts`, () => {
      const board = Board.load(project.board!);
      const rules = BoardRules.load(join(project.root, project.projectFile), null);
      const parts = [newPart(board, "ZZ1", smdPassive) && "ZZ1", newPart(board, "ZZ2", throughHole) && "ZZ2"].filter(
        (r): r is string => !!r,
      );
      const obstacles = new BoardObstacles(board, rules);
      const box = board.edgeCutsBBox()!;
      const next = seededRandom(34);
      let offered = 0;
      for (let i = 0; i < SPOTS; i++) {
        const ref = parts[i % parts.length]!;
        const x = box.minX + next() * (box.maxX - box.minX);
        const y = box.minY + next() * (box.maxY - box.minY);
        const rotation = [0, 90, 180, 270][Math.floor(next() * 4)]!;
        const side = next() < 0.5 ? "front" : "back";
        const { spot } = spotNear(board, ref, { minX: x, minY: y, maxX: x, maxY: y }, side, rotation, rules, obstacles);
        if (!spot) continue;
        offered++;
        expect(spot.rotation).toBe(rotation);
        expect(spot.side).toBe(side);
        const placed = placeFootprint(board, ref, { x: spot.x, y: spot.y, rotation, side }, rules, obstacles);
        expect(placed).toMatchObject({ x: spot.x, y: spot.y, rotation, side });
      }
      // A keyboard of switch courtyards side by side has no room anywhere; the others do.
      if (project.id !== "corpus/sweep-half-swept") expect(offered).toBeGreaterThan(0);
    }, 300_000);
  }
});

/**
 * Random spots asked per board: each is a full search of 15 mm around the spot, up to a tenth of
 * a second on a dense board, so the suite asks 100 (200 found bms-c1's via taken for routing,
 * where 20 did not). `SPOTS=1000 bun test test/kicad/board-legality.test.ts` asks a thousand per
 * board, about seven minutes for the corpus.
 */
const SPOTS = Number(process.env.SPOTS ?? 100);

describe("a part placed beside copper is not routed by it", () => {
  test("bms-c1: a via 0.36 mm from a 2010 resistor's pad, clear of it, does not make the part routed; a track ending on a pad does", () => {
    const { board, rules } = corpusBoard("corpus/bms-c1");
    newPart(board, "ZZ1", smdPassive);
    // The spot a run of 200 random spots offered, and accepted, and then refused to move from.
    placeFootprint(board, "ZZ1", { x: 175, y: 110.5, rotation: 0, side: "back" }, rules);
    expect(copperOnPads(board, board.footprint("ZZ1")!)).toBe(0);
    expect(() => placeFootprint(board, "ZZ1", { x: 175, y: 110.5, rotation: 0, side: "back" }, rules)).not.toThrow();
    const routed = board.footprints().find((f) => copperOnPads(board, f) > 0);
    expect(routed).toBeDefined();
  });
});

function corpusBoard(id: string): { board: Board; rules: BoardRules } {
  const project = corpusProjects().find((p) => p.id === id)!;
  return { board: Board.load(project.board!), rules: BoardRules.load(join(project.root, project.projectFile), null) };
}

describe("the rules a spot is held to are DRC's", () => {
  const uext = corpusBoard("corpus/uext-esp32-c3");
  const obstacles = new BoardObstacles(uext.board, uext.rules);

  test("a pad on a track of its own net is clear of it; of another net, it is not", () => {
    const track = obstacles.all((i) => i.kind === "track" && i.net !== "" && i.layers.has("F.Cu"))[0]!;
    const end = track.ends![0]!;
    const pad = (net: string) => ({
      shape: rectangle(end, 0.5, 0.5, 0),
      net,
      layers: new Set(["F.Cu"]),
      kind: "pad" as const,
    });
    expect(obstacles.copperBlocker(pad("NOT_A_NET"))?.item).toBeDefined();
    expect(obstacles.copperBlocker(pad(track.net))?.item).not.toBe(track);
  });

  test("a mounting hole's courtyard keeps parts out on the side it is not drawn on", () => {
    // emf-hexpansion's M2 mounting holes draw their courtyard on the front only.
    const { board, rules } = corpusBoard("corpus/emf-hexpansion");
    const o = new BoardObstacles(board, rules);
    const drawnOn = (fp: SList, layer: string) =>
      fp.items.some((i) => i.type === "list" && text(child(i, "layer") ?? i, 1) === layer);
    const hole = board
      .footprints()
      .find((f) => f.libId.startsWith("MountingHole:") && drawnOn(f.node, "F.CrtYd") && !drawnOn(f.node, "B.CrtYd"))!;
    expect(hole).toBeDefined();
    const at = { x: hole.at.x, y: hole.at.y };
    expect(o.courtyardBlocker(rectangle(at, 1, 1, 0), "B.CrtYd")).toMatchObject({
      reason: "courtyard",
      item: { what: `the courtyard of ${hole.ref}` },
    });
  });

  test("a through-hole part's courtyard stays on its side: a small part may go on the back between its pins", () => {
    // rvpc-revb is through-hole on the front: mirrored to the back, its parts' courtyards left
    // find_space no spot anywhere there, where DRC (courtyards per side) allows one.
    const { board, rules } = corpusBoard("corpus/rvpc-revb");
    newPart(board, "ZZ1", smdPassive);
    const o = new BoardObstacles(board, rules);
    const vga = board.footprints().find((f) => f.ref === "VGA1")!;
    const blocker = o.courtyardBlocker(rectangle({ x: vga.at.x, y: vga.at.y }, 1, 1, 0), "B.CrtYd");
    expect(blocker?.item.what).not.toBe("the courtyard of VGA1");
    const { spot } = spotNear(board, "ZZ1", boardBounds(vga.node)!, "back", 0, rules, o);
    expect(spot).toMatchObject({ side: "back" });
    expect(placeFootprint(board, "ZZ1", { ...spot!, side: "back" }, rules, o)).toMatchObject({
      x: spot!.x,
      y: spot!.y,
    });
    // A mounting hole's courtyard keeps the back too.
    const hole = board.footprints().find((f) => f.ref === "MH1")!;
    expect(o.courtyardBlocker(rectangle({ x: hole.at.x, y: hole.at.y }, 1, 1, 0), "B.CrtYd")?.item.what).toBe(
      "the courtyard of MH1",
    );
  });

  test("silkscreen stays off exposed copper (a footprint's mask opening) and on the board", () => {
    const { board, rules } = corpusBoard("corpus/glasgow-revc3");
    const o = new BoardObstacles(board, rules);
    const opening = o.all((i) => i.kind === "mask" && i.layers.has("F.Mask"))[0]!;
    expect(opening).toBeDefined();
    const centre = { x: (opening.box.minX + opening.box.maxX) / 2, y: (opening.box.minY + opening.box.maxY) / 2 };
    const silk = stroke([centre, { x: centre.x + 0.01, y: centre.y }], 0.12);
    expect(o.silkBlocker(silk, "F.SilkS")?.reason).toMatch(/silkscreen over (exposed copper|a pad)|^silkscreen$/);
    const [a, b] = o.outline[0]!;
    expect(o.silkBlocker(stroke([a, b], 0.12), "F.SilkS")?.reason).toBe("silkscreen off the board");
  });

  test("silkscreen stays off a mounting hole's mask opening, on both sides", () => {
    // antenna-eval's bare 1 mm holes: a new capacitor's reference over one was "silkscreen clipped by solder mask".
    const { board, rules } = corpusBoard("corpus/antenna-eval");
    const o = new BoardObstacles(board, rules);
    const holes = o.all((i) => i.kind === "mask" && i.what.startsWith("the mask opening of a mounting hole"));
    const front = holes.find((h) => h.layers.has("F.Mask"))!;
    expect(holes.some((h) => h.layers.has("B.Mask") && h.box.minX === front.box.minX)).toBe(true);
    const centre = { x: (front.box.minX + front.box.maxX) / 2, y: (front.box.minY + front.box.maxY) / 2 };
    const silk = stroke([centre, { x: centre.x + 0.01, y: centre.y }], 0.12);
    expect(o.silkBlocker(silk, "F.SilkS")?.reason).toBe("silkscreen over exposed copper");
    expect(o.silkBlocker(silk, "B.SilkS")?.reason).toBe("silkscreen over exposed copper");
  });

  test("silkscreen stays off a pad's mask opening where it is set wider than the pad", () => {
    // Fiducials open the mask round their pad: tiny_tapeout's FID3 is a 1 mm pad with a 0.5 mm
    // margin. On pico-ice a new LED's reference beside such a one, clear of its copper, was
    // "silkscreen clipped by solder mask".
    const project = demoProjects().find((p) => p.id === "demos/tiny_tapeout/tinytapeout-demo")!;
    const board = Board.load(project.board!);
    const o = new BoardObstacles(board, BoardRules.load(join(project.root, project.projectFile), null));
    const fiducial = board.footprint("FID3")!;
    const at = (r: number) => ({ x: fiducial.at.x + r, y: fiducial.at.y });
    const silkAt = (r: number) => o.silkBlocker(stroke([at(r), at(r + 0.01)], 0.12), "F.SilkS");
    // Past the copper (0.5 mm round), inside the opening (1 mm round).
    expect(silkAt(0.75)).toMatchObject({
      reason: "silkscreen over exposed copper",
      item: { what: "the mask opening of a mechanical pad of FID3" },
    });
    expect(silkAt(1.2)?.item.ref).not.toBe("FID3");
  });
});

describe("thermal spokes only where the zone's rules join the pad by spokes", () => {
  /** A ground pad at (10, 10) in a ground pour, `pad` its extra settings, `connect` the zone's. */
  const board = (pad: string, connect: string) =>
    new BoardObstacles(
      Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user))
  (net 0 "") (net 1 "GND") (net 2 "SIG")
  (footprint "T:P" (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000001") (at 10 10)
    (property "Reference" "TP1" (at 0 0 0) (layer "F.SilkS") (uuid "00000000-0000-0000-0000-000000000002"))
    (pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu") (net 1 "GND") ${pad} (uuid "00000000-0000-0000-0000-000000000003")))
  (zone (net 1) (net_name "GND") (layer "F.Cu") (uuid "00000000-0000-0000-0000-000000000004") (hatch edge 0.5)
    (connect_pads ${connect} (clearance 0.2)) (min_thickness 0.25) (filled_areas_thickness no)
    (fill (thermal_gap 0.5) (thermal_bridge_width 0.5))
    (polygon (pts (xy 0 0) (xy 20 0) (xy 20 20) (xy 0 20))))
  (gr_rect (start 0 0) (end 20 20) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts") (uuid "00000000-0000-0000-0000-000000000005"))
)`),
      BoardRules.fromProject({}),
    );
  // Three sides of the pad closed off by a track of another net: one spoke left.
  const track = {
    shape: stroke(
      [
        { x: 8.7, y: 8 },
        { x: 8.7, y: 11.3 },
        { x: 11.3, y: 11.3 },
        { x: 11.3, y: 8 },
      ],
      0.25,
    ),
    net: "SIG",
    layers: new Set(["F.Cu"]),
    kind: "track" as const,
  };

  test("a pad the pour joins by spokes keeps two", () => {
    expect(board("", "").copperBlocker(track)?.reason).toBe("room for its thermal spokes");
  });

  test("a pad joined solid, by its own setting, needs none", () => {
    expect(board("(zone_connect 2)", "").copperBlocker(track)).toBeUndefined();
  });

  test("a surface-mount pad in a zone that spokes only through-hole pads needs none", () => {
    expect(board("", "thru_hole_only").copperBlocker(track)).toBeUndefined();
  });
});

/**
 * A closed silkscreen outline drawn unfilled is a line, not an area: a part inside a panel's
 * frame 1.4 mm from its lines is clear of it (the regulator's capacitor was refused "a board
 * drawing on F.SilkS is in the way"); one on the line is not; a filled one is an area.
 */
describe("a closed silkscreen outline", () => {
  const obstacles = (fill: string) =>
    new BoardObstacles(
      Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user) (37 "F.SilkS" user))
  (net 0 "")
  (gr_rect (start 0 0) (end 40 40) (stroke (width 0.1) (type default)) (fill no) (layer "Edge.Cuts") (uuid "00000000-0000-0000-0000-000000000005"))
  (gr_rect (start 5 5) (end 35 35) (stroke (width 0.15) (type default)) (fill ${fill}) (layer "F.SilkS") (uuid "00000000-0000-0000-0000-000000000006"))
)`),
      BoardRules.fromProject({}),
    );
  const part = (x: number, y: number) => rectangle({ x, y }, 1.6, 0.8, 0);

  test("unfilled, it keeps a part off its lines only", () => {
    expect(obstacles("no").silkBlocker(part(20, 20), "F.SilkS")).toBeUndefined();
    expect(obstacles("no").silkBlocker(part(7.2, 20), "F.SilkS")).toBeUndefined();
    expect(obstacles("no").silkBlocker(part(5, 20), "F.SilkS")?.item.what).toContain("F.SilkS");
  });

  test("filled, it is an area", () => {
    expect(obstacles("solid").silkBlocker(part(20, 20), "F.SilkS")).toBeDefined();
  });
});

describe("a pad's spokes into a pour are cut only by copper on the pour's layers", () => {
  // interf_u's U8 is a through-hole DIP on the front; the ground pour is on the back. KiCad's
  // fill joins pin 12 by two spokes on B.Cu, right and up; the front track of /PC-A0 beside the
  // pin crosses the right one's corridor on F.Cu, where there is no pour.
  const project = demoProjects().find((p) => p.id === "demos/interf_u/interf_u")!;
  const board = Board.load(project.board!);
  const obstacles = new BoardObstacles(board, BoardRules.load(join(project.root, project.projectFile), null));
  const pin12 = obstacles.all((i) => i.kind === "pad" && i.ref === "U8" && i.pad === "12")[0]!;
  /** A 0603's VCC pad 1.9 mm right of the pin, where a capacitor for U1 was put on `layer`. */
  const vccPad = (layer: string) => ({
    shape: rectangle({ x: 153.67, y: 113.17 }, 0.9, 0.95, 0),
    net: "VCC",
    layers: new Set([layer]),
    kind: "pad" as const,
  });

  test("U8's pin 12 has its two spokes on B.Cu, as KiCad's fill has", () => {
    const free = obstacles.freeSpokes(pin12);
    expect(free.map((s) => [...s.layers])).toEqual([["B.Cu"], ["B.Cu"]]);
    const centre = { x: 151.765, y: 112.903 };
    const sides = free.map(({ corridor: { box } }) =>
      box.maxX > centre.x + 1 ? "right" : box.minY < centre.y - 1 ? "up" : "other",
    );
    expect(sides.sort()).toEqual(["right", "up"]);
  });

  test("a back pad of another net beside it would cut one of the two: refused", () => {
    expect(obstacles.copperBlocker(vccPad("B.Cu"))).toMatchObject({
      item: { what: "pad 12 of U8" },
      reason: "room for its thermal spokes",
    });
  });

  test("the same pad on the front, where the pin has no pour, leaves the spokes alone", () => {
    expect(obstacles.copperBlocker(vccPad("F.Cu"))?.reason).not.toBe("room for its thermal spokes");
  });
});

describe("the spot a designer would pick", () => {
  // sweep-half-swept's Pro Micro (U1) is a 33 mm module with vcc on one pin: its capacitor went
  // 24 mm from that pin, at the nearest free spot by the module's courtyard.
  test("a decoupling capacitor goes beside the IC's pin of its supply, not anywhere along the IC", async () => {
    const project = corpusProjects().find((p) => p.id === "corpus/sweep-half-swept")!;
    const board = Board.load(project.board!);
    const rules = BoardRules.load(join(project.root, project.projectFile), null);
    const libraries = await openLibraries(join(project.root, project.projectFile));
    const ic = mainIc(board);
    const [supply, ground] = decouplingNets(board, ic);
    expect(ground).not.toBe(supply);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", [supply, ground]);
    expect(placeAdditions(board, plan, libraries, () => ic.ref, rules)).toEqual([]);
    const items = footprintItems(ic.node, ["F.Cu", "B.Cu"]).filter((i) => i.kind === "pad" && i.net === supply);
    const nearest = Math.min(
      ...items.map((p) => Math.hypot(p.ends![0]!.x - plan.added[0]!.at.x, p.ends![0]!.y - plan.added[0]!.at.y)),
    );
    expect(nearest).toBeLessThan(FAR);
    expect(plan.added[0]!.far).toBeUndefined();
  });

  test("a power LED tied to the IC only by ground goes beside the IC on its side, not by one of its ground pads", async () => {
    // On sweep a ground pad of the Pro Micro is on the back: pinned to it, the LED went there, and
    // its resistor found no way to vcc among the switch tracks.
    const project = corpusProjects().find((p) => p.id === "corpus/sweep-half-swept")!;
    const board = Board.load(project.board!);
    const rules = BoardRules.load(join(project.root, project.projectFile), null);
    const libraries = await openLibraries(join(project.root, project.projectFile));
    const ic = mainIc(board);
    const [supply, ground] = decouplingNets(board, ic);
    // After the decoupling capacitor, as a run adds them, the LED with its resistor.
    const capacitor = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", [supply, ground]);
    expect(placeAdditions(board, capacitor, libraries, () => ic.ref, rules)).toEqual([]);
    applyBoardSync(board, capacitor, libraries);
    const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", ["PWR_LED", ground]);
    const resistor = additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", [supply, "PWR_LED"]);
    const code = Math.max(...board.nets().map((n) => n.code ?? 0)) + 1;
    const plan = { ...led, added: [...led.added, ...resistor.added], renets: [{ to: "PWR_LED", code }] };
    expect(placeAdditions(board, plan, libraries, (ref) => (ref === "R900" ? "D900" : ic.ref), rules)).toEqual([]);
    expect(plan.added[0]!.side).toBe(ic.layer.startsWith("B.") ? "back" : "front");
    expect(plan.added[0]!.far).toBeUndefined();
  }, 60_000);

  test("a part far from the pin it serves says how far, and what fills the nearer spots", () => {
    // U1's pin 1 (+3V3) sits in the middle of a 24 mm courtyard: no spot within 12 mm of it.
    const pad = (net: string, n: number) =>
      `(pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu" "F.Paste" "F.Mask") (net 1 "${net}") (uuid "40000000-0000-4000-8000-00000000000${n}"))`;
    const footprint = (ref: string, x: number, y: number, half: number, n: number) => `
  (footprint "Test:Part" (layer "F.Cu") (uuid "00000000-0000-4000-8000-00000000000${n}") (at ${x} ${y})
    (property "Reference" "${ref}" (at 0 0 0) (layer "F.Fab") (uuid "10000000-0000-4000-8000-00000000000${n}"))
    (fp_rect (start -${half} -${half}) (end ${half} ${half}) (stroke (width 0.05) (type solid)) (fill no) (layer "F.CrtYd") (uuid "30000000-0000-4000-8000-00000000000${n}"))
    ${pad("+3V3", n)})`;
    const board = Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user) (31 "F.CrtYd" user) (29 "B.CrtYd" user) (35 "F.Fab" user))
  (net 0 "") (net 1 "+3V3")${footprint("U1", 130, 130, 12, 1)}${footprint("C1", 200, 200, 1, 2)}
  (gr_rect (start 100 100) (end 160 160) (stroke (width 0.05) (type default)) (fill no) (layer "Edge.Cuts") (uuid "50000000-0000-4000-8000-000000000001"))
)`);
    // On the front: the back under U1 has room, and a via from there reaches the pin.
    const spot = placeFootprint(board, "C1", { near: "U1", side: "front" }, BoardRules.fromProject({}));
    expect(Math.hypot(spot.x - 130, spot.y - 130)).toBeGreaterThan(FAR);
    expect(spot.far).toMatch(
      /^1\d(\.\d)? mm from pad 1 of U1, the nearest free spot: nearer ones are taken by the courtyard of U1 \(courtyard\)/,
    );
  });

  test("a part that serves none of its neighbour's pins, put far from it, says how far from the part", () => {
    // C1 shares no net with U1 (a power LED beside an IC); K1's 48 mm courtyard frames U1, so the
    // nearest free spot is past it, 12 mm from U1's courtyard. It used to say nothing.
    const footprint = (ref: string, x: number, y: number, half: number, n: number, net: string) => `
  (footprint "Test:Part" (layer "F.Cu") (uuid "00000000-0000-4000-8000-00000000000${n}") (at ${x} ${y})
    (property "Reference" "${ref}" (at 0 0 0) (layer "F.Fab") (uuid "10000000-0000-4000-8000-00000000000${n}"))
    (fp_rect (start -${half} -${half}) (end ${half} ${half}) (stroke (width 0.05) (type solid)) (fill no) (layer "F.CrtYd") (uuid "30000000-0000-4000-8000-00000000000${n}"))
    (pad "1" smd rect (at 0 0) (size 1 1) (layers "F.Cu" "F.Paste" "F.Mask") (net ${net === "GND" ? 2 : 1} "${net}") (uuid "40000000-0000-4000-8000-00000000000${n}")))`;
    const board = Board.parse(`(kicad_pcb (version 20241229) (generator "pcbnew")
  (layers (0 "F.Cu" signal) (2 "B.Cu" signal) (25 "Edge.Cuts" user) (31 "F.CrtYd" user) (29 "B.CrtYd" user) (35 "F.Fab" user))
  (net 0 "") (net 1 "+3V3") (net 2 "GND")${footprint("U1", 130, 130, 12, 1, "+3V3")}${footprint("K1", 130, 130, 24, 3, "+3V3")}${footprint("C1", 200, 200, 1, 2, "GND")}
  (gr_rect (start 100 100) (end 160 160) (stroke (width 0.05) (type default)) (fill no) (layer "Edge.Cuts") (uuid "50000000-0000-4000-8000-000000000001"))
)`);
    const spot = placeFootprint(board, "C1", { near: "U1", side: "front" }, BoardRules.fromProject({}));
    expect(spot.far).toMatch(
      /^1\d(\.\d)? mm from U1, the nearest free spot: nearer ones are taken by the courtyard of K1/,
    );
  });
});

/**
 * Silkscreen keeps off silkscreen by the texts' true extent: every board text on a silkscreen
 * layer of Glasgow (upright, mirrored, justified, with and without descenders) is boxed around
 * all of what KiCad draws of it, by KiCad's own glyph outline. Its back URL's descenders reach
 * 0.4 mm below its height, and a new part's reference put just under it was silk over silk.
 */
describe("a silkscreen text's box holds all KiCad draws of it", () => {
  test("corpus/glasgow-revc3", async () => {
    const file = corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!.board!;
    const drawn = JSON.parse(
      await runKicadPython(
        `import json, sys, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
out = {}
for d in board.GetDrawings():
    if isinstance(d, pcbnew.PCB_TEXT) and d.GetLayerName().endswith("Silkscreen") and d.IsVisible():
        b = d.GetEffectiveTextShape().BBox()
        out[d.m_Uuid.AsString()] = [b.GetLeft() / 1e6, b.GetTop() / 1e6, b.GetRight() / 1e6, b.GetBottom() / 1e6]
print(json.dumps(out))
`,
        "measure the board's texts",
        { timeoutMs: 120_000, args: [file] },
      ),
    ) as Record<string, [number, number, number, number]>;
    const board = Board.load(file);
    const texts = children(board.root, "gr_text").filter((t) => drawn[childText(t, "uuid") ?? ""]);
    expect(texts.length).toBeGreaterThan(20);
    const outside = texts.flatMap((t) => {
      const box = textShape(t, 0, (p) => p)!.box;
      const [x0, y0, x1, y1] = drawn[childText(t, "uuid")!]!;
      const tolerance = 0.01;
      return x0 < box.minX - tolerance ||
        y0 < box.minY - tolerance ||
        x1 > box.maxX + tolerance ||
        y1 > box.maxY + tolerance
        ? [
            `${text(t, 1)}: KiCad draws ${[x0, y0, x1, y1].map((n) => n.toFixed(3))}, boxed ${[box.minX, box.minY, box.maxX, box.maxY].map((n) => n.toFixed(3))}`,
          ]
        : [];
    });
    expect(outside).toEqual([]);
  }, 180_000);
});

/**
 * A hidden footprint text draws nothing, so it is no silkscreen for a spot to keep clear of.
 * KiCad 6 and 7 mark it with a bare `hide` inside the `fp_text`, KiCad 8 on with `(hide yes)`:
 * on a board of each, every footprint's reference has a box exactly where KiCad shows it.
 */
describe("a footprint's reference is hidden exactly where KiCad hides it", () => {
  for (const id of ["fixtures/sofle-v2-soldered", "fixtures/esp32-p4-devkit-revc", "fixtures/pico-ice-rev3"]) {
    test(id, async () => {
      const file = fixtureCorpusProjects().find((p) => p.id === id)!.board!;
      const kicad = JSON.parse(
        await runKicadPython(
          `import json, sys, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
print(json.dumps({f.m_Uuid.AsString(): f.Reference().IsVisible() for f in board.GetFootprints()}))
`,
          "read which references are shown",
          { timeoutMs: 120_000, args: [file] },
        ),
      ) as Record<string, boolean>;
      const ours = Object.fromEntries(
        Board.load(file)
          .footprints()
          .map((fp) => {
            const field =
              children(fp.node, "property").find((p) => text(p, 1) === "Reference") ??
              children(fp.node, "fp_text").find((t) => text(t, 1) === "reference")!;
            const id = childText(fp.node, "uuid") ?? childText(fp.node, "tstamp") ?? "";
            return [id, textShape(field, 0, (p) => p) !== undefined];
          }),
      );
      expect(Object.values(kicad).filter((shown) => !shown).length).toBeGreaterThan(0);
      expect(ours).toEqual(kicad);
    }, 180_000);
  }
});
