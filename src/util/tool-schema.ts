/**
 * How a tool declares what it takes and what it returns, for both kinds of tool copperhead has:
 * the model's tools in a gated run (`agent/tools/`) and the MCP server's outcome tools
 * (`mcp/tools.ts`). A valibot schema is the one source of truth: it types the handler, validates
 * what a caller sent, and becomes the JSON Schema the other side reads.
 *
 * Every such JSON Schema is in one dialect, JSON Schema 2020-12, written without `$schema`:
 * - MCP (2025-06-18) asks for a JSON Schema object with `type: "object"` for a tool's
 *   `inputSchema` and `outputSchema`, and its next revision makes 2020-12 the dialect of a schema
 *   that names none;
 * - the Anthropic Messages API and OpenAI's function tools take 2020-12 schemas as they are;
 * - Claude Code drops a tool whose schema uses draft-07's array-form `items` (a tuple, which
 *   2020-12 writes as `prefixItems`), and Codex reads the same schemas through MCP;
 * - a validator that knows only draft-07 (the MCP SDK's default Ajv, as some hosts use it) reads a
 *   schema without `$schema` by the keywords both dialects share, instead of refusing an unknown
 *   meta-schema.
 * Nothing here makes `$defs`/`$ref` (no schema is recursive): some hosts do not resolve them.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";

/** A tool schema as the MCP `inputSchema`/`outputSchema` and the model APIs take it. */
export interface ToolJsonSchema {
  type: "object";
  properties?: Record<string, object>;
  required?: string[];
  [keyword: string]: unknown;
}

/**
 * Checks JSON Schema has no keyword for: what a caller sends is trimmed, or held to a predicate,
 * by the validator alone. Anything else that does not convert (a date, a class instance) throws
 * when the tool is declared, rather than being advertised as "anything".
 */
const VALIDATOR_ONLY_ACTIONS = ["trim", "check"];

/**
 * The JSON Schema of a tool's arguments (`"input"`: what a caller sends, before any trim or
 * transform of the schema's pipeline) or of its result (`"output"`: what the handler returns).
 */
export function toolJsonSchema(schema: v.GenericSchema, side: "input" | "output"): ToolJsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, {
    target: "draft-2020-12",
    typeMode: side,
    errorMode: "throw",
    ignoreActions: VALIDATOR_ONLY_ACTIONS,
  });
  if (rest.type !== "object")
    throw new Error(`a tool's ${side} schema must describe an object, not ${JSON.stringify(rest.type)}`);
  return rest as ToolJsonSchema;
}

/** Arguments checked against a tool's schema: the parsed value, or every problem by path. */
export type CheckedArguments<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/**
 * Validates `input` against a tool's argument schema. Each problem is `path: message` (just the
 * message for the arguments as a whole), so the caller, a model or a host, can fix its call.
 */
export function checkArguments<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
): CheckedArguments<v.InferOutput<S>> {
  const result = v.safeParse(schema, input ?? {});
  if (result.success) return { ok: true, value: result.output };
  const problems = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return { ok: false, problems };
}
