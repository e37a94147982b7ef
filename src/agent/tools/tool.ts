/**
 * The agent's tools: each has a valibot schema (which also gives the JSON Schema the model
 * sees, made by util/tool-schema.ts as the MCP tools' are), the effect it has on the run (which decides when it is unlocked and what the loop does
 * with its result), and a handler. Arguments are validated before a
 * handler runs, and a tool called outside its phase is refused — in both cases the model gets
 * a tool error and nothing is written.
 */
import type * as v from "valibot";
import { CopperheadError } from "../../errors.ts";
import { containsSecret } from "../../redact.ts";
import { checkArguments, toolJsonSchema } from "../../util/tool-schema.ts";
import type { ToolImage, ToolSpec } from "../conversation.ts";

/**
 * What a tool call does to the run, which is all the loop reads of a tool:
 * - `read` changes nothing, and is available at any point;
 * - `propose` makes the proposal (before approval) or widens it (after): its result is a
 *   `SpecOutcome` when it decides (the proposal to approve, or a refusal), and the call and its
 *   result stay whole in the history;
 * - `edit` changes the design or the run's records, once a proposal is approved;
 * - `exit` ends the run (a refusal, a question, a change given up): its result is a `SpecOutcome`;
 * - `finish` hands the change over to verification.
 */
export type ToolEffect = "read" | "propose" | "edit" | "exit" | "finish";

export interface Tool<Ctx, S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  effect: ToolEffect;
  description: string;
  schema: S;
  /**
   * The edit tool's arguments that become prose (doc text, a decision, the commit message),
   * never design-file content or a path: a secret in them is redacted and the call goes on. A
   * secret anywhere else in an edit tool's arguments (an object key included) fails the call,
   * so none is ever written into a schematic, a board or a file name, not even as
   * `[REDACTED]`. Other tools write no design file and always redact.
   */
  prose?: string[];
  run(ctx: Ctx, args: v.InferOutput<S>): unknown | Promise<unknown>;
}

/** Keeps `args` typed from the schema at the definition site. */
export function defineTool<Ctx, S extends v.GenericSchema>(tool: Tool<Ctx, S>): Tool<Ctx, S> {
  return tool;
}

/**
 * A read tool's answer with pictures: `result` is what every model reads (complete on its own,
 * a text legend of the picture), `images` go only to providers that take image input.
 */
export class WithImages {
  constructor(
    readonly result: unknown,
    readonly images: ToolImage[],
  ) {}
}

/** A failure the model should read and act on (bad arguments, unknown ref, refused path). */
export class ToolError extends Error {
  override readonly name = "ToolError";
  /** What kind of refusal it is, when the record should say (e.g. `out_of_scope`). */
  readonly code?: string;
}

/** Runs `fn`; a typed error the model can act on becomes a tool error with its fix. */
export function toolCall<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CopperheadError && !err.endsRun)
      throw new ToolError(err.fix ? `${err.message} (${err.fix})` : err.message);
    throw err;
  }
}

export function toolSpec(tool: Tool<unknown>): ToolSpec {
  return { name: tool.name, description: tool.description, inputSchema: toolJsonSchema(tool.schema, "input") };
}

/**
 * Whether `input` holds a secret where `tool` must refuse it rather than redact it (see `prose`):
 * the tools that write the design or what is committed with it (`edit`, and `finish`, whose
 * words go into the changelog and the commit).
 */
export function refusesSecret(tool: Tool<unknown>, input: unknown, redact: (text: string) => string): boolean {
  if (tool.effect !== "edit" && tool.effect !== "finish") return false;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return containsSecret(input, redact);
  const prose = new Set(tool.prose ?? []);
  return Object.entries(input).some(
    ([key, value]) => containsSecret(key, redact) || (!prose.has(key) && containsSecret(value, redact)),
  );
}

/** Arguments a provider (or the loop) could not accept as given; the reason is the model's to read. */
export function invalidArguments(reason: string): { __invalid_arguments: string } {
  return { __invalid_arguments: reason };
}

/** Validates arguments; the message lists every problem by path so the model can fix its call. */
export function parseArgs<S extends v.GenericSchema>(tool: Tool<unknown, S>, input: unknown): v.InferOutput<S> {
  if (input && typeof input === "object" && "__invalid_json" in input) {
    throw new ToolError(
      `the arguments were not valid JSON: ${String((input as { __invalid_json: unknown }).__invalid_json).slice(0, 200)}`,
    );
  }
  if (input && typeof input === "object" && "__invalid_arguments" in input) {
    throw new ToolError(
      `invalid arguments for ${tool.name}: ${String((input as { __invalid_arguments: unknown }).__invalid_arguments)}`,
    );
  }
  const checked = checkArguments(tool.schema, input);
  if (checked.ok) return checked.value;
  throw new ToolError(`invalid arguments for ${tool.name}: ${checked.problems.join("; ")}`);
}
