/**
 * `copperhead mcp` over raw JSON-RPC lines, for tests that must send what no well-behaved
 * client sends (malformed params, hostile values) and see every frame the server writes.
 * Each wait has a deadline, so a request the server never answers fails the test instead of
 * hanging it.
 */
import type { Subprocess } from "bun";
import { requireBinary } from "./binary.ts";

export interface Frame {
  jsonrpc: string;
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface McpWire {
  /** Every line the server wrote to stdout so far. */
  readonly lines: string[];
  /** The same lines, parsed. */
  frames(): Frame[];
  send(message: unknown): Promise<void>;
  /** The response to request `id`, or a rejection after `timeoutMs`. */
  response(id: number | string, timeoutMs?: number): Promise<Frame>;
  /** Closes stdin (the disconnect) and returns the exit code and stderr. */
  close(): Promise<{ exitCode: number; stderr: string }>;
}

const PROTOCOL = "2025-06-18";

/** Collects a stream's lines as they arrive; `rest()` is what follows the last newline. */
export function readLines(stream: ReadableStream<Uint8Array>): {
  lines: string[];
  rest(): string;
  done: Promise<void>;
} {
  const lines: string[] = [];
  let buffer = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        lines.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    }
  })();
  return { lines, rest: () => buffer, done };
}

/** Starts the server on `repo` and completes the initialize handshake. */
export async function openMcpWire(repo: string, env: Record<string, string>): Promise<McpWire> {
  const proc: Subprocess<"pipe", "pipe", "pipe"> = Bun.spawn([requireBinary(), "mcp", "--repo", repo], {
    env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const { lines, done: reading } = readLines(proc.stdout);
  const stderr = new Response(proc.stderr).text();
  const frames = () => lines.map((line) => JSON.parse(line) as Frame);
  const wire: McpWire = {
    lines,
    frames,
    async send(message) {
      proc.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
      await proc.stdin.flush();
    },
    async response(id, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = frames().find((f) => f.id === id && (f.result !== undefined || f.error !== undefined));
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no response to request ${JSON.stringify(id)} within ${timeoutMs} ms; frames so far:\n${lines.join("\n")}`,
          );
        await Bun.sleep(10);
      }
    },
    async close() {
      await proc.stdin.end();
      const exitCode = await proc.exited;
      await reading;
      return { exitCode, stderr: await stderr };
    },
  };
  await wire.send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "wire", version: "0" } },
  });
  await wire.response("init");
  await wire.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return wire;
}
