/**
 * `--model claude-code` and `--model codex` through the compiled binary, with stand-in `claude`
 * and `codex` executables first on PATH (test/support/agent-cli-standin.ts). The stand-ins parse
 * the flags they are given, start the MCP server their config names (copperhead's private
 * bridge, from this same binary), call its tools in a recorded order and print the CLIs' JSON
 * events. kicad-cli and git are real; so are the gates: the CLI only chooses tool calls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LOCK_PATH } from "../../src/repo/lock.ts";
import { git } from "../repo/git-repo.ts";
import { standIns, type StandIns } from "../support/agent-clis.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, fingerprint, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary, type RunResult } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const ADD_CAP = "add a 100 nF decoupling capacitor on the LDO output";
/** A key the CLIs can see in their environment; it must never reach copperhead's records. */
const CANARY = "sk-ant-canary-0123456789abcdef0123456789";

let template = "";
let clis: StandIns;
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  template = await initialisedRepo();
  clis = await standIns();
}, 60_000);

async function runDo(
  model: string,
  session: string,
  extra: Record<string, string> = {},
): Promise<{ repo: string; result: RunResult; summary: Record<string, any> }> {
  const repo = await copyRepo(template);
  const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--json"], {
    env: {
      ...ISOLATED_ENV,
      ...clis.env(join(SESSIONS_DIR, `${session}.json`), {
        ANTHROPIC_API_KEY: CANARY,
        COPPERHEAD_STANDIN_ECHO: "ANTHROPIC_API_KEY",
        ...extra,
      }),
    },
  });
  return { repo, result, summary: result.stdout ? JSON.parse(result.stdout) : {} };
}

/** Everything a run leaves behind that a person or a host reads. */
async function records(repo: string, result: RunResult): Promise<string> {
  const runs = join(repo, ".copperhead/runs");
  const files = readdirSync(runs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"));
  const log = await git(repo, "log", "-p", "--all");
  return [result.stdout, result.stderr, log, ...files].join("\n");
}

/** Whether `pid` still runs (a zombie, dead but not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

function expectNoSecrets(text: string): void {
  expect(text).not.toContain(CANARY);
  for (const env of clis.serverEnvs()) for (const value of Object.values(env)) expect(text).not.toContain(value);
}

describe.each([
  ["claude-code", "claude"],
  ["codex", "codex"],
])("--model %s (the stand-in %s CLI)", (model, cli) => {
  test("a run commits: the CLI chose the calls, copperhead gated them; nothing secret is recorded", async () => {
    const before = clis.invocations().length;
    const { repo, result, summary } = await runDo(model, "add-decoupling-cap");
    expect(result.exitCode).toBe(0);
    expect(summary.status).toBe("committed");
    expect(summary.usage.turns).toBeGreaterThan(5);
    expect(summary.usage.inputTokens).toBeGreaterThan(0);
    expect(await git(repo, "log", "-1", "--format=%B")).toContain("Copperhead-Approval: auto");
    expect(result.stderr).toContain(`${model} (your logged-in`);
    // One login check, then one session that did the whole change.
    const calls = clis.invocations().slice(before);
    expect(calls.map((c) => c[0])).toEqual([cli, cli]);
    expectNoSecrets(await records(repo, result));
  }, 120_000);

  test("the model refuses: exit 2, reason refused, nothing edited", async () => {
    const { repo, result, summary } = await runDo(model, "refuse-unclear-request");
    expect(result.exitCode).toBe(2);
    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("refused");
    expect(summary.filesTouched).toEqual([]);
    expect(await git(repo, "status", "--porcelain")).toBe("");
  }, 60_000);

  test("a CLI that reaches for its own shell is stopped: rolled back, byte-identical", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--json"], {
      env: { ...ISOLATED_ENV, ...clis.env(join(SESSIONS_DIR, "cli-uses-own-tools.json")) },
    });
    const summary = JSON.parse(result.stdout);
    expect(result.exitCode).toBe(1);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("provider_error");
    expect(summary.detail).toContain("a tool copperhead did not give it");
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("copperhead's turn budget binds the CLI: turn_budget_exhausted, the CLI stopped, byte-identical", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--max-turns", "4", "--json"], {
      env: { ...ISOLATED_ENV, ...clis.env(join(SESSIONS_DIR, "add-decoupling-cap.json")) },
    });
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("turn_budget_exhausted");
    expect(summary.usage.turns).toBe(4);
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("a CLI that fails mid-run (exit 1): rolled_back / provider_error with the CLI's own reason", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--json"], {
      env: {
        ...ISOLATED_ENV,
        ...clis.env(join(SESSIONS_DIR, "add-decoupling-cap.json"), { COPPERHEAD_STANDIN_FAIL_AT: "3" }),
      },
    });
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("provider_error");
    expect(summary.detail).toMatch(cli === "claude" ? /529 Overloaded/ : /503 Service Unavailable/);
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("a CLI that starts and says nothing is stopped at the idle timeout with everything it started; the prompts were never in its argv", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const seen = clis.inputs().length;
    const running = runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--provider-timeout", "3", "--json"], {
      env: {
        ...ISOLATED_ENV,
        ...clis.env(join(SESSIONS_DIR, "add-decoupling-cap.json"), { COPPERHEAD_STANDIN_HANG: "silent" }),
      },
    });
    // While the run waits on it, the CLI's command line is in the process table for anyone to read.
    let finished = false;
    void running.then(() => (finished = true));
    while (clis.inputs().length === seen && !finished) await Bun.sleep(50);
    const input = clis.inputs()[seen]!;
    const cmdline = readFileSync(`/proc/${input.pid}/cmdline`, "utf8");
    const result = await running;
    expect(input.prompt).toContain(ADD_CAP);
    expect(input.system).toContain("copperhead");
    expect(cmdline).toContain(cli);
    expect(cmdline).not.toContain(ADD_CAP);
    expect(cmdline).not.toContain(input.system.slice(0, 40));

    const summary = JSON.parse(result.stdout);
    expect({ exitCode: result.exitCode, reason: summary.reason }).toEqual({ exitCode: 1, reason: "provider_error" });
    expect(summary.detail).toContain(`printed nothing for 3 s; copperhead stopped it`);
    expect(fingerprint(repo)).toEqual(before);
    expect(existsSync(join(repo, LOCK_PATH))).toBe(false);
    // The CLI's own helper died with it: the whole process group was stopped.
    for (const pid of [input.pid, ...clis.helpers().slice(-1)]) expect(alive(pid)).toBe(false);
  }, 60_000);

  test("a CLI that keeps printing but never makes its move is stopped at the call's deadline", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const result = await runBinary(
      [
        "do",
        "--repo",
        repo,
        ADD_CAP,
        "--model",
        model,
        "--provider-timeout",
        "2",
        "--provider-deadline",
        "6",
        "--json",
      ],
      {
        env: {
          ...ISOLATED_ENV,
          ...clis.env(join(SESSIONS_DIR, "add-decoupling-cap.json"), { COPPERHEAD_STANDIN_HANG: "chatty" }),
        },
      },
    );
    const summary = JSON.parse(result.stdout);
    expect({ exitCode: result.exitCode, reason: summary.reason }).toEqual({ exitCode: 1, reason: "provider_error" });
    expect(summary.detail).toContain(
      "ran past the model call's deadline of 6 s without finishing its move; copperhead stopped it",
    );
    expect(fingerprint(repo)).toEqual(before);
    expect(alive(clis.helpers().at(-1)!)).toBe(false);
  }, 60_000);

  test("not logged in: a typed error naming the login command, and nothing starts", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const { result } = {
      result: await runBinary(["do", "--repo", repo, ADD_CAP, "--model", model, "--json"], {
        env: {
          ...ISOLATED_ENV,
          ...clis.env(join(SESSIONS_DIR, "add-decoupling-cap.json"), { COPPERHEAD_STANDIN_LOGGED_OUT: "1" }),
        },
      }),
    };
    expect(result.exitCode).toBe(3);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe("cli_not_logged_in");
    expect(error.fix).toContain(`${cli} login`);
    expect(fingerprint(repo)).toEqual(before);
    expect(readdirSync(join(repo, ".copperhead"))).not.toContain("runs");
  }, 30_000);
});

describe("the flags copperhead relies on", () => {
  test("claude: print mode with stream-json, no built-in tools, only copperhead's MCP server", () => {
    const claude = clis.invocations().find((c) => c[0] === "claude" && c.includes("-p"))!;
    expect(claude).toBeDefined();
    const value = (flag: string) => claude[claude.indexOf(flag) + 1];
    expect(value("--output-format")).toBe("stream-json");
    expect(claude).toContain("--verbose");
    expect(value("--tools")).toBe("");
    expect(claude).toContain("--strict-mcp-config");
    expect(value("--allowedTools")).toBe("mcp__copperhead");
    // The prompt comes on stdin, the system prompt from a file.
    expect(claude).not.toContain("--append-system-prompt");
    expect(value("--append-system-prompt-file")).toEndWith("/system-prompt.md");
  });

  test("codex: exec --json, the shell off, a read-only sandbox, the user's config and rules ignored", () => {
    const codex = clis.invocations().find((c) => c[0] === "codex" && c.includes("exec"))!;
    expect(codex).toBeDefined();
    const exec = codex.indexOf("exec");
    const overrides = codex.slice(1, exec).filter((_, i) => i % 2 === 1);
    expect(overrides).toContain("features.shell_tool=false");
    expect(overrides.some((o) => o.startsWith("mcp_servers.copperhead.command="))).toBe(true);
    const flags = codex.slice(exec);
    expect(flags).toEqual(
      expect.arrayContaining(["--json", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules"]),
    );
    expect(flags[flags.indexOf("--sandbox") + 1]).toBe("read-only");
    expect(flags.at(-1)).toBe("-");
    expect(overrides.some((o) => o.startsWith("developer_instructions="))).toBe(false);
    expect(overrides.find((o) => o.startsWith("model_instructions_file="))).toEndWith('/system-prompt.md"');
  });
});

describe("a CLI calling a tool the bridge never listed", () => {
  test("is stopped at the bridge: rolled back, byte-identical", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", "claude-code", "--json"], {
      env: { ...ISOLATED_ENV, ...clis.env(join(SESSIONS_DIR, "cli-calls-unlisted-tool.json")) },
    });
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("provider_error");
    expect(summary.detail).toContain('"write_file", a tool copperhead did not give it');
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);
});

describe("a CLI that is not installed", () => {
  test("is a typed error with the install and login commands", async () => {
    const repo = await copyRepo(template);
    const result = await runBinary(["do", "--repo", repo, ADD_CAP, "--model", "codex", "--json"], {
      env: { ...ISOLATED_ENV, PATH: "/usr/bin:/bin" },
    });
    expect(result.exitCode).toBe(3);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe("cli_not_found");
    expect(error.fix).toContain("codex login");
  });
});

describe("doctor", () => {
  test("names the agent CLIs on PATH and the model each is, and says host is decided per MCP connection", async () => {
    const repo = await copyRepo(template);
    const found = JSON.parse(
      (await runBinary(["doctor", "--repo", repo, "--json"], { env: { ...ISOLATED_ENV, PATH: clis.path } })).stdout,
    );
    const item = found.items.find((i: { id: string }) => i.id === "agent-clis");
    expect(item.status).toBe("ok");
    expect(item.summary).toContain("(--model claude-code)");
    expect(item.summary).toContain("(--model codex)");
    expect(item.summary).toContain("decided per connection");
    const none = JSON.parse(
      (await runBinary(["doctor", "--repo", repo, "--json"], { env: { ...ISOLATED_ENV, PATH: "/usr/bin:/bin" } }))
        .stdout,
    );
    expect(none.items.find((i: { id: string }) => i.id === "agent-clis").fix).toContain("claude login");
  });
});
