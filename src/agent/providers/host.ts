/**
 * `host`: the MCP client's own model, reached through sampling (`sampling/createMessage` with
 * tools). Someone who runs copperhead inside Claude Code, Codex or Cursor on a subscription has
 * no API key, but their host has a model; with sampling the host runs each model call while
 * copperhead keeps the loop, both gates, the journal and the rollback to itself.
 *
 * Only `copperhead mcp` can offer a host: the transport passes a {@link HostSampler} down, and
 * resolution refuses `host` without one, or with a client that did not advertise sampling with
 * tool use, before anything starts.
 */
import type {
  CreateMessageRequestParams,
  ImageContent,
  CreateMessageResultWithTools,
  SamplingMessage,
  SamplingMessageContentBlock,
  ToolResultContent,
} from "@modelcontextprotocol/sdk/types.js";
import { CopperheadError } from "../../errors.ts";
import type {
  ContentBlock,
  Message,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  StopReason,
  ToolImage,
} from "../conversation.ts";

/** What an MCP transport lends a run so the client's model can answer it. */
export interface HostSampler {
  /** The client advertised `sampling` with `tools` (decided per connection, at initialize). */
  supportsToolSampling(): boolean;
  createMessage(params: CreateMessageRequestParams, signal?: AbortSignal): Promise<CreateMessageResultWithTools>;
}

export const HOST_LABEL = "host (the MCP client's model, through sampling)";

/** What a keyless user can do instead, for every error that says the host cannot sample. */
const ALTERNATIVES =
  "Use a client that supports sampling with tools, or give the server a model of its own: " +
  "COPPERHEAD_MODEL=claude-code or codex (your logged-in CLI), or ANTHROPIC_API_KEY, OPENAI_API_KEY or COPPERHEAD_BASE_URL.";

export function hostUnavailableError(): CopperheadError {
  return new CopperheadError(
    "usage",
    'The model "host" means the MCP client\'s own model; it exists only under `copperhead mcp`.',
    {
      fix: "Register `copperhead mcp` with your AI host and set COPPERHEAD_MODEL=host there, or pick another model with --model.",
    },
  );
}

export function samplingUnsupportedError(): CopperheadError {
  return new CopperheadError(
    "sampling_unsupported",
    "The MCP client did not advertise sampling with tool use, so its model cannot run this change.",
    {
      fix: ALTERNATIVES,
    },
  );
}

export function createHostProvider(sampler: HostSampler): ModelProvider {
  if (!sampler.supportsToolSampling()) throw samplingUnsupportedError();
  return {
    provider: "host",
    model: "host",
    label: HOST_LABEL,
    supportsImages: true,
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      let result: CreateMessageResultWithTools;
      try {
        result = await sampler.createMessage(toSamplingRequest(request), signal);
      } catch (err) {
        if (signal?.aborted)
          throw new CopperheadError("provider_error", "The sampling request was cancelled.", { cancelled: true });
        const reason = err instanceof Error ? err.message : String(err);
        throw new CopperheadError("provider_error", `The MCP client did not answer the sampling request: ${reason}`, {
          fix:
            "The host (or its user) declined or failed the model call; approve sampling requests from copperhead in the host, or " +
            ALTERNATIVES,
        });
      }
      return fromSamplingResult(result);
    },
  };
}

/** The loop's conversation in MCP sampling terms: tool results carry what the loop adds after them. */
export function toSamplingRequest(request: ModelRequest): CreateMessageRequestParams {
  return {
    systemPrompt: request.system,
    messages: request.messages.map(toSamplingMessage),
    maxTokens: request.maxTokens,
    includeContext: "none",
    tools: request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { type: "object", ...tool.inputSchema } as { type: "object" },
    })),
    toolChoice: { mode: "auto" },
  };
}

/**
 * Sampling requires a message that holds tool results to hold nothing else, but the loop puts
 * its notes (approval, repair feedback) after the results of the call they follow. Each note
 * becomes part of the last result's content, which is where the model reads it anyway.
 */
function toSamplingMessage(message: Message): SamplingMessage {
  const results = message.content.filter((b) => b.type === "tool_result");
  if (results.length === 0) return { role: message.role, content: message.content.map(toSamplingBlock) };
  const notes = message.content.filter((b): b is Extract<ContentBlock, { type: "text" }> => b.type === "text");
  const content = results.map((b) => toSamplingBlock(b) as ToolResultContent);
  const last = content[content.length - 1]!;
  last.content = [...last.content, ...notes.map((n) => ({ type: "text" as const, text: n.text }))];
  return { role: message.role, content };
}

function toSamplingBlock(block: ContentBlock): SamplingMessageContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return {
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: (block.input ?? {}) as Record<string, unknown>,
      };
    case "tool_result":
      return {
        type: "tool_result",
        toolUseId: block.toolUseId,
        content: [{ type: "text", text: block.content }, ...mcpImages(block.images)],
        ...(block.isError ? { isError: true } : {}),
      };
  }
}

/** A tool result's pictures as MCP image content (also what the agent-CLI bridge sends). */
export function mcpImages(images: ToolImage[] | undefined): ImageContent[] {
  return (images ?? []).map((image) => ({ type: "image", data: image.data, mimeType: image.mediaType }));
}

export function fromSamplingResult(result: CreateMessageResultWithTools): ModelResponse {
  const blocks = Array.isArray(result.content) ? result.content : [result.content];
  const content: ContentBlock[] = [];
  for (const block of blocks) {
    if (block.type === "text") content.push({ type: "text", text: block.text });
    else if (block.type === "tool_use")
      content.push({ type: "tool_use", id: block.id, name: block.name, input: block.input });
    // Images, audio and tool results are not answers the loop can act on; the model is nudged.
  }
  return { content, stopReason: stopReason(result.stopReason, content), usage: { inputTokens: 0, outputTokens: 0 } };
}

function stopReason(reason: string | undefined, content: ContentBlock[]): StopReason {
  if (reason === "toolUse" || content.some((b) => b.type === "tool_use")) return "tool_use";
  if (reason === "maxTokens") return "max_tokens";
  if (reason === "endTurn" || reason === "stopSequence" || reason === undefined) return "end_turn";
  return "other";
}
