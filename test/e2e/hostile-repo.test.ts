/**
 * A cloned repo is input, and a hostile one must not make copperhead read, write or restore
 * anything outside it. Each test plays one attack through the compiled binary:
 * - forged run journals, committed upstream or planted (recovery acts only on this clone's own);
 * - a forged check cache entry, committed upstream or planted (only this user's signed entries count);
 * - reads that leave the repo or never end (`Sheetfile "/dev/zero"`, `/dev/stdin`, `../../etc`,
 *   symlinks from design files, docs and config to devices or outside files, oversized files);
 * - writes through committed symlinks (`docs`, `.copperhead`, `.copperhead/runs`);
 * - a folder, a symlink loop or a file in place of the files copperhead reads.
 * Every outcome is a typed error that names the file and the fix; none hangs or grows without
 * bound (each run is killed past 60 s or 1 GB, and the test then fails).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash, createHmac, randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { cleanupTempDirs, copyFixture, makeTempDir } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV, LOCAL_STATE } from "../support/repos.ts";
import { disconnectLdoEnable, editFile } from "../support/variants.ts";
import { preCommitHook } from "../../src/repo/hooks.ts";
import { BINARY, runBinaryBounded, templateRepo, type BoundedResult } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const LIMITS = { timeoutMs: 60_000, maxRssBytes: 1024 * 1024 * 1024 };

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

async function run(
  args: string[],
  options: { stdin?: "ignore" | "pipe"; env?: Record<string, string | undefined> } = {},
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
  options: { stdin?: "ignore" | "pipe" } = {},
): Promise<{ code: string; message: string; fix?: string; file?: string; stderr: string }> {
  const result = await run([...args, "--json"], options);
  expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode: 3, stderr: expect.any(String) });
  const { error } = JSON.parse(result.stdout);
  expect(error.code).not.toBe("internal_error");
  expect(error.fix).toBeString();
  return { ...error, stderr: result.stderr };
}

const fingerprint = (repo: string) => treeFingerprint(repo, LOCAL_STATE);

describe("forged run journals", () => {
  const RUN_ID = "20250101T000000Z-abcdef";
  const runDirOf = (repo: string) => join(repo, ".copperhead/runs", RUN_ID);

  /**
   * An unfinished journal as copperhead wrote them before journals were sealed: it says the
   * root schematic did not exist before the "run" (so recovery deletes it) and holds a
   * "backup" of SPEC.md (so recovery overwrites it).
   */
  function forgeJournal(dir: string, backup: string | { symlinkTo: string }, schema = "copperhead.journal/1"): void {
    mkdirSync(join(dir, "backup"), { recursive: true });
    if (typeof backup === "string") writeFileSync(join(dir, "backup/0"), backup);
    else symlinkSync(backup.symlinkTo, join(dir, "backup/0"));
    const bytes = typeof backup === "string" ? backup : readFileSync(backup.symlinkTo);
    const journal = {
      schema,
      runId: RUN_ID,
      pid: 999_999_999,
      hostname: Bun.spawnSync(["hostname"]).stdout.toString().trim(),
      startedAt: "2025-01-01T00:00:00.000Z",
      lockStartedAt: "2025-01-01T00:00:00.000Z",
      state: "editing",
      files: [
        { path: "usb-led.kicad_sch", existed: false },
        {
          path: "docs/SPEC.md",
          existed: true,
          backup: "backup/0",
          mode: 0o644,
          sha256: createHash("sha256").update(bytes).digest("hex"),
        },
      ],
      createdDirs: [],
    };
    writeFileSync(join(dir, "journal.json"), JSON.stringify(journal, null, 2));
  }

  test("a journal committed upstream is refused by check: tracked files and uncommitted edits survive", async () => {
    const repo = await copyRepo(template());
    forgeJournal(runDirOf(repo), "# pwned\n");
    await git(repo, "add", "-f", ".copperhead/runs");
    await git(repo, "commit", "--quiet", "-m", "upstream: innocuous change");
    // The victim's own work in progress.
    editFile(join(repo, "docs/SPEC.md"), (t) => `${t}\nmy uncommitted note\n`);
    const before = fingerprint(repo);

    const error = await typedError(["check", "--repo", repo]);
    expect(error.code).toBe("journal_refused");
    expect(error.message).toContain(`.copperhead/runs/${RUN_ID}`);
    expect(error.message).toContain("tracked by git");
    expect(error.fix).toContain(`rm -rf .copperhead/runs/${RUN_ID}`);
    expect(error.fix).toContain("git rm -r --cached");
    expect(fingerprint(repo)).toEqual(before);
    expect(readFileSync(join(repo, "docs/SPEC.md"), "utf8")).toContain("my uncommitted note");

    // The fix works: with the run folder gone, check runs.
    rmSync(runDirOf(repo), { recursive: true });
    expect((await run(["netlist", "--repo", repo, "--json"])).exitCode).toBe(0);
  }, 90_000);

  test("an untracked journal this clone did not seal (an archive, a planted file) is refused, even with matching hashes", async () => {
    for (const schema of ["copperhead.journal/1", "copperhead.journal/2"]) {
      const repo = await copyRepo(template());
      forgeJournal(runDirOf(repo), "# pwned\n", schema);
      const before = fingerprint(repo);
      const error = await typedError(["netlist", "--repo", repo]);
      expect({ schema, code: error.code }).toEqual({ schema, code: "journal_refused" });
      expect(error.fix).toContain(`rm -rf .copperhead/runs/${RUN_ID}`);
      expect(fingerprint(repo)).toEqual(before);
    }
  }, 60_000);

  test("a backup that is a symlink to an outside file is never copied into the repo", async () => {
    const repo = await copyRepo(template());
    const outside = join(await makeTempDir(), "private.txt");
    writeFileSync(outside, "outside secret\n");
    forgeJournal(runDirOf(repo), { symlinkTo: outside });
    const error = await typedError(["netlist", "--repo", repo]);
    expect(error.code).toBe("journal_refused");
    expect(readFileSync(join(repo, "docs/SPEC.md"), "utf8")).not.toContain("outside secret");
    expect(existsSync(join(repo, "usb-led.kicad_sch"))).toBe(true);
  }, 60_000);

  test("a run folder that is a symlink out of the repo is refused, and nothing is written there", async () => {
    const repo = await copyRepo(template());
    const outside = join(await makeTempDir(), "run");
    forgeJournal(outside, "# pwned\n");
    mkdirSync(join(repo, ".copperhead/runs"), { recursive: true });
    symlinkSync(outside, runDirOf(repo));
    const outsideBefore = treeFingerprint(outside, []);
    const error = await typedError(["netlist", "--repo", repo]);
    expect(error.code).toBe("journal_refused");
    expect(error.message).toContain("symlink");
    expect(error.message).not.toContain("..");
    expect(treeFingerprint(outside, [])).toEqual(outsideBefore);
    expect(existsSync(join(repo, "usb-led.kicad_sch"))).toBe(true);
  }, 60_000);
});

describe("a forged check cache", () => {
  /** The ERC entry of the cache, and its JSON (an entry is its MAC's line, then its JSON). */
  function ercEntry(repo: string): { name: string; entry: { family: string; result: unknown } } {
    const dir = join(repo, ".copperhead/cache");
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      const text = readFileSync(join(dir, name), "utf8");
      const entry = JSON.parse(text.slice(text.indexOf("{")));
      if (entry.family === "erc") return { name, entry };
    }
    throw new Error("check wrote no ERC cache entry");
  }

  /** The entry with every violation KiCad reported taken out: what a forger commits. */
  function withoutViolations(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(withoutViolations);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === "violations" ? [] : withoutViolations(v)]),
    );
  }

  const stateDir = async () => ({ XDG_STATE_HOME: await makeTempDir() });
  const ercStatus = (result: BoundedResult) =>
    JSON.parse(result.stdout).checks.find((c: { id: string }) => c.id === "erc").status;

  test("an ERC entry with no violations, committed upstream, passes neither check nor the pre-commit hook on a clone, and is reported", async () => {
    // Upstream: the entry for the design with U1's EN pin left open, emptied, committed alone.
    const upstream = await copyRepo(template());
    const attacker = await stateDir();
    disconnectLdoEnable(upstream);
    const honest = await run(["check", "--repo", upstream, "--json"], { env: attacker });
    expect({ exitCode: honest.exitCode, erc: ercStatus(honest) }).toEqual({ exitCode: 1, erc: "fail" });
    const { name, entry } = ercEntry(upstream);
    const forged = join(upstream, ".copperhead/cache", name);
    writeFileSync(forged, JSON.stringify(withoutViolations(entry)));
    await git(upstream, "checkout", "--", ".");
    await git(upstream, "add", "-f", `.copperhead/cache/${name}`);
    await git(upstream, "commit", "--quiet", "-m", "upstream: innocuous change");

    // The victim clones it and leaves the pin open.
    const victim = join(await makeTempDir(), "clone");
    await git(upstream, "clone", "--quiet", upstream, victim);
    await git(victim, "config", "user.name", "Victim");
    await git(victim, "config", "user.email", "victim@example.com");
    const env = await stateDir();
    disconnectLdoEnable(victim);
    const checked = await run(["check", "--repo", victim, "--json"], { env });
    expect({ exitCode: checked.exitCode, erc: ercStatus(checked) }).toEqual({ exitCode: 1, erc: "fail" });
    expect(checked.stderr).toContain(`.copperhead/cache/${name} is tracked by git`);
    expect(checked.stderr).toContain("git rm -r --cached .copperhead/cache");
    // The tracked entry is left as it came, not written over.
    expect(await git(victim, "status", "--porcelain", "--", ".copperhead/cache")).toBe("");
    // The signing key stays with the user, readable by nobody else.
    expect(statSync(join(env.XDG_STATE_HOME, "copperhead/cache.key")).mode & 0o777).toBe(0o600);

    // The pre-commit hook runs the same check on what is staged: the commit is blocked.
    const hook = join(victim, ".git/hooks/pre-commit");
    writeFileSync(hook, preCommitHook([BINARY]));
    chmodSync(hook, 0o755);
    await git(victim, "add", "-A");
    const commit = Bun.spawnSync(["git", "commit", "--quiet", "-m", "leave EN open"], {
      cwd: victim,
      env: { ...process.env, ...ISOLATED_ENV, ...env } as Record<string, string>,
    });
    expect({
      exitCode: commit.exitCode,
      blocked: `${commit.stdout}${commit.stderr}`.includes("pin_not_connected"),
    }).toEqual({ exitCode: 1, blocked: true });
  }, 240_000);

  test("an untracked ERC entry that this user did not sign (unsigned, or signed under another key) is run again", async () => {
    const repo = await copyRepo(template());
    const env = await stateDir();
    disconnectLdoEnable(repo);
    expect((await run(["check", "--repo", repo, "--json"], { env })).exitCode).toBe(1);
    const { name, entry } = ercEntry(repo);
    const body = JSON.stringify(withoutViolations(entry));
    const key = name.slice(0, -".json".length);
    const otherMac = createHmac("sha256", randomBytes(32)).update(`${key}\n${body}`).digest("hex");
    for (const forged of [body, `${otherMac}\n${body}`]) {
      writeFileSync(join(repo, ".copperhead/cache", name), forged);
      const checked = await run(["check", "--repo", repo, "--json"], { env });
      expect({ exitCode: checked.exitCode, erc: ercStatus(checked) }).toEqual({ exitCode: 1, erc: "fail" });
      expect(checked.stderr).not.toContain("tracked by git");
    }
  }, 180_000);
});

describe("reads outside the repo, of devices, or without bound", () => {
  const setSheetfile = (repo: string, to: string) =>
    editFile(join(repo, "usb-led.kicad_sch"), (t) =>
      t.replace('(property "Sheetfile" "regulator.kicad_sch"', `(property "Sheetfile" ${JSON.stringify(to)}`),
    );

  test('Sheetfile "/dev/zero", "/dev/stdin" and "../../../../../etc/passwd" read nothing, in netlist and check', async () => {
    for (const target of ["/dev/zero", "/dev/stdin", "../../../../../etc/passwd"]) {
      const repo = await copyFixture("usb-led");
      setSheetfile(repo, target);
      for (const command of ["netlist", "check"]) {
        // stdin is a pipe that stays open: reading it would block forever.
        const error = await typedError([command, "--repo", repo], { stdin: "pipe" });
        expect({ target, command, code: error.code }).toEqual({ target, command, code: "bad_path" });
        expect(error.message).toContain("outside the repository");
        expect(error.message).toContain("usb-led.kicad_sch");
        expect(error.fix).toContain("Sheetfile");
        expect(error.stderr).not.toContain("root:x:0:0");
      }
    }
  }, 120_000);

  test("symlinks from the schematic, board, SPEC.md and config to /dev/zero are refused by name", async () => {
    for (const file of [
      "usb-led.kicad_sch",
      "regulator.kicad_sch",
      "usb-led.kicad_pcb",
      "docs/SPEC.md",
      ".copperhead/config.json",
    ]) {
      const repo = await copyRepo(template());
      rmSync(join(repo, file), { force: true });
      symlinkSync("/dev/zero", join(repo, file));
      const error = await typedError(["check", "--repo", repo]);
      expect({ file, code: error.code, named: error.message.includes(file) }).toEqual({
        file,
        code: "bad_path",
        named: true,
      });
    }
  }, 120_000);

  test("a FIFO in a design file's or doc's place is refused at once, not read", async () => {
    for (const file of ["regulator.kicad_sch", "docs/BOM.md"]) {
      const repo = await copyRepo(template());
      rmSync(join(repo, file));
      expect(Bun.spawnSync(["mkfifo", join(repo, file)]).exitCode).toBe(0);
      const error = await typedError(["check", "--repo", repo]);
      expect({ file, code: error.code }).toEqual({ file, code: "bad_path" });
      expect(error.message).toContain(`${file} is not a regular file`);
    }
  }, 60_000);

  test("a board over the size cap is input_too_large, without reading it", async () => {
    const repo = await copyFixture("usb-led");
    const board = join(repo, "usb-led.kicad_pcb");
    // Sparse: 300 MB of nothing that costs no disk.
    truncateSync(board, 300 * 1024 * 1024);
    const result = await run(["check", "--repo", repo, "--json"]);
    expect(result.exitCode).toBe(3);
    const { error } = JSON.parse(result.stdout);
    expect(error.code).toBe("input_too_large");
    expect(error.message).toContain("usb-led.kicad_pcb");
    expect(result.peakRssBytes).toBeLessThan(512 * 1024 * 1024);
  }, 60_000);
});

describe("a SPEC.md no person maintains", () => {
  test("100,000 requirements: check ends at once with input_too_large naming SPEC.md and the line", async () => {
    const repo = await copyRepo(template());
    const generated = Array.from(
      { length: 100_000 },
      (_, i) => `- REQ-GEN-${i}: generated requirement ${i}\n  - check: net VBUS exists\n`,
    ).join("");
    editFile(join(repo, "docs/SPEC.md"), (t) => t.replace("## Requirements\n", `## Requirements\n\n${generated}`));
    const error = await typedError(["check", "--repo", repo]);
    expect(error.code).toBe("input_too_large");
    expect(error.message).toMatch(/^docs\/SPEC\.md:\d+: the Requirements section holds more than 10000 requirements/);
  }, 90_000);
});

describe("a config built to break the parser", () => {
  test("300,000 unclosed [ and a number past a double's range: check ends with config_invalid naming where, never a stack overflow or null", async () => {
    const repo = await copyRepo(template());
    writeFileSync(join(repo, ".copperhead/config.json"), "[".repeat(300_000));
    const deep = await typedError(["check", "--repo", repo]);
    expect(deep.code).toBe("config_invalid");
    expect(deep.message).toBe(
      ".copperhead/config.json is not valid JSON (line 1, column 513: nested more than 512 levels deep)",
    );
    writeFileSync(join(repo, ".copperhead/config.json"), '{ "maxRepairCycles": 1e400 }\n');
    const huge = await typedError(["check", "--repo", repo]);
    expect(huge.code).toBe("config_invalid");
    expect(huge.message).toContain("maxRepairCycles");
    expect(huge.message).toContain("out of range");
    expect(huge.message).not.toContain("null");
  }, 90_000);
});

describe("writes through committed symlinks", () => {
  /** `do` with a recorded session ends in `bad_path` naming the link, and `outside` stays empty. */
  async function expectDoRefusedBefore(repo: string, outside: string, why: string): Promise<void> {
    const session = join(SESSIONS_DIR, "add-decoupling-cap.json");
    const error = await typedError([
      "do",
      "add a 100 nF decoupling capacitor on the LDO output",
      "--model",
      `replay:${session}`,
      "--repo",
      repo,
    ]);
    expect(error.code).toBe("bad_path");
    expect(error.message).toContain(why);
    expect(treeFingerprint(outside, [])).toEqual({});
  }

  test("docs committed as a symlink to an outside folder: init refuses the doc files and writes nothing there", async () => {
    const repo = await copyFixture("usb-led");
    const outside = await makeTempDir();
    symlinkSync(outside, join(repo, "docs"));
    const result = await run(["init", "--repo", repo, "--no-hooks", "--json"]);
    expect(result.exitCode).toBe(2);
    const files = JSON.parse(result.stdout).files as { path: string; action: string; reason?: string }[];
    for (const doc of ["docs/SPEC.md", "docs/BOM.md", "docs/DECISIONS.md", "docs/CHANGELOG.md"]) {
      const outcome = files.find((f) => f.path === doc);
      expect({ doc, action: outcome?.action, why: outcome?.reason?.includes("outside the repository") }).toEqual({
        doc,
        action: "refused",
        why: true,
      });
    }
    expect(files.find((f) => f.path === ".copperhead/config.json")?.action).toBe("created");
    expect(treeFingerprint(outside, [])).toEqual({});
  }, 60_000);

  test(".copperhead committed as a symlink: init refuses its files, do writes no run record there", async () => {
    const repo = await copyRepo(template());
    const outside = await makeTempDir();
    rmSync(join(repo, ".copperhead"), { recursive: true });
    symlinkSync(outside, join(repo, ".copperhead"));
    await git(repo, "add", "-A");
    await git(repo, "commit", "--quiet", "-m", "upstream: move .copperhead");

    const init = await run(["init", "--repo", repo, "--no-hooks", "--json"]);
    expect(init.exitCode).toBe(2);
    const refused = (JSON.parse(init.stdout).files as { path: string; action: string }[])
      .filter((f) => f.action === "refused")
      .map((f) => f.path);
    expect(refused).toEqual(expect.arrayContaining([".copperhead/config.json", ".copperhead/.gitignore"]));

    await expectDoRefusedBefore(repo, outside, ".copperhead is a symlink");
  }, 90_000);

  test(".copperhead/runs committed as a symlink: do stops before writing any run record through it", async () => {
    const repo = await copyRepo(template());
    const outside = await makeTempDir();
    symlinkSync(outside, join(repo, ".copperhead/runs"));
    await git(repo, "add", "-f", ".copperhead/runs");
    await git(repo, "commit", "--quiet", "-m", "upstream: link runs");
    await expectDoRefusedBefore(repo, outside, ".copperhead/runs is a symlink");
  }, 90_000);
});

describe("filesystem errors name the file and the fix", () => {
  /** Replaces `file` with a folder, a symlink loop, or puts a file where its folder should be. */
  const breakages = {
    EISDIR: (repo: string, file: string) => {
      rmSync(join(repo, file), { force: true });
      mkdirSync(join(repo, file), { recursive: true });
    },
    ELOOP: (repo: string, file: string) => {
      rmSync(join(repo, file), { force: true });
      symlinkSync(file.split("/").pop()!, join(repo, file));
    },
    ENOTDIR: (repo: string, file: string) => {
      const folder = file.split("/").slice(0, -1).join("/");
      rmSync(join(repo, folder), { recursive: true, force: true });
      writeFileSync(join(repo, folder), "a file where a folder should be\n");
    },
  };
  const files: [keyof typeof breakages, string][] = [
    ["EISDIR", "usb-led.kicad_sch"],
    ["EISDIR", "regulator.kicad_sch"],
    ["EISDIR", "usb-led.kicad_pcb"],
    ["ELOOP", "usb-led.kicad_pcb"],
    ["EISDIR", "docs/SPEC.md"],
    ["ELOOP", "docs/SPEC.md"],
    ["EISDIR", "docs/BOM.md"],
    ["ELOOP", "docs/BOM.md"],
    ["ENOTDIR", "docs/changes/20250101-x.md"],
    ["EISDIR", "docs/changes/20250101-x.md"],
    ["EISDIR", ".copperhead/config.json"],
  ];

  test("a folder, a symlink loop or a file in the way: check ends with a typed error naming the file", async () => {
    for (const [errno, file] of files) {
      const repo = await copyRepo(template());
      breakages[errno](repo, file);
      const error = await typedError(["check", "--repo", repo]);
      const named = file
        .split("/")
        .slice(0, errno === "ENOTDIR" ? -1 : undefined)
        .join("/");
      expect({ errno, file, code: error.code, named: error.message.includes(named) }).toEqual({
        errno,
        file,
        code: expect.stringMatching(/^(bad_path|project_not_found)$/),
        named: true,
      });
    }
  }, 240_000);

  test("an explicit --project that is a folder", async () => {
    const repo = await copyRepo(template());
    breakages.EISDIR(repo, "usb-led.kicad_pro");
    const error = await typedError(["check", "--repo", repo, "--project", "usb-led.kicad_pro"]);
    expect(error.code).toBe("bad_path");
    expect(error.message).toContain("usb-led.kicad_pro is a folder");
  }, 60_000);
});
