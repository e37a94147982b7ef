/**
 * A new part for a real board without touching its schematic: a footprint addition as board
 * sync plans it (pads on nets the board has), next to the board's main IC, so placement can be
 * judged on every corpus board with kicad-cli's DRC alone.
 */
import { dirname, join } from "node:path";
import { expect } from "bun:test";
import { BOARD_SYNC_SCHEMA, type BoardSyncPlan, type FootprintAdd } from "../../src/kicad/board/sync/plan.ts";
import { Board, type Footprint } from "../../src/kicad/board/model.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { placeAdditions } from "../../src/kicad/board/placement.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import type { BoardEditor } from "../../src/kicad/board/editor.ts";
import type { AddedConnections } from "../../src/kicad/board/route/connect-added.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { copyCorpusProject, type CorpusProject } from "./corpora.ts";

/** The main IC: the U-part with the most pads (else the footprint with the most). */
export function mainIc(board: Board): Footprint {
  const fps = board.footprints().filter((f) => f.pads.length > 0);
  const ics = fps.filter((f) => /^U\d/.test(f.ref));
  return (ics.length ? ics : fps).reduce((a, b) => (b.pads.length > a.pads.length ? b : a));
}

/** A ground net and a supply net, on `ic`'s pads where it has them, else on the board (any other named net when the names say nothing, else the ground itself). */
export function decouplingNets(board: Board, ic: Footprint): [string, string] {
  const named = (n: string) => n !== "" && !n.startsWith("unconnected") && !n.startsWith("Net-(");
  const own = [...new Set(ic.pads.flatMap((p) => (p.net?.name && named(p.net.name) ? [p.net.name] : [])))];
  const nets = [
    ...own,
    ...board
      .nets()
      .map((n) => n.name)
      .filter((n) => named(n) && !own.includes(n)),
  ];
  const isGround = (n: string) => /gnd|vss/i.test(n);
  const isSupply = (n: string) => n !== ground && /^\+|v(cc|dd|io|bus)|3v3|1v8|5v|vin/i.test(n);
  const ground = own.find(isGround) ?? nets.find(isGround) ?? nets[0]!;
  const supply = own.find(isSupply) ?? nets.find(isSupply) ?? nets.find((n) => n !== ground) ?? ground;
  return [supply, ground];
}

/** A sync plan that adds one two-pad part with pads 1 and 2 on `nets`, staged as board sync stages it. */
export function additionPlan(board: Board, ref: string, libId: string, nets: [string, string]): BoardSyncPlan {
  const add: FootprintAdd = {
    ref,
    libId,
    value: "100n",
    path: `/00000000-0000-4000-8000-${ref
      .padStart(12, "0")
      .slice(-12)
      .replace(/[^0-9a-f]/gi, "0")}`,
    at: { x: 0, y: 0, rotation: 0 },
    side: "front",
    staged: true,
    fields: [],
    flags: [],
    pads: [
      { pad: "1", net: nets[0] },
      { pad: "2", net: nets[1] },
    ],
    uuidSeed: `test|${ref}|${libId}`,
  };
  return {
    schema: BOARD_SYNC_SCHEMA,
    netFormat: board.netFormat,
    version: board.version,
    added: [add],
    updated: [],
    removed: [],
    renets: [],
    warnings: [],
    skipped: [],
  };
}

/**
 * Adds `ref` (`libId`, pads 1 and 2 on `nets`, by default the main IC's decoupling pair) through
 * a run's `editor` as its board sync does: placed next to the board's main IC, then routed.
 */
export async function addNextToMainIc(
  editor: BoardEditor,
  ref: string,
  libId: string,
  nets?: [string, string],
): Promise<AddedConnections> {
  const ic = mainIc(editor.board);
  return addThrough(
    editor,
    additionPlan(editor.board, ref, libId, nets ?? decouplingNets(editor.board, ic)),
    () => ic.ref,
  );
}

/**
 * Adds an indicator LED by the main IC and its resistor by the LED (`indicatorPlan`, from the
 * IC's supply to its ground) through a run's `editor`: placed together, then routed.
 */
export async function addIndicatorNextToMainIc(editor: BoardEditor): Promise<AddedConnections> {
  const ic = mainIc(editor.board);
  const [supply, ground] = decouplingNets(editor.board, ic);
  const plan = indicatorPlan(editor.board, ground, supply, "PWR_LED");
  return addThrough(editor, plan, (ref) => (ref === "D900" ? ic.ref : "D900"));
}

/** `plan`'s parts placed (each by `anchorOf` it), synced onto the editor's board and routed. */
async function addThrough(
  editor: BoardEditor,
  plan: BoardSyncPlan,
  anchorOf: (ref: string) => string,
): Promise<AddedConnections> {
  const libraries = await openLibraries(dirname(editor.file));
  editor.change((board) => {
    expect(placeAdditions(board, plan, libraries, anchorOf, editor.rules)).toEqual([]);
    applyBoardSync(board, plan, libraries);
  });
  return editor.connect(plan.added.map((a) => a.ref));
}

/**
 * A sync plan that adds an indicator LED (D900, its anode on a new net `net`) and its series
 * resistor (R900, from `supply`): a net made only of new parts.
 */
function indicatorPlan(board: Board, ground: string, supply: string, net: string): BoardSyncPlan {
  const led = additionPlan(board, "D900", "LED_SMD:LED_0603_1608Metric", [ground, net]);
  const resistor = additionPlan(board, "R900", "Resistor_SMD:R_0603_1608Metric", [supply, net]);
  const code = Math.max(...board.nets().map((n) => n.code ?? 0)) + 1;
  return { ...led, added: [...led.added, ...resistor.added], renets: [{ to: net, code }] };
}

/**
 * A copy of `project` with an indicator LED placed by `ledBy` and its resistor by `resistorBy`
 * (`indicatorPlan`, on `nets`), synced onto its board and not routed: the board, its rules and
 * the plan, whose additions say where each part went.
 */
export async function placedIndicator(
  project: CorpusProject,
  nets: { ground: string; supply: string; net: string },
  anchors: { ledBy: string; resistorBy: string },
) {
  const copy = await copyCorpusProject(project);
  const board = Board.load(copy.board!);
  const rules = BoardRules.load(join(copy.root, copy.projectFile), null);
  const libraries = await openLibraries(join(copy.root, copy.projectFile));
  const plan = indicatorPlan(board, nets.ground, nets.supply, nets.net);
  const anchor = (ref: string) => (ref === "D900" ? anchors.ledBy : anchors.resistorBy);
  expect(placeAdditions(board, plan, libraries, anchor, rules)).toEqual([]);
  applyBoardSync(board, plan, libraries);
  return { copy, board, rules, plan };
}

/**
 * A plan adding U900, a 24LC02 EEPROM in TSSOP-8, on an I2C bus as `add_component` with
 * `connect` plans one: A0–A2 and VCC on `supply`, GND and WP on GND, SDA and SCL.
 */
export function eepromPlan(board: Board, supply: string, sda: string, scl: string): BoardSyncPlan {
  const plan = additionPlan(board, "U900", "Package_SO:TSSOP-8_4.4x3mm_P0.65mm", [supply, "GND"]);
  plan.added[0]!.pads = [supply, supply, supply, "GND", sda, scl, "GND", supply].map((net, i) => ({
    pad: String(i + 1),
    net,
  }));
  return plan;
}
