/**
 * The agent's tools: each has a valibot schema (which also gives the JSON Schema the model
 * sees), the phase family that unlocks it, and a handler. Arguments are validated before a
 * handler runs, and a tool called outside its phase is refused — in both cases the model gets
 * a tool error and nothing is written.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { CopperheadError } from "../../errors.ts";
import type { ToolSpec } from "../model.ts";

/**
 * Read tools are always available; spec tools before approval; edit tools after it; exit
 * tools (a refusal) at any point.
 */
export type ToolFamily = "read" | "spec" | "edit" | "exit";

export interface Tool<Ctx, S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  family: ToolFamily;
  description: string;
  schema: S;
  run(ctx: Ctx, args: v.InferOutput<S>): unknown | Promise<unknown>;
}

/** Keeps `args` typed from the schema at the definition site. */
export function defineTool<Ctx, S extends v.GenericSchema>(tool: Tool<Ctx, S>): Tool<Ctx, S> {
  return tool;
}

/** A failure the model should read and act on (bad arguments, unknown ref, refused path). */
export class ToolError extends Error {
  override readonly name = "ToolError";
}

/** Runs `fn`; a typed error (what the model can act on) becomes a tool error with its fix. */
export function toolCall<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CopperheadError) throw new ToolError(err.fix ? `${err.message} (${err.fix})` : err.message);
    throw err;
  }
}

export function toolSpec(tool: Tool<unknown>): ToolSpec {
  const { $schema: _ignored, ...schema } = toJsonSchema(tool.schema, { errorMode: "ignore" }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, inputSchema: schema };
}

/** Validates arguments; the message lists every problem by path so the model can fix its call. */
export function parseArgs<S extends v.GenericSchema>(tool: Tool<unknown, S>, input: unknown): v.InferOutput<S> {
  if (input && typeof input === "object" && "__invalid_json" in input) {
    throw new ToolError(`the arguments were not valid JSON: ${String((input as { __invalid_json: unknown }).__invalid_json).slice(0, 200)}`);
  }
  const result = v.safeParse(tool.schema, input ?? {});
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  throw new ToolError(`invalid arguments for ${tool.name}: ${problems.join("; ")}`);
}
