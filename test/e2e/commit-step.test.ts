/**
 * The commit step under fire, through the compiled binary: a user pre-commit hook that takes a
 * few seconds (it marks when it starts and ends) holds the run inside `git commit` while the
 * test kills or signals copperhead.
 * - `kill -9` of copperhead: the `git commit` it started can outlive it and still land. The
 *   next command waits for it (a typed `busy`), then finds HEAD, the index and the tree in
 *   agreement: the run's commit with its tree, or — when the hook said no — none of it.
 * - Killing every process of the run (copperhead's and git's groups): nothing is left staged.
 * - SIGINT or SIGTERM after the model's `finish`, before the commit starts: the run rolls back
 *   as `cancelled`. During `git commit`: the commit is let finish, and the summary says so.
 * - Over MCP, a `copperhead_do` cancelled during its commit still answers, with the commit.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { BINARY, runBinary, templateRepo } from "./binary.ts";
import { openMcpWire } from "./mcp-wire.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

const REQUEST = "add a 100 nF decoupling capacitor on the LDO output";
const MODEL = `replay:${join(SESSIONS_DIR, "add-decoupling-cap.json")}`;
const HOOK_SECONDS = 4;

interface Scene {
  repo: string;
  /** Where the hook (and the slow kicad-cli) leave their marks. */
  marks: string;
  before: { tree: Record<string, string>; head: string };
  env: Record<string, string>;
}

/** A fresh repo whose own pre-commit hook marks its start, sleeps, marks its end and exits `exit`. */
async function scene(options: { hookExit?: number; slowKicad?: boolean } = {}): Promise<Scene> {
  const repo = await copyRepo(template());
  const marks = await makeTempDir();
  const hook = join(repo, ".git/hooks/pre-commit");
  writeFileSync(
    hook,
    `#!/bin/sh\n: > "${marks}/hook-started"\nsleep ${HOOK_SECONDS}\n: > "${marks}/hook-done"\nexit ${options.hookExit ?? 0}\n`,
  );
  chmodSync(hook, 0o755);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...ISOLATED_ENV })) if (v !== undefined) env[k] = v;
  if (options.slowKicad) {
    // kicad-cli that takes 3 s for real work: the verification after `finish` lasts that long.
    const wrapper = join(marks, "kicad-cli");
    writeFileSync(
      wrapper,
      `#!/bin/sh\ncase "$1" in --version|version) ;; *) sleep 3 ;; esac\nexec "${(await requireKicadCli()).path}" "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    env.COPPERHEAD_KICAD_CLI = wrapper;
  }
  return { repo, marks, before: { tree: fingerprint(repo), head: (await git(repo, "rev-parse", "HEAD")).trim() }, env };
}

/** Starts `do` in a process group of its own, so the test can kill it, or all of it. */
function startDo(s: Scene): {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stderr: string[];
  result: Promise<{ exitCode: number; stdout: string }>;
} {
  const proc = Bun.spawn([BINARY, "do", REQUEST, "--model", MODEL, "--repo", s.repo, "--json"], {
    env: s.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  const stderr: string[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) stderr.push(decoder.decode(chunk, { stream: true }));
  })();
  const result = Promise.all([new Response(proc.stdout).text(), proc.exited]).then(([stdout, exitCode]) => ({
    stdout,
    exitCode,
  }));
  return { proc, stderr, result };
}

/** `do`, once the run is inside `git commit` (the hook has started). */
async function doUntilHook(s: Scene): Promise<ReturnType<typeof startDo>> {
  const run = startDo(s);
  await until("the hook to start", () => existsSync(join(s.marks, "hook-started")));
  return run;
}

async function until(what: string, ready: () => boolean | Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

function journal(repo: string): { runId: string; state: string; commitPid?: number } {
  const [runId] = readdirSync(join(repo, ".copperhead/runs")).filter((n) => /^\d{8}T/.test(n));
  return JSON.parse(readFileSync(join(repo, ".copperhead/runs", runId!, "journal.json"), "utf8"));
}

/** HEAD, the index and the working tree agree: nothing staged, nothing changed, nothing new. */
async function expectConsistent(repo: string): Promise<void> {
  expect(await git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("");
  expect(await git(repo, "diff", "--cached", "--name-only")).toBe("");
}

const netlist = (s: Scene) => runBinary(["netlist", "--repo", s.repo, "--json"], { env: s.env });

describe("kill -9 while the user's pre-commit hook runs", () => {
  test("the orphaned git commit lands; the next command waits for it, then HEAD, index and tree agree on the commit", async () => {
    const s = await scene();
    const run = await doUntilHook(s);
    run.proc.kill("SIGKILL");
    await run.result;

    const early = await netlist(s);
    expect(early.exitCode).toBe(3);
    expect(JSON.parse(early.stdout).error).toMatchObject({
      code: "busy",
      message: expect.stringContaining("may still land"),
    });
    expect(existsSync(join(s.marks, "hook-done"))).toBe(false);

    await until("recovery to go through", async () => (await netlist(s)).exitCode === 0);
    expect(existsSync(join(s.marks, "hook-done"))).toBe(true);
    const message = await git(s.repo, "log", "-1", "--format=%B");
    expect(message).toContain(`Copperhead-Run: ${journal(s.repo).runId}`);
    expect(journal(s.repo).state).toBe("committed");
    await expectConsistent(s.repo);
  }, 180_000);

  test("when the hook says no, none of it: the tree is restored and HEAD is where it was", async () => {
    const s = await scene({ hookExit: 1 });
    const run = await doUntilHook(s);
    run.proc.kill("SIGKILL");
    await run.result;
    await until("recovery to go through", async () => (await netlist(s)).exitCode === 0);
    expect((await git(s.repo, "rev-parse", "HEAD")).trim()).toBe(s.before.head);
    expect(fingerprint(s.repo)).toEqual(s.before.tree);
    expect(journal(s.repo).state).toBe("recovered");
    await expectConsistent(s.repo);
  }, 180_000);

  test("killing every process of the run leaves nothing staged: the tree is restored at once", async () => {
    const s = await scene();
    const run = await doUntilHook(s);
    process.kill(-run.proc.pid, "SIGKILL");
    const gitPid = journal(s.repo).commitPid;
    if (gitPid !== undefined) process.kill(-gitPid, "SIGKILL");
    await run.result;
    expect((await netlist(s)).exitCode).toBe(0);
    expect((await git(s.repo, "rev-parse", "HEAD")).trim()).toBe(s.before.head);
    expect(fingerprint(s.repo)).toEqual(s.before.tree);
    await expectConsistent(s.repo);
  }, 180_000);
});

describe("SIGINT and SIGTERM after finish", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    test(`${signal} during the verification after finish rolls back as cancelled`, async () => {
      const s = await scene({ slowKicad: true });
      const run = startDo(s);
      await until("the verification to start", () => run.stderr.join("").includes("verify: running the full check"));
      run.proc.kill(signal);
      const { exitCode, stdout } = await run.result;
      const summary = JSON.parse(stdout);
      expect({ exitCode, status: summary.status, reason: summary.reason }).toEqual({
        exitCode: 1,
        status: "rolled_back",
        reason: "cancelled",
      });
      expect(existsSync(join(s.marks, "hook-started"))).toBe(false);
      expect((await git(s.repo, "rev-parse", "HEAD")).trim()).toBe(s.before.head);
      expect(fingerprint(s.repo)).toEqual(s.before.tree);
      await expectConsistent(s.repo);
    }, 180_000);
  }

  test("SIGTERM while git commit runs: the commit is let finish, and the summary says the cancellation came too late", async () => {
    const s = await scene();
    const run = await doUntilHook(s);
    run.proc.kill("SIGTERM");
    const { exitCode, stdout } = await run.result;
    const summary = JSON.parse(stdout);
    expect({ exitCode, status: summary.status }).toEqual({ exitCode: 0, status: "committed" });
    expect(summary.detail).toContain("the cancellation arrived while git commit was running");
    expect((await git(s.repo, "rev-parse", "HEAD")).trim()).toBe(summary.commit);
    await expectConsistent(s.repo);
  }, 180_000);
});

describe("mcp", () => {
  test("a copperhead_do cancelled while its git commit runs still answers, with the committed summary", async () => {
    const s = await scene();
    const wire = await openMcpWire(s.repo, { ...s.env, COPPERHEAD_MODEL: MODEL });
    await wire.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "copperhead_do", arguments: { request: REQUEST } },
    });
    await until("the hook to start", () => existsSync(join(s.marks, "hook-started")));
    await wire.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, reason: "the host gave up" },
    });
    const response = await wire.response(1, 60_000);
    const summary = response.result?.structuredContent as { status: string; commit: string; detail: string };
    expect(summary.status).toBe("committed");
    expect(summary.detail).toContain("the cancellation arrived while git commit was running");
    await wire.close();
    expect((await git(s.repo, "rev-parse", "HEAD")).trim()).toBe(summary.commit);
    await expectConsistent(s.repo);
  }, 180_000);
});
