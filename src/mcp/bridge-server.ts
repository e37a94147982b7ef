/**
 * `copperhead mcp-bridge`: the MCP server an agent CLI starts for one `do` run (see
 * `agent/providers/agent-cli/bridge.ts`). It holds no tools of its own: it lists and calls the
 * run's tools over the run's private socket, so whatever the CLI does, its calls meet the same
 * phase locks and gates as any model's. Started by anything but a live run, it exits at once.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  BRIDGE_SOCKET_ENV,
  BRIDGE_TOKEN_ENV,
  flushUnsent,
  lineReader,
  writeLine,
} from "../agent/providers/agent-cli/bridge.ts";
import type { ToolImage, ToolSpec } from "../agent/conversation.ts";
import { mcpImages } from "../agent/providers/host.ts";
import { CopperheadError } from "../errors.ts";
import { VERSION } from "../version.ts";

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(err: Error): void;
}

export async function serveToolBridge(env: Record<string, string | undefined> = process.env): Promise<void> {
  const socketPath = env[BRIDGE_SOCKET_ENV];
  const token = env[BRIDGE_TOKEN_ENV];
  if (!socketPath || !token) {
    throw new CopperheadError(
      "usage",
      "copperhead mcp-bridge is started by a copperhead run for its agent CLI, not by hand.",
      {
        fix: "Use `copperhead mcp` to serve copperhead to an AI host.",
      },
    );
  }
  const pending = new Map<number, Pending>();
  let nextId = 1;
  const read = lineReader((line) => {
    const message = JSON.parse(line) as Record<string, unknown> & { id: number };
    pending.get(message.id)?.resolve(message);
    pending.delete(message.id);
  });
  const unsent: Uint8Array[] = [];
  const transport = new StdioServerTransport();
  // The run is over (or died): fail what is in flight and hang up, so the CLI stops too.
  const gone = () => {
    for (const p of pending.values()) p.reject(new Error("the copperhead run has ended"));
    pending.clear();
    void transport.close();
  };
  const socket = await Bun.connect({
    unix: socketPath,
    socket: {
      data: (_socket, chunk) => read(chunk),
      drain: (socket) => flushUnsent(socket, unsent),
      close: gone,
      error: gone,
    },
  }).catch(() => {
    throw new CopperheadError("not_found", "The copperhead run this bridge belongs to is not running.", {
      fix: "Start the change with copperhead do.",
    });
  });
  const ask = (request: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      writeLine(socket, unsent, JSON.stringify({ token, id, ...request }));
    });

  const server = new Server(
    { name: "copperhead", version: VERSION },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const { tools } = (await ask({ method: "list" })) as { tools: ToolSpec[] };
    return {
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: { type: "object" as const, ...t.inputSchema },
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const answer = (await ask({
      method: "call",
      name: request.params.name,
      arguments: request.params.arguments ?? {},
    })) as { content: string; isError: boolean; images?: ToolImage[] };
    return {
      content: [{ type: "text", text: answer.content }, ...mcpImages(answer.images)],
      ...(answer.isError ? { isError: true } : {}),
    };
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.once("end", () => void transport.close());
  await closed;
  socket.end();
}
