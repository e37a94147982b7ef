/**
 * `copperhead mcp`: a stdio MCP server with the four outcome tools.
 *
 * It is a transport, not a pipeline: every call goes to the command layer the CLI uses and
 * returns its object — `structuredContent` is the result, and of the two text blocks the
 * first says what happened in plain words for the host to relay (relay.ts) and the second is
 * the same object as JSON, which the MCP specification asks for the hosts that read only text
 * (what `--json` prints, except that `copperhead_check` answers a summary of its report, sized
 * for a host: check-summary.ts). A rollback or refusal is a normal result; `isError` is reserved for
 * misuse and typed errors (bad input, missing key, busy, could not run), which come back as
 * `{ error: { code, message, fix? } }`. The server opens no network listener.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { describeProgress } from "../agent/progress.ts";
import type { HostSampler } from "../agent/providers/host.ts";
import { asCopperheadError, CopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import { redactDeep, redactedJson } from "../redact.ts";
import { VERSION } from "../version.ts";
import { CheckedStdioTransport } from "./stdio.ts";
import { relayError } from "./relay.ts";
import { checkArguments, toolJsonSchema } from "../util/tool-schema.ts";
import { MCP_TOOLS } from "./tools.ts";

/** tools/list: the four tools with their schemas, computed once. */
const TOOL_LIST = {
  tools: MCP_TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolJsonSchema(tool.input, "input"),
    outputSchema: toolJsonSchema(tool.output, "output"),
    annotations: { title: tool.title, ...tool.annotations },
  })),
};

/** A host may ask its user before each sampling request, so one can take minutes. */
const SAMPLING_TIMEOUT_MS = 10 * 60_000;

export interface McpServerHandle {
  server: Server;
  /** Resolves when every tool call in flight has finished (committed or rolled back). */
  idle(): Promise<void>;
}

/**
 * The SDK server, with every frame it sends redacted (see redact.ts): results, typed errors,
 * progress messages, sampling requests, and the SDK's own error texts, which can quote a
 * request back. The transport is the one door out, so nothing can go around it.
 */
class RedactingServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(redactDeep(message), options);
    return super.connect(transport);
  }
}

export function createMcpServer(repo: string): McpServerHandle {
  const server = new RedactingServer(
    { name: "copperhead", version: VERSION },
    { capabilities: { tools: { listChanged: false } } },
  );
  const inFlight = new Set<Promise<unknown>>();

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    // All four tools come in one page, so no cursor names a page that exists.
    if (request.params?.cursor !== undefined) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `cursor: there is no page ${JSON.stringify(request.params.cursor)}; copperhead lists all its tools in one page`,
      );
    }
    return TOOL_LIST;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = MCP_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      return errorResult(
        new CopperheadError("usage", `Unknown tool ${JSON.stringify(request.params.name)}.`, {
          fix: `Call one of ${MCP_TOOLS.map((t) => t.name).join(", ")}.`,
        }),
      );
    }
    const parsed = checkArguments(tool.input, request.params.arguments);
    if (!parsed.ok) {
      return errorResult(
        new CopperheadError("usage", `Invalid arguments for ${tool.name}: ${parsed.problems.join("; ")}.`, {
          fix: "Send arguments that match the tool's input schema.",
        }),
      );
    }
    const token = request.params._meta?.progressToken;
    let step = 0;
    // Notifications go out one after another, and the result only after the last of them: the
    // protocol ends a request's progress with its response, so a late one would be dropped.
    let notified: Promise<void> = Promise.resolve();
    const onProgress =
      token === undefined
        ? undefined
        : (event: Parameters<typeof describeProgress>[0]) => {
            const params = { progressToken: token, progress: ++step, message: describeProgress(event) };
            notified = notified
              .then(() => extra.sendNotification({ method: "notifications/progress", params }))
              .catch((err) => log.debug(`progress notification not sent: ${err}`));
          };
    // The client's own model, for COPPERHEAD_MODEL=host: each model call of the run becomes a
    // sampling request tied to this tool call. Whether the client can sample with tools was
    // settled when it connected.
    const host: HostSampler = {
      supportsToolSampling: () => server.getClientCapabilities()?.sampling?.tools !== undefined,
      createMessage: (params, signal) =>
        server.createMessage(params, { signal, timeout: SAMPLING_TIMEOUT_MS, relatedRequestId: extra.requestId }),
    };
    // Through an async function, so a handler that throws before its first await is a typed
    // error result like any other, not a protocol error.
    const call = (async () => tool.run(parsed.value, { repo, signal: extra.signal, onProgress, host }))();
    inFlight.add(call);
    try {
      const result = await call;
      await notified;
      const response: CallToolResult = {
        content: [
          { type: "text", text: tool.relay(result) },
          { type: "text", text: redactedJson(result, { space: 2 }) },
        ],
        structuredContent: result,
      };
      // The SDK sends nothing for a request the client cancelled. A copperhead_do whose
      // cancellation came too late (git commit had started) committed anyway, and a client that
      // hears nothing would take the repo for unchanged: its summary is sent all the same.
      if (extra.signal.aborted && (result as { status?: unknown }).status === "committed") {
        await server.transport?.send({ jsonrpc: "2.0", id: extra.requestId, result: response });
      }
      return response;
    } catch (err) {
      await notified;
      return errorResult(asCopperheadError(err));
    } finally {
      inFlight.delete(call);
    }
  });

  return {
    server,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

function errorResult(err: CopperheadError): CallToolResult {
  return {
    content: [
      { type: "text", text: relayError(err) },
      { type: "text", text: redactedJson(err.toJSON(), { space: 2 }) },
    ],
    isError: true,
  };
}

/**
 * Serves MCP over stdin/stdout until the client goes away, then lets any run in flight finish
 * (commit or roll back) before returning, so a disconnect never leaves a half-edited tree.
 */
export async function serveStdio(repo: string): Promise<void> {
  const { server, idle } = createMcpServer(repo);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const transport = new CheckedStdioTransport();
  await server.connect(transport);
  // The SDK's stdio transport never notices the client going away: end of stdin (or a
  // stdout the client closed) is the disconnect.
  const disconnect = () => void transport.close();
  process.stdin.once("end", disconnect);
  process.stdin.once("close", disconnect);
  process.stdout.once("error", disconnect);
  log.debug(`copperhead mcp serving ${repo}`);
  await closed;
  await idle();
}
