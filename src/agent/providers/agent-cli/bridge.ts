/**
 * The private tool server an agent CLI (Claude Code, Codex) talks to during one run.
 *
 * The CLI only knows how to reach tools over MCP, and it starts its MCP servers itself. So the
 * run opens a Unix socket in a private temp folder, and the CLI is told to start
 * `copperhead mcp-bridge` (this same binary) as its only MCP server. That bridge answers the
 * CLI's `tools/list` and `tools/call` by relaying them over the socket to the run, where the
 * loop's own tools, phase locks and gates handle them exactly as they handle an API model's
 * calls. The socket is accepted only with the run's random token, and lives as long as the run.
 *
 * Wire format on the socket: one JSON object per line. Bridge → run:
 * `{ token, id, method: "list" }` and `{ token, id, method: "call", name, arguments }`;
 * run → bridge: `{ id, tools }` and `{ id, content, isError }`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "bun";
import type { ToolImage, ToolSpec } from "../../model.ts";

export const BRIDGE_SOCKET_ENV = "COPPERHEAD_BRIDGE_SOCKET";
export const BRIDGE_TOKEN_ENV = "COPPERHEAD_BRIDGE_TOKEN";

/** A tool call the CLI made, waiting for the run's answer. */
export interface BridgeCall {
  name: string;
  arguments: unknown;
  reply(result: { content: string; isError: boolean; images?: ToolImage[] }): void;
}

export interface ToolBridge {
  /** The private folder the socket lives in; also the CLI's working directory. */
  readonly dir: string;
  /** What the bridge process needs in its environment to find and prove the run. */
  readonly env: Record<string, string>;
  /** Called for each `tools/call`; the tools listed are the ones set with {@link setTools}. */
  onCall(handler: (call: BridgeCall) => void): void;
  setTools(tools: ToolSpec[]): void;
  close(): void;
}

interface SocketState {
  read: (chunk: Uint8Array) => void;
  /** Bytes the socket has not taken yet (see {@link writeLine}). */
  unsent: Uint8Array[];
}

/**
 * Writes one line to a socket whole. A socket takes what fits in the kernel's buffer and says
 * how much; the rest (a tool result with pictures runs to hundreds of KB) waits in `unsent`
 * until {@link flushUnsent} runs on `drain`, so lines never interleave or get cut.
 */
export function writeLine(socket: Pick<Socket<unknown>, "write">, unsent: Uint8Array[], line: string): void {
  unsent.push(Buffer.from(`${line}\n`));
  if (unsent.length === 1) flushUnsent(socket, unsent);
}

export function flushUnsent(socket: Pick<Socket<unknown>, "write">, unsent: Uint8Array[]): void {
  while (unsent.length > 0) {
    const head = unsent[0]!;
    const written = Math.max(0, socket.write(head));
    if (written < head.byteLength) {
      unsent[0] = head.subarray(written);
      return;
    }
    unsent.shift();
  }
}

/**
 * Splits a socket's byte stream into lines. A socket hands over chunks wherever the kernel cut
 * them, which may be inside a multi-byte character, so the bytes go through one streaming
 * decoder per socket rather than being decoded chunk by chunk.
 */
export function lineReader(onLine: (line: string) => boolean | void): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let buffer = "";
  let hungUp = false;
  return (chunk) => {
    if (hungUp) return;
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      // A handler that returns false has hung up: the rest of the stream is not read.
      if (onLine(line) === false) {
        hungUp = true;
        buffer = "";
        return;
      }
    }
  };
}

/** Opens the run's end of the bridge: a Unix socket in a fresh 0700 temp folder. */
export function openToolBridge(): ToolBridge {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-cli-"));
  const socketPath = join(dir, "tools.sock");
  const token = crypto.randomUUID();
  let tools: ToolSpec[] = [];
  let handler: ((call: BridgeCall) => void) | undefined;

  const send = (socket: Socket<SocketState>, message: object) => writeLine(socket, socket.data.unsent, JSON.stringify(message));
  /** Answers one request line; false when the line was not the run's and the socket is closed. */
  const answer = (socket: Socket<SocketState>, line: string): boolean => {
    let request: { token?: unknown; id?: unknown; method?: unknown; name?: unknown; arguments?: unknown };
    try {
      request = JSON.parse(line);
    } catch {
      socket.end();
      return false;
    }
    // Anything else on this machine that finds the socket gets nothing from it.
    if (request.token !== token || typeof request.id !== "number") {
      socket.end();
      return false;
    }
    const id = request.id;
    if (request.method === "list") send(socket, { id, tools });
    else if (request.method === "call" && typeof request.name === "string" && handler) {
      let answered = false;
      handler({
        name: request.name,
        arguments: request.arguments,
        reply: (result) => {
          if (answered) return;
          answered = true;
          send(socket, { id, ...result });
        },
      });
    } else send(socket, { id, content: "copperhead is not taking tool calls now", isError: true });
    return true;
  };
  const listener = Bun.listen<SocketState>({
    unix: socketPath,
    socket: {
      open(socket) {
        socket.data = { read: lineReader((line) => answer(socket, line)), unsent: [] };
      },
      drain(socket) {
        flushUnsent(socket, socket.data.unsent);
      },
      data(socket, chunk) {
        socket.data.read(chunk);
      },
    },
  });

  return {
    dir,
    env: { [BRIDGE_SOCKET_ENV]: socketPath, [BRIDGE_TOKEN_ENV]: token },
    onCall(h) {
      handler = h;
    },
    setTools(next) {
      tools = next;
    },
    close() {
      listener.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
