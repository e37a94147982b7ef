/**
 * A loopback model API that plays a recorded session's turns and measures every request it is
 * sent: its size by the estimate copperhead budgets with (text characters / 3.5, plus 1,600
 * tokens per picture), the pictures it carries, its cache breakpoints, and how much of it a
 * prompt cache would have served. It speaks the Anthropic Messages API (`/v1/messages`) or
 * Chat Completions (`/v1/chat/completions`), streamed, and reports the usage it measured back
 * in the answer, so the run's own usage records shows the same numbers.
 *
 * The caches are modelled on the providers' documented behaviour:
 * - Anthropic caches the request up to each `cache_control` breakpoint; a later request whose
 *   beginning is exactly a cached prefix reads it (`cache_read_input_tokens`), and what lies
 *   between that and its last breakpoint is written (`cache_creation_input_tokens`).
 * - OpenAI caches every request's prefix by itself; a later request reads the longest prefix,
 *   whole messages, that an earlier one sent, from 1,024 tokens on.
 */
import { CHARS_PER_TOKEN, FULL_CONTEXT_VARIABLE, TOKENS_PER_PICTURE } from "../../src/agent/history.ts";
import { createAnthropicProvider } from "../../src/agent/providers/anthropic.ts";
import { createOpenAIProvider } from "../../src/agent/providers/openai.ts";
import { runDo, type DoSummary } from "../../src/commands/do.ts";
import { anthropicFrames, chatCompletionFrames, sseResponse } from "./model-streams.ts";
import type { SessionTurn } from "../e2e/scripted-model.ts";

export type WireApi = "anthropic" | "openai";

export interface MeteredRequest {
  /** The whole request by the estimate. */
  tokens: number;
  pictures: number;
  /** `cache_control` breakpoints it carried. */
  breakpoints: number;
  /** Tokens a prompt cache served, and (Anthropic) wrote. */
  cacheRead: number;
  cacheWrite: number;
  /**
   * What breaks the APIs' pairing rule: a tool result whose call is not in the assistant
   * message right before it, or a call whose result is not right after it (both APIs reject it).
   */
  unpaired: string[];
}

export interface ModelMeter {
  /** The base URL for the provider (`…/v1` for OpenAI). */
  baseUrl: string;
  readonly requests: MeteredRequest[];
  stop(): Promise<void>;
}

/** OpenAI caches prefixes of at least this many tokens. */
const OPENAI_MIN_CACHED = 1_024;

export function serveMeteredModel(api: WireApi, turns: SessionTurn[]): ModelMeter {
  const requests: MeteredRequest[] = [];
  const cached = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== (api === "anthropic" ? "/v1/messages" : "/v1/chat/completions"))
        return new Response("not found", { status: 404 });
      const body = (await req.json()) as Record<string, unknown>;
      const measured = measure(api, body, cached);
      requests.push(measured);
      const turn = turns[requests.length - 1] ?? {
        content: [{ type: "text" as const, text: "The recorded session has no more turns." }],
      };
      const input = measured.tokens;
      if (api === "anthropic") {
        const usage = {
          input_tokens: input - measured.cacheRead - measured.cacheWrite,
          output_tokens: turn.usage?.outputTokens ?? 50,
          cache_read_input_tokens: measured.cacheRead,
          cache_creation_input_tokens: measured.cacheWrite,
        };
        const content = turn.content.map((b) =>
          b.type === "tool_use" ? { type: b.type, id: b.id, name: b.name, input: b.input } : b,
        );
        return sseResponse(
          anthropicFrames({
            content,
            stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
            usage,
          }),
        );
      }
      const text = turn.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n");
      const calls = turn.content.flatMap((b) =>
        b.type === "tool_use"
          ? [{ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } }]
          : [],
      );
      return sseResponse(
        chatCompletionFrames({
          message: { content: text || null, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: calls.length ? "tool_calls" : "stop",
          usage: {
            prompt_tokens: input,
            completion_tokens: turn.usage?.outputTokens ?? 50,
            prompt_tokens_details: { cached_tokens: measured.cacheRead },
          },
        }),
      );
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}${api === "openai" ? "/v1" : ""}`,
    requests,
    stop: () => server.stop(true),
  };
}

/** A request as the units a cache keys on, each with its size, and the breakpoints among them. */
function measure(api: WireApi, body: Record<string, unknown>, cached: Set<string>): MeteredRequest {
  const units: Array<{ value: unknown; marked: boolean }> = [];
  if (api === "anthropic") {
    // The Messages API's order: tools, system, then every block of every message.
    for (const tool of (body.tools as unknown[] | undefined) ?? [])
      units.push({ value: tool, marked: hasBreakpoint(tool) });
    const system = body.system;
    for (const block of typeof system === "string" ? [system] : ((system as unknown[] | undefined) ?? []))
      units.push({ value: block, marked: hasBreakpoint(block) });
    for (const message of body.messages as Array<{ role: string; content: unknown }>) {
      for (const block of typeof message.content === "string" ? [message.content] : (message.content as unknown[]))
        units.push({ value: [message.role, block], marked: hasBreakpoint(block) });
    }
  } else {
    units.push({ value: body.tools ?? [], marked: false });
    for (const message of body.messages as unknown[]) units.push({ value: message, marked: false });
  }
  let tokens = 0;
  let pictures = 0;
  let key = "";
  const prefixes: Array<{ key: string; tokens: number; marked: boolean }> = [];
  for (const unit of units) {
    const size = sizeOf(unit.value);
    tokens += size.chars / CHARS_PER_TOKEN + size.pictures * TOKENS_PER_PICTURE;
    pictures += size.pictures;
    key = String(Bun.hash(key + JSON.stringify(withoutBreakpoints(unit.value))));
    prefixes.push({ key, tokens, marked: unit.marked });
  }
  const hit = prefixes.findLast((p) => cached.has(p.key) && (api === "anthropic" || p.tokens >= OPENAI_MIN_CACHED));
  const cacheRead = Math.round(hit?.tokens ?? 0);
  let cacheWrite = 0;
  if (api === "anthropic") {
    const stored = prefixes.filter((p) => p.marked);
    for (const p of stored) cached.add(p.key);
    cacheWrite = Math.max(0, Math.round((stored.at(-1)?.tokens ?? 0) - cacheRead));
  } else for (const p of prefixes) cached.add(p.key);
  return {
    tokens: Math.round(tokens),
    pictures,
    breakpoints: units.filter((u) => u.marked).length,
    cacheRead,
    cacheWrite,
    unpaired: unpaired(api, body),
  };
}

/** Calls without their results right after them, and results without their calls right before. */
function unpaired(api: WireApi, body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (api === "anthropic") {
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const blocks = (m: { content: unknown } | undefined) =>
      Array.isArray(m?.content) ? (m.content as Array<Record<string, unknown>>) : [];
    messages.forEach((message, i) => {
      const calls = blocks(message)
        .filter((b) => b.type === "tool_use")
        .map((b) => String(b.id));
      const results = blocks(message)
        .filter((b) => b.type === "tool_result")
        .map((b) => String(b.tool_use_id));
      const before = blocks(messages[i - 1])
        .filter((b) => b.type === "tool_use")
        .map((b) => String(b.id));
      const after = blocks(messages[i + 1])
        .filter((b) => b.type === "tool_result")
        .map((b) => String(b.tool_use_id));
      for (const id of results)
        if (!before.includes(id)) problems.push(`result ${id} in message ${i} has no call before it`);
      for (const id of calls)
        if (i < messages.length - 1 && !after.includes(id))
          problems.push(`call ${id} in message ${i} has no result after it`);
    });
  } else {
    const messages = body.messages as Array<{
      role: string;
      tool_calls?: Array<{ id: string }>;
      tool_call_id?: string;
    }>;
    let open: string[] = [];
    messages.forEach((message, i) => {
      if (message.role === "tool") {
        if (!open.includes(String(message.tool_call_id)))
          problems.push(`tool message ${i} answers ${message.tool_call_id}, which is not an open call`);
        open = open.filter((id) => id !== message.tool_call_id);
        return;
      }
      if (open.length > 0) problems.push(`calls ${open.join(", ")} have no tool message before message ${i}`);
      open = message.role === "assistant" ? (message.tool_calls ?? []).map((c) => c.id) : [];
    });
  }
  return problems;
}

/** Text characters (every string a model reads; not keys or JSON syntax) and pictures. */
function sizeOf(value: unknown): { chars: number; pictures: number } {
  if (typeof value === "string")
    return value.startsWith("data:image/") ? { chars: 0, pictures: 1 } : { chars: value.length, pictures: 0 };
  if (typeof value === "number" || typeof value === "boolean") return { chars: String(value).length, pictures: 0 };
  if (!value || typeof value !== "object") return { chars: 0, pictures: 0 };
  const record = value as Record<string, unknown>;
  if (record.type === "image") return { chars: 0, pictures: 1 };
  let chars = 0;
  let pictures = 0;
  for (const [field, inner] of Object.entries(record)) {
    if (field === "cache_control") continue;
    const size = sizeOf(inner);
    chars += size.chars;
    pictures += size.pictures;
  }
  return { chars, pictures };
}

function hasBreakpoint(value: unknown): boolean {
  return Boolean(value && typeof value === "object" && "cache_control" in value);
}

function withoutBreakpoints(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutBreakpoints);
  if (!value || typeof value !== "object" || !("cache_control" in value)) return value;
  const { cache_control: _, ...rest } = value as Record<string, unknown>;
  return rest;
}

export interface MeteredRun {
  summary: DoSummary;
  requests: MeteredRequest[];
}

/**
 * Replays `turns` as `request` on `repo` through the real HTTP provider for `api`, against a
 * metered loopback server. `full`: without compaction or cache breakpoints
 * (`COPPERHEAD_FULL_CONTEXT=1`), for comparison.
 */
export async function meteredRun(
  api: WireApi,
  turns: SessionTurn[],
  request: string,
  repo: string,
  options: { full?: boolean } = {},
): Promise<MeteredRun> {
  const meter = serveMeteredModel(api, turns);
  const before = process.env[FULL_CONTEXT_VARIABLE];
  if (options.full) process.env[FULL_CONTEXT_VARIABLE] = "1";
  else delete process.env[FULL_CONTEXT_VARIABLE];
  try {
    const http = { backoffBaseMs: 1, idleTimeoutMs: 120_000 };
    const provider =
      api === "anthropic"
        ? createAnthropicProvider({
            model: "claude-loopback",
            apiKey: "loopback-key",
            baseUrl: meter.baseUrl,
            http,
            promptCache: !options.full,
          })
        : createOpenAIProvider({ model: "gpt-loopback", apiKey: "loopback-key", baseUrl: meter.baseUrl, http });
    const summary = await runDo({ request, repo, provider });
    return { summary, requests: [...meter.requests] };
  } finally {
    if (before === undefined) delete process.env[FULL_CONTEXT_VARIABLE];
    else process.env[FULL_CONTEXT_VARIABLE] = before;
    await meter.stop();
  }
}
