/**
 * An MCP client whose "model" is a recorded session: it answers each `sampling/createMessage`
 * from copperhead with the session's next turn (fixtures/sessions/, `copperhead.session/1`),
 * as a host that supports sampling with tool use would. Every request is kept for assertions.
 */
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  McpError,
  type CreateMessageRequest,
  type CreateMessageResultWithTools,
} from "@modelcontextprotocol/sdk/types.js";

interface SessionTurn {
  content?: (
    | { type: "text"; text: string }
    | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  )[];
}

export interface SamplingClient {
  client: Client;
  /** The sampling requests copperhead sent, in order. */
  requests: CreateMessageRequest["params"][];
}

export interface SamplingClientOptions {
  /** The session to answer with; without one the client advertises no sampling at all. */
  session?: string;
  /** Advertise `sampling` without `tools` (a client that cannot sample with tool use). */
  withoutTools?: boolean;
  /** Decline every request as a host's user would, with this JSON-RPC error message. */
  decline?: string;
}

export function samplingClient(options: SamplingClientOptions): SamplingClient {
  const sampling =
    options.session || options.decline ? (options.withoutTools ? { sampling: {} } : { sampling: { tools: {} } }) : {};
  const client = new Client({ name: "sampling-host", version: "0" }, { capabilities: sampling });
  const requests: CreateMessageRequest["params"][] = [];
  if (!sampling.sampling) return { client, requests };
  const turns = options.session ? (JSON.parse(readFileSync(options.session, "utf8")).turns as SessionTurn[]) : [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request): Promise<CreateMessageResultWithTools> => {
    requests.push(request.params);
    if (options.decline) throw new McpError(-1, options.decline);
    const turn = turns[requests.length - 1];
    if (!turn) throw new McpError(-32603, `the recorded session has no turn ${requests.length}`);
    const content = turn.content ?? [];
    return {
      model: "recorded-host-model",
      role: "assistant",
      content,
      stopReason: content.some((b) => b.type === "tool_use") ? "toolUse" : "endTurn",
    };
  });
  return { client, requests };
}
