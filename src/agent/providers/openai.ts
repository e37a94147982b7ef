/**
 * Chat Completions providers: `openai:<id>` and `compat:<id>` (any OpenAI-compatible server:
 * Ollama, LM Studio, vLLM, OpenRouter). One implementation, two configurations.
 *
 * Wire format (OpenAI Chat Completions and function-calling guides):
 * - `POST {base}/chat/completions`, `Authorization: Bearer <key>`;
 * - body `{ model, messages, tools: [{ type: "function", function: { name, description,
 *   parameters } }], max_completion_tokens }` with the system prompt as the first message
 *   (`role: "system"`);
 * - the answer is `choices[0].message` with `content` (string or null) and `tool_calls: [{ id,
 *   type: "function", function: { name, arguments } }]`, where `arguments` is a JSON *string*
 *   the model wrote and may have got wrong; several calls in one message are parallel calls;
 * - tool results go back as one `{ role: "tool", tool_call_id, content }` message per call,
 *   directly after the assistant message that made the calls;
 * - `finish_reason` is `stop`, `tool_calls`, `length`, `content_filter` (or the legacy
 *   `function_call`); `usage` has `prompt_tokens`/`completion_tokens`, and OpenAI's
 *   `prompt_tokens_details.cached_tokens`: the part of `prompt_tokens` read from its prompt
 *   cache. OpenAI caches a repeated prefix by itself (no marker to send), so the history is kept
 *   stable from the front (`agent/history.ts`) and the count is recorded.
 *
 * Streaming (`stream: true` with `stream_options: { include_usage: true }`): the answer arrives
 * as `data:` events, each a `chat.completion.chunk` whose `choices[0].delta` carries a piece:
 * `content` and `refusal` text to append, and `tool_calls[]` entries keyed by `index`, the
 * first of each giving `id` and `function.name`, every one a piece of `function.arguments`;
 * `finish_reason` comes on the last choice chunk, the usage on a final chunk with empty
 * `choices`, and `data: [DONE]` ends the stream. The pieces are assembled into exactly the
 * `choices[0].message` a non-streamed answer has, so everything below reads both (and a server
 * that ignores `stream` and sends one JSON body is read as it is).
 *
 * Compatible servers vary, so parsing is lenient where it costs nothing: a missing `usage`
 * counts as zero, `arguments` already parsed into an object is accepted, a call without an id
 * gets one, and tool calls win over a `finish_reason` of `stop`.
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

/** The default model when only `OPENAI_API_KEY` is configured. */
export const DEFAULT_OPENAI_MODEL = "gpt-4.1";
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface ChatCompletionsConfig {
  provider: "openai" | "compat";
  model: string;
  baseUrl: string;
  /** Absent: no `Authorization` header at all (local servers need none). */
  apiKey?: string;
  /** Named in the fix of a 401/403. */
  keyEnvVar: string;
  /**
   * OpenAI deprecated `max_tokens` for `max_completion_tokens` (and newer models reject the old
   * name); many compatible servers only know `max_tokens`.
   */
  maxTokensField: "max_completion_tokens" | "max_tokens";
  /**
   * The model takes image input. Tool messages carry text only, so a tool result's pictures go
   * in a user message after the tool messages, as `image_url` parts with data URLs.
   */
  images: boolean;
  http?: HttpOptions;
}

export function createOpenAIProvider(options: {
  model: string;
  apiKey: string;
  baseUrl?: string;
  http?: HttpOptions;
}): ModelProvider {
  return createChatCompletionsProvider({
    provider: "openai",
    model: options.model,
    baseUrl: options.baseUrl ?? DEFAULT_OPENAI_BASE_URL,
    apiKey: options.apiKey,
    keyEnvVar: "OPENAI_API_KEY",
    maxTokensField: "max_completion_tokens",
    images: true,
    ...(options.http ? { http: options.http } : {}),
  });
}

/** `images`: the server's model takes image input (a vision model); most local models do not. */
export function createCompatProvider(options: {
  model: string;
  baseUrl: string;
  apiKey?: string;
  images?: boolean;
  http?: HttpOptions;
}): ModelProvider {
  return createChatCompletionsProvider({
    provider: "compat",
    model: options.model,
    baseUrl: options.baseUrl,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    keyEnvVar: "COPPERHEAD_API_KEY",
    maxTokensField: "max_tokens",
    images: options.images === true,
    ...(options.http ? { http: options.http } : {}),
  });
}

const ToolCallSchema = v.looseObject({
  id: v.nullish(v.string()),
  function: v.looseObject({
    name: v.string(),
    arguments: v.nullish(v.union([v.string(), v.record(v.string(), v.unknown())])),
  }),
});

const ResponseSchema = v.looseObject({
  choices: v.pipe(
    v.array(
      v.looseObject({
        message: v.looseObject({
          content: v.nullish(v.string()),
          refusal: v.nullish(v.string()),
          tool_calls: v.nullish(v.array(ToolCallSchema)),
        }),
        finish_reason: v.nullish(v.string()),
      }),
    ),
    v.minLength(1),
  ),
  usage: v.nullish(
    v.looseObject({
      prompt_tokens: v.nullish(v.number()),
      completion_tokens: v.nullish(v.number()),
      prompt_tokens_details: v.nullish(v.looseObject({ cached_tokens: v.nullish(v.number()) })),
    }),
  ),
});

export function createChatCompletionsProvider(config: ChatCompletionsConfig): ModelProvider {
  const label = `${config.provider}:${config.model}`;
  const url = joinUrl(config.baseUrl, "chat/completions");
  let generatedIds = 0;

  return {
    provider: config.provider,
    model: config.model,
    label,
    supportsImages: config.images,
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      const body = {
        model: config.model,
        messages: [
          ...(request.system ? [{ role: "system", content: request.system }] : []),
          ...request.messages.flatMap((message) => toWire(message, config.images)),
        ],
        ...(request.tools.length > 0
          ? {
              tools: request.tools.map((t) => ({
                type: "function",
                function: { name: t.name, description: t.description, parameters: t.inputSchema },
              })),
            }
          : {}),
        [config.maxTokensField]: request.maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      };
      const json = await postStreaming(
        {
          label,
          url,
          headers: {
            "content-type": "application/json",
            ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
          },
          body,
          secrets: config.apiKey ? [config.apiKey] : [],
          keyEnvVar: config.keyEnvVar,
        },
        () => new ChunkStream(),
        config.http,
        signal,
      );
      return parseResponse(json, label, () => `call_copperhead_${++generatedIds}`);
    },
  };
}

/** A tool call as its chunks build it. */
interface BuildingCall {
  id?: string;
  name: string;
  arguments: string;
  /** A server that sent the arguments already parsed. */
  parsed?: Record<string, unknown>;
}

/**
 * Assembles streamed chunks into a non-streamed answer's shape (`choices[0].message`,
 * `finish_reason`, `usage`), which {@link parseResponse} then reads like any other.
 */
class ChunkStream implements AnswerReader<unknown> {
  private content = "";
  private refusal = "";
  private readonly calls: BuildingCall[] = [];
  private finishReason: string | null = null;
  private usage: unknown = null;
  private done = false;

  event({ data }: SseEvent): void {
    if (data.trim() === "[DONE]") {
      this.done = true;
      return;
    }
    const chunk = eventObject(data);
    if (chunk.error !== undefined && chunk.error !== null) {
      throw new StreamFailure(`the stream reported an error: ${errorDetail(data) ?? "no message"}`, false);
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Array<Record<string, unknown>>) : [];
    const choice = choices.find((c) => (c.index ?? 0) === 0);
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    if (typeof delta.content === "string") this.content += delta.content;
    if (typeof delta.refusal === "string") this.refusal += delta.refusal;
    if (Array.isArray(delta.tool_calls))
      for (const piece of delta.tool_calls as Array<Record<string, unknown>>) this.addCallPiece(piece);
    if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
  }

  finish(): unknown {
    // [DONE] ends every stream; a finish_reason is enough for servers that leave it out.
    if (!this.done && this.finishReason === null)
      throw new StreamFailure("the stream ended before [DONE]: the answer is incomplete", true);
    const toolCalls = this.calls
      .filter((c) => c !== undefined)
      .map((c) => ({
        id: c.id ?? null,
        type: "function",
        function: { name: c.name, arguments: c.parsed ?? c.arguments },
      }));
    return {
      choices: [
        {
          message: {
            content: this.content || null,
            refusal: this.refusal || null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: this.finishReason,
        },
      ],
      usage: this.usage,
    };
  }

  whole(json: unknown): unknown {
    return json;
  }

  private addCallPiece(piece: Record<string, unknown>): void {
    const at = typeof piece.index === "number" && Number.isInteger(piece.index) ? piece.index : this.calls.length;
    if (at < 0 || at > 10_000) throw new StreamFailure(`a tool call with a bad index: ${String(piece.index)}`, false);
    const call = (this.calls[at] ??= { name: "", arguments: "" });
    const fn = (piece.function ?? {}) as { name?: unknown; arguments?: unknown };
    if (typeof piece.id === "string" && piece.id) call.id = piece.id;
    if (typeof fn.name === "string" && fn.name) call.name = fn.name;
    if (typeof fn.arguments === "string") call.arguments += fn.arguments;
    else if (fn.arguments && typeof fn.arguments === "object") call.parsed = fn.arguments as Record<string, unknown>;
  }
}

function parseResponse(json: unknown, label: string, newId: () => string): ModelResponse {
  const parsed = v.safeParse(ResponseSchema, json);
  if (!parsed.success) {
    throw new CopperheadError("provider_error", `${label}: unexpected response shape (${v.summarize(parsed.issues)})`, {
      fix: "The server at the configured base URL does not speak the Chat Completions API; check the base URL.",
    });
  }
  const choice = parsed.output.choices[0]!;
  const content: ContentBlock[] = [];
  const text = choice.message.content ?? choice.message.refusal;
  if (text) content.push({ type: "text", text });
  for (const call of choice.message.tool_calls ?? []) {
    content.push({
      type: "tool_use",
      id: call.id || newId(),
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  const usage = parsed.output.usage;
  return {
    content,
    stopReason: mapFinishReason(
      choice.finish_reason ?? null,
      content.some((b) => b.type === "tool_use"),
    ),
    usage: {
      inputTokens: usage?.prompt_tokens ?? 0,
      outputTokens: usage?.completion_tokens ?? 0,
      ...(typeof usage?.prompt_tokens_details?.cached_tokens === "number"
        ? { cacheReadTokens: usage.prompt_tokens_details.cached_tokens }
        : {}),
    },
  };
}

/** Arguments the model wrote. Unparseable text is handed on so the loop can answer with a tool error. */
function parseArguments(args: string | Record<string, unknown> | null | undefined): unknown {
  if (args === null || args === undefined || args === "") return {};
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return { __invalid_json: args };
  }
}

export function mapFinishReason(reason: string | null, hasToolCalls: boolean): StopReason {
  if (reason === "length") return "max_tokens";
  if (hasToolCalls || reason === "tool_calls" || reason === "function_call") return "tool_use";
  if (reason === "stop") return "end_turn";
  return "other";
}

/**
 * One neutral message becomes one or more wire messages: a user turn's tool results become
 * `tool` messages (first, since they must follow the assistant's calls), its text a user message,
 * and (for a model that takes images) the results' pictures `image_url` parts of that message.
 */
function toWire(message: Message, images: boolean): Array<Record<string, unknown>> {
  const text = message.content
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n\n");
  if (message.role === "assistant") {
    const calls = message.content.filter((b) => b.type === "tool_use");
    return [
      {
        role: "assistant",
        content: text || null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: "function",
                // Always valid JSON: some compatible servers parse it back. Invalid arguments thus
                // return as `{"__invalid_json": "<what the model wrote>"}`, still visible to it.
                function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
              })),
            }
          : {}),
      },
    ];
  }
  const results = message.content
    .filter((b) => b.type === "tool_result")
    .map((r) => ({
      role: "tool",
      tool_call_id: r.toolUseId,
      // Chat Completions has no error flag on a tool result; say it in the content.
      content: r.isError ? `Error: ${r.content}` : r.content,
    }));
  const pictures = images
    ? message.content.flatMap((b) =>
        b.type === "tool_result" && b.images?.length
          ? [
              { type: "text", text: `The images ${b.toolUseId} returned:` },
              ...b.images.map((image) => ({
                type: "image_url",
                image_url: { url: `data:${image.mediaType};base64,${image.data}` },
              })),
            ]
          : [],
      )
    : [];
  if (pictures.length > 0)
    return [...results, { role: "user", content: [...(text ? [{ type: "text", text }] : []), ...pictures] }];
  return text ? [...results, { role: "user", content: text }] : results;
}
