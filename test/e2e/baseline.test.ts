/**
 * Adopting copperhead on a board that already has findings, through the binary: the
 * baseline-relative pre-commit hook on KiCad demos that fail `check` as they ship, and
 * `check --baseline <ref>` in every CI format.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv04 from "ajv-draft-04";
import addFormats from "ajv-formats";
import sarifSchema from "@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json" with { type: "json" };
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addDanglingLabel, demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { BINARY, runBinary } from "./binary.ts";

beforeAll(requireKicadCli);
afterAll(cleanupTempDirs);

const SLOW = 180_000;

/** git as a user runs it: hooks on, copperhead nowhere on PATH (the hook must find it itself). */
function commit(repo: string, message: string, ...extra: string[]) {
  const env: Record<string, string> = {
    PATH: "/usr/bin:/bin",
    HOME: repo,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    NO_COLOR: "1",
  };
  if (process.env.COPPERHEAD_KICAD_CLI) env.COPPERHEAD_KICAD_CLI = process.env.COPPERHEAD_KICAD_CLI;
  const run = (...args: string[]) =>
    Bun.spawnSync(["git", ...args], { cwd: repo, env, stdout: "pipe", stderr: "pipe" });
  run("add", "-A");
  const result = run("commit", "-q", "-m", message, ...extra);
  return { exitCode: result.exitCode, output: result.stdout.toString() + result.stderr.toString() };
}

function log(repo: string): string[] {
  return Bun.spawnSync(["git", "log", "--format=%s"], { cwd: repo }).stdout.toString().trim().split("\n");
}

describe("the pre-commit hook on demos that already fail", () => {
  for (const [id, said] of [
    ["custom_pads_test/custom_pads_test", "3 errors, 5 warnings"],
    ["pic_programmer/pic_programmer", "63 warnings"],
  ] as const) {
    test(
      `${id}: init names the baseline; an unrelated commit passes; a dangling label is blocked and named`,
      async () => {
        const project = await demoRepo(id);
        const repo = project.root;
        expect(Bun.which("copperhead", { PATH: "/usr/bin:/bin" })).toBeNull();
        const init = await runBinary(["init", "--repo", repo], { env: { NO_COLOR: "1" } });
        expect(init.exitCode, init.stderr).toBe(0);
        expect(init.stdout).toContain(`The design has ${said} today. They are the baseline, not blockers`);
        expect(readFileSync(join(repo, ".git/hooks/pre-commit"), "utf8")).toContain(`set -- '${BINARY}'`);

        const setUp = commit(repo, "copperhead init");
        expect(setUp.exitCode, setUp.output).toBe(0);
        writeFileSync(join(repo, "NOTES.txt"), "bench notes\n");
        const notes = commit(repo, "notes");
        expect(notes.exitCode, notes.output).toBe(0);
        expect(notes.output).toContain("check passed: nothing staged touches the design");

        addDanglingLabel(project.schematic!, "FLOATING_NET");
        const blocked = commit(repo, "a floating label");
        expect(blocked.exitCode).toBe(1);
        expect(blocked.output).toContain("Label not connected to anything: Label 'FLOATING_NET'");
        expect(blocked.output).toContain("rule label_dangling");
        expect(blocked.output).toContain("check failed: new since HEAD: 1 error");
        expect(log(repo)).toEqual(["notes", "copperhead init", "the design as KiCad ships it"]);
      },
      SLOW,
    );
  }

  test(
    "the recorded binary gone and none on PATH: the commit is refused with how to fix it",
    async () => {
      const project = await demoRepo("custom_pads_test/custom_pads_test");
      const copy = join(project.root, "..", "copperhead-copy");
      writeFileSync(copy, readFileSync(BINARY), { mode: 0o755 });
      const init = Bun.spawnSync([copy, "init", "--repo", project.root], { stdout: "pipe", stderr: "pipe" });
      expect(init.exitCode, init.stderr.toString()).toBe(0);
      Bun.spawnSync(["rm", copy]);
      const refused = commit(project.root, "copperhead init");
      expect(refused.exitCode).toBe(1);
      expect(refused.output).toContain(`copperhead is neither at ${copy}`);
      expect(refused.output).toContain("run 'copperhead init' again");
    },
    SLOW,
  );
});

describe("check --baseline through the binary", () => {
  /** HEAD~1 has the label OLD_LABEL; the working tree drops it and adds NEW_LABEL. */
  async function history() {
    const project = await demoRepo("custom_pads_test/custom_pads_test");
    const repo = project.root;
    expect((await runBinary(["init", "--repo", repo, "--no-hooks"])).exitCode).toBe(0);
    commit(repo, "init");
    const original = readFileSync(project.schematic!, "utf8");
    addDanglingLabel(project.schematic!, "OLD_LABEL");
    commit(repo, "old label");
    writeFileSync(join(repo, "NOTES.txt"), "notes\n");
    commit(repo, "notes");
    writeFileSync(project.schematic!, original);
    addDanglingLabel(project.schematic!, "NEW_LABEL");
    return { repo, project, original };
  }

  test(
    "--baseline HEAD~1 --format sarif validates against SARIF 2.1.0 and marks new, unchanged and absent; exit 1, then 0",
    async () => {
      const { repo, project, original } = await history();
      const sarif = await runBinary(["check", "--repo", repo, "--baseline", "HEAD~1", "--format", "sarif"]);
      expect(sarif.exitCode, sarif.stderr).toBe(1);
      const log = JSON.parse(sarif.stdout);
      const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
      addFormats(ajv);
      const validate = ajv.compile(sarifSchema);
      expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
      const byKey = new Map<string, string>(
        log.runs[0].results.map((r: { partialFingerprints: Record<string, string>; baselineState: string }) => [
          r.partialFingerprints["copperheadKey/v1"],
          r.baselineState,
        ]),
      );
      expect(byKey.get("erc:label_dangling:label:NEW_LABEL")).toBe("new");
      expect(byKey.get("erc:label_dangling:label:OLD_LABEL")).toBe("absent");
      expect(byKey.get("drc:clearance:teardrop:/PAD1@F.Cu+zone:GND@F.Cu")).toBe("unchanged");
      expect([...byKey.values()].filter((s) => s === "new")).toHaveLength(1);
      expect(sarif.stderr).toContain("check failed: new since HEAD~1: 1 error");

      writeFileSync(project.schematic!, original);
      const clean = await runBinary(["check", "--repo", repo, "--baseline", "HEAD~1", "--format", "sarif"]);
      expect(clean.exitCode, clean.stderr).toBe(0);
      expect(
        JSON.parse(clean.stdout).runs[0].results.filter((r: { baselineState: string }) => r.baselineState === "new"),
      ).toEqual([]);
      // Without --baseline the same tree still fails on the errors it always had.
      expect((await runBinary(["check", "--repo", repo, "--format", "sarif"])).exitCode).toBe(1);
    },
    SLOW,
  );

  test(
    "github annotates only what is new, junit fails only on it, and --baseline alone means HEAD",
    async () => {
      const { repo } = await history();
      const github = await runBinary(["check", "--repo", repo, "--baseline", "--format", "github"]);
      expect(github.exitCode).toBe(1);
      expect(github.stdout.trimEnd().split("\n")).toEqual([
        expect.stringMatching(/^::error file=custom_pads_test\.kicad_sch,title=erc\/label_dangling::.*NEW_LABEL/),
      ]);
      const junit = await runBinary(["check", "--repo", repo, "--baseline", "--strict", "--format", "junit"]);
      expect(junit.exitCode).toBe(1);
      expect(junit.stdout.match(/<failure /g)).toHaveLength(1);
      expect(junit.stdout).toContain("unchanged since HEAD");
      const json = JSON.parse((await runBinary(["check", "--repo", repo, "--json", "--baseline"])).stdout);
      expect(json.baseline.ref).toBe("HEAD");
      expect(json.baseline.counts).toMatchObject({ new: 1, absent: 1 });
      const unknown = await runBinary(["check", "--repo", repo, "--baseline", "nope"]);
      expect(unknown.exitCode).toBe(3);
      expect(unknown.stderr).toContain('"nope" does not name a commit');
    },
    SLOW,
  );
});
