import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as v from "valibot";
import { ConfigSchema, configJsonSchema, configJsonSchemaText } from "../../src/config/schema.ts";
import { CHECK_IDS } from "../../src/checks/types.ts";

const SHIPPED = resolve(import.meta.dir, "..", "..", "schema", "config.schema.json");

test("schema/config.schema.json is what the valibot definition generates", () => {
  // If this fails, run: bun scripts/gen-config-schema.ts
  expect(readFileSync(SHIPPED, "utf8")).toBe(configJsonSchemaText());
});

test("the JSON Schema is strict and carries the defaults editors show", () => {
  const schema = configJsonSchema() as {
    additionalProperties: boolean;
    properties: Record<
      string,
      { default?: unknown; properties?: Record<string, unknown>; additionalProperties?: boolean }
    >;
  };
  expect(schema.additionalProperties).toBe(false);
  expect(Object.keys(schema.properties)).toEqual([
    "$schema",
    "project",
    "docs",
    "model",
    "maxRepairCycles",
    "maxTurns",
    "providerTimeoutSeconds",
    "providerDeadlineSeconds",
    "providerRetries",
    "contextBudgetTokens",
    "strict",
    "checks",
  ]);
  expect(schema.properties.docs!.default).toBe("docs");
  expect(schema.properties.model!.default).toBeNull();
  expect(schema.properties.maxRepairCycles!.default).toBe(3);
  expect(schema.properties.maxTurns!.default).toBe(40);
  expect(schema.properties.strict!.default).toBe(false);
  // No default value: absent, the environment may still set the timeout (doctor says which won).
  expect(JSON.stringify(schema.properties.providerTimeoutSeconds)).toContain("absent means 120");
  expect(JSON.stringify(schema.properties.providerRetries)).toContain("absent means 3");
  expect(Object.keys(schema.properties.checks!.properties!)).toEqual([...CHECK_IDS]);
  expect(schema.properties.checks!.additionalProperties).toBe(false);
});

test("contextBudgetTokens: a number, or one per provider:model-id, provider or default", () => {
  const valid = (contextBudgetTokens: unknown) => v.safeParse(ConfigSchema, { contextBudgetTokens }).success;
  expect(valid(80_000)).toBe(true);
  expect(valid({ default: 40_000, anthropic: 120_000, "openai:gpt-4.1": 90_000 })).toBe(true);
  expect(valid(1_000)).toBe(false);
  expect(valid(60_000.5)).toBe(false);
  expect(valid({ gemini: 60_000 })).toBe(false);
  expect(valid({ "replay:session.json": 60_000 })).toBe(false);
  expect(valid("60k")).toBe(false);
});
