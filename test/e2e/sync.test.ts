/**
 * `copperhead sync` through the compiled binary: exit codes 0/1/2/3, `--json` alone on stdout,
 * the missing-key error that still carries the verify report, and (under strace) a verify
 * phase that opens no internet socket. The model is a scripted session (`replay:`); kicad-cli
 * and git are real. The in-process scenarios are in test/commands/sync.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { editFile } from "../support/variants.ts";
import { BINARY, requireBinary, runBinary, type RunResult } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";
import { copyRepo, initialisedRepo, ISOLATED_ENV, LOCAL_STATE } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const ENV = ISOLATED_ENV;
const NOTE = "# Notes\n\nThe status LED current is set by `R9`.\n";
const LED_RULE = "- REQ-LED-1: The LED series resistor is at least 2k.\n  - check: R3.value >= 2k\n";
const session = (name: string) => `replay:${join(SESSIONS_DIR, `${name}.json`)}`;

let template = "";
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  // usb-led with `init` committed, built once and copied (with .git) per test.
  template = await initialisedRepo();
}, 60_000);

async function commit(repo: string, message: string): Promise<void> {
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", message);
}

/** A copy of the template, with `edit` applied and committed. */
async function freshRepo(edit?: (repo: string) => void): Promise<string> {
  const repo = await copyRepo(template);
  if (edit) {
    edit(repo);
    await commit(repo, "edits made outside copperhead");
  }
  return repo;
}

const staleNote = (repo: string) => writeFileSync(join(repo, "docs/NOTES.md"), NOTE);
const bomDrift = (repo: string) => editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |"));
const violation = (repo: string) =>
  editFile(join(repo, "docs/SPEC.md"), (t) => `${t.replace(/\n*$/, "\n")}${LED_RULE}`);

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runBinary(args, { env: { ...ENV, ...env } });
}

const fingerprint = (repo: string) => treeFingerprint(repo, LOCAL_STATE);
const head = async (repo: string) => (await git(repo, "rev-parse", "HEAD")).trim();
const keys = (items: { key: string }[]) => items.map((i) => i.key);

describe("copperhead sync: exit codes, and --json alone on stdout", () => {
  test("0: a clean repo, in JSON and in text", async () => {
    const repo = await freshRepo();
    const json = await run(["sync", "--repo", repo, "--json"]);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      schema: "copperhead.sync/1",
      ok: true,
      drift: [],
      violations: [],
      needsHuman: false,
    });
    const text = await run(["sync", "--repo", repo]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain("in sync");
  }, 30_000);

  test("0: --resolve fixes prose through the scripted model and commits", async () => {
    const repo = await freshRepo((r) => {
      bomDrift(r);
      staleNote(r);
    });
    const parent = await head(repo);
    const { exitCode, stdout, stderr } = await run([
      "sync",
      "--resolve",
      "--model",
      session("sync-fix-stale-note"),
      "--repo",
      repo,
      "--json",
    ]);
    expect({ exitCode, stderr: exitCode === 0 ? "" : stderr }).toEqual({ exitCode: 0, stderr: "" });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({
      schema: "copperhead.sync/1",
      ok: true,
      drift: [],
      violations: [],
      needsHuman: false,
    });
    expect(result.resolution).toMatchObject({ schema: "copperhead.do/1", status: "committed", approval: "auto" });
    expect(result.resolution.commit).toBe(await head(repo));
    expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
    expect(readFileSync(join(repo, "docs/NOTES.md"), "utf8")).toContain("set by `R3`");
    expect(await git(repo, "status", "--porcelain")).toBe("");
  }, 120_000);

  test("1: drift found by verify; and a resolve that fails is rolled back byte-identical", async () => {
    const repo = await freshRepo((r) => {
      bomDrift(r);
      staleNote(r);
    });
    const verify = await run(["sync", "--repo", repo, "--json"]);
    expect(verify.exitCode).toBe(1);
    expect(keys(JSON.parse(verify.stdout).drift)).toEqual(["drift:bom:R3:value", "drift:stale-ref:docs/NOTES.md:R9"]);
    const text = await run(["sync", "--repo", repo]);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain("drift:stale-ref:docs/NOTES.md:R9");
    expect(text.stdout).toContain("copperhead sync --resolve");

    const before = { tree: fingerprint(repo), head: await head(repo) };
    const resolve = await run([
      "sync",
      "--resolve",
      "--model",
      session("sync-prose-left-stale"),
      "--repo",
      repo,
      "--json",
    ]);
    expect(resolve.exitCode).toBe(1);
    const result = JSON.parse(resolve.stdout);
    expect(result.resolution).toMatchObject({ status: "rolled_back", reason: "stalled" });
    expect(keys(result.drift)).toEqual(["drift:bom:R3:value", "drift:stale-ref:docs/NOTES.md:R9"]);
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
  }, 120_000);

  test("2: a violated requirement, in verify and after a resolve that committed the drift fix", async () => {
    const repo = await freshRepo((r) => {
      violation(r);
      staleNote(r);
    });
    const spec = readFileSync(join(repo, "docs/SPEC.md"), "utf8");
    const verify = await run(["sync", "--repo", repo, "--json"]);
    expect(verify.exitCode).toBe(2);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      needsHuman: true,
      violations: [{ key: "requirements:REQ-LED-1:R3.value >= 2k", resolution: "human" }],
    });

    const resolve = await run([
      "sync",
      "--resolve",
      "--model",
      session("sync-respects-requirements"),
      "--repo",
      repo,
      "--json",
    ]);
    expect(resolve.exitCode).toBe(2);
    const result = JSON.parse(resolve.stdout);
    expect(result.resolution.status).toBe("committed");
    expect(result.drift).toEqual([]);
    expect(keys(result.violations)).toEqual(["requirements:REQ-LED-1:R3.value >= 2k"]);
    expect(readFileSync(join(repo, "docs/SPEC.md"), "utf8")).toBe(spec);

    const text = await run(["sync", "--repo", repo]);
    expect(text.exitCode).toBe(2);
    expect(text.stdout).toContain("a human must decide");
    expect(text.stdout).toContain("requirements:REQ-LED-1:R3.value >= 2k");
  }, 120_000);

  test("3: --resolve without a key, with prose to reword, prints the report and the error; --json carries both", async () => {
    const repo = await freshRepo((r) => {
      bomDrift(r);
      staleNote(r);
      violation(r);
    });
    const before = treeFingerprint(repo);
    const report = JSON.parse((await run(["sync", "--repo", repo, "--json"])).stdout);

    const json = await run(["sync", "--resolve", "--repo", repo, "--json"]);
    expect(json.exitCode).toBe(3);
    const { error } = JSON.parse(json.stdout);
    expect(error.code).toBe("missing_api_key");
    expect(error.fix).toContain("ANTHROPIC_API_KEY");
    expect(error.report).toEqual(report);
    expect(error.message).toContain("need a model to reword prose: docs/NOTES.md");
    expect(keys(error.report.drift)).toEqual(["drift:bom:R3:value", "drift:stale-ref:docs/NOTES.md:R9"]);

    const text = await run(["sync", "--resolve", "--repo", repo]);
    expect(text.exitCode).toBe(3);
    expect(text.stdout).toContain("drift:bom:R3:value");
    expect(text.stdout).toContain("requirements:REQ-LED-1:R3.value >= 2k");
    expect(text.stderr).toContain("No model provider is configured");
    expect(text.stderr).toContain("ANTHROPIC_API_KEY");
    // Nothing started: no run directory, no lock.
    expect(treeFingerprint(repo)).toEqual(before);
  }, 60_000);

  test("3: could not run — not a repo with a project, or an unknown model provider", async () => {
    const empty = await makeTempDir();
    const noProject = await run(["sync", "--repo", empty, "--json"]);
    expect(noProject.exitCode).toBe(3);
    expect(JSON.parse(noProject.stdout).error.code).toBeString();
    const repo = await freshRepo(bomDrift);
    // A --model given is checked even when code alone would resolve the drift.
    const badModel = await run(["sync", "--resolve", "--model", "nosuch:model", "--repo", repo]);
    expect(badModel.exitCode).toBe(3);
    expect(badModel.stdout).toContain("drift:bom:R3:value");
    expect(badModel.stderr).toContain("nosuch");
  }, 30_000);
});

describe("no network", () => {
  /** Every internet connect() or send the process tree makes, as strace prints them. */
  async function connects(args: string[]): Promise<string[]> {
    if (!Bun.which("strace"))
      throw new Error("strace is needed to prove no network use; install it (scripts/setup.sh --test does).");
    const trace = join(await makeTempDir(), "trace");
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...ENV })) if (value !== undefined) env[key] = value;
    const proc = Bun.spawn(
      ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", trace, BINARY, ...args],
      { env, stdout: "ignore", stderr: "ignore" },
    );
    await proc.exited;
    return readFileSync(trace, "utf8")
      .split("\n")
      .filter((line) => /AF_INET6?\b/.test(line));
  }

  test("the verify phase opens no internet socket and leaves the tree byte-identical", async () => {
    const repo = await freshRepo((r) => {
      bomDrift(r);
      staleNote(r);
      violation(r);
    });
    const before = {
      tree: treeFingerprint(repo),
      status: await git(repo, "status", "--porcelain", "--untracked-files=all"),
    };
    for (const command of [["sync"], ["sync", "--json"], ["sync", "--resolve"]]) {
      expect({ command, connects: await connects([...command, "--repo", repo]) }).toEqual({ command, connects: [] });
    }
    expect(treeFingerprint(repo)).toEqual(before.tree);
    expect(await git(repo, "status", "--porcelain", "--untracked-files=all")).toBe(before.status);
  }, 60_000);
});
