import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import {
  applyBoardSync,
  isEmptyPlan,
  planBoardSync,
  syncBoard,
  type BoardSyncPlan,
} from "../../src/kicad/board/sync/sync-board.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { runDrc, runErc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { Libraries, openLibraries } from "../../src/kicad/library/libraries.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import {
  child,
  children,
  cloneNode,
  printSexpr,
  q,
  removeChild,
  setAtom,
  sym,
  text,
} from "../../src/kicad/sexpr/index.ts";
import { CopperheadError } from "../../src/errors.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import {
  addResistor,
  deleteHeader,
  moveHeaderToRegulator,
  renameLedNet,
  rootSheet,
  setField,
} from "../support/usb-led-edits.ts";

const KICAD_TIMEOUT = 90_000;
let cli: KicadCli;

beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

const pcb = (dir: string) => join(dir, "usb-led.kicad_pcb");

/** Lines added and removed between two texts, as `git diff --numstat` counts them. */
function lineDiff(before: string, after: string, dir: string): { added: number; removed: number } {
  const a = join(dir, "before.txt");
  const b = join(dir, "after.txt");
  writeFileSync(a, before);
  writeFileSync(b, after);
  const out = Bun.spawnSync(["git", "diff", "--no-index", "--numstat", a, b]).stdout.toString().trim();
  if (out === "") return { added: 0, removed: 0 };
  const [added, removed] = out.split(/\s+/).map(Number);
  return { added: added!, removed: removed! };
}

/**
 * Edits the schematic, checks ERC stays clean, syncs, and checks what every case must hold:
 * kicad-cli loads the board, schematic parity ran and is clean, the unconnected items are
 * exactly `unconnected`, and a second sync plans nothing and writes nothing.
 */
async function syncCase(edit: (dir: string) => void | Promise<void>, unconnected: string[] = []) {
  // `unconnected` lists the new parts' unrouted pads as "REF.PAD NET"; nothing else may be unrouted.
  const dir = await copyFixture("usb-led");
  const before = readFileSync(pcb(dir), "utf8");
  await edit(dir);
  const erc = await runErc(join(dir, "usb-led.kicad_sch"), { cli });
  expect(erc.sheets.flatMap((s) => s.violations.map((v) => v.type))).toEqual([]);

  const result = await syncBoard(discoverProject(dir));
  expect(result.written).toBe(true);
  const after = readFileSync(pcb(dir), "utf8");

  const drc = await runDrc(pcb(dir), { cli, schematicParity: true });
  expect(drc.parityChecked).toBe(true);
  expect(drc.report.schematic_parity.map((v) => `${v.type}: ${v.description}`)).toEqual([]);
  // Which other item KiCad names as the nearest unrouted target varies; the new pad does not.
  const newPads = drc.report.unconnected_items
    .map((v) =>
      v.items
        .map((i) => /^Pad (\S+) \[([^\]]*)\] of (\S+)/.exec(i.description))
        .filter((m) => m !== null && unconnected.some((u) => u.startsWith(`${m[3]}.`)))
        .map((m) => `${m![3]}.${m![1]} ${m![2]}`)
        .join(", "),
    )
    .sort();
  expect(newPads).toEqual(unconnected);

  const again = await syncBoard(discoverProject(dir));
  expect(isEmptyPlan(again.plan)).toBe(true);
  expect(again.written).toBe(false);
  expect(readFileSync(pcb(dir), "utf8")).toBe(after);
  return { dir, plan: result.plan, drc, diff: lineDiff(before, after, dir), after };
}

describe("board sync against kicad-cli", () => {
  test("an unchanged design plans nothing and leaves the board byte-identical", async () => {
    const dir = await copyFixture("usb-led");
    const before = readFileSync(pcb(dir), "utf8");
    const result = await syncBoard(discoverProject(dir));
    expect(isEmptyPlan(result.plan)).toBe(true);
    expect(result.plan.warnings).toEqual([]);
    expect(result.written).toBe(false);
    expect(readFileSync(pcb(dir), "utf8")).toBe(before);
  });

  test(
    "adding a symbol adds its footprint in a staging row below the outline, with nets",
    async () => {
      const { plan, diff, after } = await syncCase(addResistor, ["R4.1 /LED_A", "R4.2 GND"]);
      expect(plan.added.map((a) => [a.ref, a.libId, a.value])).toEqual([
        ["R4", "Resistor_SMD:R_0603_1608Metric", "10k"],
      ]);
      expect(plan.added[0]!.pads).toEqual([
        { pad: "1", net: "/LED_A", pinfunction: undefined, pintype: "passive" },
        { pad: "2", net: "GND", pinfunction: undefined, pintype: "passive" },
      ]);
      expect(plan.updated).toEqual([]);
      expect(plan.renets).toEqual([]);
      // Below the outline (which ends at y = 102.8 mm), clear of every existing part.
      const outline = Board.parse(after).edgeCutsBBox()!;
      const r4 = Board.parse(after)
        .footprints()
        .find((f) => f.ref === "R4")!;
      expect(r4.at.y).toBeGreaterThan(outline.maxY + 5);
      expect(r4.at.x).toBeGreaterThanOrEqual(outline.minX);
      expect(r4.path).toBe(plan.added[0]!.path);
      expect(r4.sheetfile).toBe("usb-led.kicad_sch");
      expect(r4.fields).toMatchObject({
        Reference: "R4",
        Value: "10k",
        Datasheet: "~",
        Description: "Resistor",
        MPN: "RC0603FR-071KL",
      });
      expect(r4.pads.map((p) => [p.number, p.net?.name, p.pintype])).toEqual([
        ["1", "/LED_A", "passive"],
        ["2", "GND", "passive"],
      ]);
      // Exactly the new footprint's lines were added; nothing else changed.
      expect(diff).toEqual({ added: printSexpr(r4.node).split("\n").length - 1, removed: 0 });
    },
    KICAD_TIMEOUT,
  );

  test(
    "deleting a symbol removes its footprint and reports the tracks left on its pads",
    async () => {
      const { plan, diff, after, drc } = await syncCase(deleteHeader);
      expect(plan.removed.map((r) => [r.ref, r.reason])).toEqual([["J2", "symbol_deleted"]]);
      expect(plan.warnings.map((w) => [w.code, w.ref])).toEqual([["tracks_left_dangling", "J2"]]);
      expect(plan.renets).toEqual([]);
      expect(after).not.toContain('"J2"');
      // The copper stays, now dangling, for a human (or the do loop) to deal with.
      expect(drc.report.violations.map((v) => v.type)).toEqual(["track_dangling", "track_dangling"]);
      expect(diff.added).toBe(0);
      expect(diff.removed).toBe(230);
    },
    KICAD_TIMEOUT,
  );

  test(
    "changing a value changes one line",
    async () => {
      const { plan, diff } = await syncCase((dir) => setField(dir, "R3", "Value", "2.2k"));
      expect(plan.updated).toEqual([
        expect.objectContaining({ ref: "R3", value: { from: "1k", to: "2.2k" }, fields: [], pads: [] }),
      ]);
      expect(diff).toEqual({ added: 1, removed: 1 });
    },
    KICAD_TIMEOUT,
  );

  test(
    "changing a footprint swaps it in place, keeping position, rotation, side, uuid and fields",
    async () => {
      const dir0 = await copyFixture("usb-led");
      const old = Board.load(pcb(dir0))
        .footprints()
        .find((f) => f.ref === "R2")!;
      const { plan, diff, after } = await syncCase((dir) =>
        setField(dir, "R2", "Footprint", "Resistor_SMD:R_0805_2012Metric"),
      );
      expect(plan.updated.map((u) => [u.ref, u.footprint?.from, u.footprint?.to])).toEqual([
        ["R2", "Resistor_SMD:R_0603_1608Metric", "Resistor_SMD:R_0805_2012Metric"],
      ]);
      const swapped = Board.parse(after)
        .footprints()
        .find((f) => f.ref === "R2")!;
      expect(swapped.libId).toBe("Resistor_SMD:R_0805_2012Metric");
      expect(swapped.at).toEqual(old.at);
      expect(swapped.layer).toBe(old.layer);
      expect(text(children(swapped.node, "uuid")[0]!, 1)).toBe(text(children(old.node, "uuid")[0]!, 1));
      expect(swapped.path).toBe(old.path);
      expect(swapped.fields).toEqual(old.fields);
      // Change Footprint keeps each field's text position and style.
      const reference = (fp: typeof old) =>
        printSexpr(children(fp.node, "property").find((p) => text(p, 1) === "Reference")!).trim();
      expect(reference(swapped)).toBe(reference(old));
      expect(swapped.pads.map((p) => [p.number, p.net?.name])).toEqual(old.pads.map((p) => [p.number, p.net?.name]));
      // The old footprint block is replaced by one of the same size; nothing else moves.
      expect(diff.added).toBeLessThanOrEqual(150);
      expect(diff.removed).toBeLessThanOrEqual(150);
    },
    KICAD_TIMEOUT,
  );

  test(
    "renaming a net renames it in the table and on its pads, keeping its code and copper",
    async () => {
      const { plan, diff, after } = await syncCase((dir) => renameLedNet(dir, "LED_ANODE"));
      expect(plan.renets).toEqual([{ from: "/LED_A", to: "/LED_ANODE", code: 4 }]);
      expect(plan.updated).toEqual([]);
      expect(after).toContain('(net 4 "/LED_ANODE")');
      expect(after).not.toContain('/LED_A"');
      // The table entry and the two pads (R3.2, D1.2); tracks carry only the code.
      expect(diff).toEqual({ added: 3, removed: 3 });
    },
    KICAD_TIMEOUT,
  );

  test(
    "moving a symbol to another sheet keeps its footprint and updates path, sheetname and sheetfile",
    async () => {
      const { plan, diff, after } = await syncCase(moveHeaderToRegulator);
      expect(plan.updated).toEqual([
        expect.objectContaining({
          ref: "J2",
          path: {
            from: "/ca033862-566d-58ed-a902-b0a5bfe90a3a",
            to: "/f6ecdb61-0c8b-5a62-8b68-b33506e9342f/ca033862-566d-58ed-a902-b0a5bfe90a3a",
          },
          sheetname: { from: undefined, to: "/Regulator/" },
          sheetfile: { from: "usb-led.kicad_sch", to: "regulator.kicad_sch" },
          pads: [],
        }),
      ]);
      expect(plan.added).toEqual([]);
      expect(plan.removed).toEqual([]);
      const j2 = Board.parse(after)
        .footprints()
        .find((f) => f.ref === "J2")!;
      expect([j2.sheetname, j2.sheetfile]).toEqual(["/Regulator/", "regulator.kicad_sch"]);
      expect(diff).toEqual({ added: 3, removed: 2 });
    },
    KICAD_TIMEOUT,
  );
});

describe("board sync changes what KiCad's parity check compares, and leaves the rest", () => {
  /** Edits the board text of a usb-led copy. */
  const editBoard = (dir: string, edit: (text: string) => string) =>
    writeFileSync(pcb(dir), edit(readFileSync(pcb(dir), "utf8")));

  test("sheet names as any KiCad release spells them are in sync", async () => {
    const dir = await copyFixture("usb-led");
    // KiCad 8 wrote "Root" (translated: "Racine") for the root sheet, KiCad 9 writes "/".
    editBoard(dir, (t) =>
      t
        .replace('\t\t(sheetfile "usb-led.kicad_sch")', '\t\t(sheetname "Racine")\n\t\t(sheetfile "usb-led.kicad_sch")')
        .replace('(sheetname "Regulator")', '(sheetname "/Regulator/")'),
    );
    const before = readFileSync(pcb(dir), "utf8");
    const result = await syncBoard(discoverProject(dir));
    expect(isEmptyPlan(result.plan)).toBe(true);
    expect(result.plan.skipped).toEqual([]);
    expect(readFileSync(pcb(dir), "utf8")).toBe(before);
  });

  test(
    "a footprint placed from another library nickname is re-linked, not swapped",
    async () => {
      const dir = await copyFixture("usb-led");
      editBoard(dir, (t) =>
        t.replace('(footprint "Resistor_SMD:R_0603_1608Metric"', '(footprint "project_footprints:R_0603_1608Metric"'),
      );
      const before = readFileSync(pcb(dir), "utf8");
      const { plan } = await syncBoard(discoverProject(dir));
      expect(plan.updated.map((u) => [u.ref, u.footprint])).toEqual([
        [
          "R3",
          {
            from: "project_footprints:R_0603_1608Metric",
            to: "Resistor_SMD:R_0603_1608Metric",
            kind: "relink",
            pads: [],
          },
        ],
      ]);
      expect(lineDiff(before, readFileSync(pcb(dir), "utf8"), dir)).toEqual({ added: 1, removed: 1 });
      const drc = await runDrc(pcb(dir), { cli, schematicParity: true });
      expect(drc.report.schematic_parity).toEqual([]);
    },
    KICAD_TIMEOUT,
  );

  test("fields follow the schematic only when asked; the DNP flag always does", async () => {
    const dir = await copyFixture("usb-led");
    setField(dir, "R1", "MPN", "TEST-MPN-1");
    const quiet = await syncBoard(discoverProject(dir), { dryRun: true });
    expect(isEmptyPlan(quiet.plan)).toBe(true);
    expect(quiet.plan.skipped).toEqual([
      { kind: "fields", reason: "fields", ref: "R1", detail: expect.stringContaining("MPN") },
    ]);
    const asked = await syncBoard(discoverProject(dir), { dryRun: true, fields: true });
    expect(asked.plan.updated.map((u) => [u.ref, u.fields.map((f) => [f.name, f.to])])).toEqual([
      ["R1", [["MPN", "TEST-MPN-1"]]],
    ]);

    const root = rootSheet(dir);
    setAtom(child(root.symbol("R1"), "dnp")!, 1, sym("yes"));
    root.save();
    const dnp = await syncBoard(discoverProject(dir));
    expect(dnp.plan.updated.map((u) => [u.ref, u.flags])).toEqual([["R1", { add: ["dnp"], remove: [] }]]);
    expect(
      Board.load(pcb(dir))
        .footprints()
        .find((f) => f.ref === "R1")!.attributes,
    ).toContain("dnp");
  });
});

describe("board sync rejects bad input and leaves the board byte-identical", () => {
  async function expectRejected(prepare: (dir: string) => void | Promise<void>, code: string) {
    const dir = await copyFixture("usb-led");
    await prepare(dir);
    const before = readFileSync(pcb(dir), "utf8");
    const error = await syncBoard(discoverProject(dir)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(CopperheadError);
    expect((error as CopperheadError).code).toBe(code as never);
    expect((error as CopperheadError).fix).toBeTruthy();
    expect(readFileSync(pcb(dir), "utf8")).toBe(before);
    return error as CopperheadError;
  }

  test("a footprint id whose library is in no table", async () => {
    const error = await expectRejected(
      (dir) => setField(dir, "R3", "Footprint", "No_Such_Lib:R_0603"),
      "library_not_found",
    );
    expect(error.message).toContain("No_Such_Lib");
    expect(error.message).toContain("fp-lib-table");
  });

  test("a footprint id whose footprint is not in its library", async () => {
    const error = await expectRejected(
      (dir) => setField(dir, "R3", "Footprint", "Resistor_SMD:R_9999_Metric"),
      "footprint_not_found",
    );
    expect(error.message).toContain("R_9999_Metric");
  });

  test("an unreadable .kicad_mod", async () => {
    const error = await expectRejected((dir) => {
      mkdirSync(join(dir, "local.pretty"));
      writeFileSync(join(dir, "local.pretty", "Broken.kicad_mod"), '(footprint "Broken"\n\t(layer "F.Cu"\n');
      writeFileSync(
        join(dir, "fp-lib-table"),
        '(fp_lib_table\n\t(version 7)\n\t(lib (name "local")(type "KiCad")(uri "${KIPRJMOD}/local.pretty")(options "")(descr ""))\n)\n',
      );
      setField(dir, "R3", "Footprint", "local:Broken");
    }, "library_unreadable");
    expect(error.message).toContain("Broken.kicad_mod");
  });

  test("a board with no outline when a footprint must be placed", async () => {
    await expectRejected((dir) => {
      const board = Board.load(pcb(dir));
      for (const item of children(board.root, "gr_rect")) removeChild(board.root, item);
      writeFileSync(pcb(dir), printSexpr(board.doc));
      addResistor(dir);
    }, "board_outline_missing");
  });
});

describe("board sync planning", () => {
  async function inputs(dir: string, libraries?: Libraries) {
    const schematic = loadSchematicProject(join(dir, "usb-led.kicad_sch"));
    return {
      board: Board.load(pcb(dir)),
      schematic,
      components: listComponents(schematic),
      netlist: buildNetlist(schematic),
      libraries: libraries ?? (await openLibraries(dir)),
    };
  }

  test("the plan is plain data: it survives JSON and applies the same", async () => {
    const dir = await copyFixture("usb-led");
    addResistor(dir);
    setField(dir, "R1", "Value", "4.7k");
    const input = await inputs(dir);
    const plan = planBoardSync(input);
    const roundTripped = JSON.parse(JSON.stringify(plan)) as BoardSyncPlan;
    const direct = Board.load(pcb(dir));
    applyBoardSync(direct, plan, input.libraries);
    const viaJson = Board.load(pcb(dir));
    applyBoardSync(viaJson, roundTripped, input.libraries);
    expect(printSexpr(viaJson.doc)).toBe(printSexpr(direct.doc));
  });

  test("a locked footprint whose symbol is gone is kept and reported", async () => {
    const dir = await copyFixture("usb-led");
    const board = Board.load(pcb(dir));
    const j2 = board.footprints().find((f) => f.ref === "J2")!;
    j2.node.items.splice(2, 0, {
      type: "list",
      pre: "\n\t\t",
      items: [
        { type: "atom", pre: "", raw: "locked" },
        { type: "atom", pre: " ", raw: "yes" },
      ],
      post: "",
      start: -1,
    });
    writeFileSync(pcb(dir), printSexpr(board.doc));
    deleteHeader(dir);
    const plan = planBoardSync(await inputs(dir));
    expect(plan.removed).toEqual([]);
    expect(plan.warnings.map((w) => [w.code, w.ref])).toEqual([["locked_not_removed", "J2"]]);
  });

  test("a second footprint of a placed symbol (one switch on both sides of a keyboard) is kept and reported", async () => {
    // The Sofle keyboard (fixtures/corpus/sofle-v2-soldered) has each switch twice, one symbol,
    // both footprints under its path and reference: a sync removed the second of each, 29 parts.
    const dir = await copyFixture("usb-led");
    const board = Board.load(pcb(dir));
    const j2 = board.footprints().find((f) => f.ref === "J2")!;
    const second = cloneNode(j2.node);
    setAtom(child(second, "uuid")!, 1, q("6b0a57c1-0000-4000-8000-000000000002"));
    board.root.items.splice(board.root.items.indexOf(j2.node) + 1, 0, second);
    writeFileSync(pcb(dir), printSexpr(board.doc));
    const plan = planBoardSync(await inputs(dir));
    expect(plan.removed).toEqual([]);
    expect(plan.warnings.map((w) => [w.code, w.ref])).toEqual([["second_footprint_kept", "J2"]]);
  });

  test("KiCad 10 name-only nets: a rename reaches pads, tracks and vias", async () => {
    const dir = await copyFixture("usb-led");
    // Rewrite the board in the name-only form: no table, `(net "name")` everywhere.
    const board = Board.load(pcb(dir));
    const names = new Map(children(board.root, "net").map((n) => [text(n, 1)!, text(n, 2)!]));
    for (const n of children(board.root, "net")) removeChild(board.root, n);
    const textOut = printSexpr(board.doc)
      .replace(/\(net (\d+) "([^"]*)"\)/g, (_, __, name: string) => `(net "${name}")`)
      .replace(/\(net (\d+)\)/g, (_, code: string) => `(net "${names.get(code)}")`);
    writeFileSync(pcb(dir), textOut);
    expect(Board.load(pcb(dir)).netFormat).toBe("named");
    renameLedNet(dir, "LED_ANODE");
    const input = await inputs(dir);
    const plan = planBoardSync(input);
    expect(plan.netFormat).toBe("named");
    expect(plan.renets).toEqual([{ from: "/LED_A", to: "/LED_ANODE", code: undefined }]);
    applyBoardSync(input.board, plan, input.libraries);
    const out = printSexpr(input.board.doc);
    expect(out).not.toContain('"/LED_A"');
    const anode = out.split('(net "/LED_ANODE")').length - 1;
    expect(anode).toBe(textOut.split('(net "/LED_A")').length - 1);
    expect(anode).toBeGreaterThan(2);
  });
});
