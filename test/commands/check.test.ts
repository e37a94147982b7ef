import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCheck } from "../../src/commands/check.ts";
import type { CheckReport } from "../../src/checks/types.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { editFile } from "../support/variants.ts";

afterAll(cleanupTempDirs);
beforeAll(requireKicadCli);

function family(report: CheckReport, id: string) {
  return report.checks.find((c) => c.id === id)!;
}

describe("check on the clean usb-led fixture", () => {
  test("every kicad-cli family passes and the report is well formed", async () => {
    const repo = await copyFixture("usb-led");
    const report = await runCheck({ repo });
    expect(report).toMatchObject({
      schema: "copperhead.check/1",
      ok: true,
      project: "usb-led.kicad_pro",
      strict: false,
      fab: false,
    });
    expect(report.kicad?.version).toMatch(/^\d+\.\d+/);
    expect(report.checks.map((c) => c.id)).toEqual([
      "erc",
      "drc",
      "parity",
      "routing",
      "drift",
      "requirements",
      "changes",
      "fab",
    ]);
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
