/**
 * The official MCP Inspector (`@modelcontextprotocol/inspector`, pinned in package.json) drives
 * `copperhead mcp` in its CLI mode, as a third-party client would: tools/list gives exactly the
 * four tools, copperhead_check answers the summary of what `check --json` prints, and copperhead_do without a
 * model provider is the typed missing_api_key error. Loopback only: stdio, a temp HOME.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { CheckReport } from "../../src/checks/types.ts";
import { summariseCheck } from "../../src/mcp/check-summary.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary, templateRepo } from "./binary.ts";

afterAll(cleanupTempDirs);

const INSPECTOR = resolve(import.meta.dir, "../../node_modules/.bin/mcp-inspector");
const template = templateRepo();

/** Runs the Inspector's CLI mode against `copperhead mcp --repo <repo>`; its stdout is JSON. */
async function inspect(repo: string, ...args: string[]): Promise<{ exitCode: number; result: any; stderr: string }> {
  if (!existsSync(INSPECTOR))
    throw new Error(
      `${INSPECTOR} is missing: run \`bun install --frozen-lockfile\` (the Inspector is a pinned devDependency).`,
    );
  const home = await makeTempDir();
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({
    ...process.env,
    ...ISOLATED_ENV,
    HOME: home,
    MCP_CATALOG_PATH: resolve(home, "catalog.json"),
  })) {
    if (value !== undefined) env[key] = value;
  }
  const proc = Bun.spawn([INSPECTOR, "--cli", requireBinary(), "mcp", "--repo", repo, ...args], {
    env,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  let result: unknown;
  try {
    result = JSON.parse(stdout);
  } catch {
    throw new Error(`the Inspector printed no JSON (exit ${exitCode}):\n${stdout}\n${stderr}`);
  }
  return { exitCode, result, stderr };
}

describe("copperhead mcp under the MCP Inspector", () => {
  test("tools/list: exactly the four outcome tools", async () => {
    const { exitCode, result } = await inspect(template(), "--method", "tools/list");
    expect(exitCode).toBe(0);
    expect(result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      "copperhead_check",
      "copperhead_do",
      "copperhead_init",
      "copperhead_sync",
    ]);
  }, 60_000);

  test("copperhead_check answers the summary of what check --json prints", async () => {
    const repo = template();
    const { exitCode, result } = await inspect(repo, "--method", "tools/call", "--tool-name", "copperhead_check");
    expect(exitCode).toBe(0);
    const cli = await runBinary(["check", "--repo", repo, "--json"], { env: ISOLATED_ENV });
    expect(cli.exitCode).toBe(0);
    expect(result.isError).toBeUndefined();
    // The relay block first, then the JSON block: the summary of what check --json prints.
    expect(result.content[0].text).toStartWith("Check passed: ");
    expect(result.content[1].text).toBe(JSON.stringify(summariseCheck(JSON.parse(cli.stdout) as CheckReport), null, 2));
  }, 120_000);

  test("copperhead_do with no model provider: the typed missing_api_key error", async () => {
    const { exitCode, result } = await inspect(
      template(),
      "--method",
      "tools/call",
      "--tool-name",
      "copperhead_do",
      "--tool-arg",
      "request=add a 100 nF capacitor",
    );
    // The Inspector exits non-zero on a tool result with isError; the result is still printed.
    expect(exitCode).not.toBe(0);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toStartWith("copperhead could not do it (missing_api_key): ");
    expect(JSON.parse(result.content[1].text).error).toMatchObject({
      code: "missing_api_key",
      fix: expect.stringContaining("COPPERHEAD_MODEL=claude-code"),
    });
  }, 60_000);
});
