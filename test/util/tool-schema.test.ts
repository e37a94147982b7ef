/**
 * One tool declaration, one dialect: every model tool's arguments and every MCP tool's
 * arguments and result become JSON Schema 2020-12 through util/tool-schema.ts, which a strict
 * 2020-12 validator accepts as they are (no `$schema`, no `$ref`, no draft-07 array-form `items`),
 * and arguments are checked the same way for both.
 */
import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import * as v from "valibot";
import { toolSpec, type Tool } from "../../src/agent/tools/tool.ts";
import { MCP_TOOLS } from "../../src/mcp/tools.ts";
import { DO_TOOLS } from "../../src/run/do-strategy.ts";
import { checkArguments, toolJsonSchema, type ToolJsonSchema } from "../../src/util/tool-schema.ts";

// Strict, except for the lint on open tuples: a model tool's `[x, y]` takes (and ignores) more
// items, as valibot's `tuple` does, which is a choice of that tool, not of the dialect.
const ajv = new Ajv2020({ strict: true, strictTuples: false });

/** Every keyword path in `schema` whose name is one of `keys`, or whose `items` is an array. */
function offending(schema: unknown, path = "#"): string[] {
  if (schema === null || typeof schema !== "object") return [];
  return Object.entries(schema).flatMap(([key, value]) => {
    const here = `${path}/${key}`;
    const bad =
      ["$schema", "$ref", "$defs", "definitions", "additionalItems"].includes(key) ||
      (key === "items" && Array.isArray(value));
    return [...(bad ? [here] : []), ...offending(value, here)];
  });
}

/** Problems with `schema` as a tool schema in the one dialect; empty when it is one. */
function dialectProblems(schema: ToolJsonSchema): string[] {
  const problems = offending(schema).map((path) => `${path} is not in the tool dialect`);
  if (schema.type !== "object") problems.push(`type is ${JSON.stringify(schema.type)}, not "object"`);
  if (!ajv.validateSchema(schema)) problems.push(ajv.errorsText(ajv.errors));
  else ajv.compile(schema);
  return problems;
}

const declared = [
  ...DO_TOOLS.map(
    (tool) => [`model tool ${tool.name}`, toolSpec(tool as Tool<unknown>).inputSchema as ToolJsonSchema] as const,
  ),
  ...MCP_TOOLS.flatMap((tool) => [
    [`MCP tool ${tool.name} input`, toolJsonSchema(tool.input, "input")] as const,
    [`MCP tool ${tool.name} output`, toolJsonSchema(tool.output, "output")] as const,
  ]),
];

describe("tool schemas", () => {
  test("every model tool and every MCP tool, arguments and results, is a JSON Schema 2020-12 object schema", () => {
    expect(DO_TOOLS.length).toBeGreaterThan(20);
    expect(MCP_TOOLS.map((t) => t.name).sort()).toEqual([
      "copperhead_check",
      "copperhead_do",
      "copperhead_init",
      "copperhead_sync",
    ]);
    const problems = declared.flatMap(([name, schema]) => dialectProblems(schema).map((p) => `${name}: ${p}`));
    expect(problems).toEqual([]);
  });

  test("the model sees its tools through the same conversion as MCP hosts", () => {
    for (const tool of DO_TOOLS)
      expect(toolSpec(tool as Tool<unknown>).inputSchema).toEqual(toolJsonSchema(tool.schema, "input"));
  });

  test("a tuple is written as 2020-12 prefixItems, which draft-07 would write as an array of items", () => {
    const schema = toolJsonSchema(v.object({ at: v.pipe(v.tuple([v.number(), v.number()]), v.length(2)) }), "output");
    expect(schema.properties!.at).toEqual({
      type: "array",
      prefixItems: [{ type: "number" }, { type: "number" }],
      minItems: 2,
      maxItems: 2,
    });
    expect(dialectProblems(schema)).toEqual([]);
  });

  test("the input side is what a caller sends, before the schema's own transforms", () => {
    const schema = v.object({ count: v.pipe(v.string(), v.transform(Number), v.number()) });
    expect(toolJsonSchema(schema, "input").properties!.count).toEqual({ type: "string" });
    expect(toolJsonSchema(schema, "output").properties!.count).toEqual({ type: "number" });
  });

  test("a schema for something other than an object, or with a part JSON cannot describe, is refused at declaration", () => {
    expect(() => toolJsonSchema(v.string(), "input")).toThrow("a tool's input schema must describe an object");
    expect(() => toolJsonSchema(v.object({ when: v.date() }), "output")).toThrow(
      'The "date" schema cannot be converted',
    );
  });

  test("a trim or a custom check is the validator's alone: the JSON Schema keeps the rest", () => {
    const schema = v.object({
      ref: v.pipe(
        v.string(),
        v.trim(),
        v.check((s) => s !== "?"),
        v.minLength(1),
      ),
    });
    expect(toolJsonSchema(schema, "input").properties!.ref).toEqual({ type: "string", minLength: 1 });
  });
});

describe("checkArguments", () => {
  const schema = v.strictObject({
    ref: v.pipe(v.string(), v.trim(), v.minLength(1)),
    pins: v.optional(v.array(v.number())),
  });

  test("valid arguments come back parsed; missing arguments are an empty object", () => {
    expect(checkArguments(schema, { ref: " R1 " })).toEqual({ ok: true, value: { ref: "R1" } });
    expect(checkArguments(v.object({}), undefined)).toEqual({ ok: true, value: {} });
  });

  test("every problem is listed by its path, a problem with the whole without one", () => {
    const checked = checkArguments(schema, { ref: "", pins: [1, "2"], extra: true });
    expect(checked.ok).toBe(false);
    const problems = (checked as { problems: string[] }).problems;
    expect(problems.map((p) => p.split(":")[0])).toEqual(["ref", "pins.1", "extra"]);
    const whole = checkArguments(schema, "R1");
    expect(whole).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^Invalid type: Expected Object but received "R1"$/)],
    });
  });
});
