/**
 * COPPERHEAD_MODEL=host in process: copperhead_do and copperhead_sync with resolve run their
 * loop on the MCP client's own model through sampling with tools. The client is the official
 * SDK `Client`, answering `sampling/createMessage` from a recorded session; kicad-cli and git
 * are real, and so are every gate, the journal and the rollback.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../src/mcp/server.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import {
  ADD_CAP_REQUEST,
  buildTemplateRepo,
  copyRepo,
  errorOf,
  fingerprint,
  gitStatus,
  head,
  PROVIDER_VARS,
  SESSIONS,
  setEnv,
} from "../support/mcp.ts";
import { samplingClient, type SamplingClientOptions } from "../support/sampling.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  template = await buildTemplateRepo();
}, 60_000);

let restoreEnv: () => void = () => {};
beforeEach(() => {
  restoreEnv = setEnv({ ...Object.fromEntries(PROVIDER_VARS.map((k) => [k, undefined])), COPPERHEAD_MODEL: "host" });
});
afterEach(() => restoreEnv());

const LONG = { timeout: 300_000 };

async function callDo(repo: string, options: SamplingClientOptions) {
  const handle = createMcpServer(repo);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await handle.server.connect(serverTransport);
  const host = samplingClient(options);
  await host.client.connect(clientTransport);
  const result = (await host.client.callTool(
    { name: "copperhead_do", arguments: { request: ADD_CAP_REQUEST } },
    CallToolResultSchema,
    { timeout: 300_000 },
  )) as CallToolResult;
  await host.client.close();
  return { result, requests: host.requests, summary: result.structuredContent as Record<string, any> };
}

describe("copperhead_do with the host's model (sampling)", () => {
  test(
    "a run commits; every model call was a sampling request with the run's tools",
    async () => {
      const repo = await copyRepo(template);
      const before = await head(repo);
      const { result, requests, summary } = await callDo(repo, { session: join(SESSIONS, "add-decoupling-cap.json") });
      expect(result.isError).toBeUndefined();
      expect(summary.status).toBe("committed");
      expect(await head(repo)).not.toBe(before);
      expect(await gitStatus(repo)).toBe("");
      expect(requests.length).toBe(summary.usage.turns);
      const first = requests[0]!;
      expect(first.systemPrompt).toStartWith("You are copperhead's design agent.");
      expect(first.maxTokens).toBeGreaterThan(0);
      expect(first.tools!.map((t) => t.name)).toEqual(
        expect.arrayContaining(["propose_change", "add_component", "finish"]),
      );
      expect(first.toolChoice).toEqual({ mode: "auto" });
      // Tool results travel alone in their message; the loop's notes ride inside the last one.
      for (const request of requests) {
        for (const message of request.messages) {
          const blocks = Array.isArray(message.content) ? message.content : [message.content];
          if (blocks.some((b) => b.type === "tool_result"))
            expect(blocks.every((b) => b.type === "tool_result")).toBe(true);
        }
      }
      const approval = requests
        .flatMap((r) => r.messages)
        .flatMap((m) => (Array.isArray(m.content) ? m.content : [m.content]));
      expect(JSON.stringify(approval)).toContain("accepted and approved (auto)");
    },
    LONG,
  );

  test(
    "a run whose change breaks a requirement rolls back byte for byte",
    async () => {
      const repo = await copyRepo(template);
      const before = fingerprint(repo);
      const { summary } = await callDo(repo, { session: join(SESSIONS, "remove-cc-pulldown.json") });
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("abandoned");
      expect(fingerprint(repo)).toEqual(before);
    },
    LONG,
  );

  test(
    "a host whose user declines the request: rolled_back / provider_error with the reason",
    async () => {
      const repo = await copyRepo(template);
      const before = fingerprint(repo);
      const { summary, requests } = await callDo(repo, { decline: "User rejected sampling request" });
      expect(requests).toHaveLength(1);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("provider_error");
      expect(summary.detail).toContain("User rejected sampling request");
      expect(fingerprint(repo)).toEqual(before);
    },
    LONG,
  );

  for (const [what, options] of [
    ["no sampling at all", {}],
    ["sampling without tool use", { session: join(SESSIONS, "add-decoupling-cap.json"), withoutTools: true }],
  ] as const) {
    test(`a client with ${what}: sampling_unsupported naming the alternatives, and nothing starts`, async () => {
      const repo = await copyRepo(template);
      const before = fingerprint(repo);
      const { result, requests } = await callDo(repo, options);
      const error = errorOf(result);
      expect(error.code).toBe("sampling_unsupported");
      for (const alternative of ["claude-code", "codex", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPPERHEAD_BASE_URL"])
        expect(error.fix).toContain(alternative);
      expect(requests).toEqual([]);
      expect(fingerprint(repo)).toEqual(before);
    });
  }
});

describe("copperhead_sync with resolve and the host's model", () => {
  test(
    "code fixes what it can, the host's model fixes the prose, and the result commits",
    async () => {
      const repo = await copyRepo(template);
      writeFileSync(join(repo, "docs/NOTES.md"), "# Notes\n\nThe status LED current is set by `R9`.\n");
      await git(repo, "add", "-A");
      await git(repo, "commit", "--quiet", "-m", "a note naming a resistor that is not there");
      const handle = createMcpServer(repo);
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await handle.server.connect(serverTransport);
      const host = samplingClient({ session: join(SESSIONS, "sync-fix-stale-note.json") });
      await host.client.connect(clientTransport);
      const result = (await host.client.callTool(
        { name: "copperhead_sync", arguments: { resolve: true } },
        CallToolResultSchema,
        { timeout: 300_000 },
      )) as CallToolResult;
      await host.client.close();
      const report = result.structuredContent as { ok: boolean; resolution: { status: string } };
      expect(report.resolution.status).toBe("committed");
      expect(report.ok).toBe(true);
      expect(host.requests.length).toBeGreaterThan(0);
      expect(await gitStatus(repo)).toBe("");
    },
    LONG,
  );
});

describe("copperhead_sync with resolve and no model", () => {
  test("with nothing to resolve, answers the report and starts nothing", async () => {
    restoreEnv();
    restoreEnv = setEnv(Object.fromEntries(PROVIDER_VARS.map((k) => [k, undefined])));
    const repo = await copyRepo(template);
    const before = fingerprint(repo);
    const handle = createMcpServer(repo);
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await handle.server.connect(serverTransport);
    const { client } = samplingClient({});
    await client.connect(clientTransport);
    const verify = (await client.callTool({ name: "copperhead_sync", arguments: {} })) as CallToolResult;
    expect((verify.structuredContent as { ok: boolean }).ok).toBe(true);
    const result = (await client.callTool({ name: "copperhead_sync", arguments: { resolve: true } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ ok: true });
    expect((result.structuredContent as { resolution?: unknown }).resolution).toBeUndefined();
    expect(fingerprint(repo)).toEqual(before);
    await client.close();
  });
});
