/**
 * Registering copperhead with an AI host as `doctor` prints it: the lines are run with the real
 * Claude Code and Codex CLIs (devDependencies), in a temporary home, and what they write names
 * this binary by its absolute path — a host starts the server without the user's shell, so a
 * bare `copperhead` off PATH would fail to connect.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { BINARY, runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

const BIN_DIR = resolve(import.meta.dir, "../../node_modules/.bin");

async function registrationLines(): Promise<string[]> {
  const doctor = await runBinary(["doctor", "--json"], { cwd: await makeTempDir(), env: ISOLATED_ENV });
  const item = JSON.parse(doctor.stdout).items.find((i: { id: string }) => i.id === "mcp");
  expect(item.status).toBe("ok");
  return item.commands;
}

/** Runs a printed line (plain words, no quoting needed for these paths) with the CLI from node_modules. */
function runLine(words: string[], cwd: string, env: Record<string, string>): { code: number; out: string } {
  const [cli, ...args] = words;
  const r = Bun.spawnSync([join(BIN_DIR, cli!), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdin: "ignore",
  });
  return { code: r.exitCode ?? 1, out: r.stdout.toString() + r.stderr.toString() };
}

test("doctor prints the claude and codex lines with this binary's absolute path", async () => {
  expect(await registrationLines()).toEqual([
    `claude mcp add copperhead --env COPPERHEAD_MODEL=claude-code -- ${BINARY} mcp`,
    `codex mcp add copperhead --env COPPERHEAD_MODEL=codex -- ${BINARY} mcp`,
  ]);
  const text = await runBinary(["doctor"], { cwd: await makeTempDir(), env: ISOLATED_ENV });
  expect(text.stdout).toContain(`claude mcp add copperhead --env COPPERHEAD_MODEL=claude-code -- ${BINARY} mcp`);
});

test("Claude Code takes the line as printed, and with --scope project writes it to the repo's .mcp.json", async () => {
  const [claude] = await registrationLines();
  const home = await makeTempDir();
  const repo = await makeTempDir();
  Bun.spawnSync(["git", "init", "-q"], { cwd: repo });
  const words = claude!.split(" ");
  const scoped = [...words.slice(0, 4), "--scope", "project", ...words.slice(4)];
  const added = runLine(scoped, repo, { HOME: home });
  expect(added.code).toBe(0);
  const config = JSON.parse(readFileSync(join(repo, ".mcp.json"), "utf8"));
  expect(config.mcpServers.copperhead).toMatchObject({
    command: BINARY,
    args: ["mcp"],
    env: { COPPERHEAD_MODEL: "claude-code" },
  });
}, 60_000);

test("Codex takes the line as printed", async () => {
  const [, codex] = await registrationLines();
  const home = await makeTempDir();
  mkdirSync(join(home, ".codex"));
  const added = runLine(codex!.split(" "), home, { HOME: home, CODEX_HOME: join(home, ".codex") });
  expect(added.code).toBe(0);
  const config = readFileSync(join(home, ".codex/config.toml"), "utf8");
  expect(config).toContain(`command = "${BINARY}"`);
  expect(config).toContain(`args = ["mcp"]`);
  expect(config).toContain(`COPPERHEAD_MODEL = "codex"`);
}, 60_000);
