/**
 * `copperhead do` and `copperhead demo` through the compiled binary, as separate processes:
 * exit codes, stdout carrying only the summary, and the guarantees that only hold across
 * processes — a run killed with SIGKILL mid-edit is restored by the next command, Ctrl-C rolls
 * back, and two runs on one repo never interleave (the lock file makes the second one `busy`).
 *
 * Two runs inside one process (the MCP server) are serialised by the in-process promise chain
 * of `withRepoLock` instead; that is covered by test/repo/lock.test.ts ("calls in one process
 * queue up and never overlap"), and the in-process `do` scenarios by test/commands/do.test.ts.
 *
 * The model is a recorded session (`replay:`), or, where a run must be parked mid-edit, a
 * loopback OpenAI-compatible server (`compat:`) that plays the same session and then holds the
 * next request open. kicad-cli and git are real.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { BINARY, requireBinary, runBinary, type RunResult } from "./binary.ts";
import { serveScriptedModel, sessionTurns, SESSIONS_DIR, type ScriptedModel } from "./scripted-model.ts";
import { copyRepo, initialisedRepo, ISOLATED_ENV, LOCAL_STATE } from "../support/repos.ts";
import { BoardEdit } from "../support/board-edits.ts";

afterAll(cleanupTempDirs);

const ENV = ISOLATED_ENV;
const ADD_CAP = `replay:${join(SESSIONS_DIR, "add-decoupling-cap.json")}`;
const REMOVE_R2 = `replay:${join(SESSIONS_DIR, "remove-cc-pulldown.json")}`;
const ADD_CAP_REQUEST = "add a 100 nF decoupling capacitor on the LDO output";
/**
 * add-decoupling-cap's turns up to and including `sync_board`: after them the run has written
 * the proposal, the regulator sheet and the board, and is waiting for its next model turn.
 */
const EDIT_TURNS = 5;

let template = "";
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  // usb-led with `init` committed, built once and copied (with .git) per test.
  template = await initialisedRepo();
}, 60_000);

const freshRepo = () => copyRepo(template);

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runBinary(args, { env: { ...ENV, ...env } });
}

/** Starts the binary without waiting for it, so a test can signal it mid-run. */
function start(
  args: string[],
  env: Record<string, string | undefined> = {},
): { proc: Subprocess; result: Promise<RunResult> } {
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...ENV, ...env }))
    if (value !== undefined) merged[key] = value;
  const proc = Bun.spawn([BINARY, ...args], { env: merged, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const result = Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    new Response(proc.stderr as ReadableStream).text(),
    proc.exited,
  ]).then(([stdout, stderr, exitCode]) => ({ stdout, stderr, exitCode }));
  return { proc, result };
}

function fingerprint(repo: string): Record<string, string> {
  return treeFingerprint(repo, LOCAL_STATE);
}

function runIds(repo: string): string[] {
  const runs = join(repo, ".copperhead/runs");
  return existsSync(runs) ? readdirSync(runs).sort() : [];
}

interface Journal {
  runId: string;
  pid: number;
  state: string;
  files: { path: string }[];
}

function readJournal(repo: string, runId: string): Journal {
  return JSON.parse(readFileSync(join(repo, ".copperhead/runs", runId, "journal.json"), "utf8"));
}

async function head(repo: string): Promise<string> {
  return (await git(repo, "rev-parse", "HEAD")).trim();
}

/**
 * Starts `do` against a scripted compat server and returns once the run has made its edits and
 * is parked on the held model request, with its journal `editing`.
 */
async function parkMidEdit(
  repo: string,
  extraArgs: string[] = [],
): Promise<{ proc: Subprocess; result: Promise<RunResult>; server: ScriptedModel; journal: Journal }> {
  const server = serveScriptedModel(sessionTurns("add-decoupling-cap").slice(0, EDIT_TURNS));
  const started = start(["do", ADD_CAP_REQUEST, "--model", "compat:test", "--repo", repo, ...extraArgs], {
    COPPERHEAD_BASE_URL: server.baseUrl,
  });
  const endedEarly = started.result.then((r) => {
    throw new Error(
      `copperhead do ended before the scripted model held it (exit ${r.exitCode}):\n${r.stderr}\n${r.stdout}`,
    );
  });
  await Promise.race([server.held, endedEarly]);
  expect(server.requests).toBe(EDIT_TURNS + 1);
  const [runId] = runIds(repo);
  expect(runId).toBeDefined();
  const journal = readJournal(repo, runId!);
  expect(journal.state).toBe("editing");
  expect(journal.pid).toBe(started.proc.pid);
  expect(journal.files.map((f) => f.path)).toEqual(
    expect.arrayContaining(["regulator.kicad_sch", "usb-led.kicad_pcb"]),
  );
  return { ...started, server, journal };
}

describe("copperhead do", () => {
  test("--json: a verified change is committed; stdout is the summary alone, progress goes to stderr", async () => {
    const repo = await freshRepo();
    const { exitCode, stdout, stderr } = await run([
      "do",
      ADD_CAP_REQUEST,
      "--model",
      ADD_CAP,
      "--json",
      "--repo",
      repo,
    ]);
    expect(exitCode).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({
      schema: "copperhead.do/1",
      status: "committed",
      approval: "auto",
      dryRun: false,
      layoutPending: [],
    });
    expect(summary.verification.ok).toBe(true);
    expect(summary.filesTouched).toEqual(
      expect.arrayContaining(["regulator.kicad_sch", "usb-led.kicad_pcb", summary.proposal.path]),
    );
    expect(stderr).toContain("baseline");
    expect(stderr).toContain("committed");
    expect(stderr).not.toContain('"schema"');

    expect(await head(repo)).toBe(summary.commit);
    const message = await git(repo, "log", "-1", "--format=%B");
    expect(message).toStartWith("copperhead: Add a 100 nF decoupling capacitor on the LDO output\n");
    expect(message).toContain(`Change: ${summary.proposal.path}`);
    expect(message).toContain(`Copperhead-Run: ${summary.runId}`);
    expect(message).toContain("Copperhead-Approval: auto");
    expect(await git(repo, "status", "--porcelain")).toBe("");
    expect(existsSync(join(repo, summary.transcriptPath))).toBe(true);
  }, 60_000);

  test("without --json: the readable summary names the proposal, files, verification and transcript", async () => {
    const repo = await freshRepo();
    const { exitCode, stdout } = await run(["do", ADD_CAP_REQUEST, "--model", ADD_CAP, "--repo", repo]);
    expect(exitCode).toBe(0);
    expect(stdout).toStartWith(`copperhead do: committed ${await head(repo)}`);
    expect(stdout).toMatch(
      /^proposal: Add a 100 nF decoupling capacitor on the LDO output — docs\/changes\/\S+\.md \(approval: auto\)$/m,
    );
    expect(stdout).toMatch(/^files: .*regulator\.kicad_sch.*usb-led\.kicad_pcb/m);
    expect(stdout).toMatch(/^verification: passed after 0 repair cycles — erc pass, drc pass, parity pass/m);
    expect(stdout).not.toContain("layout pending");
    expect(stdout).toMatch(/^transcript: \.copperhead\/runs\/\S+\/transcript\.jsonl$/m);
  }, 60_000);

  test("no model provider configured: exit 3 naming the three variables, and no run starts", async () => {
    const repo = await freshRepo();
    const { exitCode, stdout, stderr } = await run(["do", ADD_CAP_REQUEST, "--repo", repo]);
    expect(exitCode).toBe(3);
    expect(stdout).toBe("");
    for (const name of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPPERHEAD_BASE_URL"]) expect(stderr).toContain(name);
    const json = await run(["do", ADD_CAP_REQUEST, "--repo", repo, "--json"]);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout).error.code).toBe("missing_api_key");
    expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
    expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
    expect(await git(repo, "status", "--porcelain")).toBe("");
  }, 60_000);

  test("a dirty tree is refused (exit 2) and left exactly as it was", async () => {
    const repo = await freshRepo();
    writeFileSync(
      join(repo, "docs/DECISIONS.md"),
      `${readFileSync(join(repo, "docs/DECISIONS.md"), "utf8")}- an uncommitted note\n`,
    );
    const before = fingerprint(repo);
    const { exitCode, stdout } = await run(["do", ADD_CAP_REQUEST, "--model", ADD_CAP, "--json", "--repo", repo]);
    expect(exitCode).toBe(2);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ status: "refused", reason: "dirty_tree" });
    expect(summary.detail).toContain("docs/DECISIONS.md");
    expect(fingerprint(repo)).toEqual(before);
    expect((await git(repo, "log", "--format=%s")).split("\n")[0]).toBe("copperhead init");
  }, 60_000);

  test("a change that breaks a requirement is rolled back (exit 1): the tree is byte-identical", async () => {
    const repo = await freshRepo();
    const before = fingerprint(repo);
    const commit = await head(repo);
    const { exitCode, stdout } = await run([
      "do",
      "remove the CC2 pull-down resistor R2",
      "--model",
      REMOVE_R2,
      "--json",
      "--repo",
      repo,
    ]);
    expect(exitCode).toBe(1);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ status: "rolled_back", reason: "abandoned" });
    expect(summary.filesTouched).toEqual(expect.arrayContaining(["usb-led.kicad_sch", "usb-led.kicad_pcb"]));
    expect(summary.verification.newFindings.map((f: { rule: string }) => f.rule)).toContain("REQ-BOM-1");
    expect(fingerprint(repo)).toEqual(before);
    expect(await head(repo)).toBe(commit);
    expect(await git(repo, "status", "--porcelain")).toBe("");
    expect(readJournal(repo, summary.runId).state).toBe("rolled_back");
  }, 60_000);

  test("a second finish on a design unchanged since the failed verification: stalled, exit 1, byte-identical", async () => {
    const repo = await freshRepo();
    const before = fingerprint(repo);
    const { exitCode, stdout } = await run([
      "do",
      "add a 10k pull-down resistor R4 to GND",
      "--model",
      `replay:${join(SESSIONS_DIR, "finish-unchanged.json")}`,
      "--json",
      "--repo",
      repo,
    ]);
    expect(exitCode).toBe(1);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ status: "rolled_back", reason: "stalled" });
    expect(summary.verification.repairCycles).toBe(1);
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("a part added to the schematic but not to the board is not committed: the gate names it, and the run rolls back", async () => {
    const repo = await freshRepo();
    const before = fingerprint(repo);
    const commit = await head(repo);
    const session = `replay:${join(SESSIONS_DIR, "add-cap-board-unsynced.json")}`;
    const { exitCode, stdout } = await run(["do", ADD_CAP_REQUEST, "--model", session, "--json", "--repo", repo]);
    expect(exitCode).toBe(1);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ status: "rolled_back", reason: "stalled" });
    // Parity rates a missing footprint a warning; new in a run, it fails the gate.
    expect(summary.verification.newFindings).toEqual([
      expect.objectContaining({
        check: "parity",
        rule: "missing_footprint",
        severity: "warning",
        key: "parity:missing_footprint:C3",
      }),
    ]);
    expect(summary.detail).toContain("C3 (100n) is in the schematic but has no footprint on the board");
    expect(fingerprint(repo)).toEqual(before);
    expect(await head(repo)).toBe(commit);
    expect(readJournal(repo, summary.runId).state).toBe("rolled_back");
  }, 60_000);

  test("told that the board lacks the part it added, the model syncs the board and the run commits", async () => {
    const repo = await freshRepo();
    const session = `replay:${join(SESSIONS_DIR, "add-cap-board-synced-on-repair.json")}`;
    const { exitCode, stdout } = await run(["do", ADD_CAP_REQUEST, "--model", session, "--json", "--repo", repo]);
    expect(exitCode).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ status: "committed", verification: { ok: true, repairCycles: 1 } });
    const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; ok?: boolean; feedback?: string });
    const verdicts = events.filter((e) => e.type === "verify");
    expect(verdicts.map((e) => e.ok)).toEqual([false, true]);
    expect(verdicts[0]!.feedback).toContain(
      "[parity/missing_footprint] C3 (100n) is in the schematic but has no footprint on the board",
    );
    expect(summary.filesTouched).toEqual(expect.arrayContaining(["regulator.kicad_sch", "usb-led.kicad_pcb"]));
  }, 60_000);

  test("a board sync whose zone refill fails leaves the part off the board, and the run does not commit", async () => {
    // A GND pour KiCad fills (`fill yes`) over the whole board, so the placed capacitor needs
    // KiCad's filler, and a KiCad Python that loads pcbnew but crashes on the refill.
    const repo = await initialisedRepo((dir) => {
      const file = join(dir, "usb-led.kicad_pcb");
      const board = new BoardEdit(file);
      board.addZone("GND", "F.Cu", [100, 83], [140, 102], true);
      board.save();
      const poured = readFileSync(file, "utf8").replace(/\(fill(\s+)\(thermal_gap/, "(fill yes$1(thermal_gap");
      expect(poured).toContain("(fill yes");
      writeFileSync(file, poured);
    });
    const python = join(await makeTempDir(), "python3");
    // KiCad's Python runs each script from a file: the probe's asks for pcbnew's version.
    writeFileSync(
      python,
      '#!/bin/sh\nif grep -q "pcbnew.Version" "$1"; then printf 9.0.8; exit 0; fi\necho "Segmentation fault (core dumped)" >&2\nexit 139\n',
      { mode: 0o755 },
    );
    const before = fingerprint(repo);
    const commit = await head(repo);
    // add-cap-next-to-u1 finishes after its sync_board, which fails; told why, it finishes again.
    const turns = sessionTurns("add-cap-next-to-u1");
    const server = serveScriptedModel([...turns, turns.at(-1)!]);
    try {
      const { exitCode, stdout } = await run(
        ["do", "add a 100 nF capacitor next to U1", "--model", "compat:test", "--json", "--repo", repo],
        {
          COPPERHEAD_BASE_URL: server.baseUrl,
          COPPERHEAD_KICAD_PYTHON: python,
        },
      );
      expect(exitCode).toBe(1);
      const summary = JSON.parse(stdout);
      expect(summary).toMatchObject({ status: "rolled_back", reason: "stalled" });
      expect(summary.verification.newFindings.map((f: { key: string }) => f.key)).toEqual([
        "parity:missing_footprint:C900",
      ]);
      const results = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; name?: string; isError?: boolean; content?: string })
        .filter((e) => e.type === "tool_result" && e.name === "sync_board");
      expect(results).toEqual([
        expect.objectContaining({ isError: true, content: expect.stringContaining("Segmentation fault") }),
      ]);
      expect(fingerprint(repo)).toEqual(before);
      expect(await head(repo)).toBe(commit);
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("SIGKILL mid-edit: the next command restores the tree byte-identically and says so", async () => {
    const repo = await freshRepo();
    const before = fingerprint(repo);
    const commit = await head(repo);
    const { proc, result, server, journal } = await parkMidEdit(repo);
    try {
      expect(fingerprint(repo)).not.toEqual(before);
      expect(readFileSync(join(repo, "regulator.kicad_sch"), "utf8")).toContain('"C3"');

      // While the run lives, a read-only command must leave its edits alone.
      const meanwhile = await run(["check", "--json", "--repo", repo]);
      expect(meanwhile.stderr).not.toContain("interrupted");
      expect(readJournal(repo, journal.runId).state).toBe("editing");
      expect(fingerprint(repo)).not.toEqual(before);

      proc.kill("SIGKILL");
      await result;
      expect(proc.signalCode).toBe("SIGKILL");
      expect(readJournal(repo, journal.runId).state).toBe("editing");
      expect(existsSync(join(repo, ".copperhead/lock"))).toBe(true);
    } finally {
      proc.kill("SIGKILL");
      await server.stop();
    }

    const { exitCode, stdout, stderr } = await run(["check", "--json", "--repo", repo]);
    expect(stderr).toContain(`Run ${journal.runId} was interrupted mid-edit; restored ${journal.files.length} file(s)`);
    expect(fingerprint(repo)).toEqual(before);
    expect(exitCode).toBe(0);
    expect(JSON.parse(stdout).ok).toBe(true);
    expect(readJournal(repo, journal.runId).state).toBe("recovered");
    expect(await head(repo)).toBe(commit);
    expect(await git(repo, "status", "--porcelain")).toBe("");

    // The dead run's stale lock does not block the next run.
    const next = await run(["do", ADD_CAP_REQUEST, "--model", ADD_CAP, "--json", "--repo", repo]);
    expect(next.exitCode).toBe(0);
    expect(JSON.parse(next.stdout).status).toBe("committed");
  }, 90_000);

  // SIGINT is Ctrl-C; SIGTERM is what CI runners, `timeout` and process managers send.
  test.each(["SIGINT", "SIGTERM"] as const)(
    "%s mid-edit: exit 1, rolled_back/cancelled, and the tree is byte-identical",
    async (signal) => {
      const repo = await freshRepo();
      const before = fingerprint(repo);
      const commit = await head(repo);
      const { proc, result, server, journal } = await parkMidEdit(repo, ["--json"]);
      let outcome: RunResult;
      try {
        expect(fingerprint(repo)).not.toEqual(before);
        proc.kill(signal);
        outcome = await result;
      } finally {
        proc.kill("SIGKILL");
        await server.stop();
      }
      expect(outcome.exitCode).toBe(1);
      const summary = JSON.parse(outcome.stdout);
      expect(summary).toMatchObject({ status: "rolled_back", reason: "cancelled", runId: journal.runId });
      expect(summary.filesTouched).toEqual(expect.arrayContaining(["regulator.kicad_sch", "usb-led.kicad_pcb"]));
      expect(outcome.stderr).toContain("rollback");
      expect(fingerprint(repo)).toEqual(before);
      expect(readJournal(repo, journal.runId).state).toBe("rolled_back");
      expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
      expect(await head(repo)).toBe(commit);
      expect(await git(repo, "status", "--porcelain")).toBe("");
    },
    60_000,
  );

  test("two runs started at once on one repo: one commits, the other is busy naming it; never interleaved", async () => {
    const repo = await freshRepo();
    const commit = await head(repo);
    const args = ["do", ADD_CAP_REQUEST, "--model", ADD_CAP, "--json", "--repo", repo];
    const runs = [start(args), start(args)];
    const results = await Promise.all(runs.map((r) => r.result));
    const winner = results.findIndex((r) => r.exitCode === 0);
    expect(winner).toBeGreaterThanOrEqual(0);
    const loser = results[1 - winner]!;
    expect(JSON.parse(results[winner]!.stdout).status).toBe("committed");
    expect(loser.exitCode).toBe(3);
    const error = JSON.parse(loser.stdout).error;
    expect(error.code).toBe("busy");
    expect(error.pid).toBe(runs[winner]!.proc.pid);
    expect(loser.stderr).toContain(`pid ${runs[winner]!.proc.pid}`);

    // The busy run started nothing: one run record, one commit, a clean tree.
    expect(runIds(repo)).toEqual([JSON.parse(results[winner]!.stdout).runId]);
    expect(await git(repo, "log", "--format=%s", `${commit}..HEAD`)).toBe(
      "copperhead: Add a 100 nF decoupling capacitor on the LDO output\n",
    );
    expect(await git(repo, "status", "--porcelain")).toBe("");
    expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
  }, 60_000);
});

describe("copperhead demo", () => {
  test("readable: the first change is committed with its trailers, the second rolled back", async () => {
    const dir = join(await makeTempDir(), "demo");
    const { exitCode, stdout } = await run(["demo", "--dir", dir]);
    expect(exitCode).toBe(0);
    const committed = stdout.indexOf("copperhead do: committed");
    const rolledBack = stdout.indexOf("copperhead do: rolled back (abandoned)");
    expect(committed).toBeGreaterThanOrEqual(0);
    expect(rolledBack).toBeGreaterThan(committed);
    expect(stdout).toContain("The demo ran as recorded");

    const repo = join(dir, "usb-led");
    const log = await git(repo, "log", "--format=%s%n%b%n--");
    expect(log).toContain("copperhead: Add a 100 nF decoupling capacitor on the LDO output");
    expect(log).toMatch(/^Copperhead-Run: \S+$/m);
    expect(log).toContain("Copperhead-Approval: auto");
    expect((await git(repo, "log", "--format=%s")).trim().split("\n")).toHaveLength(3);
    expect(await git(repo, "status", "--porcelain")).toBe("");
  }, 90_000);

  test("--json: ok, committed then rolled back", async () => {
    const dir = join(await makeTempDir(), "demo");
    const { exitCode, stdout } = await run(["demo", "--dir", dir, "--json"]);
    expect(exitCode).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ schema: "copperhead.demo/1", ok: true, repo: join(dir, "usb-led") });
    expect(
      result.runs.map((r: { status: string; reason?: string }) => `${r.status}${r.reason ? `/${r.reason}` : ""}`),
    ).toEqual(["committed", "rolled_back/abandoned"]);
  }, 90_000);
});
