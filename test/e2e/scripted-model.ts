/**
 * A loopback OpenAI-compatible server that plays scripted turns, for driving the compiled
 * binary through `--model compat:<id>` with `COPPERHEAD_BASE_URL`. It streams each answer as
 * Chat Completions chunks, as the real API does for the provider's `stream: true`.
 *
 * Unlike `replay:`, it goes through the real HTTP provider and, once the script is used up,
 * it *holds* the next request open forever: the run is then parked mid-edit, between two model
 * turns, for as long as a test needs to kill or interrupt it there.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  anthropicFrames,
  chatCompletionFrames,
  responsesFrames,
  sseResponse,
  type StreamPacing,
} from "../support/model-streams.ts";

export const SESSIONS_DIR = resolve(import.meta.dir, "../../fixtures/sessions");

/** A turn of a `copperhead.session/1` file (content-only turns; see `src/agent/providers/replay.ts`). */
export interface SessionTurn {
  /** A tool call's `arguments`, when given, are sent verbatim instead of `input` serialised (for inputs JSON.stringify cannot write). */
  content: Array<
    { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown; arguments?: string }
  >;
  usage?: { inputTokens: number; outputTokens: number };
}

export function sessionTurns(name: string): SessionTurn[] {
  return JSON.parse(readFileSync(resolve(SESSIONS_DIR, `${name}.json`), "utf8")).turns;
}

export interface ScriptedModel {
  /** The value for `COPPERHEAD_BASE_URL`. */
  baseUrl: string;
  /** Requests received so far, answered or held. */
  readonly requests: number;
  /** Resolves when the first request past the script arrives; it is held, never answered. */
  held: Promise<void>;
  stop(): Promise<void>;
}

export interface ScriptOptions {
  /** How the answer to request `n` (1-based) is paced; default: all at once. */
  pacing?: (n: number) => StreamPacing | undefined;
}

/** Serves `turns` in order on 127.0.0.1 (an ephemeral port), then holds every further request. */
export function serveScriptedModel(turns: SessionTurn[], options: ScriptOptions = {}): ScriptedModel {
  let requests = 0;
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // A held request must stay open however long the test takes (Bun's default is 10 s).
    idleTimeout: 0,
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/chat/completions")
        return new Response("not found", { status: 404 });
      await req.json();
      const n = ++requests;
      const turn = turns[n - 1];
      if (!turn) {
        onHeld();
        return new Promise<Response>(() => {});
      }
      return sseResponse(chatCompletionFrames(chatCompletion(turn)), options.pacing?.(n));
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    get requests() {
      return requests;
    },
    held,
    stop: () => server.stop(true),
  };
}

/** A session turn as a Chat Completions answer. */
function chatCompletion(turn: SessionTurn): Parameters<typeof chatCompletionFrames>[0] {
  const text = turn.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n");
  const calls = turn.content.flatMap((b) =>
    b.type === "tool_use"
      ? [{ id: b.id, type: "function", function: { name: b.name, arguments: b.arguments ?? JSON.stringify(b.input) } }]
      : [],
  );
  return {
    message: { content: text || null, ...(calls.length ? { tool_calls: calls } : {}) },
    finish_reason: calls.length ? "tool_calls" : "stop",
    usage: { prompt_tokens: turn.usage?.inputTokens ?? 0, completion_tokens: turn.usage?.outputTokens ?? 0 },
  };
}

export interface ScriptedMessagesApi {
  /** The value for `ANTHROPIC_BASE_URL`. */
  baseUrl: string;
  /** The tool names of every request that carried the run's tools, in order. */
  readonly toolLists: string[][];
  /** The system prompt of each of those requests, as JSON (a string or the CLI's blocks). */
  readonly systems: string[];
  /** The `model` of each of those requests. */
  readonly models: string[];
  stop(): Promise<void>;
}

/**
 * A loopback Anthropic Messages API for a real agent CLI (`ANTHROPIC_BASE_URL`): each request
 * that carries the run's tools (their names start with `toolPrefix`) gets the next scripted
 * turn, streamed as server-sent events, its tool names prefixed as the CLI knows them (but for
 * `unprefixed` ones, the CLI's own tools a model may reach for); once the script is used up, and
 * for the CLI's own side requests, a short text answer ends the turn.
 */
export function serveScriptedMessagesApi(
  turns: SessionTurn[],
  toolPrefix: string,
  unprefixed: string[] = [],
  /** What `GET /v1/models` lists (Anthropic's format, one page); absent, the server has no list (404). */
  listed?: Array<{ id: string; created_at: string }>,
): ScriptedMessagesApi {
  const toolLists: string[][] = [];
  const systems: string[] = [];
  const models: string[] = [];
  let next = 0;
  const server = serveLoopback(async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/v1/models" && listed) {
      const data = listed.map((m) => ({ type: "model", display_name: m.id, ...m }));
      return Response.json({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    }
    if (req.method !== "POST" || !path.startsWith("/v1/messages")) return new Response("not found", { status: 404 });
    const body = (await req.json()) as {
      stream?: boolean;
      tools?: Array<{ name: string }>;
      system?: unknown;
      model?: string;
    };
    if (path.endsWith("/count_tokens")) return Response.json({ input_tokens: 1000 });
    const names = (body.tools ?? []).map((t) => t.name);
    const forRun = names.some((n) => n.startsWith(toolPrefix));
    if (forRun) {
      toolLists.push(names);
      systems.push(JSON.stringify(body.system ?? ""));
      models.push(body.model ?? "");
    }
    const turn = forRun ? turns[next++] : undefined;
    const content = turn
      ? turn.content.map((b) =>
          b.type === "tool_use"
            ? {
                type: "tool_use",
                id: b.id,
                name: unprefixed.includes(b.name) ? b.name : `${toolPrefix}${b.name}`,
                input: b.input,
              }
            : b,
        )
      : [{ type: "text", text: "Done." }];
    const answer = {
      content,
      stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      usage: { input_tokens: turn?.usage?.inputTokens ?? 10, output_tokens: turn?.usage?.outputTokens ?? 5 },
    };
    if (body.stream) return sseResponse(anthropicFrames(answer));
    return Response.json({
      id: "msg_scripted",
      type: "message",
      role: "assistant",
      model: "loopback",
      stop_sequence: null,
      ...answer,
    });
  });
  return { baseUrl: `http://127.0.0.1:${server.port}`, toolLists, systems, models, stop: () => server.stop(true) };
}

export interface ScriptedResponsesApi {
  /** The provider's `base_url` (ends in `/v1`). */
  baseUrl: string;
  /** Per request that carried the run's tools, in order: the tools offered, namespaces as `namespace/tool`. */
  readonly toolLists: string[][];
  /** The `function_call_output` items each request sent back, in order. */
  readonly outputs: Array<{ call_id: string; output: unknown }>;
  /** The `authorization` header of every request. */
  readonly authorizations: Array<string | null>;
  /** What each request that carried the run's tools told the model first: its `instructions` and developer messages. */
  readonly instructions: string[];
  stop(): Promise<void>;
}

/**
 * A loopback OpenAI Responses API for the real Codex CLI (a `model_providers` entry with
 * `wire_api = "responses"`): each request that offers the `namespace` tools gets the next
 * scripted turn, streamed as Responses events; a tool call becomes a `function_call` in that
 * namespace (as Codex names MCP tools: `mcp__<server>`), but for `unnamespaced` ones, Codex's own
 * tools a model may reach for. Once the script is used up, a short message ends the turn.
 */
export function serveScriptedResponsesApi(
  turns: SessionTurn[],
  namespace: string,
  unnamespaced: string[] = [],
): ScriptedResponsesApi {
  const toolLists: string[][] = [];
  const outputs: Array<{ call_id: string; output: unknown }> = [];
  const authorizations: Array<string | null> = [];
  const instructions: string[] = [];
  let next = 0;
  const server = serveLoopback(async (req) => {
    if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/responses")
      return new Response("not found", { status: 404 });
    authorizations.push(req.headers.get("authorization"));
    const body = (await req.json()) as {
      tools?: Array<{ type: string; name?: string; tools?: Array<{ name: string }> }>;
      input?: Array<{
        type?: string;
        call_id?: string;
        output?: unknown;
        role?: string;
        content?: Array<{ text?: string }>;
      }>;
      instructions?: string;
    };
    const names = (body.tools ?? []).flatMap((t) =>
      t.type === "namespace" ? (t.tools ?? []).map((inner) => `${t.name}/${inner.name}`) : [t.name ?? t.type],
    );
    const forRun = names.some((n) => n.startsWith(`${namespace}/`));
    if (forRun) {
      toolLists.push(names);
      const developer = (body.input ?? []).flatMap((item) =>
        item.type === "message" && item.role === "developer" ? (item.content ?? []).map((c) => c.text ?? "") : [],
      );
      instructions.push([body.instructions ?? "", ...developer].join("\n"));
    }
    for (const item of body.input ?? [])
      if (item.type === "function_call_output") outputs.push({ call_id: String(item.call_id), output: item.output });
    const turn = forRun ? turns[next++] : undefined;
    const n = toolLists.length;
    const output = (turn?.content ?? [{ type: "text" as const, text: "Done." }]).map((b, i) =>
      b.type === "tool_use"
        ? {
            type: "function_call",
            id: `fc_${n}_${i}`,
            call_id: b.id,
            name: b.name,
            ...(unnamespaced.includes(b.name) ? {} : { namespace }),
            arguments: b.arguments ?? JSON.stringify(b.input),
          }
        : {
            type: "message",
            id: `msg_${n}_${i}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: b.text, annotations: [] }],
          },
    );
    return sseResponse(
      responsesFrames(`resp_${n}`, output, {
        input_tokens: turn?.usage?.inputTokens ?? 10,
        output_tokens: turn?.usage?.outputTokens ?? 5,
      }),
    );
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    toolLists,
    outputs,
    authorizations,
    instructions,
    stop: () => server.stop(true),
  };
}

/** A model API on 127.0.0.1 (an ephemeral port) that never times a slow client out. */
function serveLoopback(fetch: (req: Request) => Promise<Response>) {
  return Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch });
}
