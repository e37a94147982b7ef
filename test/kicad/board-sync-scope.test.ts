import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { applyBoardSync, planBoardSync, type BoardSyncInputs } from "../../src/kicad/board/sync/sync-board.ts";
import { driftKeys, proposalFilter } from "../../src/kicad/board/sync/sync-scope.ts";
import type { ProposalNames } from "../../src/kicad/proposal-scope.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";
import { addResistor, renameLedNet, setField } from "../support/usb-led-edits.ts";

afterAll(cleanupTempDirs);

const pcb = (dir: string) => join(dir, "usb-led.kicad_pcb");

async function inputs(dir: string): Promise<BoardSyncInputs> {
  const schematic = loadSchematicProject(join(dir, "usb-led.kicad_sch"));
  return {
    board: Board.load(pcb(dir)),
    schematic,
    components: listComponents(schematic),
    netlist: buildNetlist(schematic),
    libraries: await openLibraries(dir),
  };
}

/**
 * usb-led with drift nobody asked to fix, as real boards carry it: R3 placed from a project
 * library the schematic does not name, and R2's value on the board out of date.
 */
async function driftingBoard(): Promise<string> {
  const dir = await copyFixture("usb-led");
  const text = readFileSync(pcb(dir), "utf8")
    .replace('(footprint "Resistor_SMD:R_0603_1608Metric"', '(footprint "project_footprints:R_0603_1608Metric"')
    .replace('(property "Value" "5.1k"', '(property "Value" "4.7k"');
  writeFileSync(pcb(dir), text);
  return dir;
}

/** Plans a sync as `sync_board` does inside a run: drift before the edit is the baseline. */
async function scopedPlan(dir: string, edit: (dir: string) => void, names: ProposalNames) {
  const baseline = driftKeys(await inputs(dir));
  edit(dir);
  const now = await inputs(dir);
  return { plan: planBoardSync(now, { filter: proposalFilter(names, baseline, now.netlist) }), now };
}

describe("board sync inside a run applies only what the proposal covers", () => {
  test("a named new part is added; drift from before the run is reported, not applied", async () => {
    const dir = await driftingBoard();
    const full = planBoardSync(await inputs(dir));
    expect(full.updated.map((u) => u.ref).sort()).toEqual(["R2", "R3"]);

    const { plan, now } = await scopedPlan(dir, addResistor, { refs: ["R4"], nets: ["LED_A", "GND"] });
    expect(plan.added.map((a) => a.ref)).toEqual(["R4"]);
    expect(plan.updated).toEqual([]);
    expect(plan.removed).toEqual([]);
    expect(plan.skipped.map((s) => [s.reason, s.kind, s.ref]).sort()).toEqual([
      ["baseline", "footprint", "R3"],
      ["baseline", "value", "R2"],
    ]);
    // No footprint that was on the board changes a byte.
    const before = new Map(now.board.footprints().map((f) => [f.ref, printSexpr(f.node)]));
    applyBoardSync(now.board, plan, now.libraries);
    const after = now.board.footprints();
    expect(
      after.filter((f) => before.has(f.ref)).map((f) => [f.ref, printSexpr(f.node) === before.get(f.ref)]),
    ).toEqual([...before.keys()].map((ref) => [ref, true]));
    expect(after.map((f) => f.ref)).toContain("R4");
  });

  test("a change the run made to a part the proposal does not name is out of scope", async () => {
    const dir = await driftingBoard();
    const { plan } = await scopedPlan(dir, (d) => setField(d, "R1", "Value", "22k"), { refs: ["R2"], nets: [] });
    expect(plan.updated).toEqual([]);
    expect(plan.skipped.filter((s) => s.reason === "out_of_scope").map((s) => [s.kind, s.ref, s.detail])).toEqual([
      ["value", "R1", "R1 value 5.1k → 22k"],
    ]);
  });

  test("a named part's own change is applied, its drift from before is not", async () => {
    const dir = await driftingBoard();
    const { plan } = await scopedPlan(dir, (d) => setField(d, "R3", "Value", "2.2k"), { refs: ["R3"], nets: [] });
    expect(plan.updated.map((u) => [u.ref, u.value?.to, u.footprint])).toEqual([["R3", "2.2k", undefined]]);
    expect(plan.skipped.map((s) => [s.reason, s.kind, s.ref]).sort()).toEqual([
      ["baseline", "footprint", "R3"],
      ["baseline", "value", "R2"],
    ]);
  });

  test("renaming a named net renames it on the board; naming it by its short name is enough", async () => {
    const dir = await driftingBoard();
    const { plan } = await scopedPlan(dir, (d) => renameLedNet(d, "LED_ANODE"), {
      refs: [],
      nets: ["LED_A", "LED_ANODE"],
    });
    expect(plan.renets).toEqual([{ from: "/LED_A", to: "/LED_ANODE", code: 4 }]);
    expect(plan.skipped.filter((s) => s.reason !== "baseline")).toEqual([]);
  });

  test("renaming a net the proposal does not name is out of scope", async () => {
    const dir = await driftingBoard();
    const { plan } = await scopedPlan(dir, (d) => renameLedNet(d, "LED_ANODE"), { refs: [], nets: ["GND"] });
    expect(plan.renets).toEqual([]);
    expect(plan.skipped.filter((s) => s.reason === "out_of_scope").map((s) => s.kind)).toContain("rename");
  });

  test("a locked part the proposal names is re-footprinted and stays locked", async () => {
    const dir = await copyFixture("usb-led");
    writeFileSync(
      pcb(dir),
      readFileSync(pcb(dir), "utf8").replace(
        '(footprint "Resistor_SMD:R_0603_1608Metric"',
        '(footprint "Resistor_SMD:R_0603_1608Metric"\n\t\t(locked yes)',
      ),
    );
    const names = { refs: ["R3"], nets: [] };
    const baseline = driftKeys(await inputs(dir));
    setField(dir, "R3", "Footprint", "Resistor_SMD:R_0805_2012Metric");
    const now = await inputs(dir);
    const filter = proposalFilter(names, baseline, now.netlist);
    expect(planBoardSync(now, { filter }).warnings.map((w) => [w.code, w.ref])).toEqual([["locked_not_swapped", "R3"]]);
    const plan = planBoardSync(now, { filter, overrideLock: (ref) => names.refs.includes(ref) });
    expect(plan.updated.map((u) => [u.ref, u.footprint?.kind])).toEqual([["R3", "swap"]]);
    applyBoardSync(now.board, plan, now.libraries);
    expect(now.board.footprints().find((f) => f.ref === "R3")).toMatchObject({
      libId: "Resistor_SMD:R_0805_2012Metric",
      locked: true,
    });
  });
});
