/**
 * The real Codex CLI (`@openai/codex`, pinned in package.json) under `copperhead do --model
 * codex`. Codex ignores OPENAI_BASE_URL: its model endpoint is the model provider selected in
 * `$CODEX_HOME/config.toml`, which copperhead carries over as `-c` overrides while it passes
 * `--ignore-user-config`. So the user's side is set up as a Codex user's would be (a saved key
 * from `codex login --with-api-key`, a provider pointing at a loopback Responses API, an MCP
 * server of their own), and the loopback streams a scripted session in the Responses events
 * this version reads; what is tested is the CLI's own flags, its JSON events and its MCP client
 * against copperhead's bridge.
 * - The CLI offers copperhead's bridged tools directly (the `mcp__copperhead` namespace), none
 *   of the user's, and the change commits.
 * - A model that reaches for a tool Codex has but copperhead did not give stops the run: rolled
 *   back, byte-identical.
 * - Every switch copperhead passes is one the pinned CLI knows, or the test names it.
 * Nothing leaves the machine.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { codexDriver } from "../../src/agent/providers/agent-cli/codex.ts";
import { DO_TOOLS } from "../../src/run/do-strategy.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { BINARY, runBinary, templateRepo } from "./binary.ts";
import { serveScriptedResponsesApi, sessionTurns, type SessionTurn } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const CODEX = resolve(import.meta.dir, "../../node_modules/.bin/codex");
const KEY = "sk-loopback-not-a-key";
const NAMESPACE = "mcp__copperhead";
/** A model Codex's catalog does not know, as with a user's own provider: Codex offers tools as plain function tools. */
const MODEL = "loopback-model";
/**
 * Codex's own tools that 0.171 offers with no switch to turn them off: its MCP-resource readers
 * and its question tool. A call to any of them stops the run (the second test).
 */
const CODEX_OWN = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource", "request_user_input"];
const REQUEST = "add a 100 nF decoupling capacitor on the LDO output";
const template = templateRepo();

function requireCodex(): string {
  if (!existsSync(CODEX))
    throw new Error(`${CODEX} is missing: run \`bun install --frozen-lockfile\` (Codex is a pinned devDependency).`);
  return CODEX;
}

/** A CODEX_HOME as a user of their own provider has it: the provider, a saved key, an MCP server of theirs. */
async function codexHome(baseUrl: string): Promise<string> {
  const home = await makeTempDir();
  writeFileSync(
    join(home, "config.toml"),
    [
      'model_provider = "loopback"',
      "[model_providers.loopback]",
      'name = "Loopback"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "LOOPBACK_MODEL_KEY"',
      "[mcp_servers.theirs]",
      'command = "their-own-server"',
    ].join("\n"),
  );
  const login = Bun.spawnSync([requireCodex(), "login", "--with-api-key"], {
    env: { ...process.env, CODEX_HOME: home },
    stdin: Buffer.from(KEY),
  });
  expect(login.exitCode).toBe(0);
  return home;
}

async function runDo(turns: SessionTurn[], repo: string) {
  const api = serveScriptedResponsesApi(turns, NAMESPACE, CODEX_OWN);
  try {
    const env = {
      ...ISOLATED_ENV,
      PATH: `${dirname(requireCodex())}:${process.env.PATH ?? ""}`,
      CODEX_HOME: await codexHome(api.baseUrl),
      LOOPBACK_MODEL_KEY: KEY,
    };
    const result = await runBinary(["do", REQUEST, "--model", `codex:${MODEL}`, "--repo", repo, "--json"], { env });
    return { result, api };
  } finally {
    await api.stop();
  }
}

describe("the real Codex CLI", () => {
  test("offers copperhead's bridged tools directly, through the user's own provider, and the change commits", async () => {
    const repo = await copyRepo(template());
    const turns = sessionTurns("add-decoupling-cap");
    const { result, api } = await runDo(turns, repo);
    const summary = JSON.parse(result.stdout || "{}");
    expect({
      exitCode: result.exitCode,
      status: summary.status,
      stderr: result.exitCode === 0 ? "" : result.stderr,
    }).toEqual({ exitCode: 0, status: "committed", stderr: "" });
    for (const auth of api.authorizations) expect(auth).toBe(`Bearer ${KEY}`);
    const expected = [...DO_TOOLS.map((t) => `${NAMESPACE}/${t.name}`), ...CODEX_OWN].sort();
    // One request per scripted turn, and one more after the last tool output (answered "Done.").
    expect(api.toolLists.length).toBe(turns.length + 1);
    for (const names of api.toolLists) expect([...names].sort()).toEqual(expected);
    // copperhead's system prompt reached the model, read from its file.
    for (const instructions of api.instructions) expect(instructions).toContain("You are copperhead's design agent.");
    // Every call the script made came back to the model as its output, in the next request.
    const calls = turns.flatMap((t) => t.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
    expect(api.outputs.map((o) => o.call_id).filter((id, i, all) => all.indexOf(id) === i)).toEqual(calls);
    expect(await git(repo, "status", "--porcelain")).toBe("");
    expect(await git(repo, "log", "-1", "--format=%s")).toContain("decoupling");
  }, 300_000);

  test("a model reaching for a tool Codex has but copperhead did not give: rolled back, byte-identical", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    // The edits are made, then the model asks Codex to read a resource off copperhead's server.
    const turns: SessionTurn[] = [
      ...sessionTurns("add-decoupling-cap").slice(0, 5),
      {
        content: [
          {
            type: "tool_use",
            id: "resource",
            name: "read_mcp_resource",
            input: { server: "copperhead", uri: "file:///etc/passwd" },
          },
        ],
      },
    ];
    const { result } = await runDo(turns, repo);
    const { status, reason, detail } = JSON.parse(result.stdout || "{}");
    expect({ exitCode: result.exitCode, status, reason, detail }).toEqual({
      exitCode: 1,
      status: "rolled_back",
      reason: "provider_error",
      detail: expect.stringContaining(
        "the Codex CLI has or used copperhead.read_mcp_resource, a tool copperhead did not give it",
      ),
    });
    expect(fingerprint(repo)).toEqual(before);
  }, 300_000);

  test("every switch and flag copperhead passes is one the pinned CLI knows", async () => {
    const api = serveScriptedResponsesApi([], NAMESPACE);
    try {
      const home = await codexHome(api.baseUrl);
      // copperhead's stdio MCP server stands in for the bridge: the CLI must start it (`required`).
      const dir = await makeTempDir();
      const launch = codexDriver.launch({
        prompt: "p",
        system: "s",
        model: MODEL,
        dir,
        env: { CODEX_HOME: home },
        bridge: { command: BINARY, args: ["mcp"], env: {} },
      });
      for (const [name, text] of Object.entries(launch.files ?? {}))
        writeFileSync(join(dir, name), text, { mode: 0o600 });
      const env = { ...ISOLATED_ENV, PATH: process.env.PATH, CODEX_HOME: home, LOOPBACK_MODEL_KEY: KEY };
      // Unknown -c keys are silently ignored unless --strict-config, which names them.
      const args = launch.args.flatMap((a) => (a === "exec" ? ["exec", "--strict-config"] : [a]));
      // Not spawnSync: the loopback answering the CLI runs in this process.
      const run = Bun.spawn([requireCodex(), ...args], {
        env,
        cwd: dir,
        stdin: new Blob([launch.stdin]),
        stdout: "ignore",
        stderr: "pipe",
      });
      const stderr = await new Response(run.stderr).text();
      await run.exited;
      const unknown = /unknown configuration field `([^`]+)`/.exec(stderr)?.[1];
      if (unknown)
        throw new Error(
          `the pinned codex CLI no longer knows -c ${unknown}, which copperhead passes (src/agent/providers/agent-cli/codex.ts)`,
        );
      expect({ exitCode: run.exitCode, stderr: run.exitCode === 0 ? "" : stderr }).toEqual({ exitCode: 0, stderr: "" });

      // A feature switch that still parses but is removed no longer does anything.
      const list = Bun.spawnSync([requireCodex(), "features", "list"], { env }).stdout.toString();
      const stages = new Map(
        list
          .split("\n")
          .map((line) => line.trim().split(/\s{2,}/))
          .map(([name, stage]) => [name, stage]),
      );
      const features = launch.args.flatMap((a) => /^features\.([^.=]+)/.exec(a)?.[1] ?? []);
      expect(features.length).toBeGreaterThan(5);
      const stale = features.filter((f) => !stages.has(f) || /removed/.test(stages.get(f) ?? ""));
      if (stale.length > 0)
        throw new Error(
          `the pinned codex CLI lists ${stale.map((f) => `features.${f} (${stages.get(f) ?? "unknown"})`).join(", ")}, which copperhead passes (src/agent/providers/agent-cli/codex.ts)`,
        );

      const help = Bun.spawnSync([requireCodex(), "exec", "--help"], { env }).stdout.toString();
      const flags = launch.args.filter((a) => a.startsWith("--"));
      const missing = flags.filter(
        (flag) => !new RegExp(`(^|[\\s,])${flag.replace(/[-]/g, "\\-")}([\\s,=<\\[]|$)`, "m").test(help),
      );
      if (missing.length > 0)
        throw new Error(
          `the pinned codex CLI no longer documents ${missing.join(", ")}, which copperhead passes (src/agent/providers/agent-cli/codex.ts)`,
        );
    } finally {
      await api.stop();
    }
  }, 120_000);
});
