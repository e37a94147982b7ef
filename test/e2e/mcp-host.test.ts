/**
 * COPPERHEAD_MODEL=host through the compiled binary: `copperhead mcp` over real stdio, and the
 * SDK `Client` as the host, answering sampling requests from a recorded session.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { cleanupTempDirs } from "../support/kicad.ts";
import {
  ADD_CAP_REQUEST,
  buildTemplateRepo,
  copyRepo,
  errorOf,
  fingerprint,
  gitStatus,
  head,
  SESSIONS,
} from "../support/mcp.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { samplingClient, type SamplingClientOptions } from "../support/sampling.ts";
import { BINARY, requireBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  requireBinary();
  template = await buildTemplateRepo();
}, 60_000);

async function callDo(repo: string, options: SamplingClientOptions) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...ISOLATED_ENV, COPPERHEAD_MODEL: "host" }))
    if (value !== undefined) env[key] = value;
  const host = samplingClient(options);
  await host.client.connect(
    new StdioClientTransport({ command: BINARY, args: ["mcp", "--repo", repo], env, stderr: "ignore" }),
  );
  const result = (await host.client.callTool(
    { name: "copperhead_do", arguments: { request: ADD_CAP_REQUEST } },
    CallToolResultSchema,
    { timeout: 300_000 },
  )) as CallToolResult;
  await host.client.close();
  return { result, requests: host.requests };
}

describe("copperhead mcp with COPPERHEAD_MODEL=host", () => {
  test("the client's model commits a change over stdio", async () => {
    const repo = await copyRepo(template);
    const before = await head(repo);
    const { result, requests } = await callDo(repo, { session: join(SESSIONS, "add-decoupling-cap.json") });
    const summary = result.structuredContent as { status: string; usage: { turns: number } };
    expect(summary.status).toBe("committed");
    expect(requests).toHaveLength(summary.usage.turns);
    expect(await head(repo)).not.toBe(before);
    expect(await gitStatus(repo)).toBe("");
  }, 300_000);

  test("a client without sampling gets sampling_unsupported and nothing starts", async () => {
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const { result } = await callDo(repo, {});
    expect(errorOf(result).code).toBe("sampling_unsupported");
    expect(fingerprint(repo)).toEqual(before);
  });
});
