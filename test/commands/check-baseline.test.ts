/**
 * `check --baseline <ref>` and `check --staged`: the design judged against another state of
 * the repo, checked on a snapshot (never a checkout in the user's tree), with the real kicad-cli
 * on KiCad demo projects that have findings as they ship.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../src/commands/check.ts";
import { runInit } from "../../src/commands/init.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { addDanglingLabel, demoRepo } from "../support/demo-repo.ts";
import { rejectedCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";

beforeAll(requireKicadCli);
afterAll(cleanupTempDirs);

const SLOW = 120_000;

const findings = (report: CheckReport): Finding[] => report.checks.flatMap((c) => c.findings);
const inState = (report: CheckReport, state: string) => findings(report).filter((f) => f.baselineState === state);

async function withoutKicad<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.COPPERHEAD_KICAD_CLI;
  process.env.COPPERHEAD_KICAD_CLI = "/nonexistent/kicad-cli";
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.COPPERHEAD_KICAD_CLI;
    else process.env.COPPERHEAD_KICAD_CLI = saved;
  }
}

describe("check --baseline", () => {
  test(
    "custom_pads_test as it ships: its 3 DRC errors are unchanged against HEAD, so the check passes",
    async () => {
      const { root } = await demoRepo("custom_pads_test/custom_pads_test");
      const before = treeFingerprint(root);
      const plain = await runCheck({ repo: root });
      expect(plain.ok).toBe(false);
      const report = await runCheck({ repo: root, baseline: "HEAD" });
      expect(report.ok).toBe(true);
      expect(report.baseline).toMatchObject({
        ref: "HEAD",
        counts: { new: 0, unchanged: findings(plain).length, absent: 0 },
        absent: [],
      });
      expect(report.baseline!.commit).toBe((await git(root, "rev-parse", "HEAD")).trim());
      expect(report.checks.find((c) => c.id === "drc")!.status).toBe("fail");
      // The snapshot is never a checkout in the user's tree: nothing but the cache changed.
      expect(treeFingerprint(root, [".git", ".copperhead"])).toEqual(
        Object.fromEntries(Object.entries(before).filter(([p]) => !p.startsWith(".copperhead"))),
      );
    },
    SLOW,
  );

  test(
    "a dangling label is the one new error; removing it again makes it absent against the commit that had it",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      const { root } = project;
      const original = readFileSync(project.schematic!, "utf8");
      addDanglingLabel(project.schematic!, "NOT_CONNECTED");
      const report = await runCheck({ repo: root, baseline: "HEAD" });
      expect(report.ok).toBe(false);
      expect(inState(report, "new").map((f) => f.key)).toEqual(["erc:label_dangling:label:NOT_CONNECTED"]);
      expect(inState(report, "new")[0]!.severity).toBe("error");

      await git(root, "commit", "--quiet", "-am", "a label");
      writeFileSync(project.schematic!, original);
      const fixed = await runCheck({ repo: root, baseline: "HEAD" });
      expect(fixed.ok).toBe(true);
      expect(fixed.baseline!.absent.map((f) => [f.key, f.baselineState])).toEqual([
        ["erc:label_dangling:label:NOT_CONNECTED", "absent"],
      ]);
      // HEAD~1 had no label: against it the fixed tree has nothing new and nothing gone.
      expect((await runCheck({ repo: root, baseline: "HEAD~1" })).baseline!.counts).toMatchObject({
        new: 0,
        absent: 0,
      });
    },
    SLOW,
  );

  test(
    "pic_programmer: a new warning fails only with --strict; an unchanged one never does",
    async () => {
      const project = await demoRepo("pic_programmer/pic_programmer");
      expect((await runCheck({ repo: project.root, baseline: "HEAD", strict: true })).ok).toBe(true);
      const pro = join(project.root, project.projectFile);
      const settings = JSON.parse(readFileSync(pro, "utf8"));
      settings.erc.rule_severities.label_dangling = "warning";
      writeFileSync(pro, JSON.stringify(settings, null, 2));
      addDanglingLabel(project.schematic!, "ONLY_A_WARNING");
      const lenient = await runCheck({ repo: project.root, baseline: "HEAD" });
      expect(inState(lenient, "new").map((f) => `${f.severity} ${f.key}`)).toEqual([
        "warning erc:label_dangling:label:ONLY_A_WARNING",
      ]);
      expect(lenient.ok).toBe(true);
      expect((await runCheck({ repo: project.root, baseline: "HEAD", strict: true })).ok).toBe(false);
    },
    SLOW,
  );

  test(
    "a requirement rule that passed at the baseline and fails now is a new error",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      await runInit({ repo: project.root, hooks: false });
      appendFileSync(
        join(project.root, "docs/SPEC.md"),
        "\n- REQ-TEST-1: R2 stays what it is.\n  - check: R2.value == R\n",
      );
      await git(project.root, "add", "-A");
      await git(project.root, "commit", "--quiet", "-m", "init");
      const text = readFileSync(project.schematic!, "utf8");
      const at = text.indexOf('(property "Reference" "R2"');
      const value = text.indexOf('(property "Value" "R"', at);
      writeFileSync(
        project.schematic!,
        text.slice(0, value) + '(property "Value" "10k"' + text.slice(value + '(property "Value" "R"'.length),
      );
      const report = await runCheck({ repo: project.root, baseline: "HEAD" });
      const fresh = inState(report, "new").map((f) => `${f.severity} ${f.key}`);
      expect(fresh).toContain("error requirements:REQ-TEST-1:R2.value == R");
      expect(report.ok).toBe(false);
      writeFileSync(project.schematic!, text);
      expect((await runCheck({ repo: project.root, baseline: "HEAD" })).ok).toBe(true);
    },
    SLOW,
  );

  test(
    "a ref from before the project existed: every finding is new",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      const root = project.root;
      // History: an empty first commit, then the design moved into a folder.
      mkdirSync(join(root, "hw"));
      for (const name of ["custom_pads_test.kicad_pro", "custom_pads_test.kicad_sch", "custom_pads_test.kicad_pcb"])
        renameSync(join(root, name), join(root, "hw", name));
      await git(root, "add", "-A");
      await git(root, "commit", "--quiet", "-m", "into hw/");
      const report = await runCheck({ repo: root, project: "hw/custom_pads_test.kicad_pro", baseline: "HEAD~1" });
      expect(report.baseline!.counts.unchanged).toBe(0);
      expect(report.baseline!.counts.new).toBe(findings(report).length);
      expect(report.ok).toBe(false);
    },
    SLOW,
  );

  test("a ref that names no commit is a typed error that says how to name one", async () => {
    const { root } = await demoRepo("custom_pads_test/custom_pads_test");
    const err = await rejectedCopperheadError(runCheck({ repo: root, baseline: "no-such-branch" }));
    expect(err).toMatchObject({ code: "not_found", exitCode: 3 });
    expect(err.fix).toContain("HEAD~1");
    expect(await rejectedCopperheadError(runCheck({ repo: root, baseline: "--output=x" }))).toMatchObject({
      code: "not_found",
    });
    const plain = await makeTempDir();
    writeFileSync(join(plain, "a.kicad_pro"), "{}");
    writeFileSync(join(plain, "a.kicad_sch"), readFileSync(join(root, "custom_pads_test.kicad_sch")));
    expect(await rejectedCopperheadError(runCheck({ repo: plain, baseline: "HEAD" }))).toMatchObject({
      code: "not_a_git_repo",
      exitCode: 3,
    });
  });
});

describe("check --staged (the pre-commit hook's check)", () => {
  test(
    "a commit staging nothing a check reads passes at once, without kicad-cli",
    async () => {
      const { root } = await demoRepo("custom_pads_test/custom_pads_test");
      writeFileSync(join(root, "NOTES.txt"), "lab notes\n");
      writeFileSync(join(root, "README.md"), "# pads\n");
      await git(root, "add", "NOTES.txt", "README.md");
      const report = await withoutKicad(() => runCheck({ repo: root, staged: true }));
      expect(report.ok).toBe(true);
      expect(report.kicad).toBeNull();
      expect(report.checks.every((c) => c.status === "skipped" && c.summary.startsWith("nothing staged touches"))).toBe(
        true,
      );
    },
    SLOW,
  );

  test(
    "what is staged is checked, not the working tree",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      const { root } = project;
      const original = readFileSync(project.schematic!, "utf8");
      addDanglingLabel(project.schematic!, "STAGED_LABEL");
      await git(root, "add", "-A");
      writeFileSync(project.schematic!, original);
      const blocked = await runCheck({ repo: root, staged: true });
      expect(blocked.ok).toBe(false);
      expect(inState(blocked, "new").map((f) => f.key)).toEqual(["erc:label_dangling:label:STAGED_LABEL"]);

      // The other way round: the label only in the working tree, a doc staged.
      await git(root, "reset", "--quiet", "--hard");
      addDanglingLabel(project.schematic!, "UNSTAGED_LABEL");
      mkdirSync(join(root, "docs"));
      writeFileSync(join(root, "docs/NOTES.md"), "notes\n");
      await git(root, "add", "docs/NOTES.md");
      const passed = await runCheck({ repo: root, staged: true });
      expect(passed.ok).toBe(true);
      expect(passed.baseline!.counts.new).toBe(0);
    },
    SLOW,
  );

  test(
    "a repo's first commit has no HEAD: everything staged is checked",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      const fresh = await makeTempDir();
      await git(fresh, "init", "--quiet", "--initial-branch=main");
      for (const name of ["custom_pads_test.kicad_pro", "custom_pads_test.kicad_sch", "custom_pads_test.kicad_pcb"]) {
        writeFileSync(join(fresh, name), readFileSync(join(project.root, name)));
      }
      await git(fresh, "add", "-A");
      const report = await runCheck({ repo: fresh, staged: true });
      expect(report.baseline).toBeUndefined();
      expect(report.ok).toBe(false);
      expect(report.checks.find((c) => c.id === "drc")!.findings.filter((f) => f.severity === "error")).toHaveLength(3);
    },
    SLOW,
  );
});
