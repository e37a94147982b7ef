/**
 * A hostile repository, second round, through the compiled binary: the places the first
 * round's confinement rules (hostile-repo.test.ts) did not reach yet.
 * - the check cache through a committed `.copperhead/cache` or `.copperhead` symlink, and a
 *   dangling `cache/.gitignore` link (`check`, and `init`'s baseline check);
 * - a footprint name that climbs out of its library (`Capacitor_SMD:../../../x`) in a
 *   committed schematic, followed by `board sync`;
 * - the repo's config choosing the model: `replay:/dev/zero`, `replay:../../etc/passwd`; and a
 *   replay file named by the user that is a device, a pipe or over the cap;
 * - `board sync` while another process holds the repo, and a board write cut short by a
 *   file-size limit;
 * - `diff --render DIR` over a committed `DIR/board.diff.svg` symlink;
 * - a committed `.copperhead/lock`, a `docs/changes` symlink, `--repo` naming a device.
 * Each ends with a typed error or a clean result, writes nothing outside the repo, and stays
 * within 60 s and 1 GB (each run is killed past either, and the test then fails).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV, LOCAL_STATE } from "../support/repos.ts";
import { editFile } from "../support/variants.ts";
import { runBinaryBounded, templateRepo, type BoundedResult } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const LIMITS = { timeoutMs: 60_000, maxRssBytes: 1024 * 1024 * 1024 };

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

async function run(
  args: string[],
  options: { env?: Record<string, string | undefined>; wrap?: string[]; stdin?: "ignore" | "pipe" } = {},
): Promise<BoundedResult> {
  const result = await runBinaryBounded(args, { ...LIMITS, ...options, env: { ...ISOLATED_ENV, ...options.env } });
  expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory }).toEqual({
    timedOut: false,
    outOfMemory: false,
  });
  return result;
}

/** Runs `args --json` and returns the typed error it must end with (exit 3). */
async function typedError(
  args: string[],
  options: Parameters<typeof run>[1] = {},
): Promise<{ code: string; message: string; fix: string; stderr: string }> {
  const result = await run([...args, "--json"], options);
  expect({ exitCode: result.exitCode, stdout: result.stdout.slice(0, 600) }).toEqual({
    exitCode: 3,
    stdout: expect.stringContaining('"error"'),
  });
  const { error } = JSON.parse(result.stdout);
  expect(error.code).not.toBe("internal_error");
  expect(error.fix).toBeString();
  return { ...error, stderr: result.stderr };
}

/** A repo whose committed `.copperhead/<link>` (or `.copperhead` itself) points at a fresh outside folder. */
async function linkedRepo(link: ".copperhead" | ".copperhead/cache"): Promise<{ repo: string; outside: string }> {
  const repo = await copyRepo(template());
  const outside = await makeTempDir();
  rmSync(join(repo, link), { recursive: true, force: true });
  symlinkSync(outside, join(repo, link));
  await git(repo, "add", "-f", link);
  await git(repo, "commit", "--quiet", "-m", `upstream: link ${link}`);
  return { repo, outside };
}

/** The regulator's C1 moved to another footprint: a board sync then has something to write. */
const C1_FOOTPRINT = '"Capacitor_SMD:C_0603_1608Metric"';
function setC1Footprint(repo: string, footprint: string): void {
  editFile(join(repo, "regulator.kicad_sch"), (t) => {
    const at = t.indexOf(`(property "Footprint" ${C1_FOOTPRINT}`);
    expect(at).toBeGreaterThan(0);
    return (
      t.slice(0, at) +
      `(property "Footprint" ${JSON.stringify(footprint)}` +
      t.slice(at + `(property "Footprint" ${C1_FOOTPRINT}`.length)
    );
  });
}

describe("the check cache is a repo write like any other", () => {
  test("a committed .copperhead/cache or .copperhead symlink: check is bad_path naming it, and nothing is written outside", async () => {
    for (const link of [".copperhead/cache", ".copperhead"] as const) {
      const { repo, outside } = await linkedRepo(link);
      const error = await typedError(["check", "--repo", repo]);
      expect({ link, code: error.code, named: error.message.includes(`${link} is a symlink`) }).toEqual({
        link,
        code: "bad_path",
        named: true,
      });
      expect(treeFingerprint(outside, [])).toEqual({});
    }
  }, 120_000);

  test("init's baseline check writes no cache through a committed .copperhead symlink", async () => {
    const { repo, outside } = await linkedRepo(".copperhead");
    // With the pre-commit hook, init checks the baseline the hook compares with.
    const result = await run(["init", "--repo", repo, "--json"]);
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stdout).baseline.error).toContain(".copperhead is a symlink");
    expect(treeFingerprint(outside, [])).toEqual({});
  }, 60_000);

  test("a dangling .copperhead/cache/.gitignore link creates no file outside; check still passes", async () => {
    const repo = await copyRepo(template());
    const target = join(await makeTempDir(), "created-by-copperhead");
    rmSync(join(repo, ".copperhead/cache"), { recursive: true, force: true });
    mkdirSync(join(repo, ".copperhead/cache"));
    symlinkSync(target, join(repo, ".copperhead/cache/.gitignore"));
    const result = await run(["check", "--repo", repo, "--json"]);
    expect(result.exitCode).toBe(0);
    expect(existsSync(target)).toBe(false);
  }, 60_000);
});

describe("library item names are names", () => {
  test("a committed footprint Capacitor_SMD:../../…/evil: board sync refuses it by name and reads nothing outside the library", async () => {
    const repo = await copyRepo(template());
    const evil = join(await makeTempDir(), "evil");
    mkdirSync(evil);
    const stock = readFileSync("/usr/share/kicad/footprints/Capacitor_SMD.pretty/C_0603_1608Metric.kicad_mod", "utf8");
    writeFileSync(join(evil, "evil.kicad_mod"), stock.replaceAll("C_0603_1608Metric", "EVIL-MARKER"));
    const climbing = `Capacitor_SMD:${"../".repeat(12)}${evil.slice(1)}/evil`;
    setC1Footprint(repo, climbing);
    const board = readFileSync(join(repo, "usb-led.kicad_pcb"));
    const error = await typedError(["board", "sync", "--repo", repo]);
    expect(error.code).toBe("footprint_not_found");
    expect(error.message).toContain("must be a plain name");
    expect(readFileSync(join(repo, "usb-led.kicad_pcb")).equals(board)).toBe(true);
  }, 60_000);
});

describe("the repo's config does not choose the model", () => {
  test('"model": "replay:/dev/zero" or "replay:../../etc/passwd" is config_invalid before anything is read, even with a key set', async () => {
    for (const model of ["replay:/dev/zero", `replay:${"../".repeat(10)}etc/passwd`]) {
      const repo = await copyRepo(template());
      editFile(join(repo, ".copperhead/config.json"), (t) => JSON.stringify({ ...JSON.parse(t), model }, null, 2));
      await git(repo, "commit", "--quiet", "-am", "upstream: pick the model");
      const error = await typedError(["do", "add a test point", "--repo", repo], {
        env: { ANTHROPIC_API_KEY: "sk-ant-test-not-a-key" },
      });
      expect({ model, code: error.code }).toEqual({ model, code: "config_invalid" });
      expect(error.message).toContain("replay: only with --model or COPPERHEAD_MODEL");
      expect(error.stderr).not.toContain("root:x:0:0");
    }
  }, 60_000);

  test("a replay file the user names is read capped: a device or a pipe is bad_path, an oversized file input_too_large", async () => {
    const repo = await copyRepo(template());
    const request = ["do", "add a test point", "--repo", repo];
    for (const file of ["/dev/zero", "/dev/stdin"]) {
      const error = await typedError([...request, "--model", `replay:${file}`], { stdin: "pipe" });
      expect({ file, code: error.code, message: error.message }).toEqual({
        file,
        code: "bad_path",
        message: expect.stringContaining(`${file} is not a regular file`),
      });
    }
    const huge = join(await makeTempDir(), "huge.json");
    writeFileSync(huge, "");
    truncateSync(huge, 64 * 1024 * 1024);
    expect((await typedError([...request, "--model", `replay:${huge}`])).code).toBe("input_too_large");
    // The environment is the user's too: the same rules, and a real session still plays.
    const viaEnv = await typedError(request, { env: { COPPERHEAD_MODEL: "replay:/dev/stdin" }, stdin: "pipe" });
    expect(viaEnv.code).toBe("bad_path");
    expect(existsSync(join(SESSIONS_DIR, "add-decoupling-cap.json"))).toBe(true);
  }, 60_000);
});

describe("board sync is a repo change like a run", () => {
  test("while another process holds the repo lock, board sync is busy and leaves the board as it was", async () => {
    const repo = await copyRepo(template());
    setC1Footprint(repo, "Capacitor_SMD:C_0805_2012Metric");
    // This test process stands in for a live `do` holding the repo.
    writeFileSync(
      join(repo, ".copperhead/lock"),
      `${JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), runId: "20250101T000000Z-abcdef" })}\n`,
    );
    const board = readFileSync(join(repo, "usb-led.kicad_pcb"));
    const error = await typedError(["board", "sync", "--repo", repo]);
    expect(error.code).toBe("busy");
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(readFileSync(join(repo, "usb-led.kicad_pcb")).equals(board)).toBe(true);
    // Once the holder is gone, the sync runs (and a dry run never needed the lock).
    expect((await run(["board", "sync", "--repo", repo, "--dry-run", "--json"])).exitCode).toBe(0);
    rmSync(join(repo, ".copperhead/lock"));
    const synced = await run(["board", "sync", "--repo", repo, "--json"]);
    expect({ exitCode: synced.exitCode, written: JSON.parse(synced.stdout).written }).toEqual({
      exitCode: 0,
      written: true,
    });
  }, 60_000);

  test("a board write cut short by a file-size limit keeps the whole original board: write_failed, no temp file left", async () => {
    const repo = await copyRepo(template());
    setC1Footprint(repo, "Capacitor_SMD:C_0805_2012Metric");
    const board = readFileSync(join(repo, "usb-led.kicad_pcb"));
    const before = treeFingerprint(repo, LOCAL_STATE);
    const error = await typedError(["board", "sync", "--repo", repo], {
      wrap: ["prlimit", `--fsize=${Math.floor(board.length / 2)}`],
    });
    expect(error.code).toBe("write_failed");
    expect(error.message).toContain("usb-led.kicad_pcb");
    expect(readFileSync(join(repo, "usb-led.kicad_pcb")).equals(board)).toBe(true);
    expect(treeFingerprint(repo, LOCAL_STATE)).toEqual(before);
    // And check still reads it.
    expect((await run(["netlist", "--repo", repo, "--json"])).exitCode).toBe(0);
  }, 60_000);
});

describe("renders and the run's own files", () => {
  test("diff --render DIR replaces a committed DIR/board.diff.svg symlink instead of writing through it", async () => {
    const repo = await copyRepo(template());
    const secret = join(await makeTempDir(), "secret.txt");
    writeFileSync(secret, "outside secret\n");
    mkdirSync(join(repo, "renders"));
    symlinkSync(secret, join(repo, "renders/board.diff.svg"));
    await git(repo, "add", "renders");
    await git(repo, "commit", "--quiet", "-m", "upstream: renders");
    setC1Footprint(repo, "Capacitor_SMD:C_0805_2012Metric");
    expect((await run(["board", "sync", "--repo", repo, "--json"])).exitCode).toBe(0);
    const result = await run(["diff", "--repo", repo, "--render", join(repo, "renders"), "--json"]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).renders.board.diff).toBe("board.diff.svg");
    expect(readFileSync(secret, "utf8")).toBe("outside secret\n");
    expect(readFileSync(join(repo, "renders/board.diff.svg"), "utf8")).toContain("<svg");
  }, 90_000);

  test("a committed .copperhead/lock is lock_refused with the fix, not busy forever; the tracked file stays", async () => {
    const repo = await copyRepo(template());
    const lock = `${JSON.stringify({ pid: 1, hostname: "build-server", startedAt: "2025-01-01T00:00:00.000Z" })}\n`;
    writeFileSync(join(repo, ".copperhead/lock"), lock);
    await git(repo, "add", "-f", ".copperhead/lock");
    await git(repo, "commit", "--quiet", "-m", "upstream: commit the lock");
    const session = join(SESSIONS_DIR, "add-decoupling-cap.json");
    const error = await typedError([
      "do",
      "add a 100 nF decoupling capacitor on the LDO output",
      "--model",
      `replay:${session}`,
      "--repo",
      repo,
    ]);
    expect(error.code).toBe("lock_refused");
    expect(error.message).toContain("tracked by git");
    expect(error.fix).toContain("git rm --cached .copperhead/lock");
    expect(readFileSync(join(repo, ".copperhead/lock"), "utf8")).toBe(lock);
  }, 60_000);

  test("a committed docs/changes symlink is bad_path at preflight, before the model is called", async () => {
    for (const to of ["outside", "../.copperhead"]) {
      const repo = await copyRepo(template());
      const outside = await makeTempDir();
      symlinkSync(to === "outside" ? outside : to, join(repo, "docs/changes"));
      await git(repo, "add", "docs/changes");
      await git(repo, "commit", "--quiet", "-m", "upstream: link changes");
      const session = join(SESSIONS_DIR, "add-decoupling-cap.json");
      const error = await typedError([
        "do",
        "add a 100 nF decoupling capacitor on the LDO output",
        "--model",
        `replay:${session}`,
        "--repo",
        repo,
      ]);
      expect({ to, code: error.code }).toEqual({ to, code: "bad_path" });
      expect(error.message).toContain("docs/changes");
      expect(treeFingerprint(outside, [])).toEqual({});
      expect(await git(repo, "status", "--porcelain")).toBe("");
    }
  }, 120_000);

  test("--repo naming a device or a file is bad_path, not 'not found'", async () => {
    for (const path of ["/dev/zero", join(SESSIONS_DIR, "add-decoupling-cap.json")]) {
      const error = await typedError(["check", "--repo", path]);
      expect({ path, code: error.code, message: error.message }).toEqual({
        path,
        code: "bad_path",
        message: expect.stringContaining("is not a folder"),
      });
    }
  }, 30_000);
});
