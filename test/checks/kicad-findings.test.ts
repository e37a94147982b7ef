/**
 * Findings fed by kicad-cli: one per violation KiCad reports, each with its own key, rated as
 * the project rates it, and keyed by what the violation is about rather than where it sits.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../src/commands/check.ts";
import { layerOf } from "../../src/checks/kicad-findings.ts";
import { distinctKeys } from "../../src/checks/result.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { copyCorpusProject, corpusProjects, demoProjects, type CorpusProject } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { translateBoard, translateSchematic } from "../support/translate.ts";

beforeAll(requireKicadCli);
afterAll(cleanupTempDirs);

const SLOW = 120_000;

async function demo(name: string): Promise<CorpusProject> {
  const project = demoProjects().find((p) => p.id === `demos/${name}`);
  if (!project) throw new Error(`KiCad demo ${name} is not installed`);
  return copyCorpusProject(project);
}

const check = (p: CorpusProject, options: { strict?: boolean } = {}) =>
  runCheck({ repo: p.root, project: p.projectFile, ...options });

function family(report: CheckReport, id: string): Finding[] {
  return report.checks.find((c) => c.id === id)!.findings;
}

const keys = (findings: Finding[]) => findings.map((f) => f.key).sort();

describe("one finding per violation, each with its own key", () => {
  test(
    "custom_pads_test: three clearance errors, two between the same zone and teardrop net, stay three",
    async () => {
      const report = await check(await demo("custom_pads_test/custom_pads_test"));
      const errors = family(report, "drc").filter((f) => f.severity === "error");
      expect(keys(errors)).toEqual([
        "drc:clearance:teardrop:/PAD1@F.Cu+zone:GND@F.Cu",
        "drc:clearance:teardrop:/PAD2@F.Cu+zone:GND@F.Cu",
        "drc:clearance:teardrop:/PAD2@F.Cu+zone:GND@F.Cu#2",
      ]);
    },
    SLOW,
  );

  test(
    "pic_programmer: an ERC finding is placed where its symbol sits on the sheet, in mm",
    async () => {
      const report = await check(await demo("pic_programmer/pic_programmer"));
      const j1 = family(report, "erc").find((f) => f.rule === "footprint_link_issues" && f.location?.ref === "J1");
      // J1 is at (31.75, 91.44) in the sheet; kicad-cli's JSON writes (0.3175, 0.9144).
      expect(j1?.location).toMatchObject({ sheet: "/", x: 31.75, y: 91.44 });
      expect(j1?.location?.layer).toBeUndefined();
    },
    SLOW,
  );

  test(
    "multichannel: the units of a multi-unit part are their own objects (IC1A, IC1B)",
    async () => {
      const report = await check(await demo("multichannel/multichannel_mixer"));
      const linkIssues = keys(
        family(report, "erc").filter((f) => f.rule === "footprint_link_issues" && f.location?.ref === "IC1"),
      );
      expect(linkIssues).toEqual(["erc:footprint_link_issues:IC1A", "erc:footprint_link_issues:IC1B"]);
      expect(family(report, "drc").filter((f) => f.severity === "error")).toHaveLength(12);
    },
    SLOW,
  );

  test(
    "tiny_tapeout: labels named on other sheets resolve, wiring is named by its kind",
    async () => {
      const report = await check(await demo("tiny_tapeout/tinytapeout-demo"));
      const erc = family(report, "erc");
      expect(keys(erc.filter((f) => f.rule === "similar_labels"))).toContain(
        "erc:similar_labels:/RP2040/hierarchical_label:BOOT_MODE+global_label:boot_mode",
      );
      const offGrid = erc.filter(
        (f) => f.rule === "endpoint_off_grid" && f.key.startsWith("erc:endpoint_off_grid:wire"),
      );
      expect(offGrid.length).toBeGreaterThan(1);
      expect(new Set(offGrid.map((f) => f.key)).size).toBe(offGrid.length);
    },
    SLOW,
  );
});

describe("keys survive coordinate changes", () => {
  test(
    "moving the whole board changes no DRC, parity or routing key",
    async () => {
      const project = await demo("custom_pads_test/custom_pads_test");
      const before = await check(project);
      const original = readFileSync(project.board!, "utf8");
      const moved = translateBoard(original, 12.7, 25.4);
      expect(moved).not.toBe(original);
      writeFileSync(project.board!, moved);
      const after = await check(project);
      for (const id of ["drc", "parity", "routing"]) expect(keys(family(after, id))).toEqual(keys(family(before, id)));
      expect(family(before, "drc").length).toBeGreaterThan(0);
    },
    SLOW,
  );

  test(
    "moving everything on every sheet changes no ERC key",
    async () => {
      const project = await demo("tiny_tapeout/tinytapeout-demo");
      const before = await check(project);
      for (const sheet of new Bun.Glob("**/*.kicad_sch").scanSync({ cwd: project.root, absolute: true })) {
        writeFileSync(sheet, translateSchematic(readFileSync(sheet, "utf8"), 25.4, 50.8));
      }
      const after = await check(project);
      expect(keys(family(after, "erc"))).toEqual(keys(family(before, "erc")));
      expect(family(before, "erc").length).toBeGreaterThan(10);
    },
    SLOW,
  );
});

describe("violations of a whole net", () => {
  test(
    "antenna-eval (KiCad 7): an undriven power net is keyed by the net, not by the pin kicad-cli reports it on",
    async () => {
      const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/antenna-eval")!);
      const undriven = family(await check(project), "erc").filter((f) => f.rule === "power_pin_not_driven");
      // kicad-cli names whichever pin of the net it meets first; a new GND symbol can take its place.
      expect(undriven.map((f) => ({ key: f.key, ref: f.location?.ref, net: f.location?.net }))).toEqual([
        { key: "erc:power_pin_not_driven:net:GND", ref: "AE1", net: "GND" },
      ]);
    },
    SLOW,
  );
});

describe("a net with two names", () => {
  test(
    "rp2040-designguide (KiCad 6): keyed by its two names, not by the power symbol kicad-cli reports it on",
    async () => {
      const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rp2040-designguide")!);
      const named = family(await check(project), "erc").filter((f) => f.rule === "multiple_net_names");
      // U3's hidden IOVDD and DVDD pins sit on +3V3 and +1V1; kicad-cli names one power symbol of
      // each net, and a run that adds another +3V3 symbol can be the one it names next.
      expect(named.map((f) => ({ key: f.key, items: f.items }))).toEqual([
        { key: "erc:multiple_net_names:names:+1V1+DVDD", items: undefined },
        { key: "erc:multiple_net_names:names:+3V3+IOVDD", items: undefined },
      ]);
      expect(named.map((f) => f.refs)).toEqual([
        ["#PWR018", "U3"],
        ["#PWR01", "U3"],
      ]);
    },
    SLOW,
  );
});

describe("severities are the project's", () => {
  test(
    "pic_programmer: footprint_symbol_mismatch is a warning, as the project rates it; --strict fails on it",
    async () => {
      const project = await demo("pic_programmer/pic_programmer");
      const report = await check(project);
      const parity = report.checks.find((c) => c.id === "parity")!;
      expect(parity.findings).toHaveLength(61);
      expect(parity.findings.every((f) => f.rule === "footprint_symbol_mismatch" && f.severity === "warning")).toBe(
        true,
      );
      expect(parity.status).toBe("warn");
      expect(report.ok).toBe(true);
      const strict = await check(project, { strict: true });
      expect(strict.checks.find((c) => c.id === "parity")!.status).toBe("fail");
      expect(strict.ok).toBe(false);
    },
    SLOW,
  );

  test(
    "a rule the project raises to error is an error",
    async () => {
      const project = await demo("pic_programmer/pic_programmer");
      const pro = JSON.parse(readFileSync(join(project.root, project.projectFile), "utf8"));
      pro.board.design_settings.rule_severities.footprint_symbol_mismatch = "error";
      writeFileSync(join(project.root, project.projectFile), JSON.stringify(pro, null, 2));
      const parity = family(await check(project), "parity");
      expect(parity).toHaveLength(61);
      expect(parity.every((f) => f.severity === "error")).toBe(true);
    },
    SLOW,
  );
});

describe("key parts", () => {
  test("the layer kicad-cli 9 names in a description", () => {
    expect(layerOf("Thermal relief connection to zone incomplete (layer B.Cu; zone min spoke count 2; actual 1)")).toBe(
      "B.Cu",
    );
    expect(
      layerOf(
        "Copper connection too narrow (board setup constraints minimum connection width 0.3000 mm; actual 0.2490 mm) (B.Cu)",
      ),
    ).toBe("B.Cu");
    expect(layerOf("Clearance violation (netclass 'Default' clearance 0.2000 mm; actual 0.1500 mm)")).toBeUndefined();
  });

  test("findings that share a key get an occurrence index in their own order; the first keeps the plain key", () => {
    const finding = (key: string, message: string): Finding => ({
      check: "drc",
      rule: "clearance",
      severity: "error",
      message,
      key,
    });
    const out = distinctKeys([
      { finding: finding("k", "b"), order: "2" },
      { finding: finding("k", "a"), order: "1" },
      { finding: finding("k#2", "c"), order: "0" },
      { finding: finding("other", "d"), order: "0" },
    ]);
    expect(out.map((f) => `${f.key}=${f.message}`).sort()).toEqual(["k#2=c", "k#3=b", "k=a", "other=d"]);
  });
});
