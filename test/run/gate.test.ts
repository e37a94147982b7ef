/**
 * The commit's Verification line says what the design carries, warnings included, and how much
 * of it the change added against the run's baseline.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { evaluateGate, unmetPlan, verificationLine } from "../../src/run/gate.ts";
import { reportedAgain, unchangedItems } from "../../src/checks/baseline.ts";
import { checkDrc } from "../../src/checks/drc.ts";
import { indexBoard } from "../../src/checks/kicad-items.ts";
import { loadDesign, type Design } from "../../src/design/design.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { parseDrcReport } from "../../src/kicad/cli/report.ts";
import { discoverProject } from "../../src/repo/project.ts";
import type { Amendment, Proposal, ProposalScope } from "../../src/spec/proposal.ts";
import { FIXTURES_DIR } from "../support/kicad.ts";
import type { CheckId, CheckReport, CheckResult, Finding, Severity } from "../../src/checks/types.ts";

function finding(check: CheckId, severity: Severity, key: string): Finding {
  return { check, rule: key.split(":")[1] ?? "rule", severity, message: key, key };
}

function report(families: Partial<Record<CheckId, Finding[]>>, requirements = "6/6 rules pass"): CheckReport {
  const checks: CheckResult[] = (["erc", "drc", "parity", "routing"] as CheckId[]).map((id) => ({
    id,
    status: "pass",
    summary: "",
    findings: families[id] ?? [],
  }));
  checks.push({ id: "requirements", status: "pass", summary: requirements, findings: [] });
  return {
    schema: "copperhead.check/1",
    ok: true,
    project: "board.kicad_pro",
    kicad: { version: "9.0.8" },
    strict: false,
    fab: false,
    checks,
    counts: { error: 0, warning: 0, info: 0 },
  };
}

const warnings = (check: CheckId, n: number, prefix = "w") =>
  Array.from({ length: n }, (_, i) => finding(check, "warning", `${check}:${prefix}:${i}`));

describe("verificationLine", () => {
  test("a spotless design is clean in every family", () => {
    expect(verificationLine(report({}), report({}))).toBe("ERC clean, DRC clean, parity clean, requirements 6/6");
  });

  test("warnings are stated, with how many the change added", () => {
    const before = report({ erc: warnings("erc", 44), drc: warnings("drc", 13) });
    const after = report({ erc: warnings("erc", 44), drc: [...warnings("drc", 13), ...warnings("drc", 2, "new")] });
    expect(verificationLine(after, before)).toBe(
      "ERC clean (44 warnings, none new), DRC clean (15 warnings, 2 new), parity clean, requirements 6/6",
    );
  });

  test("the record lists every finding the line counts as new, warnings included, though none blocks", () => {
    const before = report({ erc: warnings("erc", 2), drc: warnings("drc", 1) });
    const after = report({
      erc: [...warnings("erc", 2), ...warnings("erc", 1, "new")],
      drc: [...warnings("drc", 1), ...warnings("drc", 2, "new")],
    });
    expect(verificationLine(after, before)).toBe(
      "ERC clean (3 warnings, 1 new), DRC clean (3 warnings, 2 new), parity clean, requirements 6/6",
    );
    const gate = evaluateGate(before, after, false);
    expect(gate).toMatchObject({ ok: true, blocking: [] });
    expect(gate.newFindings.map((f) => f.key)).toEqual(["erc:new:0", "drc:new:0", "drc:new:1"]);
  });

  test("errors that were there before the run are called the baseline's", () => {
    const errors = [finding("parity", "error", "parity:missing_footprint:J1")];
    const before = report({ parity: [...errors, ...warnings("parity", 1)] });
    expect(verificationLine(report({ parity: [...errors, ...warnings("parity", 1)] }), before)).toBe(
      "ERC clean, DRC clean, parity 1 error, 1 warning (baseline, none new), requirements 6/6",
    );
  });

  test("without a baseline it counts, and claims nothing about what is new", () => {
    expect(verificationLine(report({ erc: warnings("erc", 1) }))).toBe(
      "ERC clean (1 warning), DRC clean, parity clean, requirements 6/6",
    );
  });
});

describe("unmetPlan", () => {
  const design = loadDesign(discoverProject(join(FIXTURES_DIR, "usb-led")));
  const proposal = (scope: Partial<ProposalScope>, changes: string[] = [], amendments: Amendment[] = []): Proposal => ({
    id: "p",
    title: "t",
    approval: "auto",
    requirements: [],
    why: "w",
    changes,
    verification: "v",
    scope: { refs: [], nets: [], newRefs: [], newNets: [], ...scope },
    amendments,
  });

  test("a plan the result carries out has nothing unmet", () => {
    expect(unmetPlan(proposal({ refs: ["U1"], nets: ["+3V3"], newNets: ["LED_A"] }), design, true)).toEqual([]);
    expect(unmetPlan(proposal({ refs: ["U1A"] }), design, true)).toEqual([]);
  });

  test("a new part or net that does not exist, and a plan with no design file changed, are named", () => {
    expect(unmetPlan(proposal({ refs: ["U1"], newRefs: ["C3"], newNets: ["BULK"] }), design, false)).toEqual([
      "the proposal adds C3, but the design has no C3",
      "the proposal creates net BULK, but the design has no such net",
      "the proposal plans design changes (U1, C3, BULK), but no schematic or board file changed",
    ]);
  });

  test("a named part that vanished is unmet unless a planned change removes it; amendments count", () => {
    expect(unmetPlan(proposal({ refs: ["R9"] }), design, true)).toEqual([
      "the proposal changes R9, but R9 is no longer in the design and no planned change removes it",
    ]);
    expect(unmetPlan(proposal({ refs: ["R9"] }, ["Remove the pull-down R9"]), design, true)).toEqual([]);
    const amendment: Amendment = {
      why: "w",
      changes: [],
      requirements: [],
      scope: { refs: [], nets: [], newRefs: ["C7"], newNets: [] },
    };
    expect(unmetPlan(proposal({ refs: ["U1"] }, [], [amendment]), design, true)).toEqual([
      "the proposal adds C7, but the design has no C7",
    ]);
  });

  test("a proposal that binds no names (written by copperhead for sync) plans nothing to check", () => {
    expect(unmetPlan({ ...proposal({}), scope: undefined }, design, false)).toEqual([]);
  });
});

describe("the gate and parts the board does not carry as asked", () => {
  const stale = finding("parity", "warning", "parity:missing_footprint:J9");
  const before = report({ parity: [stale] });

  test("a new missing footprint, or a new footprint mismatch, fails though parity rates it a warning", () => {
    const added = finding("parity", "warning", "parity:missing_footprint:C3");
    const refootprinted = finding("parity", "warning", "parity:footprint_symbol_mismatch:R2:footprint");
    const failed = evaluateGate(before, report({ parity: [stale, added, refootprinted] }), false);
    expect(failed.ok).toBe(false);
    expect(failed.blocking.map((f) => f.key)).toEqual([
      "parity:missing_footprint:C3",
      "parity:footprint_symbol_mismatch:R2:footprint",
    ]);
  });

  test("a board that lacked a part before the run, or a new mismatch of value, is not the run's to fix", () => {
    const value = finding("parity", "warning", "parity:footprint_symbol_mismatch:R2:value");
    const gate = evaluateGate(before, report({ parity: [stale, value] }), false);
    expect(gate.ok).toBe(true);
    expect(gate.blocking).toEqual([]);
    // Still listed in the record: the Verification line counts it as new.
    expect(gate.newFindings.map((f) => f.key)).toEqual(["parity:footprint_symbol_mismatch:R2:value"]);
  });
});

/** An unconnected item between two pads, as the routing family keys it. */
function unconnected(a: string, b: string): Finding {
  return {
    ...finding("routing", "warning", `routing:unconnected:${[a, b].sort().join("+")}`),
    location: { file: "board.kicad_pcb", ref: a.split(".")[0] },
  };
}

describe("the gate and unconnected items", () => {
  const before = report({ routing: [unconnected("J1.1", "J2.1")] });
  const after = report({
    routing: [unconnected("J1.1", "J2.1"), unconnected("C4.1", "U1.5"), unconnected("C4.2", "U1.7")],
  });
  const pending = new Map([["C4", "no rule-clean path within 10 mm"]]);

  test("a new unconnected item fails the gate unless its part is left for layout", () => {
    const failed = evaluateGate(before, after, false);
    expect(failed.ok).toBe(false);
    expect(failed.newFindings.map((f) => f.key)).toEqual([
      "routing:unconnected:C4.1+U1.5",
      "routing:unconnected:C4.2+U1.7",
    ]);
    const left = evaluateGate(before, after, false, pending);
    expect(left).toMatchObject({ ok: true, blocking: [] });
    // Left for layout, they pass the gate, and the record still lists them as new, as the Verification line counts them.
    expect(left.newFindings.map((f) => f.key)).toEqual([
      "routing:unconnected:C4.1+U1.5",
      "routing:unconnected:C4.2+U1.7",
    ]);
    expect(evaluateGate(before, after, false, new Map([["C5", "placed, not routed"]])).ok).toBe(false);
  });

  test("an item between a pour and a pending part's pad counts as that part's, whatever the zone's id holds", () => {
    const zone: Finding = {
      ...finding("routing", "warning", "routing:unconnected:TP99.1+zone:GND:F.Cu+B.Cu"),
      message: "Missing connection between items: Zone [GND] on F.Cu, B.Cu; Pad 1 [GND] of TP99 on F.Cu",
    };
    expect(
      evaluateGate(
        before,
        report({ routing: [unconnected("J1.1", "J2.1"), zone] }),
        false,
        new Map([["TP99", "no rule-clean path"]]),
      ).ok,
    ).toBe(true);
  });

  test("unconnected items that were there before the run are not the run's", () => {
    expect(evaluateGate(before, report({ routing: [unconnected("J1.1", "J2.1")] }), false).ok).toBe(true);
  });

  test("the line never says DRC clean when the run left connections, and says why in words", () => {
    expect(verificationLine(after, before, pending)).toBe(
      "ERC clean, DRC no new violations, routing: 2 connections left for layout (C4: no rule-clean path within 10 mm), parity clean, requirements 6/6",
    );
    expect(verificationLine(report({ routing: [unconnected("J1.1", "J2.1")] }), before, pending)).toBe(
      "ERC clean, DRC clean, parity clean, requirements 6/6",
    );
  });
});

/**
 * KiCad reports a clearance violation once per item, against whichever partner it meets first,
 * and adding anything to the board can change which one: the multichannel_mixer demo's
 * Net-(IC2B-IN-) tracks, reported against C11 before an LED was added, came back against C7
 * and RV1, none of them touched. Boards and reports are cut down from that run, uuids,
 * descriptions and positions as KiCad 9 wrote them.
 */
describe("a violation KiCad reports again with another partner", () => {
  const uuid = {
    c11: "40967179-725d-4b9f-85c4-a62d4bfc9e2a",
    c7: "1fdc0925-4977-48de-8f48-b31b544dfc16",
    rv1: "cb82a97e-d3bf-475f-9e22-904fbaf27340",
    d900: "0b6c3e1c-6a0e-4d6f-9a53-3a8c1f0d9e00",
    track1: "4e9d4b3d-9d86-404b-bcec-dda2bc8a2ede",
    track2: "5c1225c8-8457-4dda-847b-ddd28aeb8ba5",
    track3: "fac33179-5cf1-4305-9537-1f9ff224022b",
    zone: "7d1b3c52-3f8e-4c43-9d0a-2f5e2c7a1b10",
  };
  const pad = (ref: string, n: string, pid: string, at: string, net: string) =>
    `(footprint "Capacitor_SMD:C_1206" (layer "B.Cu") (uuid "${ref}-fp") (at ${at}) (property "Reference" "${ref}")
      (pad "${n}" smd rect (at -1.5 0 180) (size 1.15 1.8) (layers "B.Cu" "B.Mask" "B.Paste") (net ${net}) (uuid "${pid}")))`;
  const track = (id: string, start: string, end: string) =>
    `(segment (start ${start}) (end ${end}) (width 0.5) (layer "B.Cu") (net 16) (uuid "${id}"))`;
  /** The board before the change, and after it with what `changes` adds or alters. */
  function boardText(changes: { c7At?: string; d900?: boolean; fill?: string } = {}): string {
    return `(kicad_pcb (version 20241229) (generator "pcbnew")
      (net 0 "") (net 1 "GND") (net 11 "Net-(C7-Pad1)") (net 16 "Net-(IC2B-IN-)")
      ${pad("C11", "1", uuid.c11, "151.9 114.3", '1 "GND"')}
      ${pad("C7", "1", uuid.c7, changes.c7At ?? "149.5 117.9", '11 "Net-(C7-Pad1)"')}
      ${pad("RV1", "3", uuid.rv1, "149 115.4", '11 "Net-(C7-Pad1)"')}
      ${changes.d900 ? pad("D900", "1", uuid.d900, "152 112", '1 "GND"') : ""}
      ${track(uuid.track1, "146.8 111.2", "146.8 114.38")}
      ${track(uuid.track2, "146.8 114.38", "149.05 116.63")}
      ${track(uuid.track3, "148.85 92.85", "148.85 96.85")}
      (zone (net 1) (net_name "GND") (layer "B.Cu") (uuid "${uuid.zone}")
        (filled_polygon (layer "B.Cu") (pts (xy 140 100) (xy 160 100) ${changes.fill ?? "(xy 160 120)"} (xy 140 120))))
    )`;
  }
  const item = (description: string, x: number, y: number, id: string) => ({ description, pos: { x, y }, uuid: id });
  const items = {
    c11: item("Pad 1 [GND] of C11 on B.Cu", 150.4, 114.3, uuid.c11),
    c7: item("Pad 1 [Net-(C7-Pad1)] of C7 on B.Cu", 148.0, 117.9, uuid.c7),
    rv1: item("PTH pad 3 [Net-(C7-Pad1)] of RV1", 147.5, 115.4, uuid.rv1),
    d900: item("Pad 1 [GND] of D900 on B.Cu", 150.5, 112, uuid.d900),
    track1: item("Track [Net-(IC2B-IN-)] on B.Cu, length 3.1820 mm", 146.8, 112.790811, uuid.track1),
    track2: item("Track [Net-(IC2B-IN-)] on B.Cu, length 4.4592 mm", 149.05, 115.040811, uuid.track2),
    track3: item("Track [Net-(IC2B-IN-)] on B.Cu, length 4.0000 mm", 148.85, 94.85, uuid.track3),
    zone: item("Zone [GND] on B.Cu", 140, 100, uuid.zone),
  };
  type Item = (typeof items)[keyof typeof items];
  const clearance = (actual: string, ...pair: Item[]) => ({
    description: `Clearance violation (board minimum clearance 0.3000 mm; actual ${actual} mm)`,
    items: pair,
    severity: "error",
    type: "clearance",
  });
  /** The check of `board` given kicad-cli's violations, as `checkProject` makes it. */
  function checked(board: Board, violations: unknown[]): CheckReport {
    const file = "/repo/board.kicad_pcb";
    const drc = parseDrcReport(
      JSON.stringify({
        $schema: "https://schemas.kicad.org/drc.v1.json",
        kicad_version: "9.0.8",
        coordinate_units: "mm",
        violations,
        unconnected_items: [],
      }),
      file,
    );
    const design = { project: { repoRoot: "/repo", board: file } } as unknown as Design;
    return report({ drc: checkDrc(drc, design, indexBoard(board, file), false).findings });
  }
  const base = Board.parse(boardText());
  const before = checked(base, [
    clearance("0.2296", items.c11, items.track1),
    clearance("0.2296", items.c11, items.track2),
  ]);
  const gate = (edited: Board, violations: unknown[]) =>
    evaluateGate(
      before,
      checked(edited, violations),
      false,
      new Map(),
      unchangedItems(() => ({ before: base, after: edited, sameRules: true })),
    );
  const newKeys = (edited: Board, violations: unknown[]) => gate(edited, violations).newFindings.map((f) => f.key);

  test("the same tracks against C7 and RV1 instead of C11, nothing of them touched: nothing new", () => {
    const edited = Board.parse(boardText({ d900: true }));
    const after = [clearance("0.2000", items.track1, items.rv1), clearance("0.2250", items.c7, items.track2)];
    expect(gate(edited, after)).toEqual({ ok: true, blocking: [], newFindings: [] });
    const unchanged = unchangedItems(() => ({ before: base, after: edited, sameRules: true }));
    expect(verificationLine(checked(edited, after), before, new Map(), unchanged)).toBe(
      "ERC clean, DRC 2 errors (baseline, none new), parity clean, requirements 6/6",
    );
    // Matched by key alone, with nothing to say which items the change left as they were, both read as new.
    expect(evaluateGate(before, checked(edited, after), false).newFindings.map((f) => f.key)).toEqual([
      "drc:clearance:C7.1+track:Net-(IC2B-IN-)@B.Cu",
      "drc:clearance:RV1.3+track:Net-(IC2B-IN-)@B.Cu",
    ]);
  });

  test("with the design rules changed, no item counts as left as it was: the re-reported violations are new", () => {
    const edited = Board.parse(boardText({ d900: true }));
    const after = [clearance("0.2000", items.track1, items.rv1), clearance("0.2250", items.c7, items.track2)];
    const unchanged = unchangedItems(() => ({ before: base, after: edited, sameRules: false }));
    expect(evaluateGate(before, checked(edited, after), false, new Map(), unchanged).newFindings).toHaveLength(2);
  });

  test("the same pair as before is the baseline's finding, by key", () => {
    const edited = Board.parse(boardText({ d900: true }));
    expect(gate(edited, [clearance("0.2296", items.c11, items.track1)]).ok).toBe(true);
  });

  test("a partner the change added, moved or refilled keeps the violation new", () => {
    expect(newKeys(Board.parse(boardText({ d900: true })), [clearance("0.2100", items.d900, items.track2)])).toEqual([
      "drc:clearance:D900.1+track:Net-(IC2B-IN-)@B.Cu",
    ]);
    expect(
      newKeys(Board.parse(boardText({ c7At: "149.3 117.9" })), [clearance("0.2250", items.c7, items.track2)]),
    ).toEqual(["drc:clearance:C7.1+track:Net-(IC2B-IN-)@B.Cu"]);
    expect(
      newKeys(Board.parse(boardText({ fill: "(xy 160 118) (xy 150 118)" })), [
        clearance("0.1000", items.zone, items.track2),
      ]),
    ).toEqual(["drc:clearance:track:Net-(IC2B-IN-)@B.Cu+zone:GND@B.Cu"]);
  });

  test("untouched items the baseline reported nothing of the kind about are new", () => {
    const edited = Board.parse(boardText({ d900: true }));
    expect(newKeys(edited, [clearance("0.2000", items.rv1, items.track3)])).toEqual([
      "drc:clearance:RV1.3+track:Net-(IC2B-IN-)@B.Cu",
    ]);
    expect(newKeys(edited, [{ ...clearance("0.2250", items.c7, items.track2), type: "shorting_items" }])).toEqual([
      "drc:shorting_items:C7.1+track:Net-(IC2B-IN-)@B.Cu",
    ]);
  });
});

describe("a net's length KiCad names by another of its tracks", () => {
  // vme-wren: /DDR4-PS.A3's length out of range, at IC14's pad AA28 and a track of the net, came
  // back against another track of the net once a capacitor was added beside IC14.
  const base = [{ check: "drc" as const, rule: "length_out_of_range", items: ["ic14-aa28", "track-a"] }];
  const again = { check: "drc" as const, rule: "length_out_of_range", items: ["ic14-aa28", "track-b"] };
  test("between items the change left as they were: not new; naming a changed item: new", () => {
    expect(reportedAgain(again, base, () => true)).toBe(true);
    expect(reportedAgain(again, base, (uuid) => uuid !== "track-b")).toBe(false);
  });
});

describe("an unconnected gap KiCad names by other items", () => {
  // KiCad names a gap between two islands by their nearest items: an old gap at J15's shield pad
  // came back against another track of the net (tinytapeout-demo).
  const base = [{ check: "routing" as const, rule: "unconnected", items: ["j15-s1", "track-a"] }];
  const again = { check: "routing" as const, rule: "unconnected", items: ["j15-s1", "track-b"] };
  test("between items the change left as they were, one of them named before: not new", () => {
    expect(reportedAgain(again, base, (uuid) => uuid !== "new-pad")).toBe(true);
  });
  test("the Verification line counts it as the gate does: not a connection the run left", () => {
    const gap = (b: string, id: string): Finding => ({ ...unconnected("C900.1", b), items: ["c900-1", id] });
    const before = report({ routing: [gap("C11.1", "c11-1")] });
    // StickHub: C900's old gap came back against a track of +1V8 instead of C11's pad.
    const after = report({ routing: [gap("track:+1V8@B.Cu", "track-a"), unconnected("D900.2", "R900.2")] });
    const pending = new Map([["D900", "no /PWR_LED copper within 15 mm"]]);
    expect(verificationLine(after, before, pending, () => true)).toBe(
      "ERC clean, DRC no new violations, routing: 1 connection left for layout (D900: no /PWR_LED copper within 15 mm), parity clean, requirements 6/6",
    );
  });
  test("naming an item the change added or changed, or items the baseline never named: new", () => {
    expect(reportedAgain({ ...again, items: ["j15-s1", "new-pad"] }, base, (uuid) => uuid !== "new-pad")).toBe(false);
    expect(reportedAgain({ ...again, items: ["c3-1", "track-b"] }, base, () => true)).toBe(false);
  });
});

describe("the gate and the run's own warnings", () => {
  const own = (rule: string, refs: string[]): Finding => ({
    ...finding("drc", "warning", `drc:${rule}:${refs.join("+")}`),
    rule,
    refs,
    message: `${rule} on ${refs.join(", ")}`,
  });
  const before = report({ drc: [own("silk_overlap", ["R1"])] });
  const after = report({
    drc: [
      own("silk_overlap", ["R1"]),
      own("silk_over_copper", ["C12"]),
      own("silk_overlap", ["R2"]),
      { ...finding("drc", "warning", "drc:isolated_copper:zone"), rule: "isolated_copper" },
      // A neck of pour: KiCad names the zone alone, with no part and no place.
      { ...finding("drc", "warning", "drc:connection_width:zone"), rule: "connection_width" },
    ],
  });
  const placed = new Set(["C12"]);

  test("a new warning about a placed part, or about the fill its refill left, fails the gate; one about parts the run left alone does not", () => {
    const gate = evaluateGate(before, after, false, new Map(), undefined, { placed, decisions: [] });
    expect(gate.ok).toBe(false);
    expect(gate.blocking.map((f) => f.key)).toEqual([
      "drc:silk_over_copper:C12",
      "drc:isolated_copper:zone",
      "drc:connection_width:zone",
    ]);
    // A run that placed nothing is judged as before: warnings list, they do not block.
    expect(evaluateGate(before, after, false, new Map(), undefined, { placed: new Set(), decisions: [] }).ok).toBe(
      true,
    );
  });

  test("a decision naming the rule and the part answers it; the record still lists it", () => {
    const decisions = [
      { decision: "Keep silk_over_copper at C12", why: "the reference sits on the test pad's opening; fab clips it" },
      { decision: "Keep the isolated_copper island", why: "it is stitched on the next revision" },
      { decision: "Keep the GND pour's connection_width necks", why: "the pour is stitched by vias either side" },
    ];
    const gate = evaluateGate(before, after, false, new Map(), undefined, { placed, decisions });
    expect(gate).toMatchObject({ ok: true, blocking: [] });
    expect(gate.newFindings.map((f) => f.key)).toContain("drc:silk_over_copper:C12");
    // Naming another part, or no rule, answers nothing.
    expect(
      evaluateGate(before, after, false, new Map(), undefined, {
        placed,
        decisions: [{ decision: "silk_over_copper at C1", why: "x" }, decisions[1]!, decisions[2]!],
      }).ok,
    ).toBe(false);
  });
});
