import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Message, ModelRequest, ToolSpec } from "../../src/agent/conversation.ts";
import {
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_MODEL,
  mapStopReason,
} from "../../src/agent/providers/anthropic.ts";
import { MAX_RESPONSE_BYTES, parseRetryAfter, type HttpOptions } from "../../src/agent/providers/http.ts";
import { missingApiKeyError, resolveProvider } from "../../src/agent/providers/index.ts";
import {
  createCompatProvider,
  createOpenAIProvider,
  DEFAULT_OPENAI_MODEL,
  mapFinishReason,
} from "../../src/agent/providers/openai.ts";
import { codexDriver } from "../../src/agent/providers/agent-cli/codex.ts";
import { userProviderOverrides } from "../../src/agent/providers/agent-cli/codex-provider.ts";
import { toSamplingRequest } from "../../src/agent/providers/host.ts";
import { parseDeadlineSeconds, parseTimeoutSeconds, resolvePatience } from "../../src/agent/providers/patience.ts";
import { createReplayProvider, SESSION_SCHEMA } from "../../src/agent/providers/replay.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { closedPortUrl, json, loopback, never, type Loopback } from "./loopback.ts";
import { rejectedCopperheadError, thrownCopperheadError } from "../support/errors.ts";
import {
  anthropicFrames,
  chatCompletionFrames,
  encodeFrame,
  sseResponse,
  type StreamPacing,
} from "../support/model-streams.ts";

afterAll(cleanupTempDirs);

let servers: Loopback[] = [];
afterEach(() => {
  for (const s of servers) s.stop();
  servers = [];
});
function serve(handler: Parameters<typeof loopback>[0]): Loopback {
  const s = loopback(handler);
  servers.push(s);
  return s;
}

/** Fast retries for tests; the defaults (1 s base, 120 s timeout) are for real use. */
const FAST: HttpOptions = { backoffBaseMs: 1, idleTimeoutMs: 5_000 };
const KEY = "test-canary-key-9f8e7d6c5b4a";

const TOOLS: ToolSpec[] = [
  {
    name: "read_schematic",
    description: "Reads the schematic",
    inputSchema: { type: "object", properties: { sheet: { type: "string" } }, required: [] },
  },
  { name: "finish", description: "Ends the edit", inputSchema: { type: "object", properties: {} } },
];

/** A conversation that has been through one tool round, with one failed result. */
const HISTORY: Message[] = [
  { role: "user", content: [{ type: "text", text: "Add a decoupling capacitor" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading." },
      { type: "tool_use", id: "call_a", name: "read_schematic", input: { sheet: "root" } },
      { type: "tool_use", id: "call_b", name: "finish", input: {} },
    ],
  },
  {
    role: "user",
    content: [
      { type: "text", text: "Note: be brief." },
      { type: "tool_result", toolUseId: "call_a", content: '{"symbols":3}' },
      { type: "tool_result", toolUseId: "call_b", content: "not yet", isError: true },
    ],
  },
];

const REQUEST: ModelRequest = { system: "You are copperhead.", messages: HISTORY, tools: TOOLS, maxTokens: 1000 };

/** The answer streamed as the Messages API streams it. */
function anthropicReply(
  content: any[],
  stop_reason = "tool_use",
  usage = { input_tokens: 120, output_tokens: 45 },
  pacing?: StreamPacing,
) {
  return sseResponse(anthropicFrames({ content, stop_reason, usage }), pacing);
}

/** The answer streamed as Chat Completions chunks. */
function openaiReply(
  message: any,
  finish_reason = "tool_calls",
  usage: unknown = { prompt_tokens: 200, completion_tokens: 30, total_tokens: 230 },
  pacing?: StreamPacing,
) {
  return sseResponse(chatCompletionFrames({ message, finish_reason, usage }), pacing);
}

describe("anthropic provider", () => {
  test("sends the Messages API request shape and maps a tool call back", async () => {
    const server = serve(() =>
      anthropicReply([
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "read_schematic", input: { sheet: "power" } },
      ]),
    );
    const provider = createAnthropicProvider({ model: "claude-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    const response = await provider.complete(REQUEST);

    expect(response).toEqual({
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "read_schematic", input: { sheet: "power" } },
      ],
      stopReason: "tool_use",
      usage: { inputTokens: 120, outputTokens: 45 },
    });

    const [req] = server.requests;
    expect(req!.method).toBe("POST");
    expect(req!.path).toBe("/v1/messages");
    expect(req!.headers["x-api-key"]).toBe(KEY);
    expect(req!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.headers.authorization).toBeUndefined();
    expect(req!.body).toEqual({
      model: "claude-test",
      max_tokens: 1000,
      stream: true,
      // Cache breakpoints: the system prompt (tools come before it), the last two user turns.
      system: [{ type: "text", text: "You are copperhead.", cache_control: { type: "ephemeral" } }],
      tools: [
        { name: "read_schematic", description: "Reads the schematic", input_schema: TOOLS[0]!.inputSchema },
        { name: "finish", description: "Ends the edit", input_schema: TOOLS[1]!.inputSchema },
      ],
      messages: [
        {
          role: "user",
          content: [{ type: "text", text: "Add a decoupling capacitor", cache_control: { type: "ephemeral" } }],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reading." },
            { type: "tool_use", id: "call_a", name: "read_schematic", input: { sheet: "root" } },
            { type: "tool_use", id: "call_b", name: "finish", input: {} },
          ],
        },
        {
          role: "user",
          // tool results first, as the API requires; is_error only on the failed one
          content: [
            { type: "tool_result", tool_use_id: "call_a", content: '{"symbols":3}' },
            { type: "tool_result", tool_use_id: "call_b", content: "not yet", is_error: true },
            { type: "text", text: "Note: be brief.", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
    });
  });

  test("prompt cache: reads and writes are counted, and promptCache: false sends no breakpoint", async () => {
    const usage = {
      input_tokens: 50,
      output_tokens: 7,
      cache_read_input_tokens: 4000,
      cache_creation_input_tokens: 300,
    };
    const server = serve(() =>
      sseResponse(anthropicFrames({ content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage })),
    );
    const cached = await createAnthropicProvider({
      model: "claude-test",
      apiKey: KEY,
      baseUrl: server.url,
      http: FAST,
    }).complete(REQUEST);
    // input_tokens leaves the cached part out; copperhead's input count is all of it.
    expect(cached.usage).toEqual({ inputTokens: 4350, outputTokens: 7, cacheReadTokens: 4000, cacheWriteTokens: 300 });
    await createAnthropicProvider({
      model: "claude-test",
      apiKey: KEY,
      baseUrl: server.url,
      http: FAST,
      promptCache: false,
    }).complete(REQUEST);
    expect(JSON.stringify(server.requests[0]!.body)).toContain("cache_control");
    expect(JSON.stringify(server.requests[1]!.body)).not.toContain("cache_control");
    expect((server.requests[1]!.body as { system: unknown }).system).toBe("You are copperhead.");
  });

  test("prompt cache: without a system prompt the last tool is the breakpoint; echoed assistant turns are never marked", async () => {
    const server = serve(() => anthropicReply([{ type: "text", text: "ok" }], "end_turn"));
    await createAnthropicProvider({ model: "claude-test", apiKey: KEY, baseUrl: server.url, http: FAST }).complete({
      ...REQUEST,
      system: "",
    });
    const body = server.requests[0]!.body as {
      tools: Array<Record<string, unknown>>;
      messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
    };
    expect(body.tools.map((t) => t.cache_control)).toEqual([undefined, { type: "ephemeral" }]);
    expect(JSON.stringify(body.messages.filter((m) => m.role === "assistant"))).not.toContain("cache_control");
    // At most four breakpoints in all, as the API allows.
    expect(JSON.stringify(body).split("cache_control").length - 1).toBeLessThanOrEqual(4);
  });

  test("returns parallel tool calls as separate blocks, in order", async () => {
    const server = serve(() =>
      anthropicReply([
        { type: "tool_use", id: "toolu_1", name: "read_schematic", input: { sheet: "a" } },
        { type: "tool_use", id: "toolu_2", name: "read_schematic", input: { sheet: "b" } },
      ]),
    );
    const provider = createAnthropicProvider({ model: "claude-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    const response = await provider.complete(REQUEST);
    expect(response.content.map((b) => (b.type === "tool_use" ? b.id : b.type))).toEqual(["toolu_1", "toolu_2"]);
    expect(response.stopReason).toBe("tool_use");
  });

  test("sends an assistant turn back with its thinking blocks, exactly as received", async () => {
    const thinking = { type: "thinking", thinking: "The user wants C1 near U1.", signature: "sig-abc" };
    const redacted = { type: "redacted_thinking", data: "opaque" };
    const toolUse = { type: "tool_use", id: "toolu_9", name: "read_schematic", input: {} };
    const server = serve((_req, i) =>
      i === 0
        ? anthropicReply([thinking, redacted, toolUse])
        : anthropicReply([{ type: "text", text: "done" }], "end_turn"),
    );
    const provider = createAnthropicProvider({ model: "claude-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    const first: ModelRequest = {
      system: "s",
      tools: TOOLS,
      maxTokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: "go" }] }],
    };
    const response = await provider.complete(first);
    // The neutral content has no place for thinking; the loop never sees it.
    expect(response.content).toEqual([{ type: "tool_use", id: "toolu_9", name: "read_schematic", input: {} }]);

    // The loop copies the blocks (a different object), appends the tool result, asks again.
    const history: Message[] = [
      ...first.messages,
      { role: "assistant", content: response.content.map((b) => ({ ...b })) },
      { role: "user", content: [{ type: "tool_result", toolUseId: "toolu_9", content: "ok" }] },
    ];
    await provider.complete({ ...first, messages: history });
    expect(server.requests[1]!.body.messages[1]).toEqual({ role: "assistant", content: [thinking, redacted, toolUse] });

    // Once tools change (edit tools unlocked), the old thinking is no longer valid: sent without it.
    await provider.complete({ ...first, tools: TOOLS.slice(0, 1), messages: history });
    expect(server.requests[2]!.body.messages[1]).toEqual({ role: "assistant", content: [toolUse] });
  });

  test("maps every documented stop reason", () => {
    expect(mapStopReason("end_turn")).toBe("end_turn");
    expect(mapStopReason("stop_sequence")).toBe("end_turn");
    expect(mapStopReason("tool_use")).toBe("tool_use");
    expect(mapStopReason("max_tokens")).toBe("max_tokens");
    expect(mapStopReason("model_context_window_exceeded")).toBe("max_tokens");
    expect(mapStopReason("pause_turn")).toBe("other");
    expect(mapStopReason("refusal")).toBe("other");
    expect(mapStopReason(null)).toBe("other");
  });

  test("a response that is not a Messages API answer is a provider_error", async () => {
    const server = serve(() => json({ hello: "world" }));
    const provider = createAnthropicProvider({ model: "claude-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("unexpected response shape");
  });
});

describe("openai provider", () => {
  test("records the cached part of the prompt (prompt_tokens_details.cached_tokens)", async () => {
    const usage = {
      prompt_tokens: 5000,
      completion_tokens: 30,
      total_tokens: 5030,
      prompt_tokens_details: { cached_tokens: 4608 },
    };
    const server = serve(() => openaiReply({ content: "ok" }, "stop", usage));
    const response = await createOpenAIProvider({
      model: "gpt-test",
      apiKey: KEY,
      baseUrl: `${server.url}/v1/`,
      http: FAST,
    }).complete(REQUEST);
    expect(response.usage).toEqual({ inputTokens: 5000, outputTokens: 30, cacheReadTokens: 4608 });
  });

  test("sends the Chat Completions request shape and maps tool calls back", async () => {
    const server = serve(() =>
      openaiReply({
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_schematic", arguments: '{"sheet":"power"}' } },
          { id: "call_2", type: "function", function: { name: "finish", arguments: "{not json" } },
        ],
      }),
    );
    const provider = createOpenAIProvider({ model: "gpt-test", apiKey: KEY, baseUrl: `${server.url}/v1/`, http: FAST });
    const response = await provider.complete(REQUEST);

    expect(response).toEqual({
      content: [
        { type: "tool_use", id: "call_1", name: "read_schematic", input: { sheet: "power" } },
        // unparseable arguments reach the loop, which answers with a tool error
        { type: "tool_use", id: "call_2", name: "finish", input: { __invalid_json: "{not json" } },
      ],
      stopReason: "tool_use",
      usage: { inputTokens: 200, outputTokens: 30 },
    });

    const [req] = server.requests;
    expect(req!.path).toBe("/v1/chat/completions");
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.body).toEqual({
      model: "gpt-test",
      max_completion_tokens: 1000,
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: "function",
          function: { name: "read_schematic", description: "Reads the schematic", parameters: TOOLS[0]!.inputSchema },
        },
        {
          type: "function",
          function: { name: "finish", description: "Ends the edit", parameters: TOOLS[1]!.inputSchema },
        },
      ],
      messages: [
        { role: "system", content: "You are copperhead." },
        { role: "user", content: "Add a decoupling capacitor" },
        {
          role: "assistant",
          content: "Reading.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "read_schematic", arguments: '{"sheet":"root"}' } },
            { id: "call_b", type: "function", function: { name: "finish", arguments: "{}" } },
          ],
        },
        // one tool message per result, straight after the calls; then the user's text
        { role: "tool", tool_call_id: "call_a", content: '{"symbols":3}' },
        { role: "tool", tool_call_id: "call_b", content: "Error: not yet" },
        { role: "user", content: "Note: be brief." },
      ],
    });
  });

  test("maps text answers, finish reasons and usage", async () => {
    const server = serve(() => openaiReply({ content: "All done." }, "stop"));
    const provider = createOpenAIProvider({ model: "gpt-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect(await provider.complete(REQUEST)).toEqual({
      content: [{ type: "text", text: "All done." }],
      stopReason: "end_turn",
      usage: { inputTokens: 200, outputTokens: 30 },
    });
    expect(mapFinishReason("length", false)).toBe("max_tokens");
    expect(mapFinishReason("tool_calls", true)).toBe("tool_use");
    // some compatible servers say "stop" while calling tools
    expect(mapFinishReason("stop", true)).toBe("tool_use");
    expect(mapFinishReason("content_filter", false)).toBe("other");
  });

  test("an invalid tool call argument is sent back as valid JSON the model can read", async () => {
    const server = serve(() => openaiReply({ content: "ok" }, "stop"));
    const provider = createOpenAIProvider({ model: "gpt-test", apiKey: KEY, baseUrl: server.url, http: FAST });
    await provider.complete({
      ...REQUEST,
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: "finish", input: { __invalid_json: "{oops" } }],
        },
        {
          role: "user",
          content: [{ type: "tool_result", toolUseId: "c1", content: "arguments are not JSON", isError: true }],
        },
      ],
    });
    const call = server.requests[0]!.body.messages[2].tool_calls[0];
    expect(JSON.parse(call.function.arguments)).toEqual({ __invalid_json: "{oops" });
  });

  test("compat: same code, max_tokens, no Authorization header without a key, lenient parsing", async () => {
    const server = serve(() =>
      // no usage, a call without an id, arguments already an object
      json({
        choices: [
          {
            message: {
              role: "assistant",
              content: "",
              tool_calls: [{ function: { name: "finish", arguments: { a: 1 } } }],
            },
            finish_reason: "stop",
          },
        ],
      }),
    );
    const provider = createCompatProvider({ model: "llama3.1", baseUrl: server.url, http: FAST });
    expect(provider.label).toBe("compat:llama3.1");
    const response = await provider.complete(REQUEST);
    expect(response.stopReason).toBe("tool_use");
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(response.content).toEqual([{ type: "tool_use", id: expect.any(String), name: "finish", input: { a: 1 } }]);

    const [req] = server.requests;
    expect(req!.path).toBe("/chat/completions");
    expect(req!.headers.authorization).toBeUndefined();
    expect(req!.body.max_tokens).toBe(1000);
    expect(req!.body.max_completion_tokens).toBeUndefined();

    const keyed = createCompatProvider({ model: "llama3.1", baseUrl: server.url, apiKey: KEY, http: FAST });
    await keyed.complete(REQUEST);
    expect(server.requests[1]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe("HTTP behaviour", () => {
  test("429 with retry-after: waits at least that long, then succeeds", async () => {
    const server = serve((_req, i) =>
      i === 0
        ? json(
            { error: { type: "rate_limit_error", message: "slow down" } },
            { status: 429, headers: { "retry-after": "1" } },
          )
        : anthropicReply([{ type: "text", text: "hi" }], "end_turn"),
    );
    const provider = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const response = await provider.complete(REQUEST);
    expect(response.content).toEqual([{ type: "text", text: "hi" }]);
    expect(server.requests).toHaveLength(2);
    // The backoff base is 1 ms, so only the header can explain a ~1 s wait (timer granularity aside).
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(980);
  });

  test("500 then success: retried", async () => {
    const server = serve((_req, i) =>
      i === 0 ? new Response("upstream broke", { status: 500 }) : openaiReply({ content: "ok" }, "stop"),
    );
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect((await provider.complete(REQUEST)).content).toEqual([{ type: "text", text: "ok" }]);
    expect(server.requests).toHaveLength(2);
  });

  test("gives up after the configured retries with the last status", async () => {
    const server = serve(() =>
      json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { status: 529 }),
    );
    const provider = createAnthropicProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { ...FAST, maxRetries: 2 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("HTTP 529: Overloaded");
    expect(err.message).toContain("3 attempts");
    expect(err.details.status).toBe(529);
    expect(server.requests).toHaveLength(3);
  });

  test("a retry-after beyond the cap fails at once instead of sleeping", async () => {
    const server = serve(() =>
      json({ error: { message: "quota" } }, { status: 429, headers: { "retry-after": "3600" } }),
    );
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("retry after 3600 s");
    expect(server.requests).toHaveLength(1);
  });

  test("network errors are retried, then reported naming the URL nothing answered at", async () => {
    const base = closedPortUrl();
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: base, http: { ...FAST, maxRetries: 1 } });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain(`network error reaching ${base}/chat/completions`);
    expect(err.message).not.toContain("Is the computer able to access the url?");
    expect(err.message).toContain("2 attempts");
    expect(err.fix).toContain(`Nothing answered at ${new URL(base).origin}`);
  });

  test("malformed JSON in a 200 is a provider_error, not retried", async () => {
    const server = serve(
      () => new Response('{"choices": [', { status: 200, headers: { "content-type": "application/json" } }),
    );
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("not valid JSON");
    expect(server.requests).toHaveLength(1);
  });

  test("a server that never answers times out after the idle interval", async () => {
    const server = serve(() => never());
    const provider = createAnthropicProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 50, maxRetries: 1, backoffBaseMs: 1 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("the server sent nothing for 50 ms");
    expect(err.details.idleTimeoutMs).toBe(50);
    expect(err.fix).toContain("providerTimeoutSeconds");
    expect(server.requests).toHaveLength(2);
  });

  test("a slow stream completes however long it takes in all, while every gap is under the idle interval", async () => {
    // 40 frames 15 ms apart: about 600 ms in all, six times the idle interval (within the deadline).
    const server = serve(() =>
      anthropicReply([{ type: "text", text: "x".repeat(200) }], "end_turn", undefined, { intervalMs: 15 }),
    );
    const provider = createAnthropicProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 100, deadlineMs: 30_000, maxRetries: 0 },
    });
    expect((await provider.complete(REQUEST)).content).toEqual([{ type: "text", text: "x".repeat(200) }]);
  });

  test("a stream that stalls mid-answer is given up after the idle interval, and retried", async () => {
    const server = serve((_req, i) =>
      i === 0
        ? openaiReply({ content: "a long answer that stops" }, "stop", undefined, { stallAfter: 2 })
        : openaiReply({ content: "whole" }, "stop"),
    );
    const provider = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 100, backoffBaseMs: 1 },
    });
    expect((await provider.complete(REQUEST)).content).toEqual([{ type: "text", text: "whole" }]);
    expect(server.requests).toHaveLength(2);

    const stalled = serve(() => openaiReply({ content: "stops" }, "stop", undefined, { stallAfter: 1 }));
    const once = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: stalled.url,
      http: { idleTimeoutMs: 100, maxRetries: 0 },
    });
    const err = await rejectedCopperheadError(once.complete(REQUEST));
    expect(err.message).toContain("the server sent nothing for 100 ms (gave up after 1 attempt)");
  });

  /** A stream that is never idle and never ends: `piece` every 50 ms, forever. */
  function trickle(piece: string): Response {
    const bytes = new TextEncoder().encode(piece);
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => {
          try {
            controller.enqueue(bytes);
          } catch {
            clearInterval(timer);
          }
        }, 50);
      },
      cancel: () => clearInterval(timer),
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }

  test("a server sending keep-alives forever is given up at the call's deadline, not retried", async () => {
    const server = serve(() => trickle(": keep-alive\n\n"));
    const provider = createAnthropicProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 200, deadlineMs: 800, backoffBaseMs: 1 },
    });
    const started = Date.now();
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain(
      "anthropic:m: the model call ran past its deadline of 800 ms without a complete answer",
    );
    expect(err.details.deadlineMs).toBe(800);
    expect(err.fix).toContain("providerDeadlineSeconds");
    expect(server.requests).toHaveLength(1);
    // It used to wait forever; the bound is generous.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("an answer trickled a byte at a time is given up at the deadline", async () => {
    const answer = chatCompletionFrames({ message: { content: "x".repeat(10_000) }, finish_reason: "stop" })
      .map(encodeFrame)
      .join("");
    let sent = 0;
    const server = serve(() => {
      const stream = trickle(" ");
      // The real answer's bytes, one per tick, rather than spaces.
      return new Response(
        stream.body!.pipeThrough(
          new TransformStream({
            transform: (_chunk, c) => c.enqueue(new TextEncoder().encode(answer[sent++ % answer.length])),
          }),
        ),
        { headers: stream.headers },
      );
    });
    const provider = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 200, deadlineMs: 800 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.message).toContain("openai:m: the model call ran past its deadline of 800 ms");
    expect(sent).toBeGreaterThan(5);
  });

  test("the deadline spans the retries: a server failing over and over ends the call at the deadline, with the last failure", async () => {
    const server = serve(() =>
      json({ error: { message: "overloaded" } }, { status: 503, headers: { "retry-after": "0.2" } }),
    );
    const provider = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { idleTimeoutMs: 1_000, deadlineMs: 700, maxRetries: 10, backoffBaseMs: 1 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.message).toContain(
      "ran past its deadline of 700 ms without a complete answer (last attempt: HTTP 503: overloaded)",
    );
    expect(server.requests.length).toBeGreaterThan(1);
    expect(server.requests.length).toBeLessThan(11);
  });

  test("an aborted call throws at once and is not retried", async () => {
    const server = serve(() => never());
    const provider = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { ...FAST, idleTimeoutMs: 60_000 },
    });
    const controller = new AbortController();
    const pending = provider.complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await Bun.sleep(5);
    controller.abort();
    const err = await rejectedCopperheadError(pending);
    expect(err.code).toBe("provider_error");
    expect(err.details.cancelled).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("an abort during the backoff sleep ends the call at once", async () => {
    // With a one-minute backoff, only a prompt abort lets this finish inside the test timeout.
    const server = serve(() => new Response("busy", { status: 503 }));
    const provider = createOpenAIProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { backoffBaseMs: 60_000 },
    });
    const controller = new AbortController();
    const pending = provider.complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await Bun.sleep(5);
    await Bun.sleep(20);
    controller.abort();
    const err = await rejectedCopperheadError(pending);
    expect(err.details.cancelled).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("401: not retried, and the key never appears in the error even when the server echoes it", async () => {
    const server = serve(() =>
      json(
        { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } },
        { status: 401 },
      ),
    );
    const provider = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("HTTP 401");
    expect(err.details.status).toBe(401);
    expect(err.fix).toContain("ANTHROPIC_API_KEY");
    expect(server.requests).toHaveLength(1);
    const everything = `${err.message} ${err.stack} ${JSON.stringify(err.toJSON())}`;
    expect(everything).not.toContain(KEY);
    expect(everything).toContain("[REDACTED]");
  });

  test("a redirect is not followed (the key would go with it)", async () => {
    const target = serve(() => openaiReply({ content: "should not get here" }, "stop"));
    const server = serve(() => new Response(null, { status: 307, headers: { location: `${target.url}/elsewhere` } }));
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("HTTP 307 redirect");
    expect(server.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  test("a 400's body is bounded in the message", async () => {
    const server = serve(() => new Response("x".repeat(5000), { status: 400 }));
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.message.length).toBeLessThan(700);
    expect(server.requests).toHaveLength(1);
  });

  test("retry-after is read as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-29T12:00:00Z");
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter("0.5", now)).toBe(500);
    expect(parseRetryAfter("Sun, 29 Nov 2026 12:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 29 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("streamed answers", () => {
  const blocks = [
    { type: "text", text: "Two reads, in parallel." },
    {
      type: "tool_use",
      id: "toolu_1",
      name: "read_schematic",
      input: { sheet: "power", deep: { list: [1, "two", null], s: 'quote " and ünïcode' } },
    },
    { type: "tool_use", id: "toolu_2", name: "finish", input: {} },
  ];

  test("anthropic: the streamed answer assembles to exactly the non-streamed one", async () => {
    const usage = { input_tokens: 120, output_tokens: 45 };
    const server = serve((_req, i) =>
      i === 0
        ? anthropicReply(blocks, "tool_use", usage)
        : json({ id: "m", type: "message", role: "assistant", content: blocks, stop_reason: "tool_use", usage }),
    );
    const provider = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const streamed = await provider.complete(REQUEST);
    expect(streamed).toEqual(await provider.complete(REQUEST));
    expect(streamed.content).toEqual(blocks as any);
    expect(streamed.usage).toEqual({ inputTokens: 120, outputTokens: 45 });
  });

  test("openai: tool calls assembled by index from interleaved chunks, usage from the final chunk", async () => {
    const args1 = JSON.stringify({ sheet: "power" });
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({
      data: { object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] },
    });
    const frames = [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_schematic", arguments: "" } }],
      }),
      chunk({
        tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "finish", arguments: "{" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args1.slice(0, 5) } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: "}" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args1.slice(5) } }] }),
      chunk({}, "tool_calls"),
      { data: { object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } } },
      { data: "[DONE]" },
    ];
    const server = serve(() => sseResponse(frames));
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect(await provider.complete(REQUEST)).toEqual({
      content: [
        { type: "tool_use", id: "call_1", name: "read_schematic", input: { sheet: "power" } },
        { type: "tool_use", id: "call_2", name: "finish", input: {} },
      ],
      stopReason: "tool_use",
      usage: { inputTokens: 7, outputTokens: 3 },
    });
  });

  test("openai: the streamed answer assembles to exactly the non-streamed one", async () => {
    const message = {
      content: "Reading.",
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "read_schematic", arguments: JSON.stringify({ sheet: "a", n: [1, 2] }) },
        },
        { id: "call_2", type: "function", function: { name: "finish", arguments: "{broken" } },
      ],
    };
    const usage = { prompt_tokens: 9, completion_tokens: 4 };
    const server = serve((_req, i) =>
      i === 0
        ? openaiReply(message, "tool_calls", usage)
        : json({
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "tool_calls" }],
            usage,
          }),
    );
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect(await provider.complete(REQUEST)).toEqual(await provider.complete(REQUEST));
  });

  test("an overloaded_error event is retried; an invalid_request_error event is not", async () => {
    const overloaded = sseResponse([
      { event: "message_start", data: { type: "message_start", message: { content: [], usage: { input_tokens: 1 } } } },
      { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
    ]);
    const server = serve((_req, i) =>
      i === 0 ? overloaded : anthropicReply([{ type: "text", text: "ok" }], "end_turn"),
    );
    const provider = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect((await provider.complete(REQUEST)).content).toEqual([{ type: "text", text: "ok" }]);
    expect(server.requests).toHaveLength(2);

    const invalid = serve(() =>
      sseResponse([
        { event: "error", data: { type: "error", error: { type: "invalid_request_error", message: "bad tools" } } },
      ]),
    );
    const strict = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: invalid.url, http: FAST });
    const err = await rejectedCopperheadError(strict.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("invalid_request_error: bad tools");
    expect(invalid.requests).toHaveLength(1);
  });

  test("a stream that ends before its last event is retried, then reported", async () => {
    const frames = anthropicFrames({
      content: [{ type: "text", text: "cut" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    const server = serve(() => sseResponse(frames.slice(0, -1)));
    const provider = createAnthropicProvider({
      model: "m",
      apiKey: KEY,
      baseUrl: server.url,
      http: { ...FAST, maxRetries: 1 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.message).toContain("the stream ended before message_stop");
    expect(server.requests).toHaveLength(2);
  });

  test("an endless answer is cut at the response cap: a provider_error naming it, not retried", async () => {
    const megabyte = new TextEncoder().encode(`: ${"x".repeat(1024 * 1024 - 3)}\n`);
    const server = serve(
      () =>
        new Response(new ReadableStream({ pull: (controller) => controller.enqueue(megabyte) }), {
          headers: { "content-type": "text/event-stream" },
        }),
    );
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("the cap on one model response");
    expect(err.details).toMatchObject({ cap: "response_bytes", limitBytes: MAX_RESPONSE_BYTES });
    expect(server.requests).toHaveLength(1);
  });
});

describe("images in tool results", () => {
  const image = { mediaType: "image/png" as const, data: "iVBORw0KGgo=" };
  const WITH_IMAGE: ModelRequest = {
    ...REQUEST,
    messages: [
      { role: "user", content: [{ type: "text", text: "Look first" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "v1", name: "read_schematic", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", toolUseId: "v1", content: "legend: R1 at (10, 20)", images: [image] },
          { type: "text", text: "approved" },
        ],
      },
    ],
  };

  test("anthropic: the tool_result's content is the legend, then a base64 image block", async () => {
    const server = serve(() => anthropicReply([{ type: "text", text: "seen" }], "end_turn"));
    const provider = createAnthropicProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect(provider.supportsImages).toBe(true);
    await provider.complete(WITH_IMAGE);
    expect(server.requests[0]!.body.messages[2].content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "v1",
        content: [
          { type: "text", text: "legend: R1 at (10, 20)" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: image.data } },
        ],
      },
      { type: "text", text: "approved", cache_control: { type: "ephemeral" } },
    ]);
  });

  test("openai: the tool message keeps the legend; the picture follows in a user message as a data URL", async () => {
    const server = serve(() => openaiReply({ content: "seen" }, "stop"));
    const provider = createOpenAIProvider({ model: "m", apiKey: KEY, baseUrl: server.url, http: FAST });
    expect(provider.supportsImages).toBe(true);
    await provider.complete(WITH_IMAGE);
    expect(server.requests[0]!.body.messages.slice(3)).toEqual([
      { role: "tool", tool_call_id: "v1", content: "legend: R1 at (10, 20)" },
      {
        role: "user",
        content: [
          { type: "text", text: "approved" },
          { type: "text", text: "The images v1 returned:" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${image.data}` } },
        ],
      },
    ]);
  });

  test("compat: the legend alone, unless COPPERHEAD_IMAGES=1 says the model takes images", async () => {
    const server = serve(() => openaiReply({ content: "seen" }, "stop"));
    const plain = resolveProvider({ model: "compat:llava", env: { COPPERHEAD_BASE_URL: server.url }, http: FAST });
    expect(plain.supportsImages).toBe(false);
    await plain.complete(WITH_IMAGE);
    expect(server.requests[0]!.body.messages.slice(3)).toEqual([
      { role: "tool", tool_call_id: "v1", content: "legend: R1 at (10, 20)" },
      { role: "user", content: "approved" },
    ]);
    const vision = resolveProvider({
      model: "compat:llava",
      env: { COPPERHEAD_BASE_URL: server.url, COPPERHEAD_IMAGES: "1" },
      http: FAST,
    });
    expect(vision.supportsImages).toBe(true);
    await vision.complete(WITH_IMAGE);
    expect(JSON.stringify(server.requests[1]!.body.messages[4])).toContain(`data:image/png;base64,${image.data}`);
  });

  test("host: MCP image content after the legend in the sampling tool_result", () => {
    const sampling = toSamplingRequest(WITH_IMAGE);
    expect(sampling.messages[2]!.content).toEqual([
      {
        type: "tool_result",
        toolUseId: "v1",
        content: [
          { type: "text", text: "legend: R1 at (10, 20)" },
          { type: "image", data: image.data, mimeType: "image/png" },
          { type: "text", text: "approved" },
        ],
      },
    ]);
  });
});

describe("the provider's own model list", () => {
  /** Anthropic's `GET /v1/models`, paged two models at a time as the real one pages (`has_more`, `last_id`, `after_id`). */
  const ANTHROPIC_MODELS = [
    {
      type: "model",
      id: "claude-opus-4-1-20250805",
      display_name: "Claude Opus 4.1",
      created_at: "2025-08-05T00:00:00Z",
    },
    {
      type: "model",
      id: "claude-sonnet-4-5-20250929",
      display_name: "Claude Sonnet 4.5",
      created_at: "2025-09-29T00:00:00Z",
    },
    {
      type: "model",
      id: "claude-sonnet-4-20250514",
      display_name: "Claude Sonnet 4",
      created_at: "2025-05-14T00:00:00Z",
    },
    {
      type: "model",
      id: "claude-haiku-4-5-20251001",
      display_name: "Claude Haiku 4.5",
      created_at: "2025-10-01T00:00:00Z",
    },
  ];
  function anthropicApi(models = ANTHROPIC_MODELS) {
    return serve((req) => {
      if (req.method === "GET" && req.path === "/v1/models") {
        const after = new URLSearchParams(req.search).get("after_id");
        const start = after ? models.findIndex((m) => m.id === after) + 1 : 0;
        const page = models.slice(start, start + 2);
        return json({
          data: page,
          has_more: start + 2 < models.length,
          first_id: page[0]?.id ?? null,
          last_id: page.at(-1)?.id ?? null,
        });
      }
      const model = req.body?.model;
      if (!models.some((m) => m.id === model))
        return json({ type: "error", error: { type: "not_found_error", message: `model: ${model}` } }, { status: 404 });
      return anthropicReply([{ type: "text", text: `hello from ${model}` }], "end_turn");
    });
  }

  test("with no model chosen, a default the list lacks gives way to the newest of its family, asked once a day", async () => {
    const server = anthropicApi();
    const cache = await makeTempDir();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, XDG_CACHE_HOME: cache };
    const provider = resolveProvider({ env, http: FAST });
    expect(provider.model).toBe(DEFAULT_ANTHROPIC_MODEL);
    await provider.preflight!();
    expect(provider.model).toBe("claude-sonnet-4-5-20250929");
    expect(provider.label).toBe("anthropic:claude-sonnet-4-5-20250929");
    expect((await provider.complete(REQUEST)).content).toEqual([
      { type: "text", text: "hello from claude-sonnet-4-5-20250929" },
    ]);
    const lists = server.requests.filter((r) => r.method === "GET");
    // Two pages, each with the key and the API version.
    expect(lists).toHaveLength(2);
    for (const r of lists)
      expect([r.headers["x-api-key"], r.headers["anthropic-version"]]).toEqual([KEY, "2023-06-01"]);
    // A day's cache in the user's cache folder: ids and dates, never the key.
    const again = resolveProvider({ env, http: FAST });
    await again.preflight!();
    expect(again.model).toBe("claude-sonnet-4-5-20250929");
    expect(server.requests.filter((r) => r.method === "GET")).toHaveLength(2);
    const cached = readdirSync(join(cache, "copperhead/models"));
    expect(cached).toHaveLength(1);
    expect(readFileSync(join(cache, "copperhead/models", cached[0]!), "utf8")).not.toContain(KEY);
  });

  test("a default the list has, or a model named on purpose, is kept", async () => {
    const server = anthropicApi([
      ...ANTHROPIC_MODELS,
      { type: "model", id: DEFAULT_ANTHROPIC_MODEL, display_name: "default", created_at: "2025-01-01T00:00:00Z" },
    ]);
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, XDG_CACHE_HOME: await makeTempDir() };
    const provider = resolveProvider({ env, http: FAST });
    await provider.preflight!();
    expect(provider.model).toBe(DEFAULT_ANTHROPIC_MODEL);
    const named = resolveProvider({ model: "anthropic:claude-sonnet-4-20250514", env, http: FAST });
    await named.preflight!();
    expect(named.model).toBe("claude-sonnet-4-20250514");
    expect(server.requests.filter((r) => r.method === "GET")).toHaveLength(3);
  });

  test("a model the server does not have: the error lists what it serves, newest first", async () => {
    const server = anthropicApi();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, XDG_CACHE_HOME: await makeTempDir() };
    const err = await rejectedCopperheadError(
      resolveProvider({ model: "anthropic:claude-nonesuch-9", env, http: FAST }).complete(REQUEST),
    );
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("HTTP 404: model: claude-nonesuch-9");
    expect(err.details.available).toEqual([
      "claude-haiku-4-5-20251001",
      "claude-sonnet-4-5-20250929",
      "claude-opus-4-1-20250805",
      "claude-sonnet-4-20250514",
    ]);
    expect(err.fix).toContain(
      'The server has no model "claude-nonesuch-9"; it serves claude-haiku-4-5-20251001, claude-sonnet-4-5-20250929',
    );
    expect(err.fix).toContain("Pick one with --model or COPPERHEAD_MODEL.");
  });

  test("an OpenAI-compatible server's list ({ id, created } in seconds) names its models the same way", async () => {
    const server = serve((req) =>
      req.method === "GET" && req.path === "/v1/models"
        ? json({
            object: "list",
            data: [
              { id: "llama3.1:8b", object: "model", created: 1721000000, owned_by: "library" },
              { id: "qwen3:8b", object: "model", created: 1746000000, owned_by: "library" },
            ],
          })
        : json(
            { error: { message: 'model "qwen3" not found, try pulling it first', type: "api_error" } },
            { status: 404 },
          ),
    );
    const env = { COPPERHEAD_BASE_URL: `${server.url}/v1`, XDG_CACHE_HOME: await makeTempDir() };
    const err = await rejectedCopperheadError(
      resolveProvider({ model: "compat:qwen3", env, http: FAST }).complete(REQUEST),
    );
    expect(err.fix).toContain('The server has no model "qwen3"; it serves qwen3:8b, llama3.1:8b (newest first).');
  });

  test("an unreachable server at preflight: provider_error naming the URL, before anything starts", async () => {
    const base = closedPortUrl();
    const err = await rejectedCopperheadError(
      resolveProvider({
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: base, XDG_CACHE_HOME: await makeTempDir() },
        http: FAST,
      }).preflight!(),
    );
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain(`network error reaching ${base}/v1/models`);
    expect(err.fix).toContain(`Nothing answered at ${new URL(base).origin}`);
  });
});

describe("codex: the user's own model provider", () => {
  test("model_provider and its table come over as -c overrides; nothing else in config.toml does", async () => {
    const home = await makeTempDir();
    writeFileSync(
      join(home, "config.toml"),
      [
        'model_provider = "azure"',
        'model = "ignored-here"',
        "[model_providers.azure]",
        'name = "Azure"',
        'base_url = "https://example.invalid/openai"',
        'env_key = "AZURE_OPENAI_API_KEY"',
        'wire_api = "responses"',
        'query_params = { api-version = "2025-04-01-preview" }',
        "request_max_retries = 4",
        "[mcp_servers.theirs]",
        'command = "evil"',
      ].join("\n"),
    );
    const overrides = userProviderOverrides({ CODEX_HOME: home });
    expect(overrides).toEqual([
      ["model_provider", '"azure"'],
      [
        "model_providers.azure",
        '{name = "Azure", base_url = "https://example.invalid/openai", env_key = "AZURE_OPENAI_API_KEY", wire_api = "responses", query_params = {api-version = "2025-04-01-preview"}, request_max_retries = 4}',
      ],
    ]);
    // Round trip: what Codex parses from the override is the user's table.
    expect(Bun.TOML.parse(`x = ${overrides[1]![1]}`)).toEqual({
      x: (Bun.TOML.parse(readFileSync(join(home, "config.toml"), "utf8")) as any).model_providers.azure,
    });
    const launch = codexDriver.launch({
      prompt: "p",
      system: "s",
      dir: home,
      env: { CODEX_HOME: home },
      bridge: { command: "copperhead", args: ["mcp-bridge"], env: {} },
    });
    expect(launch.args).toContain('model_provider="azure"');
    expect(launch.args.join(" ")).not.toContain("theirs");
    expect(launch.args).toContain("--ignore-user-config");
  });

  test("no config, no provider in it, or a built-in provider: only what is there", async () => {
    const home = await makeTempDir();
    expect(userProviderOverrides({ CODEX_HOME: home })).toEqual([]);
    writeFileSync(join(home, "config.toml"), 'model = "gpt-5"\n');
    expect(userProviderOverrides({ CODEX_HOME: home })).toEqual([]);
    writeFileSync(join(home, "config.toml"), 'model_provider = "ollama"\n');
    expect(userProviderOverrides({ CODEX_HOME: home })).toEqual([["model_provider", '"ollama"']]);
    writeFileSync(join(home, "config.toml"), "model_provider = [\n");
    expect(thrownCopperheadError(() => userProviderOverrides({ CODEX_HOME: home })).code).toBe("config_invalid");
  });
});

describe("patience", () => {
  test("the idle timeout: --provider-timeout, then COPPERHEAD_PROVIDER_TIMEOUT, then the config, then the default", () => {
    const config = { providerTimeoutSeconds: 300, providerRetries: 5 };
    const env = { COPPERHEAD_PROVIDER_TIMEOUT: "450" };
    expect(resolvePatience({ timeoutSeconds: 900, env, config })).toEqual({
      timeoutSeconds: 900,
      timeoutFrom: "--provider-timeout",
      deadlineSeconds: 3600,
      deadlineFrom: "default",
      retries: 5,
      retriesFrom: "config",
    });
    expect(resolvePatience({ env, config })).toMatchObject({
      timeoutSeconds: 450,
      timeoutFrom: "COPPERHEAD_PROVIDER_TIMEOUT",
    });
    expect(resolvePatience({ env: {}, config })).toMatchObject({ timeoutSeconds: 300, timeoutFrom: "config" });
    expect(resolvePatience({ env: {}, config: null })).toEqual({
      timeoutSeconds: 120,
      timeoutFrom: "default",
      deadlineSeconds: 480,
      deadlineFrom: "default",
      retries: 3,
      retriesFrom: "default",
    });
  });

  test("the total deadline: --provider-deadline, then COPPERHEAD_PROVIDER_DEADLINE, then the config, then four idle timeouts", () => {
    const config = { providerDeadlineSeconds: 700 };
    const env = { COPPERHEAD_PROVIDER_DEADLINE: "650" };
    expect(resolvePatience({ deadlineSeconds: 900, env, config })).toMatchObject({
      deadlineSeconds: 900,
      deadlineFrom: "--provider-deadline",
    });
    expect(resolvePatience({ env, config })).toMatchObject({
      deadlineSeconds: 650,
      deadlineFrom: "COPPERHEAD_PROVIDER_DEADLINE",
    });
    expect(resolvePatience({ env: {}, config })).toMatchObject({ deadlineSeconds: 700, deadlineFrom: "config" });
    expect(resolvePatience({ timeoutSeconds: 3, env: {} })).toMatchObject({
      deadlineSeconds: 12,
      deadlineFrom: "default",
    });
    expect(parseDeadlineSeconds("14400", "--provider-deadline")).toBe(14400);
    const err = thrownCopperheadError(() => resolvePatience({ env: { COPPERHEAD_PROVIDER_DEADLINE: "0" } }));
    expect(err.message).toContain("COPPERHEAD_PROVIDER_DEADLINE needs a number of seconds from 1 to 14400");
    expect(err.fix).toContain("COPPERHEAD_PROVIDER_DEADLINE=1800");
  });

  test("a timeout written by a person is checked, naming where it came from", () => {
    expect(parseTimeoutSeconds(" 90 ", "--provider-timeout")).toBe(90);
    expect(parseTimeoutSeconds("2.5", "--provider-timeout")).toBe(2.5);
    for (const bad of ["", "0", "-5", "3601", "soon", "Infinity"]) {
      const err = thrownCopperheadError(() => parseTimeoutSeconds(bad, "--provider-timeout"));
      expect(err.code).toBe("usage");
      expect(err.message).toContain("--provider-timeout needs a number of seconds from 1 to 3600");
    }
    const err = thrownCopperheadError(() => resolvePatience({ env: { COPPERHEAD_PROVIDER_TIMEOUT: "forever" } }));
    expect(err.fix).toContain("COPPERHEAD_PROVIDER_TIMEOUT=600");
  });

  test("the HTTP providers take it from their sources; the others never read it", async () => {
    const server = serve(() => never());
    const provider = resolveProvider({
      model: "compat:m",
      env: { COPPERHEAD_BASE_URL: server.url, COPPERHEAD_PROVIDER_TIMEOUT: "1" },
      config: { model: null, providerRetries: 0 },
    });
    const err = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(err.message).toContain("the server sent nothing for 1 s (gave up after 1 attempt)");
    expect(() =>
      resolveProvider({ model: "replay:x.json", env: { COPPERHEAD_PROVIDER_TIMEOUT: "bad" }, cwd: "/nonexistent" }),
    ).not.toThrow(/PROVIDER_TIMEOUT/);
  });
});

describe("replay provider", () => {
  async function sessionFile(content: unknown): Promise<{ dir: string; name: string }> {
    const dir = await makeTempDir();
    await writeFile(
      join(dir, "session.json"),
      typeof content === "string" ? content : JSON.stringify(content, null, 2),
    );
    return { dir, name: "session.json" };
  }

  const SESSION = {
    schema: SESSION_SCHEMA,
    model: "anthropic:claude-sonnet-5-5",
    description: "test",
    turns: [
      {
        content: [{ type: "tool_use", id: "t1", name: "read_schematic", input: {} }],
        usage: { inputTokens: 10, outputTokens: 2 },
      },
      { fail: { kind: "http", status: 500 } },
      { fail: { kind: "network" } },
      { content: [{ type: "text", text: "done" }], stopReason: "max_tokens" },
    ],
  };

  test("returns the next turn per call, scripted failures in place, then runs out", async () => {
    const { dir, name } = await sessionFile(SESSION);
    const provider = createReplayProvider(name, dir);
    expect(provider.provider).toBe("replay");
    expect(provider.label).toBe("replay:session.json (recorded session)");

    expect(await provider.complete(REQUEST)).toEqual({
      content: [{ type: "tool_use", id: "t1", name: "read_schematic", input: {} }],
      stopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 2 },
    });
    const http = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(http.code).toBe("provider_error");
    expect(http.message).toContain("HTTP 500");
    expect(http.details.status).toBe(500);
    const network = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(network.message).toContain("network error");
    expect(await provider.complete(REQUEST)).toEqual({
      content: [{ type: "text", text: "done" }],
      stopReason: "max_tokens",
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    const done = await rejectedCopperheadError(provider.complete(REQUEST));
    expect(done.code).toBe("provider_error");
    expect(done.message).toContain("the recorded session has no more turns");
  });

  test("a malformed session names the file and the JSON path", async () => {
    const bad = structuredClone(SESSION) as any;
    bad.turns[3].content[0] = { type: "picture", url: "x" };
    const { dir, name } = await sessionFile(bad);
    const err = thrownCopperheadError(() => createReplayProvider(name, dir));
    expect(err.code).toBe("parse_error");
    expect(err.message).toStartWith("session.json: $.turns[3].content[0].type:");
    expect(err.details.path).toBe("$.turns[3].content[0].type");
  });

  test("a turn with neither content nor fail, a wrong schema, bad JSON and a missing file are typed errors", async () => {
    const empty = await sessionFile({ ...SESSION, turns: [{ usage: { inputTokens: 1, outputTokens: 1 } }] });
    const e1 = thrownCopperheadError(() => createReplayProvider(empty.name, empty.dir));
    expect(e1.code).toBe("parse_error");
    expect(e1.message).toContain("$.turns[0]: a turn needs content");

    const wrongSchema = await sessionFile({ ...SESSION, schema: "copperhead.session/9" });
    expect(thrownCopperheadError(() => createReplayProvider(wrongSchema.name, wrongSchema.dir)).message).toContain(
      "$.schema",
    );

    const badJson = await sessionFile('{ "schema": "copperhead.session/1",\n  "turns": [ }');
    const e3 = thrownCopperheadError(() => createReplayProvider(badJson.name, badJson.dir));
    expect(e3.code).toBe("parse_error");
    expect(e3.message).toContain("line 2");

    expect(thrownCopperheadError(() => createReplayProvider("nope.json", badJson.dir)).code).toBe("not_found");
  });
});

describe("resolveProvider", () => {
  const anthropicKey = { ANTHROPIC_API_KEY: "sk-ant-test-0000000000000000" };
  const openaiKey = { OPENAI_API_KEY: "sk-test-0000000000000000" };
  const compat = { COPPERHEAD_BASE_URL: "http://127.0.0.1:11434/v1" };

  const cases: Array<{
    name: string;
    model?: string;
    config?: string | null;
    env: Record<string, string | undefined>;
    label?: string;
    error?: string;
  }> = [
    {
      name: "--model wins over everything",
      model: "openai:gpt-x",
      config: "anthropic:c",
      env: { ...anthropicKey, ...openaiKey, COPPERHEAD_MODEL: "anthropic:b" },
      label: "openai:gpt-x",
    },
    {
      name: "then COPPERHEAD_MODEL",
      config: "openai:gpt-y",
      env: { ...anthropicKey, ...openaiKey, COPPERHEAD_MODEL: "anthropic:b" },
      label: "anthropic:b",
    },
    { name: "then the config", config: "openai:gpt-y", env: { ...anthropicKey, ...openaiKey }, label: "openai:gpt-y" },
    {
      name: "then ANTHROPIC_API_KEY",
      env: { ...anthropicKey, ...openaiKey, ...compat },
      label: `anthropic:${DEFAULT_ANTHROPIC_MODEL}`,
    },
    { name: "then OPENAI_API_KEY", env: { ...openaiKey, ...compat }, label: `openai:${DEFAULT_OPENAI_MODEL}` },
    { name: "COPPERHEAD_BASE_URL alone names no model", env: compat, error: "usage" },
    {
      name: "compat with its model",
      env: { ...compat, COPPERHEAD_MODEL: "compat:llama3.1" },
      label: "compat:llama3.1",
    },
    { name: "compat without a key is fine", model: "compat:qwen", env: compat, label: "compat:qwen" },
    {
      name: "empty values count as unset",
      env: { ANTHROPIC_API_KEY: "", COPPERHEAD_MODEL: "", ...openaiKey },
      label: `openai:${DEFAULT_OPENAI_MODEL}`,
    },
    {
      name: "a null config model falls through",
      config: null,
      env: anthropicKey,
      label: `anthropic:${DEFAULT_ANTHROPIC_MODEL}`,
    },
    { name: "chosen anthropic without its key", model: "anthropic:c", env: openaiKey, error: "missing_api_key" },
    { name: "chosen openai without its key", config: "openai:g", env: anthropicKey, error: "missing_api_key" },
    { name: "chosen compat without a base URL", model: "compat:x", env: anthropicKey, error: "missing_api_key" },
    { name: "unknown provider", model: "gemini:pro", env: anthropicKey, error: "usage" },
    { name: "no provider prefix", model: "claude-sonnet-5-5", env: anthropicKey, error: "usage" },
    { name: "no model id", model: "openai:", env: openaiKey, error: "usage" },
    { name: "a base URL that is not a URL", env: { ...anthropicKey, ANTHROPIC_BASE_URL: "not a url" }, error: "usage" },
    { name: "nothing configured", env: {}, error: "missing_api_key" },
    { name: "host outside copperhead mcp", model: "host", env: {}, error: "usage" },
    { name: "host with a model id", env: { COPPERHEAD_MODEL: "host:gpt" }, error: "usage" },
    {
      name: "claude-code when claude is not on PATH",
      model: "claude-code",
      env: { PATH: "/nonexistent" },
      error: "cli_not_found",
    },
    {
      name: "codex:<id> when codex is not on PATH",
      config: "codex:gpt-5-codex",
      env: { PATH: "/nonexistent" },
      error: "cli_not_found",
    },
    { name: "claude-code with an empty id", model: "claude-code:", env: {}, error: "usage" },
  ];

  for (const c of cases) {
    test(c.name, () => {
      const options = {
        env: c.env,
        ...(c.model ? { model: c.model } : {}),
        ...(c.config !== undefined ? { config: { model: c.config } } : {}),
      };
      if (c.label) {
        expect(resolveProvider(options).label).toBe(c.label);
      } else {
        expect(thrownCopperheadError(() => resolveProvider(options)).code).toBe(c.error as CopperheadError["code"]);
      }
    });
  }

  test("unknown provider lists them all", () => {
    const err = thrownCopperheadError(() => resolveProvider({ model: "gemini:pro", env: {} }));
    for (const p of ["anthropic", "openai", "compat", "replay", "host", "claude-code", "codex"])
      expect(err.message).toContain(p);
  });

  test("host with a client that samples with tools; without tools it is sampling_unsupported", () => {
    const sampler = (tools: boolean) => ({
      supportsToolSampling: () => tools,
      createMessage: () => Promise.reject(new Error("not called")),
    });
    expect(resolveProvider({ model: "host", env: {}, host: sampler(true) }).label).toBe(
      "host (the MCP client's model, through sampling)",
    );
    expect(
      thrownCopperheadError(() => resolveProvider({ env: { COPPERHEAD_MODEL: "host" }, host: sampler(false) })).code,
    ).toBe("sampling_unsupported");
  });

  test("claude-code and codex resolve to the CLI on PATH, with the model passed on", async () => {
    const bin = await makeTempDir();
    for (const name of ["claude", "codex"]) {
      writeFileSync(join(bin, name), "#!/bin/sh\nexit 0\n");
      chmodSync(join(bin, name), 0o755);
    }
    const env = { PATH: bin };
    expect(resolveProvider({ model: "claude-code", env }).label).toBe("claude-code (your logged-in Claude Code CLI)");
    expect(resolveProvider({ model: "codex:gpt-5-codex", env }).label).toBe(
      "codex:gpt-5-codex (your logged-in Codex CLI)",
    );
    expect(resolveProvider({ config: { model: "claude-code:opus" }, env }).model).toBe("opus");
  });

  test("missing key for a chosen provider names its variable", () => {
    expect(thrownCopperheadError(() => resolveProvider({ model: "anthropic:c", env: {} })).message).toContain(
      "ANTHROPIC_API_KEY",
    );
  });

  test("over MCP, the errors name what an MCP user can set: the server's environment, never --model", () => {
    const host = { supportsToolSampling: () => false, createMessage: () => Promise.reject(new Error("unused")) };
    const errors = [
      thrownCopperheadError(() => resolveProvider({ env: {}, host })),
      thrownCopperheadError(() => resolveProvider({ env: { COPPERHEAD_BASE_URL: "http://127.0.0.1:9/v1" }, host })),
      thrownCopperheadError(() => resolveProvider({ env: { COPPERHEAD_MODEL: "openai:gpt-5" }, host })),
      thrownCopperheadError(() => resolveProvider({ env: { COPPERHEAD_MODEL: "codex", PATH: "/nonexistent" }, host })),
    ];
    expect(errors.map((e) => e.code)).toEqual(["missing_api_key", "usage", "missing_api_key", "cli_not_found"]);
    for (const err of errors) {
      expect(err.fix).not.toContain("--model");
      expect(err.fix).toContain("COPPERHEAD_MODEL in the copperhead MCP server's environment");
    }
    expect(thrownCopperheadError(() => resolveProvider({ env: { COPPERHEAD_MODEL: "openai:gpt-5" } })).fix).toContain(
      "--model",
    );
  });

  test("nothing configured: names every way to get a model and explains --model / COPPERHEAD_MODEL", () => {
    for (const err of [thrownCopperheadError(() => resolveProvider({ env: {} })), missingApiKeyError()]) {
      expect(err.code).toBe("missing_api_key");
      for (const name of [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "COPPERHEAD_BASE_URL",
        "COPPERHEAD_MODEL=host|claude-code|codex",
      ])
        expect(err.message).toContain(name);
      expect(err.fix).toContain("--model");
      expect(err.fix).toContain("COPPERHEAD_MODEL");
    }
  });

  test("replay from COPPERHEAD_MODEL, relative to cwd; never from the repo's config", async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, "demo.json"), JSON.stringify({ schema: SESSION_SCHEMA, model: "scripted", turns: [] }));
    const provider = resolveProvider({ env: { COPPERHEAD_MODEL: "replay:demo.json" }, cwd: dir });
    expect(provider.label).toBe("replay:demo.json (recorded session)");
    const refused = thrownCopperheadError(() =>
      resolveProvider({ config: { model: "replay:demo.json" }, env: {}, cwd: dir }),
    );
    expect(refused.code).toBe("config_invalid");
    expect(refused.fix).toContain("--model replay:<file>");
  });

  test("a replay file that is a device or pipe is refused, not read", () => {
    for (const file of ["/dev/zero", "/dev/stdin"]) {
      const refused = thrownCopperheadError(() => resolveProvider({ model: `replay:${file}`, env: {} }));
      expect({ file, code: refused.code }).toEqual({ file, code: "bad_path" });
      expect(refused.message).toContain("not a regular file");
    }
  });

  test("base URLs and keys come from the environment", async () => {
    const server = serve((req) =>
      req.path.endsWith("/v1/messages")
        ? anthropicReply([{ type: "text", text: "a" }], "end_turn")
        : openaiReply({ content: "o" }, "stop"),
    );
    const anthropic = resolveProvider({
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `${server.url}/` },
      http: FAST,
    });
    await anthropic.complete(REQUEST);
    const openai = resolveProvider({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` }, http: FAST });
    await openai.complete(REQUEST);
    const local = resolveProvider({ model: "compat:llama3.1", env: { COPPERHEAD_BASE_URL: server.url }, http: FAST });
    await local.complete(REQUEST);
    const keyed = resolveProvider({
      model: "compat:llama3.1",
      env: { COPPERHEAD_BASE_URL: server.url, COPPERHEAD_API_KEY: KEY },
      http: FAST,
    });
    await keyed.complete(REQUEST);

    expect(server.requests.map((r) => [r.path, r.headers["x-api-key"] ?? r.headers.authorization ?? null])).toEqual([
      ["/v1/messages", KEY],
      ["/v1/chat/completions", `Bearer ${KEY}`],
      ["/chat/completions", null],
      ["/chat/completions", `Bearer ${KEY}`],
    ]);
  });
});
