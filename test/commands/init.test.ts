import { afterAll, describe, expect, test } from "bun:test";
import { cp, readdir } from "node:fs/promises";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkDrift } from "../../src/checks/drift.ts";
import { evaluateRequirements } from "../../src/checks/requirements.ts";
import { loadDesign } from "../../src/design/design.ts";
import { renderInit } from "../../src/cli/init.ts";
import { loadConfig } from "../../src/config/config.ts";
import { configJsonSchemaText } from "../../src/config/schema.ts";
import { runInit, type InitResult } from "../../src/commands/init.ts";
import { HOOK_MARKER, preCommitHook } from "../../src/repo/hooks.ts";
import { LOCK_PATH } from "../../src/repo/lock.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { parseBom } from "../../src/spec/bom.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const FILES = [
  ".copperhead/config.json",
  ".copperhead/config.schema.json",
  ".copperhead/.gitignore",
  "docs/SPEC.md",
  "docs/BOM.md",
  "docs/PINOUT.md",
  "docs/DECISIONS.md",
  "docs/CHANGELOG.md",
  ".git/hooks/pre-commit",
];

function git(repo: string, ...args: string[]): string {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  const proc = Bun.spawnSync(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", ...args], {
    cwd: repo,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

async function gitCopy(): Promise<string> {
  const repo = await copyFixture("usb-led");
  git(repo, "init", "-q");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "design");
  return repo;
}

function actions(result: InitResult): Record<string, string> {
  return Object.fromEntries(result.files.map((f) => [f.path, f.action]));
}

const read = (repo: string, path: string) => readFileSync(join(repo, path), "utf8");

describe("copperhead init", () => {
  test("a fresh git repo: creates everything; a second run changes nothing and git status stays clean", async () => {
    const repo = await gitCopy();
    const first = await runInit({ repo });
    expect(first.schema).toBe("copperhead.init/1");
    expect(first.project).toBe("usb-led.kicad_pro");
    expect(first.files.map((f) => f.path)).toEqual(FILES);
    expect(Object.values(actions(first))).toEqual(FILES.map(() => "created"));

    const config = JSON.parse(read(repo, ".copperhead/config.json"));
    expect(config).toEqual({
      $schema: "./config.schema.json",
      project: "usb-led.kicad_pro",
      docs: "docs",
      model: null,
      maxRepairCycles: 3,
      maxTurns: 40,
      strict: false,
    });
    expect(loadConfig(repo).path).toBe(".copperhead/config.json");
    expect(read(repo, ".copperhead/config.schema.json")).toBe(configJsonSchemaText());
    expect(read(repo, ".copperhead/.gitignore").split("\n")).toEqual(expect.arrayContaining(["runs/", "cache/"]));
    expect(read(repo, "docs/DECISIONS.md")).toContain("- YYYY-MM-DD run-id: decision — why");
    expect(read(repo, "docs/CHANGELOG.md")).toContain("newest first");
    expect(parseBom(read(repo, "docs/BOM.md"))!.rows.map((r) => r.ref)).toEqual([
      "C1",
      "C2",
      "D1",
      "J1",
      "J2",
      "R1",
      "R2",
      "R3",
      "U1",
    ]);

    const hook = join(repo, ".git/hooks/pre-commit");
    expect(readFileSync(hook, "utf8")).toContain(HOOK_MARKER);
    expect(readFileSync(hook, "utf8")).toContain('[ -n "$COPPERHEAD_RUN" ] && exit 0');
    expect(statSync(hook).mode & 0o111).toBe(0o111);

    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "copperhead init", "--no-verify");
    const second = await runInit({ repo });
    expect(Object.values(actions(second))).toEqual(FILES.map(() => "unchanged"));
    expect(git(repo, "status", "--porcelain")).toBe("");
    // runs/ and cache/ are ignored, so what copperhead leaves there never dirties the tree.
    await cp(join(repo, "docs"), join(repo, ".copperhead", "cache", "c1"), { recursive: true });
    await cp(join(repo, "docs"), join(repo, ".copperhead", "runs", "r1"), { recursive: true });
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  test("the suggested requirements pass and the docs show no drift, on the design as it is", async () => {
    const repo = await copyFixture("usb-led");
    await runInit({ repo, hooks: false });
    const design = loadDesign(discoverProject(repo));
    const evaluation = evaluateRequirements(design);
    if (evaluation.state !== "evaluated") throw new Error(`spec not evaluated: ${evaluation.state}`);
    expect(evaluation.spec.problems).toEqual([]);
    expect(evaluation.outcomes.map((o) => o.key)).toEqual([
      "requirements:REQ-PWR-1:net +3V3 exists",
      "requirements:REQ-PWR-1:net GND exists",
      "requirements:REQ-PWR-1:net VBUS exists",
      "requirements:REQ-CON-1:J1.A9 on VBUS",
      "requirements:REQ-BOM-1:count R* >= 3",
      "requirements:REQ-MECH-1:board width <= 40mm",
      "requirements:REQ-MECH-1:board height <= 19mm",
    ]);
    expect(evaluation.outcomes.filter((o) => !o.pass)).toEqual([]);
    expect(checkDrift(design, { docsDir: "docs" })).toMatchObject({ status: "pass", findings: [] });
  });

  test("on every fixture project the suggested requirements pass", async () => {
    const dirs = [
      ...(await readdir(join(FIXTURES_DIR, "netlist"))).map((d) => `netlist/${d}`),
      ...(await readdir(join(FIXTURES_DIR, "cli"))).map((d) => `cli/${d}`),
    ];
    for (const dir of dirs) {
      const repo = await copyFixture(dir);
      await runInit({ repo, hooks: false });
      const design = loadDesign(discoverProject(repo));
      const evaluation = evaluateRequirements(design);
      if (evaluation.state !== "evaluated") throw new Error(`${dir}: spec not evaluated: ${evaluation.state}`);
      expect({ dir, problems: evaluation.spec.problems }).toEqual({ dir, problems: [] });
      expect({ dir, failing: evaluation.outcomes.filter((o) => !o.pass).map((o) => o.actual) }).toEqual({
        dir,
        failing: [],
      });
      expect({ dir, drift: checkDrift(design, { docsDir: "docs" }).findings }).toEqual({ dir, drift: [] });
    }
  });

  test("a foreign pre-commit hook is refused, even with --force, and left byte for byte", async () => {
    const repo = await gitCopy();
    const hook = join(repo, ".git/hooks/pre-commit");
    writeFileSync(hook, "#!/bin/sh\nnpx lint-staged\n", { mode: 0o755 });
    for (const force of [false, true]) {
      const result = await runInit({ repo, force });
      const entry = result.files.find((f) => f.path === ".git/hooks/pre-commit")!;
      expect(entry.action).toBe("refused");
      expect(entry.reason).toContain("copperhead did not install");
      expect(entry.reason).toContain('[ -n "$COPPERHEAD_RUN" ] || copperhead check --staged || exit 1');
      expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\nnpx lint-staged\n");
    }
    expect(renderInit(await runInit({ repo }))).toContain(
      "refused    .git/hooks/pre-commit\n           a pre-commit hook",
    );
  });

  test("on a design with findings, init says how many and that they are the baseline, not blockers", async () => {
    const { root } = await demoRepo("custom_pads_test/custom_pads_test");
    const result = await runInit({ repo: root });
    expect(result.baseline).toEqual({ counts: { error: 3, warning: 5, info: 0 } });
    const text = renderInit(result);
    expect(text).toContain("The design has 3 errors, 5 warnings today. They are the baseline, not blockers:");
    expect(text).toContain("the pre-commit hook and copperhead do fail only on findings that are new");
    // Without the hook there is nothing to say about commits, so init does not check.
    expect((await runInit({ repo: root, hooks: false })).baseline).toBeUndefined();
  }, 120_000);

  test("a design init cannot check is reported with the fix, and init still sets the repo up", async () => {
    const repo = await gitCopy();
    const saved = process.env.COPPERHEAD_KICAD_CLI;
    process.env.COPPERHEAD_KICAD_CLI = join(repo, "no-kicad-cli");
    try {
      const result = await runInit({ repo });
      expect(Object.values(actions(result))).toEqual(FILES.map(() => "created"));
      expect(result.baseline).toMatchObject({ error: expect.stringContaining("COPPERHEAD_KICAD_CLI") });
      expect(renderInit(result)).toContain("The design could not be checked:");
    } finally {
      if (saved === undefined) delete process.env.COPPERHEAD_KICAD_CLI;
      else process.env.COPPERHEAD_KICAD_CLI = saved;
    }
  });

  test("the hook runs the copperhead that installed it by absolute path, copperhead on PATH when that is gone", async () => {
    const bin = await makeTempDir();
    const fake = (dir: string, said: string) => {
      writeFileSync(
        join(dir, "copperhead"),
        `#!/bin/sh
echo "${said} $*"
`,
        { mode: 0o755 },
      );
      return join(dir, "copperhead");
    };
    const recorded = fake(bin, "recorded");
    const hook = join(await makeTempDir(), "pre-commit");
    writeFileSync(hook, preCommitHook([recorded]), { mode: 0o755 });
    const runHook = (path: string, env: Record<string, string> = {}) =>
      Bun.spawnSync(["sh", hook], { env: { PATH: path, ...env }, stdout: "pipe", stderr: "pipe" });
    const direct = runHook("/usr/bin:/bin");
    expect(direct.exitCode).toBe(0);
    expect(direct.stderr.toString()).toBe("recorded check --staged\n");
    expect(runHook("/usr/bin:/bin", { COPPERHEAD_RUN: "r1" }).stderr.toString()).toBe("");

    rmSync(recorded);
    const onPath = await makeTempDir();
    fake(onPath, "from PATH");
    expect(runHook(`${onPath}:/usr/bin:/bin`).stderr.toString()).toBe("from PATH check --staged\n");
    const missing = runHook("/usr/bin:/bin");
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.toString()).toContain(
      `copperhead is neither at ${recorded} (where 'copperhead init' ran from) nor on PATH`,
    );
    expect(missing.stderr.toString()).toContain("run 'copperhead init' again");
    // A path that needs quoting survives the shell.
    expect(preCommitHook(["/opt/it's here/copperhead"])).toContain(`set -- '/opt/it'\\''s here/copperhead'`);
  });

  test("an outdated copperhead hook is updated", async () => {
    const repo = await gitCopy();
    writeFileSync(join(repo, ".git/hooks/pre-commit"), `#!/bin/sh\n${HOOK_MARKER}\nexec copperhead check --old\n`);
    const result = await runInit({ repo });
    expect(actions(result)[".git/hooks/pre-commit"]).toBe("updated");
    expect(read(repo, ".git/hooks/pre-commit")).not.toContain("--old");
  });

  test("a hand-edited generated BOM region is refused; --force regenerates it and keeps Notes", async () => {
    const repo = await copyFixture("usb-led");
    await runInit({ repo, hooks: false });
    const bom = join(repo, "docs/BOM.md");
    const handEdited = readFileSync(bom, "utf8")
      .replace(/^(\| R1 \| .*\|) {2}\|$/m, "$1 keep 1% tolerance |")
      .replace("| R3 | 1k |", "| R3 | 2k2 |");
    writeFileSync(bom, handEdited);

    const refused = await runInit({ repo, hooks: false });
    const entry = refused.files.find((f) => f.path === "docs/BOM.md")!;
    expect(entry.action).toBe("refused");
    expect(entry.reason).toContain("edited by hand");
    expect(entry.reason).toContain("--force");
    expect(readFileSync(bom, "utf8")).toBe(handEdited);

    const forced = await runInit({ repo, hooks: false, force: true });
    expect(actions(forced)["docs/BOM.md"]).toBe("updated");
    const text = readFileSync(bom, "utf8");
    expect(text).toContain("| R3 | 1k | Resistor_SMD:R_0603_1608Metric | RC0603FR-071KL |  |");
    expect(text).toContain("| R1 | 5.1k | Resistor_SMD:R_0603_1608Metric | RC0603FR-075K1L |  | keep 1% tolerance |");
    expect(Object.values(actions(await runInit({ repo, hooks: false }))).filter((a) => a !== "skipped")).toEqual(
      FILES.slice(0, -1).map(() => "unchanged"),
    );
  });

  test("a design change regenerates the BOM without --force; human docs are never rewritten", async () => {
    const repo = await copyFixture("usb-led");
    await runInit({ repo, hooks: false });
    writeFileSync(join(repo, "docs/SPEC.md"), "# Ours\n");
    const bom = join(repo, "docs/BOM.md");
    writeFileSync(bom, readFileSync(bom, "utf8").replace(/^(\| R3 \| .*\|) {2}\|$/m, "$1 LED current |"));
    const sch = join(repo, "usb-led.kicad_sch");
    const source = readFileSync(sch, "utf8");
    expect(source).toContain('(property "Value" "1k"');
    writeFileSync(sch, source.replace('(property "Value" "1k"', '(property "Value" "680"'));

    const result = await runInit({ repo, hooks: false });
    expect(actions(result)["docs/BOM.md"]).toBe("updated");
    expect(actions(result)["docs/SPEC.md"]).toBe("unchanged");
    expect(read(repo, "docs/SPEC.md")).toBe("# Ours\n");
    expect(readFileSync(bom, "utf8")).toContain(
      "| R3 | 680 | Resistor_SMD:R_0603_1608Metric | RC0603FR-071KL |  | LED current |",
    );
  });

  test("a BOM.md without markers is refused; --force appends the table", async () => {
    const repo = await copyFixture("usb-led");
    await runInit({ repo, hooks: false });
    writeFileSync(join(repo, "docs/BOM.md"), "# Parts\n\nKept by hand.\n");
    expect(actions(await runInit({ repo, hooks: false }))["docs/BOM.md"]).toBe("refused");
    expect(actions(await runInit({ repo, hooks: false, force: true }))["docs/BOM.md"]).toBe("updated");
    expect(read(repo, "docs/BOM.md").startsWith("# Parts\n\nKept by hand.\n\n<!-- copperhead:bom:begin sha256=")).toBe(
      true,
    );
  });

  test("no git repo, or --no-hooks: the hook is skipped with the reason", async () => {
    const plain = await copyFixture("usb-led");
    const result = await runInit({ repo: plain });
    expect(result.files.at(-1)).toMatchObject({ path: ".git/hooks/pre-commit", action: "skipped" });
    expect(result.files.at(-1)!.reason).toContain("not a git repository");
    expect(existsSync(join(plain, ".git"))).toBe(false);

    const repo = await gitCopy();
    expect((await runInit({ repo, hooks: false })).files.at(-1)).toEqual({
      path: ".git/hooks/pre-commit",
      action: "skipped",
      reason: "turned off with --no-hooks",
    });
    expect(existsSync(join(repo, ".git/hooks/pre-commit"))).toBe(false);
  });

  test("a project in a subfolder of its git work tree is set up at the work tree's top, hook included", async () => {
    const outer = realpathSync(await makeTempDir());
    git(outer, "init", "-q");
    await cp(join(FIXTURES_DIR, "usb-led"), join(outer, "hw"), { recursive: true });
    const result = await runInit({ repo: join(outer, "hw") });
    expect(result).toMatchObject({ root: outer, from: "hw", project: "hw/usb-led.kicad_pro" });
    expect(result.files.at(-1)!.action).toBe("created");
    expect(existsSync(join(outer, ".git/hooks/pre-commit"))).toBe(true);
    expect(existsSync(join(outer, ".copperhead/config.json"))).toBe(true);
    expect(existsSync(join(outer, "hw/.copperhead"))).toBe(false);
  });

  test("an explicit --project that differs from the config updates only that key", async () => {
    const repo = await copyFixture("usb-led");
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "other"), { recursive: true });
    // A second project beside usb-led (not only nested below it) makes discovery ambiguous.
    await cp(join(FIXTURES_DIR, "netlist", "kicad8", "kicad8.kicad_pro"), join(repo, "twin.kicad_pro"));
    await expect(runInit({ repo, hooks: false })).rejects.toMatchObject({ code: "project_ambiguous" });
    const first = await runInit({ repo, hooks: false, project: "usb-led.kicad_pro" });
    expect(actions(first)[".copperhead/config.json"]).toBe("created");
    const configPath = join(repo, ".copperhead/config.json");
    writeFileSync(configPath, readFileSync(configPath, "utf8").replace('"strict": false', '"strict": true'));
    expect(actions(await runInit({ repo, hooks: false }))[".copperhead/config.json"]).toBe("unchanged");
    const switched = await runInit({ repo, hooks: false, project: "other/kicad8.kicad_pro" });
    expect(switched.project).toBe("other/kicad8.kicad_pro");
    expect(actions(switched)[".copperhead/config.json"]).toBe("updated");
    expect(JSON.parse(readFileSync(configPath, "utf8"))).toMatchObject({
      project: "other/kicad8.kicad_pro",
      strict: true,
    });
  });

  test("init holds the repo lock, whichever transport calls it: another process's run makes it busy", async () => {
    const repo = await copyFixture("usb-led");
    mkdirSync(join(repo, ".copperhead"));
    // A lock from another host cannot be checked, so it counts as a live run changing the repo.
    writeFileSync(
      join(repo, LOCK_PATH),
      JSON.stringify({ pid: 1, hostname: "build-box-7", startedAt: "2026-01-01T00:00:00.000Z" }),
    );
    await expect(runInit({ repo, hooks: false })).rejects.toMatchObject({ code: "busy" });
    expect(existsSync(join(repo, "docs"))).toBe(false);
    rmSync(join(repo, LOCK_PATH));
    expect(actions(await runInit({ repo, hooks: false }))["docs/SPEC.md"]).toBe("created");
    expect(existsSync(join(repo, LOCK_PATH))).toBe(false);
  });

  test("an invalid config stops init with config_invalid", async () => {
    const repo = await copyFixture("usb-led");
    await runInit({ repo, hooks: false });
    writeFileSync(join(repo, ".copperhead/config.json"), '{ "stict": true }');
    await expect(runInit({ repo, hooks: false })).rejects.toMatchObject({ code: "config_invalid" });
  });
});
