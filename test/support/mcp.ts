/**
 * Shared pieces of the MCP server tests (in process and against the binary): the usb-led repo
 * with `init` committed, the environment a test runs the server in, and reading tool results.
 */
import { expect } from "bun:test";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { git } from "../repo/git-repo.ts";
import { FIXTURES_DIR } from "./kicad.ts";

export const SESSIONS = join(FIXTURES_DIR, "sessions");
export const ADD_CAP_REQUEST = "Add a 100 nF decoupling capacitor on the LDO output";
export const TOOL_NAMES = ["copperhead_check", "copperhead_do", "copperhead_init", "copperhead_sync"];
/** copperhead's own bookkeeping, which any call may add to (gitignored; not part of the tree). */
/** Every variable that could configure a model provider: cleared unless a test sets one. */
export const PROVIDER_VARS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "COPPERHEAD_BASE_URL",
  "COPPERHEAD_API_KEY",
  "COPPERHEAD_MODEL",
];

export const replayModel = (session: string) => `replay:${join(SESSIONS, `${session}.json`)}`;
export const head = async (repo: string) => (await git(repo, "rev-parse", "HEAD")).trim();
export const gitStatus = (repo: string) => git(repo, "status", "--porcelain", "--untracked-files=all");

export { copyRepo, fingerprint, initialisedRepo as buildTemplateRepo, LOCAL_STATE } from "./repos.ts";

/**
 * Sets `vars` in `process.env` (undefined deletes) and returns a function restoring what was
 * there; `copperhead_do` resolves its model from the environment, as the real server does.
 */
export function setEnv(vars: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** The JSON block of a tool result (its second text block), after checking the relay block before it. */
export function textOf(result: CallToolResult): string {
  relayOf(result);
  const block = result.content[1]!;
  if (block.type !== "text") throw new Error(`expected a text block, got ${block.type}`);
  return block.text;
}

/**
 * The relay block, every tool result's first: plain sentences for the host's human — no JSON,
 * no markup, one paragraph.
 */
export function relayOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(2);
  const block = result.content[0]!;
  if (block.type !== "text") throw new Error(`expected a text block, got ${block.type}`);
  expect(block.text.length).toBeGreaterThan(10);
  expect(block.text).not.toStartWith("{");
  expect(block.text).not.toContain("\n");
  expect(block.text).toMatch(/[.?!)]$/);
  return block.text;
}

/** The typed error of an `isError` result: `{ code, message, … }`. */
export function errorOf(result: CallToolResult): { code: string; message: string; [k: string]: unknown } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const parsed = JSON.parse(textOf(result)) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(["error"]);
  expect(typeof parsed.error.code).toBe("string");
  expect(typeof parsed.error.message).toBe("string");
  return parsed.error;
}
