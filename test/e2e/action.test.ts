/**
 * action.yml, the composite CI action: its YAML parses, every input is wired into a step,
 * and its steps really run here, as a runner would run them, against dist/copperhead packed
 * as a local file:// release, on a temp copy of the usb-led fixture with the real kicad-cli.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import {
  expressionsIn,
  loadAction,
  runCompositeAction,
  type CompositeAction,
  type StepResult,
} from "./action-runner.ts";
import { runBinary } from "./binary.ts";
import { makeLocalRelease, type LocalRelease } from "./local-release.ts";

const ROOT = resolve(import.meta.dir, "../..");
const INPUTS = [
  "version",
  "fab",
  "strict",
  "baseline",
  "format",
  "sarif-file",
  "working-directory",
  "release-url",
  "comment",
  "github-token",
  "artifact-name",
];

afterAll(cleanupTempDirs);

let action: CompositeAction;
let release: LocalRelease;
beforeAll(async () => {
  await requireKicadCli();
  action = await loadAction(join(ROOT, "action.yml"));
  release = await makeLocalRelease();
}, 60_000); // packing the real binary at gzip -9 takes seconds

/**
 * Runs the action on a fresh copy of usb-led inside a fresh workspace (or on `repo`), for a push
 * event unless a pull request's base commit is given.
 */
async function runAction(
  inputs: Record<string, string>,
  releaseUrl = release.url,
  event: { repo?: string; pullRequestBase?: string } = {},
) {
  const workspace = await makeTempDir();
  const temp = await makeTempDir();
  const repo = event.repo ?? (await copyFixture("usb-led"));
  const github = { "github.event.pull_request.base.sha": event.pullRequestBase ?? "" };
  const steps = await runCompositeAction(
    action,
    { "release-url": releaseUrl, "working-directory": repo, ...inputs },
    { actionPath: ROOT, workspace, temp, github },
  );
  return { steps, workspace, temp, repo };
}

function describeSteps(steps: StepResult[]): string {
  return steps.map((s) => `--- ${s.name} (exit ${s.exitCode})\n${s.stdout}\n${s.stderr}`).join("\n");
}

describe("action.yml", () => {
  test("is a composite action with the documented inputs and defaults", () => {
    expect(action.runs.using).toBe("composite");
    expect(Object.keys(action.inputs).sort()).toEqual([...INPUTS].sort());
    expect(action.inputs.version!.default).toBe("latest");
    expect(action.inputs.format!.default).toBe("github");
    expect(action.inputs.fab!.default).toBe("false");
    expect(action.inputs.strict!.default).toBe("false");
    for (const input of Object.values(action.inputs)) expect(input.description.length).toBeGreaterThan(0);
  });

  test("every input is used by a step, and reaches the scripts only through env", () => {
    const used = new Set<string>();
    for (const step of action.runs.steps) {
      if (step.uses === undefined) expect(step.shell).toBe("bash");
      // An expression pasted into `run:` is a script injection hole; inputs go through env.
      expect(expressionsIn(step.run ?? "")).toEqual([]);
      for (const value of [...Object.values(step.env ?? {}), ...Object.values(step.with ?? {})])
        for (const expr of expressionsIn(String(value))) used.add(expr);
      for (const input of (step.if ?? "").match(/inputs\.[\w-]+/g) ?? []) used.add(input);
    }
    for (const input of INPUTS) expect(used).toContain(`inputs.${input}`);
  });

  test("format sarif: installs the verified binary, finds kicad-cli, writes the SARIF file", async () => {
    const { steps, workspace, temp } = await runAction({ format: "sarif", "sarif-file": "reports/copperhead.sarif" });
    expect(
      steps.map((s) => s.exitCode),
      describeSteps(steps),
    ).toEqual([0, 0, 0]);
    expect(steps[0]!.stderr).toContain(`installed copperhead ${(await runBinary(["--version"])).stdout.trim()}`);
    expect(readFileSync(join(temp, "github_path"), "utf8")).toContain(join(temp, "copperhead-bin"));
    expect(steps[1]!.stdout).toContain("using ");
    const sarif = JSON.parse(readFileSync(join(workspace, "reports/copperhead.sarif"), "utf8"));
    expect(sarif.version).toBe("2.1.0");
    expect(sarif.runs[0].tool.driver.name).toBe("copperhead");
    // With format sarif the report is on stdout too, identical to the file.
    expect(JSON.parse(steps[2]!.stdout)).toEqual(sarif);
  }, 120_000);

  test("fab, strict and format reach copperhead check", async () => {
    const { steps } = await runAction({ fab: "true", strict: "true", format: "json" });
    expect(
      steps.map((s) => s.exitCode),
      describeSteps(steps),
    ).toEqual([0, 0, 0]);
    const report = JSON.parse(steps[2]!.stdout);
    expect(report.schema).toBe("copperhead.check/1");
    expect(report.strict).toBe(true);
    expect(report.checks.find((c: { id: string }) => c.id === "fab").status).not.toBe("skipped");
  }, 120_000);

  test("the default format prints workflow annotations and still writes the SARIF file", async () => {
    const { steps, workspace } = await runAction({ "sarif-file": "out.sarif" });
    expect(
      steps.map((s) => s.exitCode),
      describeSteps(steps),
    ).toEqual([0, 0, 0]);
    expect(JSON.parse(readFileSync(join(workspace, "out.sarif"), "utf8")).version).toBe("2.1.0");
    expect(steps[2]!.stdout).not.toContain('"version": "2.1.0"');
  }, 120_000);

  test("on a pull request the base commit is the baseline: findings already there pass, a new one fails", async () => {
    const repo = await copyFixture("usb-led");
    const git = (...args: string[]) =>
      Bun.spawnSync(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", ...args], {
        cwd: repo,
        stdout: "pipe",
      })
        .stdout.toString()
        .trim();
    git("init", "-q", "-b", "main");
    // The base already has a stale doc reference: a finding the pull request did not bring.
    expect((await runBinary(["init", "--repo", repo, "--no-hooks"])).exitCode).toBe(0);
    writeFileSync(join(repo, "docs/NOTES.md"), "The LED hangs off `R42`.\n");
    git("add", "-A");
    git("commit", "-q", "-m", "base");
    const base = git("rev-parse", "HEAD");

    const same = await runAction({ format: "json" }, release.url, { repo, pullRequestBase: base });
    expect(
      same.steps.map((s) => s.exitCode),
      describeSteps(same.steps),
    ).toEqual([0, 0, 0]);
    const report = JSON.parse(same.steps[2]!.stdout);
    expect(report.baseline).toMatchObject({ ref: base, commit: base, counts: { new: 0 } });
    expect(report.checks.find((c: { id: string }) => c.id === "drift").status).toBe("fail");

    writeFileSync(join(repo, "docs/MORE.md"), "And `R43` too.\n");
    const worse = await runAction({ format: "github" }, release.url, { repo, pullRequestBase: base });
    expect(worse.steps.map((s) => s.exitCode)).toEqual([0, 0, 1]);
    expect(worse.steps[2]!.stdout.trim().split("\n")).toEqual([expect.stringContaining("R43")]);
    // "none" turns the baseline off: the whole design must pass again.
    const none = await runAction({ format: "json", baseline: "none" }, release.url, { repo, pullRequestBase: base });
    expect(JSON.parse(none.steps[2]!.stdout).baseline).toBeUndefined();
  }, 180_000);

  test("working-directory is taken from the workspace: a project in a folder of the checkout is checked there, against the root's config, and the base is its baseline", async () => {
    // The checkout as actions/checkout leaves it in the workspace, the project in hw/ and
    // copperhead set up at the checkout's root (as `init` in hw/ does).
    const workspace = await makeTempDir();
    cpSync(await copyFixture("usb-led"), join(workspace, "hw"), { recursive: true });
    const git = (...args: string[]) =>
      Bun.spawnSync(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", ...args], {
        cwd: workspace,
        stdout: "pipe",
      })
        .stdout.toString()
        .trim();
    git("init", "-q", "-b", "main");
    expect((await runBinary(["init", "--repo", join(workspace, "hw"), "--no-hooks"])).exitCode).toBe(0);
    expect(existsSync(join(workspace, ".copperhead/config.json"))).toBe(true);
    writeFileSync(join(workspace, "docs/NOTES.md"), "The LED hangs off `R42`.\n");
    git("add", "-A");
    git("commit", "-q", "-m", "base");
    const base = git("rev-parse", "HEAD");
    const run = async (inputs: Record<string, string>) => {
      const temp = await makeTempDir();
      const github = { "github.event.pull_request.base.sha": base };
      const steps = await runCompositeAction(
        action,
        { "release-url": release.url, format: "json", ...inputs },
        { actionPath: ROOT, workspace, temp, github },
      );
      expect(
        steps.map((s) => s.name),
        describeSteps(steps),
      ).toEqual(["Install copperhead", "Install KiCad 9", "copperhead check"]);
      return { code: steps[2]!.exitCode, stdout: steps[2]!.stdout, steps };
    };

    // The folder, relative to the workspace as a workflow writes it, and the default ".".
    for (const inputs of [{ "working-directory": "hw" }, {}] as Record<string, string>[]) {
      const { code, stdout, steps } = await run(inputs);
      expect(code, describeSteps(steps)).toBe(0);
      const report = JSON.parse(stdout);
      expect(report.project).toBe("hw/usb-led.kicad_pro");
      // The stale reference is in the base already: nothing is new, and drift (which needs the
      // root's config and docs) ran.
      expect(report.baseline).toMatchObject({ commit: base, counts: { new: 0 } });
      expect(report.baseline.counts.unchanged).toBeGreaterThan(0);
      expect(report.checks.find((c: { id: string }) => c.id === "drift").status).toBe("fail");
    }

    writeFileSync(join(workspace, "docs/MORE.md"), "And `R43` too.\n");
    const worse = await run({ "working-directory": "hw" });
    expect(worse.code).toBe(1);
    expect(JSON.parse(worse.stdout).baseline.counts.new).toBe(1);

    // A folder that is not there stops the check with copperhead's own error, not a check of something else.
    const missing = await run({ "working-directory": "nowhere" });
    expect(missing.code, describeSteps(missing.steps)).toBeGreaterThan(1);
    expect(missing.stdout + missing.steps[2]!.stderr).toContain("nowhere");
  }, 240_000);

  test("a checksum that does not match fails the install step, and nothing else runs", async () => {
    const tampered = await makeTempDir();
    const sums = readFileSync(join(release.dir, "SHA256SUMS"), "utf8");
    writeFileSync(join(tampered, "SHA256SUMS"), sums.replace(/^[0-9a-f]{64}/, "0".repeat(64)));
    writeFileSync(join(tampered, release.artifact.archive), readFileSync(join(release.dir, release.artifact.archive)));
    const { steps, temp } = await runAction({}, `file://${tampered}`);
    expect(steps).toHaveLength(1);
    expect(steps[0]!.exitCode).not.toBe(0);
    expect(steps[0]!.stderr).toContain("checksum mismatch");
    expect(readFileSync(join(temp, "github_path"), "utf8")).toBe("");
  }, 60_000);

  test("a bad fab value stops with an annotation instead of checking something else", async () => {
    const { steps } = await runAction({ fab: "yes" });
    expect(steps.map((s) => s.exitCode)).toEqual([0, 0, 2]);
    expect(steps[2]!.stdout).toContain("::error::fab must be true or false");
  }, 60_000);
});
