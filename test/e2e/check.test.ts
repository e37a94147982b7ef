/**
 * `init`, `check` and `doctor` through the compiled binary: what CI pipelines and pre-commit
 * hooks see — exit codes, stdout carrying only the report, and messages that say how to fix.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { editFile } from "../support/variants.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { childPid, isRunning, launcher } from "../support/launchers.ts";
import { BINARY, runBinary, runBinaryBounded } from "./binary.ts";

afterAll(cleanupTempDirs);

let kicadCli = "";
beforeAll(async () => {
  kicadCli = (await requireKicadCli()).path;
});

/** git with the built binary first on PATH, so the pre-commit hook `init` installs really runs it. */
function git(repo: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", "-C", repo, ...args], {
    env: {
      ...process.env,
      PATH: `${dirname(BINARY)}:${process.env.PATH}`,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

/** A git repo holding a fresh copy of usb-led, committed. */
async function gitRepo(): Promise<string> {
  const repo = await copyFixture("usb-led");
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "design");
  return repo;
}

describe("init", () => {
  test("creates everything on a fresh repo; a second run changes nothing", async () => {
    const repo = await gitRepo();
    const first = await runBinary(["init", "--repo", repo, "--json"]);
    expect(first.exitCode).toBe(0);
    const created = JSON.parse(first.stdout);
    expect(created.schema).toBe("copperhead.init/1");
    const paths = created.files.map((f: { path: string }) => f.path);
    for (const path of [
      ".copperhead/config.json",
      "docs/SPEC.md",
      "docs/BOM.md",
      "docs/DECISIONS.md",
      "docs/CHANGELOG.md",
      ".copperhead/.gitignore",
      ".git/hooks/pre-commit",
    ]) {
      expect(paths).toContain(path);
      expect(existsSync(join(repo, path))).toBe(true);
    }
    expect(created.files.every((f: { action: string }) => f.action === "created")).toBe(true);
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "init");
    const second = await runBinary(["init", "--repo", repo, "--json"]);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout).files.every((f: { action: string }) => f.action === "unchanged")).toBe(true);
    expect(git(repo, "status", "--porcelain")).toBe("");
  }, 60_000);

  test("the pre-commit hook blocks a commit that fails the check", async () => {
    const repo = await gitRepo();
    expect((await runBinary(["init", "--repo", repo])).exitCode).toBe(0);
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "init");
    writeFileSync(join(repo, "docs/NOTES.md"), "See `R42`.\n");
    git(repo, "add", "-A");
    expect(() => git(repo, "commit", "-q", "-m", "stale note")).toThrow(/drift/);
    expect(git(repo, "log", "--format=%s")).toBe("init\ndesign\n");
  }, 60_000);
});

describe("check", () => {
  test("an initialised clean fixture: exit 0 and every family passes with --fab", async () => {
    const repo = await gitRepo();
    expect((await runBinary(["init", "--repo", repo])).exitCode).toBe(0);
    const { exitCode, stdout } = await runBinary(["check", "--repo", repo, "--fab", "--json"]);
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c: { id: string; status: string }) => `${c.id}:${c.status}`)).toEqual([
      "erc:pass",
      "drc:pass",
      "parity:pass",
      "routing:pass",
      "drift:pass",
      "requirements:pass",
      "changes:pass",
      "fab:pass",
    ]);
  }, 60_000);

  test("--json is byte-identical run to run, and a cached re-check starts no kicad-cli", async () => {
    const repo = await gitRepo();
    const dir = await makeTempDir();
    const calls = join(dir, "calls.log");
    const spy = join(dir, "kicad-cli");
    writeFileSync(spy, `#!/bin/sh\necho "$@" >> ${JSON.stringify(calls)}\nexec ${JSON.stringify(kicadCli)} "$@"\n`);
    chmodSync(spy, 0o755);
    const env = { COPPERHEAD_KICAD_CLI: spy };
    const cold = await runBinary(["check", "--repo", repo, "--json"], { env });
    expect(cold.exitCode).toBe(0);
    const coldCalls = readFileSync(calls, "utf8").trim().split("\n");
    expect(coldCalls.some((c) => c.startsWith("sch erc"))).toBe(true);
    expect(coldCalls.some((c) => c.startsWith("pcb drc"))).toBe(true);
    const warm = await runBinary(["check", "--repo", repo, "--json"], { env });
    expect(warm.stdout).toBe(cold.stdout);
    expect(readFileSync(calls, "utf8").trim().split("\n")).toEqual(coldCalls);
    expect(git(repo, "status", "--porcelain")).toBe("");
  }, 60_000);

  test("each failure mode exits 1 and names the finding; every format carries it", async () => {
    const repo = await gitRepo();
    expect((await runBinary(["init", "--repo", repo])).exitCode).toBe(0);
    editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |"));
    writeFileSync(join(repo, "docs/NOTES.md"), "The status LED is driven through `R9`.\n");
    const json = await runBinary(["check", "--repo", repo, "--json"]);
    expect(json.exitCode).toBe(1);
    const drift = JSON.parse(json.stdout).checks.find((c: { id: string }) => c.id === "drift");
    const keys = drift.findings.map((f: { key: string }) => f.key);
    expect(keys).toContain("drift:bom:R3:value");
    expect(keys).toContain("drift:stale-ref:docs/NOTES.md:R9");
    const github = await runBinary(["check", "--repo", repo, "--format", "github"]);
    expect(github.exitCode).toBe(1);
    expect(github.stdout).toContain("::error file=docs/BOM.md,line=");
    const sarif = await runBinary(["check", "--repo", repo, "--format", "sarif"]);
    expect(sarif.exitCode).toBe(1);
    expect(JSON.parse(sarif.stdout).runs[0].results.length).toBe(drift.findings.length);
    const junit = await runBinary(["check", "--repo", repo, "--format", "junit"]);
    expect(junit.exitCode).toBe(1);
    expect(junit.stdout).toContain('<testsuite name="drift"');
    const text = await runBinary(["check", "--repo", repo]);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain("check failed");
  }, 90_000);
});

describe("could not run: exit 3 with a message that says how to fix it", () => {
  test("a kicad-cli started through a launcher that hangs: kicad_timeout within seconds, and the program below the launcher is gone", async () => {
    const repo = await copyFixture("usb-led");
    const dir = await makeTempDir();
    const cli = launcher(dir, "kicad-cli", kicadCli, { unless: "version", command: "sleep 600" });
    const result = await runBinaryBounded(["check", "--repo", repo, "--json"], {
      env: { ...ISOLATED_ENV, COPPERHEAD_KICAD_CLI: cli, COPPERHEAD_KICAD_TIMEOUT: "2" },
      timeoutMs: 30_000,
      maxRssBytes: 1024 * 1024 * 1024,
    });
    // It used to wait for the hung program, which held the pipes, for as long as it ran.
    expect(result.timedOut).toBe(false);
    expect({ exitCode: result.exitCode, code: JSON.parse(result.stdout).error.code }).toEqual({
      exitCode: 3,
      code: "kicad_timeout",
    });
    await Bun.sleep(200);
    expect(isRunning(childPid(dir))).toBe(false);
  }, 60_000);

  test("Ctrl-C while kicad-cli runs in its own process group still ends copperhead and the program below the launcher", async () => {
    const repo = await copyFixture("usb-led");
    const dir = await makeTempDir();
    const cli = launcher(dir, "kicad-cli", kicadCli, { unless: "version", command: "sleep 600" });
    const proc = Bun.spawn([BINARY, "check", "--repo", repo], {
      env: { ...process.env, ...ISOLATED_ENV, COPPERHEAD_KICAD_CLI: cli } as Record<string, string>,
      stdout: "ignore",
      stderr: "ignore",
    });
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(dir, "child.pid")) && Date.now() < deadline) await Bun.sleep(50);
    // What the terminal does: SIGINT to copperhead's group, which no longer holds kicad-cli.
    process.kill(proc.pid, "SIGINT");
    const ended = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
    if (!ended) proc.kill("SIGKILL");
    expect({ ended, signal: proc.signalCode }).toEqual({ ended: true, signal: "SIGINT" });
    await Bun.sleep(200);
    expect(isRunning(childPid(dir))).toBe(false);
  }, 60_000);

  test("a kicad-cli that prints without end: kicad_output_too_large, in bounded memory", async () => {
    const repo = await copyFixture("usb-led");
    const dir = await makeTempDir();
    const cli = launcher(dir, "kicad-cli", kicadCli, { unless: "version", command: "cat /dev/zero" });
    const result = await runBinaryBounded(["check", "--repo", repo, "--json"], {
      env: { ...ISOLATED_ENV, COPPERHEAD_KICAD_CLI: cli },
      timeoutMs: 60_000,
      maxRssBytes: 1024 * 1024 * 1024,
    });
    expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory }).toEqual({
      timedOut: false,
      outOfMemory: false,
    });
    expect({ exitCode: result.exitCode, code: JSON.parse(result.stdout).error.code }).toEqual({
      exitCode: 3,
      code: "kicad_output_too_large",
    });
    // Two runs (ERC and DRC) at 64 MiB of stdout each, and the rest of copperhead.
    expect(result.peakRssBytes).toBeLessThan(512 * 1024 * 1024);
    await Bun.sleep(200);
    expect(isRunning(childPid(dir))).toBe(false);
  }, 90_000);

  test("kicad-cli missing", async () => {
    const repo = await copyFixture("usb-led");
    const { exitCode, stdout, stderr } = await runBinary(["check", "--repo", repo], {
      env: { COPPERHEAD_KICAD_CLI: join(repo, "nope") },
    });
    expect(exitCode).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toContain("COPPERHEAD_KICAD_CLI");
    expect(stderr).toContain("bookworm-backports");
  });

  test("a malformed .kicad_pcb", async () => {
    const repo = await copyFixture("usb-led");
    editFile(join(repo, "usb-led.kicad_pcb"), (t) => t.slice(0, 5000));
    const { exitCode, stderr } = await runBinary(["check", "--repo", repo]);
    expect(exitCode).toBe(3);
    expect(stderr).toMatch(/usb-led\.kicad_pcb:\d+:\d+: unexpected end of input/);
    expect(stderr).toContain("restore it from git or re-save it in KiCad");
  });

  test("a misspelt config key", async () => {
    const repo = await copyFixture("usb-led");
    await Bun.write(join(repo, ".copperhead/config.json"), JSON.stringify({ maxRepairCycle: 2 }));
    const { exitCode, stderr } = await runBinary(["check", "--repo", repo]);
    expect(exitCode).toBe(3);
    expect(stderr).toContain("maxRepairCycle");
    expect(stderr).toContain("maxRepairCycles");
  });
});

describe("doctor", () => {
  test("reports kicad-cli, git, config, project and libraries; provider keys by name only", async () => {
    const repo = await copyFixture("usb-led");
    const secret = "sk-ant-test-0123456789";
    const { exitCode, stdout } = await runBinary(["doctor", "--repo", repo, "--json"], {
      env: { ANTHROPIC_API_KEY: secret },
    });
    expect(exitCode).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.items.map((i: { id: string }) => i.id)).toEqual([
      "kicad-cli",
      "kicad-python",
      "git",
      "config",
      "project",
      "libraries",
      "providers",
      "agent-clis",
      "mcp",
    ]);
    expect(result.items.find((i: { id: string }) => i.id === "providers").summary).toContain("ANTHROPIC_API_KEY");
    expect(stdout).not.toContain(secret);
  }, 30_000);

  test("without KiCad's Python: a warning naming the install per platform", async () => {
    const repo = await copyFixture("usb-led");
    const { exitCode, stdout } = await runBinary(["doctor", "--repo", repo, "--json"], {
      env: { COPPERHEAD_KICAD_PYTHON: join(repo, "nope") },
    });
    expect(exitCode).toBe(0);
    const item = JSON.parse(stdout).items.find((i: { id: string }) => i.id === "kicad-python");
    expect(item.status).toBe("warn");
    expect(item.fix).toContain("apt-get install kicad");
    expect(item.fix).toContain("brew install --cask kicad");
  }, 30_000);

  test("shows the model calls' idle timeout, deadline and retries in force, and where each came from", async () => {
    const repo = await copyFixture("usb-led");
    mkdirSync(join(repo, ".copperhead"), { recursive: true });
    writeFileSync(
      join(repo, ".copperhead/config.json"),
      JSON.stringify({ providerTimeoutSeconds: 600, providerRetries: 5 }),
    );
    const providers = async (env: Record<string, string | undefined>) =>
      JSON.parse(
        (await runBinary(["doctor", "--repo", repo, "--json"], { env: { ...ISOLATED_ENV, ...env } })).stdout,
      ).items.find((i: { id: string }) => i.id === "providers");
    expect((await providers({})).summary).toContain(
      "model calls: idle timeout 600 s (config), deadline 2400 s (default), 5 retries (config)",
    );
    expect((await providers({ COPPERHEAD_PROVIDER_TIMEOUT: "900" })).summary).toContain(
      "idle timeout 900 s (COPPERHEAD_PROVIDER_TIMEOUT)",
    );
    expect((await providers({ COPPERHEAD_PROVIDER_DEADLINE: "1000" })).summary).toContain(
      "deadline 1000 s (COPPERHEAD_PROVIDER_DEADLINE)",
    );
    const bad = await providers({ COPPERHEAD_PROVIDER_TIMEOUT: "later" });
    expect(bad.status).toBe("fail");
    expect(bad.summary).toContain('COPPERHEAD_PROVIDER_TIMEOUT needs a number of seconds from 1 to 3600, not "later"');
  }, 60_000);

  test("without kicad-cli: exit 3 and the fix", async () => {
    const repo = await copyFixture("usb-led");
    const { exitCode, stdout } = await runBinary(["doctor", "--repo", repo], {
      env: { COPPERHEAD_KICAD_CLI: join(repo, "nope") },
    });
    expect(exitCode).toBe(3);
    expect(stdout).toContain("✖ kicad-cli");
    expect(stdout).toContain("fix:");
  });
});

describe("no network", () => {
  /** Every connect() the process tree makes, as strace prints them. */
  async function connects(args: string[], repo: string): Promise<string[]> {
    if (!Bun.which("strace"))
      throw new Error("strace is needed to prove no network use; install it (scripts/setup.sh --test does).");
    const dir = await makeTempDir();
    const trace = join(dir, "trace");
    const proc = Bun.spawn(
      ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", trace, BINARY, ...args, "--repo", repo],
      {
        stdout: "ignore",
        stderr: "ignore",
      },
    );
    await proc.exited;
    return readFileSync(trace, "utf8")
      .split("\n")
      .filter((line) => /AF_INET6?\b/.test(line));
  }

  test("check, init and doctor open no internet sockets", async () => {
    const repo = await gitRepo();
    for (const command of [["init"], ["check", "--fab"], ["doctor"]]) {
      expect({ command, connects: await connects(command, repo) }).toEqual({ command, connects: [] });
    }
  }, 90_000);
});
