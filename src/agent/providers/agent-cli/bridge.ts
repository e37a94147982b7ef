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
 * `{ token, id, method: "list" }` and `{ token, id, method: "call", name, arguments }`, the
 * token always first, so a connection that does not start with it is hung up within its first
 * bytes and every line is capped (`MAX_REQUEST_BYTES`): nothing that finds the socket can make
 * the run hold more. Run → bridge: `{ id, tools }` and `{ id, content, isError }`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "bun";
import type { ToolImage, ToolSpec } from "../../conversation.ts";

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
 * A request line's cap: a tool call's arguments past 1 MiB are refused by the agent loop
 * anyway, and the rest of a request (token, id, name) is short.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024 + 64 * 1024;

export interface LineLimits {
  /** The longest line taken, in bytes; a longer one hangs up as soon as it passes the cap. */
  maxLineBytes?: number;
  /** What every line must start with; one that starts otherwise hangs up at its first wrong byte. */
  prefix?: string;
  /** Closes the connection when a line breaks a limit. */
  hangUp?: () => void;
}

/**
 * Splits a socket's byte stream into lines, in time and memory linear in what arrives: each
 * chunk is searched for a newline once, and a line's bytes are kept only up to its cap. A
 * socket hands over chunks wherever the kernel cut them, possibly inside a multi-byte
 * character, so a line is decoded only once whole (a newline byte is never part of one).
 */
export function lineReader(
  onLine: (line: string) => boolean | void,
  limits: LineLimits = {},
): (chunk: Uint8Array) => void {
  const maxLineBytes = limits.maxLineBytes ?? Number.POSITIVE_INFINITY;
  const prefix = limits.prefix === undefined ? undefined : Buffer.from(limits.prefix);
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let held = 0;
  let hungUp = false;
  const stop = () => {
    hungUp = true;
    parts = [];
  };
  /** Whether `piece`, starting at byte `at` of its line, agrees with the prefix. */
  const startsRight = (piece: Uint8Array, at: number) => {
    if (!prefix) return true;
    for (let i = 0; at + i < prefix.length && i < piece.length; i++) if (piece[i] !== prefix[at + i]) return false;
    return true;
  };
  return (chunk) => {
    let from = 0;
    while (!hungUp && from <= chunk.length) {
      const newline = chunk.indexOf(0x0a, from);
      const piece = chunk.subarray(from, newline < 0 ? chunk.length : newline);
      if (held + piece.length > maxLineBytes || !startsRight(piece, held)) {
        stop();
        limits.hangUp?.();
        return;
      }
      if (newline < 0) {
        // The socket may reuse its buffer once this returns: keep a copy.
        if (piece.length > 0) parts.push(piece.slice());
        held += piece.length;
        return;
      }
      const line = decoder.decode(parts.length === 0 ? piece : Buffer.concat([...parts, piece]));
      parts = [];
      held = 0;
      from = newline + 1;
      // A handler that returns false has hung up: the rest of the stream is not read.
      if (onLine(line) === false) stop();
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

  const send = (socket: Socket<SocketState>, message: object) =>
    writeLine(socket, socket.data.unsent, JSON.stringify(message));
  /** Answers one request line; false when the line was not the run's and the socket is closed. */
  const answer = (socket: Socket<SocketState>, line: string): boolean => {
    let request: { token?: unknown; id?: unknown; method?: unknown; name?: unknown; arguments?: unknown };
    try {
      request = JSON.parse(line);
    } catch {
      socket.terminate();
      return false;
    }
    // Anything else on this machine that finds the socket gets nothing from it.
    if (request.token !== token || typeof request.id !== "number") {
      socket.terminate();
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
        const limits = {
          maxLineBytes: MAX_REQUEST_BYTES,
          prefix: `{"token":${JSON.stringify(token)},`,
          hangUp: () => socket.terminate(),
        };
        socket.data = { read: lineReader((line) => answer(socket, line), limits), unsent: [] };
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
