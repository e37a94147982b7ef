/**
 * The real Claude Code CLI (`@anthropic-ai/claude-code`, pinned in package.json) under
 * `copperhead do --model claude-code`: its model endpoint is a loopback Messages API
 * (`ANTHROPIC_BASE_URL`) that streams a scripted session, so what is tested is the CLI's own
 * flags, its stream-json events and its MCP client against copperhead's bridge.
 * - The CLI offers its model exactly copperhead's bridged tools, and the change commits.
 * - A model that reaches for a tool the CLI was not given (Bash) stops the run: rolled back,
 *   byte-identical.
 * - Every flag copperhead passes is one the pinned CLI documents, or the test names it: the
 *   CLI's help leaves out `--append-system-prompt-file`, so the test shows the CLI takes it.
 * The CLI runs with a fresh HOME, a fake key, and its telemetry, error reporting, update
 * checks and other non-essential traffic switched off: nothing leaves the machine.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { claudeCodeDriver } from "../../src/agent/providers/agent-cli/claude-code.ts";
import { DO_TOOLS } from "../../src/run/do-strategy.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { runBinary, templateRepo } from "./binary.ts";
import { serveScriptedMessagesApi, sessionTurns, type SessionTurn } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const CLAUDE = resolve(import.meta.dir, "../../node_modules/.bin/claude");
const PREFIX = "mcp__copperhead__";
const REQUEST = "add a 100 nF decoupling capacitor on the LDO output";
const template = templateRepo();

function requireClaude(): string {
  if (!existsSync(CLAUDE))
    throw new Error(
      `${CLAUDE} is missing: run \`bun install --frozen-lockfile\` (Claude Code is a pinned devDependency).`,
    );
  return CLAUDE;
}

/** The CLI's environment: on PATH, pointed at the loopback, nothing non-essential. */
async function claudeEnv(baseUrl: string): Promise<Record<string, string | undefined>> {
  return {
    ...ISOLATED_ENV,
    PATH: `${dirname(requireClaude())}:${process.env.PATH ?? ""}`,
    HOME: await makeTempDir(),
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-loopback-not-a-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
}

async function runDo(turns: SessionTurn[], repo: string) {
  const api = serveScriptedMessagesApi(turns, PREFIX, ["Bash"]);
  try {
    const result = await runBinary(["do", REQUEST, "--model", "claude-code", "--repo", repo, "--json"], {
      env: await claudeEnv(api.baseUrl),
    });
    return { result, toolLists: api.toolLists, systems: api.systems };
  } finally {
    await api.stop();
  }
}

describe("the real Claude Code CLI", () => {
  test("lists exactly copperhead's bridged tools, and the change commits", async () => {
    const repo = await copyRepo(template());
    const { result, toolLists, systems } = await runDo(sessionTurns("add-decoupling-cap"), repo);
    const summary = JSON.parse(result.stdout || "{}");
    expect({
      exitCode: result.exitCode,
      status: summary.status,
      stderr: result.exitCode === 0 ? "" : result.stderr,
    }).toEqual({ exitCode: 0, status: "committed", stderr: "" });
    const expected = DO_TOOLS.map((t) => `${PREFIX}${t.name}`).sort();
    expect(toolLists.length).toBeGreaterThan(0);
    for (const names of toolLists) expect([...names].sort()).toEqual(expected);
    // copperhead's system prompt reached the model from its file, appended to the CLI's own.
    for (const system of systems) expect(system).toContain("You are copperhead's design agent.");
    expect(await git(repo, "status", "--porcelain")).toBe("");
    expect(await git(repo, "log", "-1", "--format=%s")).toContain("decoupling");
  }, 240_000);

  test("a model reaching for a tool the CLI was not given: rolled back, byte-identical", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    // The edits are made, then the model asks the CLI for its shell.
    const turns: SessionTurn[] = [
      ...sessionTurns("add-decoupling-cap").slice(0, 5),
      { content: [{ type: "tool_use", id: "shell", name: "Bash", input: { command: "git commit -am sneaky" } }] },
    ];
    const { result } = await runDo(turns, repo);
    const summary = JSON.parse(result.stdout || "{}");
    expect(result.exitCode).toBe(1);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("provider_error");
    expect(summary.detail).toContain("a tool copperhead did not give it");
    expect(fingerprint(repo)).toEqual(before);
  }, 240_000);

  test("every flag copperhead passes is one the pinned CLI documents, or one it takes though its help leaves it out", async () => {
    const env = {
      ...process.env,
      HOME: await makeTempDir(),
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
    const help = Bun.spawnSync([requireClaude(), "--help"], { env });
    const text = help.stdout.toString();
    expect(help.exitCode).toBe(0);
    const launch = claudeCodeDriver.launch({
      prompt: "p",
      system: "s",
      model: "m",
      resume: "r",
      dir: "/tmp",
      env: {},
      bridge: { command: "copperhead", args: ["mcp-bridge"], env: {} },
    });
    expect(launch.args).not.toContain("p");
    expect(launch.args).not.toContain("s");
    expect(launch.stdin).toBe("p");
    // Not in the help, yet taken: a missing file is refused by name, not as an unknown option.
    const hidden = ["--append-system-prompt-file"];
    for (const flag of hidden) {
      const run = Bun.spawnSync([requireClaude(), "-p", flag, "/nonexistent/system-prompt.md", "hello"], {
        env: { ...env, ANTHROPIC_API_KEY: "sk-ant-loopback-not-a-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
      });
      expect(run.stdout.toString() + run.stderr.toString()).toContain("file not found: /nonexistent/system-prompt.md");
    }
    const flags = launch.args.filter((a) => a.startsWith("-") && !hidden.includes(a));
    expect(flags.length).toBeGreaterThan(5);
    const missing = flags.filter(
      (flag) => !new RegExp(`(^|[\\s,])${flag.replace(/[-]/g, "\\-")}([\\s,=<\\[]|$)`, "m").test(text),
    );
    if (missing.length > 0)
      throw new Error(
        `the pinned claude CLI no longer documents ${missing.join(", ")}, which copperhead passes (src/agent/providers/agent-cli/claude-code.ts)`,
      );
  }, 60_000);
});
