/**
 * A pour's finding the filler makes on the untouched board is not the change's: antenna-eval was
 * last filled by an older KiCad, whose fill gives each SMA connector's ground pad two thermal
 * spokes, where KiCad 9's own fill of the same untouched board leaves J1–J5 and J10 with one.
 * A run that refills near J1 therefore shows a starved thermal the baseline never had. The gate
 * judges such a finding again against HEAD refilled by KiCad (`checkCommittedRefilled`), with
 * real kicad-cli and KiCad's Python filler.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { discoverProject } from "../../src/repo/project.ts";
import {
  aboutZone,
  checkCommitted,
  checkCommittedRefilled,
  judgedBaseline,
  withRefilledFindings,
} from "../../src/run/baseline.ts";
import { evaluateGate, verificationLine } from "../../src/run/gate.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const starvedJ1 = (report: CheckReport) =>
  report.checks
    .find((c) => c.id === "drc")!
    .findings.filter((f) => f.rule === "starved_thermal" && / of J1 /.test(f.message));

describe("the filler's own findings", () => {
  let saved: CheckReport;
  let refilled: CheckReport;
  beforeAll(async () => {
    await requireKicadCli();
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/antenna-eval")!);
    await git(project.root, "init", "--quiet");
    await commitAll(project.root, "antenna-eval");
    const kicad = discoverProject(project.root, join(project.root, project.projectFile));
    [saved, refilled] = await Promise.all([checkCommitted(kicad, false), checkCommittedRefilled(kicad, false)]);
  }, 600_000);

  test("HEAD refilled by KiCad 9 starves J1's ground pad, which its saved fill does not", () => {
    expect(starvedJ1(saved)).toEqual([]);
    expect(starvedJ1(refilled).length).toBeGreaterThan(0);
    expect(starvedJ1(refilled).every(aboutZone)).toBe(true);
    // Only the board's families are checked on the refilled copy.
    expect(refilled.checks.filter((c) => c.status !== "skipped").map((c) => c.id)).toEqual(["drc", "routing"]);
  });

  test("the same finding after a change is the baseline's once the refilled findings join it", () => {
    const after: CheckReport = {
      ...saved,
      checks: saved.checks.map((c) =>
        c.id === "drc" ? { ...c, findings: [...c.findings, ...starvedJ1(refilled)] } : c,
      ),
    };
    const blocking = (baseline: CheckReport) => evaluateGate(baseline, after, false).blocking;
    expect(blocking(saved).map((f: Finding) => f.rule)).toContain("starved_thermal");
    expect(blocking(withRefilledFindings(saved, refilled))).toEqual([]);
  });

  test("the Verification line and run_check judge by the baseline the gate judged by", async () => {
    const after: CheckReport = {
      ...saved,
      checks: saved.checks.map((c) =>
        c.id === "drc" ? { ...c, findings: [...c.findings, ...starvedJ1(refilled)] } : c,
      ),
    };
    const drcPart = (line: string) => /DRC [^,]*(?:, [^,]*warnings)? \([^)]*\)/.exec(line)?.[0];
    // Before the gate asked for HEAD refilled, the baseline is HEAD's check.
    expect(await judgedBaseline({ report: Promise.resolve(saved) })).toBe(saved);
    expect(drcPart(verificationLine(after, saved))).toMatch(/\d+ new\)$/);
    // Once it has, the filler's own finding is no more new in the line than in the gate.
    const judged = await judgedBaseline({ report: Promise.resolve(saved), refilled: Promise.resolve(refilled) });
    expect(drcPart(verificationLine(after, judged))).toMatch(/none new\)$/);
    expect(evaluateGate(judged, after, false).newFindings).toEqual([]);
  });

  test("a finding both fills show joins once, so one more of it after a change is new", () => {
    const drc = (report: CheckReport) => report.checks.find((c) => c.id === "drc")!.findings;
    const both = drc(saved).filter((f) => drc(refilled).some((g) => g.key === f.key && g.message === f.message));
    expect(both.length).toBeGreaterThan(0);
    const merged = withRefilledFindings(saved, refilled);
    for (const f of both) expect(drc(merged).filter((g) => g.key === f.key)).toHaveLength(1);
    // One more of a family the run grew: new against the merged baseline, as against the saved one.
    const grown = both[0]!;
    const after: CheckReport = {
      ...saved,
      checks: saved.checks.map((c) =>
        c.id === "drc"
          ? { ...c, findings: [...c.findings, { ...grown, key: `${grown.key.replace(/#\d+$/, "")}#99` }] }
          : c,
      ),
    };
    const added = (baseline: CheckReport) => evaluateGate(baseline, after, false).newFindings.map((f) => f.rule);
    expect(added(saved)).toEqual([grown.rule]);
    expect(added(merged)).toEqual([grown.rule]);
  });

  test("a finding is about a pour when KiCad names a zone, named or not", () => {
    const drc = (message: string) => ({ check: "drc", message }) as Finding;
    expect(aboutZone(drc("Isolated copper fill: Zone [gnd] on F.Cu and B.Cu, priority 0"))).toBe(true);
    expect(aboutZone(drc("Isolated copper fill: Zone 'GND' [GND] on F.Cu and B.Cu, priority 0"))).toBe(true);
    expect(aboutZone(drc("Clearance violation: Track [GND] on F.Cu; Pad 1 [+5V] of R1 on F.Cu"))).toBe(false);
  });
});
