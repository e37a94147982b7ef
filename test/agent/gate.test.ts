/**
 * The commit's Verification line says what the design carries, warnings included, and how much
 * of it the change added against the run's baseline.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { evaluateGate, unmetPlan, verificationLine } from "../../src/agent/gate.ts";
import { loadDesign } from "../../src/design/design.ts";
import { discoverProject } from "../../src/repo/project.ts";
import type { Amendment, Proposal, ProposalScope } from "../../src/spec/proposal.ts";
import { FIXTURES_DIR } from "../support/kicad.ts";
import type { CheckId, CheckReport, CheckResult, Finding, Severity } from "../../src/checks/types.ts";

function finding(check: CheckId, severity: Severity, key: string): Finding {
  return { check, rule: key.split(":")[1] ?? "rule", severity, message: key, key };
}

function report(families: Partial<Record<CheckId, Finding[]>>, requirements = "6/6 rules pass"): CheckReport {
  const checks: CheckResult[] = (["erc", "drc", "parity", "routing"] as CheckId[]).map((id) => ({ id, status: "pass", summary: "", findings: families[id] ?? [] }));
  checks.push({ id: "requirements", status: "pass", summary: requirements, findings: [] });
  return { schema: "copperhead.check/1", ok: true, project: "board.kicad_pro", kicad: { version: "9.0.8" }, strict: false, fab: false, checks, counts: { error: 0, warning: 0, info: 0 } };
}

const warnings = (check: CheckId, n: number, prefix = "w") => Array.from({ length: n }, (_, i) => finding(check, "warning", `${check}:${prefix}:${i}`));

describe("verificationLine", () => {
  test("a spotless design is clean in every family", () => {
    expect(verificationLine(report({}), report({}))).toBe("ERC clean, DRC clean, parity clean, requirements 6/6");
  });

  test("warnings are stated, with how many the change added", () => {
    const before = report({ erc: warnings("erc", 44), drc: warnings("drc", 13) });
    const after = report({ erc: warnings("erc", 44), drc: [...warnings("drc", 13), ...warnings("drc", 2, "new")] });
    expect(verificationLine(after, before)).toBe("ERC clean (44 warnings, none new), DRC clean (15 warnings, 2 new), parity clean, requirements 6/6");
  });

  test("errors that were there before the run are called the baseline's", () => {
    const errors = [finding("parity", "error", "parity:missing_footprint:J1")];
    const before = report({ parity: [...errors, ...warnings("parity", 1)] });
    expect(verificationLine(report({ parity: [...errors, ...warnings("parity", 1)] }), before)).toBe(
      "ERC clean, DRC clean, parity 1 error, 1 warning (baseline, none new), requirements 6/6",
    );
  });

  test("without a baseline it counts, and claims nothing about what is new", () => {
    expect(verificationLine(report({ erc: warnings("erc", 1) }))).toBe("ERC clean (1 warning), DRC clean, parity clean, requirements 6/6");
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
    expect(unmetPlan(proposal({ refs: ["R9"] }), design, true)).toEqual(["the proposal changes R9, but R9 is no longer in the design and no planned change removes it"]);
    expect(unmetPlan(proposal({ refs: ["R9"] }, ["Remove the pull-down R9"]), design, true)).toEqual([]);
    const amendment: Amendment = { why: "w", changes: [], requirements: [], scope: { refs: [], nets: [], newRefs: ["C7"], newNets: [] } };
    expect(unmetPlan(proposal({ refs: ["U1"] }, [], [amendment]), design, true)).toEqual(["the proposal adds C7, but the design has no C7"]);
  });

  test("a proposal that binds no names (written by copperhead for sync) plans nothing to check", () => {
    expect(unmetPlan({ ...proposal({}), scope: undefined }, design, false)).toEqual([]);
  });
});

/** An unconnected item between two pads, as the routing family keys it. */
function unconnected(a: string, b: string): Finding {
  return { ...finding("routing", "warning", `routing:unconnected:${[a, b].sort().join("+")}`), location: { file: "board.kicad_pcb", ref: a.split(".")[0] } };
}

describe("the gate and unconnected items", () => {
  const before = report({ routing: [unconnected("J1.1", "J2.1")] });
  const after = report({ routing: [unconnected("J1.1", "J2.1"), unconnected("C4.1", "U1.5"), unconnected("C4.2", "U1.7")] });
  const pending = new Map([["C4", "no rule-clean path within 10 mm"]]);

  test("a new unconnected item fails the gate unless its part is left for layout", () => {
    const failed = evaluateGate(before, after, false);
    expect(failed.ok).toBe(false);
    expect(failed.newFindings.map((f) => f.key)).toEqual(["routing:unconnected:C4.1+U1.5", "routing:unconnected:C4.2+U1.7"]);
    expect(evaluateGate(before, after, false, pending)).toEqual({ ok: true, newFindings: [] });
    expect(evaluateGate(before, after, false, new Map([["C5", "placed, not routed"]])).ok).toBe(false);
  });

  test("an item between a pour and a pending part's pad counts as that part's, whatever the zone's id holds", () => {
    const zone: Finding = { ...finding("routing", "warning", "routing:unconnected:TP99.1+zone:GND:F.Cu+B.Cu"), message: "Missing connection between items: Zone [GND] on F.Cu, B.Cu; Pad 1 [GND] of TP99 on F.Cu" };
    expect(evaluateGate(before, report({ routing: [unconnected("J1.1", "J2.1"), zone] }), false, new Map([["TP99", "no rule-clean path"]])).ok).toBe(true);
  });

  test("unconnected items that were there before the run are not the run's", () => {
    expect(evaluateGate(before, report({ routing: [unconnected("J1.1", "J2.1")] }), false).ok).toBe(true);
  });

  test("the line never says DRC clean when the run left connections, and says why in words", () => {
    expect(verificationLine(after, before, pending)).toBe(
      "ERC clean, DRC no new violations, routing: 2 connections left for layout (C4: no rule-clean path within 10 mm), parity clean, requirements 6/6",
    );
    expect(verificationLine(report({ routing: [unconnected("J1.1", "J2.1")] }), before, pending)).toBe("ERC clean, DRC clean, parity clean, requirements 6/6");
  });
});
