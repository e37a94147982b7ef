import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../src/commands/check.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { disconnectLdoEnable, editFile, removeFootprint, setDefaultClearance } from "../support/variants.ts";

afterAll(cleanupTempDirs);
beforeAll(requireKicadCli);

function family(report: CheckReport, id: string) {
  return report.checks.find((c) => c.id === id)!;
}

/** Families whose status is "fail": a variant must fail in exactly the one it breaks. */
function failing(report: CheckReport): string[] {
  return report.checks.filter((c) => c.status === "fail").map((c) => c.id);
}

function pick(findings: Finding[], key: string): Pick<Finding, "check" | "rule" | "key" | "severity"> | undefined {
  const f = findings.find((x) => x.key === key);
  return f && { check: f.check, rule: f.rule, key: f.key, severity: f.severity };
}

describe("check on the clean usb-led fixture", () => {
  test("every kicad-cli family passes and the report is well formed", async () => {
    const repo = await copyFixture("usb-led");
    const report = await runCheck({ repo });
    expect(report).toMatchObject({ schema: "copperhead.check/1", ok: true, project: "usb-led.kicad_pro", strict: false, fab: false });
    expect(report.kicad?.version).toMatch(/^\d+\.\d+/);
    expect(report.checks.map((c) => c.id)).toEqual(["erc", "drc", "parity", "routing", "drift", "requirements", "changes", "fab"]);
    for (const id of ["erc", "drc", "parity", "routing", "changes"]) expect(family(report, id).status).toBe("pass");
    expect(family(report, "fab").status).toBe("skipped");
    expect(report.counts).toEqual({ error: 0, warning: 0, info: 0 });
  }, 60_000);

  test("--fab: closed outline, MPNs, Gerber and drill export all pass", async () => {
    const repo = await copyFixture("usb-led");
    const report = await runCheck({ repo, fab: true });
    expect(family(report, "fab")).toMatchObject({ status: "pass", findings: [] });
    expect(report.ok).toBe(true);
  }, 60_000);
});

describe("each failure mode fails in exactly its family", () => {
  test("ERC error: the LDO's EN input left unconnected", async () => {
    const repo = await copyFixture("usb-led");
    disconnectLdoEnable(repo);
    const report = await runCheck({ repo });
    expect(failing(report)).toEqual(["erc"]);
    const erc = family(report, "erc");
    expect(pick(erc.findings, "erc:pin_not_connected:U1.3")).toEqual({ check: "erc", rule: "pin_not_connected", key: "erc:pin_not_connected:U1.3", severity: "error" });
    const finding = erc.findings.find((f) => f.key === "erc:pin_not_connected:U1.3")!;
    expect(finding.location).toMatchObject({ file: "regulator.kicad_sch", ref: "U1", pin: "3", sheet: "/Regulator/" });
  }, 60_000);

  test("DRC clearance error: the net class asks for more clearance than the copper has", async () => {
    const repo = await copyFixture("usb-led");
    setDefaultClearance(repo, 0.6);
    const report = await runCheck({ repo });
    expect(failing(report)).toEqual(["drc"]);
    const drc = family(report, "drc");
    expect(drc.findings.length).toBeGreaterThan(0);
    expect(drc.findings.every((f) => f.rule === "clearance" && f.severity === "error")).toBe(true);
    expect(drc.findings.every((f) => f.key.startsWith("drc:clearance:"))).toBe(true);
  }, 60_000);

  test("parity error: a symbol with no footprint on the board", async () => {
    const repo = await copyFixture("usb-led");
    removeFootprint(join(repo, "usb-led.kicad_pcb"), "R3");
    const report = await runCheck({ repo });
    expect(failing(report)).toEqual(["parity"]);
    expect(pick(family(report, "parity").findings, "parity:missing_footprint:R3")).toEqual({
      check: "parity",
      rule: "missing_footprint",
      key: "parity:missing_footprint:R3",
      severity: "error",
    });
  }, 60_000);

  test("failing requirement and malformed rule in docs/SPEC.md", async () => {
    const repo = await copyFixture("usb-led");
    mkdirSync(join(repo, "docs"));
    writeFileSync(
      join(repo, "docs/SPEC.md"),
      ["# Spec", "", "## Requirements", "", "- REQ-LED-1: Indicator current stays low.", "  - check: R3.value >= 10k", "- REQ-PWR-1: Power.", "  - check: net VBUS exsts", ""].join("\n"),
    );
    const report = await runCheck({ repo });
    expect(failing(report)).toEqual(["requirements"]);
    const findings = family(report, "requirements").findings;
    expect(pick(findings, "requirements:REQ-LED-1:R3.value >= 10k")).toEqual({
      check: "requirements",
      rule: "REQ-LED-1",
      key: "requirements:REQ-LED-1:R3.value >= 10k",
      severity: "error",
    });
    const malformed = findings.find((f) => f.location?.line === 8)!;
    expect(malformed).toMatchObject({ severity: "error", location: { file: "docs/SPEC.md", line: 8 } });
    expect(malformed.location!.column).toBeGreaterThan(1);
  }, 60_000);

  test("fab: a BOM line without an MPN fails only with --fab", async () => {
    const repo = await copyFixture("usb-led");
    editFile(join(repo, "usb-led.kicad_sch"), (t) => t.replace(/\n\t\t\(property "MPN" "RC0603FR-071KL"[\s\S]*?\n\t\t\)(?=\n)/, ""));
    expect((await runCheck({ repo })).ok).toBe(true);
    const report = await runCheck({ repo, fab: true });
    expect(failing(report)).toEqual(["fab"]);
    expect(pick(family(report, "fab").findings, "fab:mpn_missing:R3")).toEqual({ check: "fab", rule: "mpn_missing", key: "fab:mpn_missing:R3", severity: "error" });
  }, 60_000);

  test("malformed change proposal", async () => {
    const repo = await copyFixture("usb-led");
    mkdirSync(join(repo, "docs/changes"), { recursive: true });
    writeFileSync(join(repo, "docs/changes/0001-led.md"), "# Brighter LED\n\n- Change: 0001-led\n\n## Why\n\nIt is dim.\n");
    const report = await runCheck({ repo });
    expect(failing(report)).toEqual(["changes"]);
    const keys = family(report, "changes").findings.map((f) => f.key);
    expect(keys).toContain("changes:malformed:docs/changes/0001-led.md:missing `- Approval: …` line");
  }, 60_000);
});

describe("could not run: typed errors, never a pass", () => {
  test("an unparseable .kicad_sch", async () => {
    const repo = await copyFixture("usb-led");
    editFile(join(repo, "regulator.kicad_sch"), (t) => t.slice(0, t.length / 3));
    const err = await runCheck({ repo }).catch((e) => e);
    expect(err).toBeInstanceOf(CopperheadError);
    expect(err).toMatchObject({ code: "parse_error", exitCode: 3 });
    expect(err.message).toMatch(/regulator\.kicad_sch:\d+:\d+/);
  });

  test("kicad-cli missing: COPPERHEAD_KICAD_CLI points nowhere", async () => {
    const repo = await copyFixture("usb-led");
    const saved = process.env.COPPERHEAD_KICAD_CLI;
    process.env.COPPERHEAD_KICAD_CLI = join(repo, "no-such-kicad-cli");
    try {
      const err = await runCheck({ repo }).catch((e) => e);
      expect(err).toMatchObject({ code: "kicad_cli_missing", exitCode: 3 });
      expect(err.fix).toContain("COPPERHEAD_KICAD_CLI");
    } finally {
      if (saved === undefined) delete process.env.COPPERHEAD_KICAD_CLI;
      else process.env.COPPERHEAD_KICAD_CLI = saved;
    }
  });
});

describe("determinism and caching", () => {
  test("the same repo state gives byte-identical JSON, cold and cached", async () => {
    const repo = await copyFixture("usb-led");
    const cold = JSON.stringify(await runCheck({ repo }), null, 2);
    const warm = JSON.stringify(await runCheck({ repo }), null, 2);
    expect(warm).toBe(cold);
    expect(cold).not.toContain(repo);
  }, 60_000);
});
