/**
 * The real Codex CLI (`@openai/codex`, pinned in package.json) under `copperhead do --model
 * codex`. Codex ignores OPENAI_BASE_URL: its model endpoint is the model provider selected in
 * `$CODEX_HOME/config.toml`, which copperhead carries over as `-c` overrides while it passes
 * `--ignore-user-config`. This test sets the user's side up as a Codex user would (a saved key
 * from `codex login --with-api-key`, a provider pointing at a loopback Responses API, an MCP
 * server of their own) and checks that the run's model calls reach that provider with its key,
 * and that the user's MCP server stays out. Nothing leaves the machine.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { runBinary, templateRepo } from "./binary.ts";

afterAll(cleanupTempDirs);

const CODEX = resolve(import.meta.dir, "../../node_modules/.bin/codex");
const KEY = "sk-loopback-not-a-key";
const template = templateRepo();

function requireCodex(): string {
  if (!existsSync(CODEX)) throw new Error(`${CODEX} is missing: run \`bun install --frozen-lockfile\` (Codex is a pinned devDependency).`);
  return CODEX;
}

describe("the real Codex CLI", () => {
  test("the user's own model provider is used, through copperhead's -c overrides; their MCP server is not", async () => {
    const requests: Array<{ authorization: string | null; body: string }> = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        requests.push({ authorization: req.headers.get("authorization"), body: await req.text() });
        return new Response("loopback: no model here", { status: 400 });
      },
    });
    const home = await makeTempDir();
    writeFileSync(
      join(home, "config.toml"),
      [
        'model_provider = "loopback"',
        "[model_providers.loopback]",
        'name = "Loopback"',
        `base_url = "http://127.0.0.1:${server.port}/v1"`,
        'wire_api = "responses"',
        'env_key = "LOOPBACK_MODEL_KEY"',
        "[mcp_servers.theirs]",
        'command = "their-own-server"',
      ].join("\n"),
    );
    const login = Bun.spawnSync([requireCodex(), "login", "--with-api-key"], { env: { ...process.env, CODEX_HOME: home }, stdin: Buffer.from(KEY) });
    expect(login.exitCode).toBe(0);
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    try {
      const result = await runBinary(["do", "add a 100 nF capacitor on +3V3", "--model", "codex", "--repo", repo, "--json"], {
        env: { ...ISOLATED_ENV, PATH: `${dirname(requireCodex())}:${process.env.PATH ?? ""}`, CODEX_HOME: home, LOOPBACK_MODEL_KEY: KEY },
      });
      expect(requests.length).toBeGreaterThan(0);
      expect(requests[0]!.authorization).toBe(`Bearer ${KEY}`);
      for (const r of requests) expect(r.body).not.toContain("their-own-server");
      const summary = JSON.parse(result.stdout);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("provider_error");
      expect(fingerprint(repo)).toEqual(before);
    } finally {
      server.stop(true);
    }
  }, 180_000);
});
