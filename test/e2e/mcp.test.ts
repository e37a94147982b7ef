/**
 * `copperhead mcp` as a host runs it: the compiled binary over real stdio, driven by the SDK's
 * `Client` + `StdioClientTransport` or by raw JSON-RPC lines. Covers check answering the summary
 * of `check --json` (within a host's budget on the largest board, and its filters), `do` with a `replay:` session and progress, cancellation and disconnect
 * mid-edit (the loopback scripted model parks the run), the one-line shell smoke test from
 * docs/mcp.md, stdout carrying protocol frames only, and no listening socket.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fixtureText, goldenExchanges } from "../../scripts/gen-mcp-fixtures.ts";
import type { CheckReport } from "../../src/checks/types.ts";
import { summariseCheck } from "../../src/mcp/check-summary.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import {
  ADD_CAP_REQUEST,
  buildTemplateRepo,
  copyRepo,
  fingerprint,
  gitStatus,
  head,
  PROVIDER_VARS,
  replayModel,
  textOf,
  TOOL_NAMES,
} from "../support/mcp.ts";
import { BINARY, requireBinary, runBinary } from "./binary.ts";
import { readLines } from "./mcp-wire.ts";
import { serveScriptedModel, sessionTurns } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  requireBinary();
  template = await buildTemplateRepo();
}, 60_000);

/** The server's environment: ours, no model provider unless given, no user git config. */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !PROVIDER_VARS.includes(k)) env[k] = v;
  return { ...env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", NO_COLOR: "1", ...extra };
}

async function connectBinary(
  repo: string,
  env: Record<string, string> = {},
): Promise<{ client: Client; transport: StdioClientTransport; errors: Error[] }> {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp", "--repo", repo],
    env: serverEnv(env),
    stderr: "ignore",
  });
  const client = new Client({ name: "copperhead-e2e", version: "0" });
  const errors: Error[] = [];
  // A stdout line that is not JSON-RPC surfaces here.
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  await client.listTools();
  return { client, transport, errors };
}

const LONG = { timeout: 600_000 };

function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { onprogress?: (p: { progress: number; message?: string }) => void; signal?: AbortSignal } = {},
) {
  return client.callTool({ name, arguments: args }, CallToolResultSchema, {
    ...LONG,
    ...options,
  }) as Promise<CallToolResult>;
}

function lastTranscriptEvent(repo: string): Record<string, unknown> | undefined {
  const runs = existsSync(join(repo, ".copperhead/runs")) ? readdirSync(join(repo, ".copperhead/runs")) : [];
  if (runs.length !== 1) return undefined;
  const path = join(repo, ".copperhead/runs", runs[0]!, "transcript.jsonl");
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8").trim().split("\n").at(-1)!);
}

const INIT_LINE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "0" } },
});
const INITIALIZED_LINE = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });

describe("copperhead mcp (compiled binary, stdio)", () => {
  test(
    "check: structuredContent and the text block are the summary of what `check --json` prints, for each flag set",
    async () => {
      const repo = await copyRepo(template);
      const { client, transport, errors } = await connectBinary(repo);
      for (const flags of [[], ["--fab"], ["--strict"]]) {
        const args = Object.fromEntries(flags.map((f) => [f.slice(2), true]));
        const result = await callTool(client, "copperhead_check", args);
        const cli = await runBinary(["check", "--json", "--repo", repo, ...flags], { env: serverEnv() });
        expect(cli.exitCode).toBe(0);
        expect(result.isError ?? false).toBe(false);
        const summary = summariseCheck(JSON.parse(cli.stdout) as CheckReport);
        expect(textOf(result)).toBe(JSON.stringify(summary, null, 2));
        expect(result.structuredContent).toEqual(JSON.parse(JSON.stringify(summary)));
      }
      await transport.close();
      expect(errors).toEqual([]);
    },
    LONG.timeout,
  );

  test(
    "do with a replay session: committed, with increasing progress",
    async () => {
      const repo = await copyRepo(template);
      const parent = await head(repo);
      const { client, transport, errors } = await connectBinary(repo, {
        COPPERHEAD_MODEL: replayModel("add-decoupling-cap"),
      });
      const progress: Array<{ progress: number; message?: string }> = [];
      const result = await callTool(
        client,
        "copperhead_do",
        { request: ADD_CAP_REQUEST },
        { onprogress: (p) => void progress.push(p) },
      );
      await transport.close();
      // SDK 1.32 clients dispatch notifications a microtask later than responses, so when the
      // last progress and the response arrive in one read, the client has already dropped the
      // token and reports the (correctly ordered) notification as unknown. The server's order
      // is asserted on the wire in test/mcp/server.test.ts.
      expect(
        errors.filter(
          (e) => !/^Received a progress notification for an unknown token: .*"committed [0-9a-f]{12}"/.test(e.message),
        ),
      ).toEqual([]);
      expect(result.isError ?? false).toBe(false);
      const summary = result.structuredContent as {
        status: string;
        commit: string;
        approval: string;
        verification: { ok: boolean };
      };
      expect(textOf(result)).toBe(JSON.stringify(summary, null, 2));
      expect([summary.status, summary.approval, summary.verification.ok]).toEqual(["committed", "auto", true]);
      expect(summary.commit).toBe(await head(repo));
      expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
      expect(await gitStatus(repo)).toBe("");
      expect(progress.length).toBeGreaterThan(10);
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
      expect(progress.map((p) => p.message)).toContain("tool add_component: ok");
      // The last one, unless the client race above dropped it.
      const committed = `committed ${summary.commit.slice(0, 12)}`;
      expect(progress.at(-1)!.message === committed || errors.some((e) => e.message.includes(committed))).toBe(true);
    },
    LONG.timeout,
  );

  test(
    "a cancelled do rolls back mid-edit, and a later check on the same server sees the tree as before",
    async () => {
      const repo = await copyRepo(template);
      const model = serveScriptedModel(sessionTurns("add-decoupling-cap").slice(0, 5));
      try {
        const before = { tree: fingerprint(repo), head: await head(repo) };
        const { client, transport, errors } = await connectBinary(repo, {
          COPPERHEAD_MODEL: "compat:test",
          COPPERHEAD_BASE_URL: model.baseUrl,
        });
        const controller = new AbortController();
        const run = callTool(client, "copperhead_do", { request: ADD_CAP_REQUEST }, { signal: controller.signal });
        await model.held;
        expect(fingerprint(repo)).not.toEqual(before.tree);
        controller.abort("host timeout");
        await expect(run).rejects.toThrow();
        while (lastTranscriptEvent(repo)?.type !== "end") await Bun.sleep(20);
        expect(lastTranscriptEvent(repo)).toMatchObject({ type: "end", status: "rolled_back", reason: "cancelled" });
        while (existsSync(join(repo, ".copperhead/lock"))) await Bun.sleep(20);

        const check = await callTool(client, "copperhead_check", {});
        expect((check.structuredContent as { ok: boolean }).ok).toBe(true);
        await transport.close();
        expect(errors).toEqual([]);
        expect(fingerprint(repo)).toEqual(before.tree);
        expect(await head(repo)).toBe(before.head);
        expect(await gitStatus(repo)).toBe("");
      } finally {
        await model.stop();
      }
    },
    LONG.timeout,
  );

  test(
    "a host that disconnects mid-edit: the server rolls the run back, then exits",
    async () => {
      const repo = await copyRepo(template);
      const model = serveScriptedModel(sessionTurns("add-decoupling-cap").slice(0, 5));
      try {
        const before = { tree: fingerprint(repo), head: await head(repo) };
        const proc = Bun.spawn([BINARY, "mcp", "--repo", repo], {
          env: serverEnv({ COPPERHEAD_MODEL: "compat:test", COPPERHEAD_BASE_URL: model.baseUrl }),
          stdin: "pipe",
          stdout: "pipe",
          stderr: "ignore",
        });
        const call = {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "copperhead_do", arguments: { request: ADD_CAP_REQUEST } },
        };
        proc.stdin.write(`${INIT_LINE}\n${INITIALIZED_LINE}\n${JSON.stringify(call)}\n`);
        await proc.stdin.flush();
        await model.held;
        expect(fingerprint(repo)).not.toEqual(before.tree);
        await proc.stdin.end();
        expect(await proc.exited).toBe(0);
        expect(lastTranscriptEvent(repo)).toMatchObject({ type: "end", status: "rolled_back", reason: "cancelled" });
        expect(fingerprint(repo)).toEqual(before.tree);
        expect(await head(repo)).toBe(before.head);
        expect(await gitStatus(repo)).toBe("");
        expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
      } finally {
        await model.stop();
      }
    },
    LONG.timeout,
  );

  test("the one-line shell smoke test: printf initialize and tools/list, grep exactly the four names", async () => {
    const repo = await copyRepo(template);
    // The command docs/mcp.md documents, run by a shell as a host's test suite would.
    const smoke =
      `printf '%s\\n' '${INIT_LINE}' '${INITIALIZED_LINE}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' ` +
      `| "${BINARY}" mcp --repo "${repo}" 2>/dev/null | grep -o '"name":"copperhead_[a-z]*"' | sort`;
    const proc = Bun.spawn(["bash", "-c", smoke], { env: serverEnv(), stdout: "pipe", stderr: "pipe" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(out).toBe(TOOL_NAMES.map((n) => `"name":"${n}"\n`).join(""));
  });

  test(
    "stdout carries protocol frames only, tools/list equals the golden fixture, and no socket listens",
    async () => {
      const repo = await copyRepo(template);
      const proc = Bun.spawn([BINARY, "mcp", "--repo", repo], {
        env: serverEnv(),
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = readLines(proc.stdout);
      const lines = out.lines;
      const waitFor = async (id: number) => {
        while (!lines.some((l) => l.includes(`"id":${id}`))) await Bun.sleep(5);
      };
      const send = async (message: unknown) => {
        proc.stdin.write(`${JSON.stringify(message)}\n`);
        await proc.stdin.flush();
      };

      proc.stdin.write(`${INIT_LINE}\n${INITIALIZED_LINE}\n`);
      await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
      await waitFor(2);
      const listening = [listeningSockets(proc.pid)];
      // A tool call runs kicad-cli and git: their output must not reach stdout either.
      await send({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "copperhead_check", arguments: { fab: true } },
      });
      await send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "copperhead_sync", arguments: {} } });
      await send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "copperhead_init", arguments: {} } });
      await send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "nope", arguments: {} } });
      await waitFor(3);
      await waitFor(4);
      await waitFor(5);
      await waitFor(6);
      listening.push(listeningSockets(proc.pid));
      await proc.stdin.end();
      expect(await proc.exited).toBe(0);
      await out.done;

      expect(listening).toEqual([[], []]);
      expect(out.rest()).toBe("");
      expect(lines.length).toBe(6);
      for (const line of lines) {
        const message = JSON.parse(line) as { jsonrpc: string; id: number; result?: unknown; error?: unknown };
        expect(message.jsonrpc).toBe("2.0");
        expect("result" in message || "error" in message).toBe(true);
      }
      const byId = Object.fromEntries(lines.map((l) => [JSON.parse(l).id, JSON.parse(l)]));
      const golden = await goldenExchanges();
      const normalise = (m: { result: { serverInfo: { version: string } } }) => ({
        ...m,
        result: { ...m.result, serverInfo: { ...m.result.serverInfo, version: "<version>" } },
      });
      expect(normalise(byId[1])).toEqual(JSON.parse(fixtureText(golden["initialize-2025-06-18.json"]!)).response);
      expect(byId[2]).toEqual(JSON.parse(fixtureText(golden["tools-list.json"]!)).response);
      expect(byId[3].result.isError ?? false).toBe(false);
      expect(byId[6].result.isError).toBe(true);
    },
    LONG.timeout,
  );
});

/**
 * Sockets of `pid` that listen: its fds' socket inodes looked up in the kernel's tables (TCP and
 * UDP over IPv4/6 in state LISTEN or bound-unconnected, unix sockets with SO_ACCEPTCON).
 */
function listeningSockets(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const found: string[] = [];
  for (const table of ["tcp", "tcp6", "udp", "udp6"]) {
    const rows = readFileSync(`/proc/${pid}/net/${table}`, "utf8").trim().split("\n").slice(1);
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      const state = cols[3];
      const listens = table.startsWith("tcp") ? state === "0A" : state === "07";
      if (listens && inodes.has(cols[9]!)) found.push(`${table} ${cols[1]}`);
    }
  }
  const unix = readFileSync(`/proc/${pid}/net/unix`, "utf8").trim().split("\n").slice(1);
  for (const row of unix) {
    const cols = row.trim().split(/\s+/);
    if ((parseInt(cols[3]!, 16) & 0x10000) !== 0 && inodes.has(cols[6]!)) found.push(`unix ${cols[7] ?? ""}`);
  }
  return found;
}
