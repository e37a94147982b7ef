/**
 * The provider-neutral conversation the agent loop has with a model. Each provider translates
 * this to and from its wire format (Anthropic Messages, OpenAI Chat Completions, a replayed
 * session), so the loop never sees vendor shapes.
 */
import * as v from "valibot";

export interface TextBlock {
  type: "text";
  text: string;
}

export interface ToolUseBlock {
  type: "tool_use";
  /** Provider-assigned id, echoed back in the matching tool result. */
  id: string;
  name: string;
  /** Parsed arguments; a provider that received unparseable JSON passes `{ __invalid_json: raw }`. */
  input: unknown;
}

/** A picture a read tool returns (the `view` tool's render), for providers that take images. */
export interface ToolImage {
  mediaType: "image/png";
  /** The image bytes, base64. */
  data: string;
}

export interface ToolResultBlock {
  type: "tool_result";
  toolUseId: string;
  /** JSON or text the model reads; always complete without the images (a text legend). */
  content: string;
  /** Sent only by providers that accept image input; the others send `content` alone. */
  images?: ToolImage[];
  isError?: boolean;
}

export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

export interface Message {
  role: "user" | "assistant";
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (made from the tool's valibot schema). */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "other";

export interface Usage {
  /** Every input token of the call, those read from or written to the prompt cache included. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache (billed at a fraction). */
  cacheReadTokens?: number;
  /** Of `inputTokens`, those written to the prompt cache (Anthropic bills them at a premium). */
  cacheWriteTokens?: number;
}

/** A run's usage so far: every call's {@link Usage} added up, and how many calls. */
export const UsageTotalsSchema = v.object({
  turns: v.number(),
  inputTokens: v.number(),
  outputTokens: v.number(),
  cacheReadTokens: v.number(),
  cacheWriteTokens: v.number(),
});
export type UsageTotals = v.InferOutput<typeof UsageTotalsSchema>;

export function emptyUsage(): UsageTotals {
  return { turns: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Adds one call's usage (or a CLI's late report) to the totals; turns are counted by the caller. */
export function addUsage(total: UsageTotals, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens ?? 0;
  total.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
}

export interface ModelResponse {
  content: ContentBlock[];
  stopReason: StopReason;
  usage: Usage;
}

export interface ModelProvider {
  /** `anthropic`, `openai`, `compat`, `replay`, `host`, `claude-code` or `codex`. */
  readonly provider: string;
  /** The model id after the colon, or the replay file. */
  readonly model: string;
  /** What the user sees, e.g. `anthropic:claude-sonnet-4-5` or `replay:demo.json (recorded session)`. */
  readonly label: string;
  /** It sends a tool result's `images` to the model; the others send the text legend alone. */
  readonly supportsImages?: boolean;
  /** One model call. Throws `provider_error` (typed) after retries are exhausted. */
  complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
  /**
   * Checks what resolution could not without starting a process (an agent CLI's saved login),
   * before the run starts anything; throws a typed error with the fix.
   */
  preflight?(): Promise<void>;
  /**
   * Releases what the provider holds for the run (an agent CLI and its tool bridge), letting it
   * end on its own first; returns usage it reported only as it ended (a CLI's last turn).
   * Safe to call more than once.
   */
  close?(): Promise<Usage | void>;
}
