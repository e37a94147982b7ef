/**
 * `replay:<file>`: plays back a recorded or scripted session instead of calling a model. It
 * drives the demo and the tests deterministically and offline, and is always labelled as a
 * replay so nobody mistakes its output for a live model's.
 *
 * Session file format (JSON):
 *
 * ```json
 * {
 *   "schema": "copperhead.session/1",
 *   "model": "anthropic:claude-sonnet-5-5",
 *   "description": "Adds a decoupling capacitor",
 *   "turns": [
 *     { "content": [{ "type": "text", "text": "Looking at the design." },
 *                   { "type": "tool_use", "id": "t1", "name": "read_schematic", "input": {} }],
 *       "stopReason": "tool_use",
 *       "usage": { "inputTokens": 1200, "outputTokens": 80 } },
 *     { "fail": { "kind": "http", "status": 500 } },
 *     { "fail": { "kind": "network" } }
 *   ]
 * }
 * ```
 *
 * - `model`: what was recorded (a `provider:id`, or anything descriptive such as "scripted");
 *   `description` is optional and free text.
 * - `turns[].content`: neutral {@link ContentBlock}s (`text`, `tool_use`, `tool_result`).
 * - `turns[].stopReason`: optional; `tool_use` when the content calls a tool, else `end_turn`.
 * - `turns[].usage`: optional; zero tokens when absent.
 * - `turns[].fail`: scripts a provider failure instead of an answer; such a turn needs no
 *   content. `{ "kind": "http", "status": 500 }` or `{ "kind": "network" }`.
 *
 * Each `complete` call returns the next turn. A turn with `fail` throws `provider_error`
 * instead (no retries: those belong to the HTTP providers, and a scripted failure must reach
 * the loop). Running out of turns throws `provider_error` too. The requests themselves are not checked against the
 * recording: a replay answers in order whatever it is asked.
 */
import { resolve } from "node:path";
import * as v from "valibot";
import { parseJsonText } from "../../config/json-syntax.ts";
import { CopperheadError } from "../../errors.ts";
import { READ_LIMITS, readRepoBytes } from "../../repo/repo-files.ts";
import type { ContentBlock, ModelProvider, ModelResponse } from "../conversation.ts";

export const SESSION_SCHEMA = "copperhead.session/1";
/** A recorded session is text; the cap for docs and journals holds hundreds of turns. */
const MAX_SESSION_BYTES = READ_LIMITS.text;

const STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "other"] as const;

const ContentBlockSchema = v.variant("type", [
  v.strictObject({ type: v.literal("text"), text: v.string() }),
  v.strictObject({ type: v.literal("tool_use"), id: v.string(), name: v.string(), input: v.unknown() }),
  v.strictObject({
    type: v.literal("tool_result"),
    toolUseId: v.string(),
    content: v.string(),
    isError: v.optional(v.boolean()),
  }),
]);

const TokenCount = v.pipe(v.number(), v.integer(), v.minValue(0));

const FailSchema = v.variant("kind", [
  v.strictObject({
    kind: v.literal("http"),
    status: v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599)),
  }),
  v.strictObject({ kind: v.literal("network") }),
]);

const TurnSchema = v.pipe(
  v.strictObject({
    content: v.optional(v.array(ContentBlockSchema)),
    stopReason: v.optional(v.picklist(STOP_REASONS)),
    usage: v.optional(v.strictObject({ inputTokens: TokenCount, outputTokens: TokenCount })),
    fail: v.optional(FailSchema),
  }),
  v.check(
    (turn) => turn.content !== undefined || turn.fail !== undefined,
    "a turn needs content, or a fail to script a failure",
  ),
);

const SessionSchema = v.strictObject({
  schema: v.literal(SESSION_SCHEMA),
  model: v.string(),
  description: v.optional(v.string()),
  turns: v.array(TurnSchema),
});

export type Session = v.InferOutput<typeof SessionSchema>;
type Turn = Session["turns"][number];

/** Loads and validates a session file now, so a bad file fails before any run starts. */
export function createReplayProvider(file: string, cwd: string = process.cwd()): ModelProvider {
  const session = loadSession(resolve(cwd, file), file);
  const label = `replay:${file} (recorded session)`;
  let next = 0;

  return {
    provider: "replay",
    model: file,
    label,
    async complete(_request, signal?: AbortSignal): Promise<ModelResponse> {
      if (signal?.aborted) {
        throw new CopperheadError("provider_error", `${label}: the model call was cancelled`, {
          cancelled: true,
          fix: "The run was cancelled; start it again when ready.",
        });
      }
      const index = next++;
      const turn = session.turns[index];
      if (!turn) {
        throw new CopperheadError(
          "provider_error",
          `${label}: the recorded session has no more turns (it has ${session.turns.length})`,
          {
            turns: session.turns.length,
            fix: `The run asked for more model turns than ${file} recorded; record a longer session or check that the run matches it.`,
          },
        );
      }
      if (turn.fail) throw scriptedFailure(turn.fail, label, index);
      return toResponse(turn);
    },
  };
}

function toResponse(turn: Turn): ModelResponse {
  const content = (turn.content ?? []) as ContentBlock[];
  return {
    content,
    stopReason: turn.stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
    usage: turn.usage ?? { inputTokens: 0, outputTokens: 0 },
  };
}

function scriptedFailure(fail: NonNullable<Turn["fail"]>, label: string, index: number): CopperheadError {
  const what = fail.kind === "http" ? `HTTP ${fail.status}` : "network error";
  return new CopperheadError("provider_error", `${label}: ${what} (scripted failure at turn ${index + 1})`, {
    scripted: true,
    ...(fail.kind === "http" ? { status: fail.status } : { network: true }),
    fix: "This failure is part of the recorded session; use another session file for a run that succeeds.",
  });
}

/**
 * The session, read like any file a person names: a regular file (a FIFO, `/dev/stdin` or a
 * device is refused, never read: under `copperhead mcp` stdin is the protocol stream), at most
 * `MAX_SESSION_BYTES`, every failure typed.
 */
function loadSession(path: string, shown: string): Session {
  let bytes: Buffer;
  try {
    bytes = readRepoBytes(path, { within: null, maxBytes: MAX_SESSION_BYTES });
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "not_found") {
      throw new CopperheadError("not_found", `Session file not found: ${shown}`, {
        file: shown,
        fix: "Pass an existing session file as --model replay:<file> (relative to the current directory).",
      });
    }
    throw err;
  }
  const value = parseJsonText(
    bytes.toString("utf8"),
    (where) =>
      new CopperheadError("parse_error", `${shown} is not valid JSON (${where})`, {
        file: shown,
        fix: `Fix the JSON syntax in ${shown}.`,
      }),
  );
  const result = v.safeParse(SessionSchema, value);
  if (!result.success) {
    const issue = result.issues[0];
    const path = jsonPath(issue.path);
    throw new CopperheadError("parse_error", `${shown}: ${path}: ${issue.message}`, {
      file: shown,
      path,
      fix: `Make ${shown} a "${SESSION_SCHEMA}" session (see the format in src/agent/providers/replay.ts).`,
    });
  }
  return result.output;
}

/** A valibot issue path as `$.turns[2].content[0].type`. */
function jsonPath(path: v.BaseIssue<unknown>["path"]): string {
  let out = "$";
  for (const item of path ?? []) {
    const key = item.key;
    out += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
  }
  return out;
}
