/**
 * Anthropic Messages API provider (`anthropic:<id>`): `POST {base}/v1/messages` with tool use.
 *
 * Wire format (platform.claude.com, Messages API and tool-use guides):
 * - headers `x-api-key`, `anthropic-version: 2023-06-01`, `content-type: application/json`;
 * - body `{ model, max_tokens, system, messages, tools: [{ name, description, input_schema }] }`;
 * - the answer's `content` holds `text` and `tool_use { id, name, input }` blocks (several
 *   `tool_use` blocks in one turn are parallel calls); results go back in the next user message
 *   as `tool_result { tool_use_id, content, is_error }` blocks, which must come first in it;
 * - `stop_reason` is `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn`,
 *   `refusal` or `model_context_window_exceeded`; `usage` has `input_tokens`/`output_tokens`,
 *   and `cache_read_input_tokens`/`cache_creation_input_tokens` for the prompt cache (which
 *   `input_tokens` does not include).
 *
 * Prompt caching. A block marked `cache_control: { type: "ephemeral" }` is a breakpoint: the
 * request up to it (in the order tools, system, messages) is cached, and a later request with
 * the same prefix reads it back at a tenth of the input price (writing costs a quarter more).
 * A conversation resends everything before its last turn, so this provider marks three
 * breakpoints of the four the API allows: the system prompt (with the tools before it, fixed for
 * the run), the last message (so the next request reads all of it), and the message the previous
 * request ended with (the API looks back only 20 blocks from a breakpoint for an earlier cache
 * entry, and a turn of parallel tool calls adds more). `promptCache: false` sends none.
 *
 * Thinking. Current Claude models think by default and cannot all turn it off, so an answer may
 * carry `thinking` / `redacted_thinking` blocks the neutral model has no place for. The API
 * requires an assistant turn to be sent back exactly as it was returned, thinking included
 * (it checks the blocks' signatures), or the request fails. So this provider remembers the raw
 * content of every answer, keyed by the neutral content it produced, and sends the raw content
 * back whenever the loop echoes that turn. The loop keeps a provider-neutral history and still
 * satisfies the rule. Thinking is only valid while nothing before it changed (the API's prefix
 * check); when `system` or `tools` differ from the request that produced a turn (the loop
 * unlocking edit tools), the turn is sent back without its thinking, as the prefix-check guide
 * allows, instead of with blocks the API would reject with a 400.
 */
import * as v from "valibot";
import { CopperheadError } from "../../errors.ts";
import type { ContentBlock, Message, ModelProvider, ModelRequest, ModelResponse, StopReason } from "../conversation.ts";
import {
  errorDetail,
  eventObject,
  joinUrl,
  postStreaming,
  StreamFailure,
  type AnswerReader,
  type HttpOptions,
} from "./http.ts";
import type { SseEvent } from "./sse.ts";

/** The default model when only `ANTHROPIC_API_KEY` is configured: the current Claude Sonnet. */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5";
export const ANTHROPIC_VERSION = "2023-06-01";
export const DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com";

export interface AnthropicConfig {
  model: string;
  apiKey: string;
  /** Defaults to {@link DEFAULT_ANTHROPIC_BASE_URL}. */
  baseUrl?: string;
  http?: HttpOptions;
  /** Marks cache breakpoints (the default); false sends none, for measuring what caching saves. */
  promptCache?: boolean;
}

const EPHEMERAL = { type: "ephemeral" } as const;

type WireBlock = Record<string, unknown>;

const ResponseSchema = v.looseObject({
  content: v.array(v.looseObject({ type: v.string() })),
  stop_reason: v.nullish(v.string()),
  usage: v.optional(
    v.looseObject({
      input_tokens: v.optional(v.number()),
      output_tokens: v.optional(v.number()),
      cache_creation_input_tokens: v.nullish(v.number()),
      cache_read_input_tokens: v.nullish(v.number()),
    }),
  ),
});

const TextSchema = v.looseObject({ type: v.literal("text"), text: v.string() });
const ToolUseSchema = v.looseObject({
  type: v.literal("tool_use"),
  id: v.string(),
  name: v.string(),
  input: v.unknown(),
});

export function createAnthropicProvider(config: AnthropicConfig): ModelProvider {
  const label = `anthropic:${config.model}`;
  const url = joinUrl(config.baseUrl ?? DEFAULT_ANTHROPIC_BASE_URL, "v1/messages");
  const echo = new EchoCache();

  return {
    provider: "anthropic",
    model: config.model,
    label,
    supportsImages: true,
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      const prefix = JSON.stringify([request.system, request.tools]);
      const cache = config.promptCache !== false;
      const tools = request.tools.map(
        (t): WireBlock => ({ name: t.name, description: t.description, input_schema: t.inputSchema }),
      );
      const messages = echo.render(request.messages, prefix);
      if (cache) markBreakpoints(messages, tools, !request.system);
      const body = {
        model: config.model,
        max_tokens: request.maxTokens,
        stream: true,
        ...(request.system
          ? { system: cache ? [{ type: "text", text: request.system, cache_control: EPHEMERAL }] : request.system }
          : {}),
        messages,
        ...(tools.length > 0 ? { tools } : {}),
      };
      const json = await postStreaming(
        {
          label,
          url,
          headers: {
            "x-api-key": config.apiKey,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
          },
          body,
          secrets: [config.apiKey],
          keyEnvVar: "ANTHROPIC_API_KEY",
        },
        () => new MessageStream(),
        config.http,
        signal,
      );
      const response = parseResponse(json, label);
      echo.remember(response.content, response.raw, prefix);
      return { content: response.content, stopReason: response.stopReason, usage: response.usage };
    },
  };
}

/** Wire blocks as their events build them; a `tool_use` keeps the JSON of its input as it comes. */
type BuildingBlock = WireBlock & { partialJson?: string };

/** Errors the API documents as passing (an overloaded or failing server): worth another attempt. */
const RETRYABLE_STREAM_ERRORS = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"]);

/**
 * Assembles a streamed answer into the non-streamed answer's shape (`content`, `stop_reason`,
 * `usage`), which {@link parseResponse} then reads like any other.
 */
class MessageStream implements AnswerReader<unknown> {
  private readonly blocks: BuildingBlock[] = [];
  private usage: Record<string, unknown> = {};
  private stopReason: string | null = null;
  private started = false;
  private stopped = false;

  event({ data }: SseEvent): void {
    const event = eventObject(data);
    switch (event.type) {
      case "message_start": {
        const message = (event.message ?? {}) as { usage?: Record<string, unknown> };
        this.usage = { ...message.usage };
        this.started = true;
        break;
      }
      case "content_block_start":
        this.blocks[index(event)] = { ...(event.content_block as WireBlock) };
        break;
      case "content_block_delta":
        applyDelta(this.block(event), (event.delta ?? {}) as Record<string, unknown>);
        break;
      case "content_block_stop":
        finishBlock(this.block(event));
        break;
      case "message_delta":
        this.stopReason = ((event.delta as { stop_reason?: string | null } | undefined)?.stop_reason ??
          this.stopReason) as string | null;
        // The counts here are cumulative: they replace what message_start said.
        this.usage = { ...this.usage, ...definedFields(event.usage) };
        break;
      case "message_stop":
        this.stopped = true;
        break;
      case "error": {
        const error = (event.error ?? {}) as { type?: string };
        const message = errorDetail(data) ?? "an error event without a message";
        throw new StreamFailure(
          `the stream reported ${error.type ?? "an error"}: ${message}`,
          RETRYABLE_STREAM_ERRORS.has(error.type ?? ""),
        );
      }
      // ping, and event types newer than this code: nothing to assemble.
    }
  }

  finish(): unknown {
    if (!this.started || !this.stopped)
      throw new StreamFailure("the stream ended before message_stop: the answer is incomplete", true);
    return { content: this.blocks.filter((b) => b !== undefined), stop_reason: this.stopReason, usage: this.usage };
  }

  whole(json: unknown): unknown {
    return json;
  }

  private block(event: Record<string, unknown>): BuildingBlock {
    const block = this.blocks[index(event)];
    if (!block)
      throw new StreamFailure(`${String(event.type)} for block ${String(event.index)}, which never started`, false);
    return block;
  }
}

function index(event: Record<string, unknown>): number {
  const i = event.index;
  if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i > 10_000)
    throw new StreamFailure(`${String(event.type)} with a bad block index: ${String(i)}`, false);
  return i;
}

function applyDelta(block: BuildingBlock, delta: Record<string, unknown>): void {
  switch (delta.type) {
    case "text_delta":
      block.text = `${(block.text as string | undefined) ?? ""}${String(delta.text ?? "")}`;
      break;
    case "input_json_delta":
      block.partialJson = `${block.partialJson ?? ""}${String(delta.partial_json ?? "")}`;
      break;
    case "thinking_delta":
      block.thinking = `${(block.thinking as string | undefined) ?? ""}${String(delta.thinking ?? "")}`;
      break;
    case "signature_delta":
      block.signature = delta.signature;
      break;
    case "citations_delta":
      block.citations = [...((block.citations as unknown[] | undefined) ?? []), delta.citation];
      break;
  }
}

/** A tool call's input is the JSON its deltas spelled out (none: the start's `input`). */
function finishBlock(block: BuildingBlock): void {
  if (block.partialJson === undefined) return;
  const json = block.partialJson;
  delete block.partialJson;
  if (json.trim() === "") return;
  try {
    block.input = JSON.parse(json);
  } catch {
    block.input = { __invalid_json: json };
  }
}

function definedFields(value: unknown): Record<string, unknown> {
  if (!value || typeof value !== "object") return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined));
}

function parseResponse(json: unknown, label: string): ModelResponse & { raw: WireBlock[] } {
  const parsed = v.safeParse(ResponseSchema, json);
  if (!parsed.success) {
    throw new CopperheadError("provider_error", `${label}: unexpected response shape (${v.summarize(parsed.issues)})`, {
      fix: "The server at ANTHROPIC_BASE_URL does not speak the Anthropic Messages API; check the base URL.",
    });
  }
  const { content: raw, stop_reason, usage } = parsed.output;
  const content: ContentBlock[] = [];
  for (const block of raw) {
    const text = v.safeParse(TextSchema, block);
    if (text.success) {
      content.push({ type: "text", text: text.output.text });
      continue;
    }
    const toolUse = v.safeParse(ToolUseSchema, block);
    if (toolUse.success) {
      content.push({
        type: "tool_use",
        id: toolUse.output.id,
        name: toolUse.output.name,
        input: toolUse.output.input ?? {},
      });
    }
    // thinking, redacted_thinking and anything newer: kept only in the raw echo.
  }
  const cacheRead = usage?.cache_read_input_tokens ?? undefined;
  const cacheWrite = usage?.cache_creation_input_tokens ?? undefined;
  const inputTokens = (usage?.input_tokens ?? 0) + (cacheWrite ?? 0) + (cacheRead ?? 0);
  return {
    content,
    stopReason: mapStopReason(stop_reason ?? null),
    usage: {
      inputTokens,
      outputTokens: usage?.output_tokens ?? 0,
      ...(cacheRead !== undefined ? { cacheReadTokens: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cacheWriteTokens: cacheWrite } : {}),
    },
    raw: raw as WireBlock[],
  };
}

export function mapStopReason(reason: string | null): StopReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "end_turn";
    case "tool_use":
      return "tool_use";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    default:
      return "other";
  }
}

/**
 * Marks the cache breakpoints (see the header): the last block of the last message and of the
 * user message before it, and the last tool when there is no system prompt to mark. Marked
 * blocks are copies: an echoed assistant turn is never changed, and only user turns are marked.
 */
function markBreakpoints(
  messages: Array<{ role: string; content: WireBlock[] }>,
  tools: WireBlock[],
  markTools: boolean,
): void {
  if (markTools && tools.length > 0) tools[tools.length - 1] = { ...tools.at(-1), cache_control: EPHEMERAL };
  const users = messages.filter((m) => m.role === "user" && m.content.length > 0);
  for (const message of users.slice(-2))
    message.content = [...message.content.slice(0, -1), { ...message.content.at(-1), cache_control: EPHEMERAL }];
}

/** Neutral blocks to wire blocks. Tool results go first in a user turn, as the API requires. */
function toWire(message: Message): WireBlock[] {
  const blocks: WireBlock[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        // The API rejects empty text blocks.
        if (block.text) blocks.push({ type: "text", text: block.text });
        break;
      case "tool_use":
        blocks.push({ type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} });
        break;
      case "tool_result":
        blocks.push({
          type: "tool_result",
          tool_use_id: block.toolUseId,
          // With pictures, the content is a list: the text legend, then an image block each.
          content: block.images?.length
            ? [
                { type: "text", text: block.content },
                ...block.images.map((image) => ({
                  type: "image",
                  source: { type: "base64", media_type: image.mediaType, data: image.data },
                })),
              ]
            : block.content,
          ...(block.isError ? { is_error: true } : {}),
        });
        break;
    }
  }
  return message.role === "user"
    ? [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")]
    : blocks;
}

/**
 * The raw content of each answer, so an assistant turn can be sent back exactly as received.
 * Keyed by the neutral content it produced; identical neutral turns are told apart by their
 * order, which is safe because the conversation only ever grows.
 */
class EchoCache {
  private readonly byContent = new Map<string, Array<{ raw: WireBlock[]; prefix: string }>>();

  remember(content: ContentBlock[], raw: WireBlock[], prefix: string): void {
    const key = JSON.stringify(content);
    const list = this.byContent.get(key) ?? [];
    list.push({ raw, prefix });
    this.byContent.set(key, list);
  }

  render(messages: Message[], prefix: string): Array<{ role: string; content: WireBlock[] }> {
    const seen = new Map<string, number>();
    return messages.map((message) => {
      if (message.role === "assistant") {
        const key = JSON.stringify(message.content);
        const nth = seen.get(key) ?? 0;
        seen.set(key, nth + 1);
        const entry = this.byContent.get(key)?.[nth];
        if (entry && entry.prefix === prefix) return { role: "assistant", content: entry.raw };
      }
      return { role: message.role, content: toWire(message) };
    });
  }
}
