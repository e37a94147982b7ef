import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { configJsonSchema, configJsonSchemaText } from "../../src/config/schema.ts";
import { CHECK_IDS } from "../../src/checks/types.ts";

const SHIPPED = resolve(import.meta.dir, "..", "..", "schema", "config.schema.json");

test("schema/config.schema.json is what the valibot definition generates", () => {
  // If this fails, run: bun scripts/gen-config-schema.ts
  expect(readFileSync(SHIPPED, "utf8")).toBe(configJsonSchemaText());
});

test("the JSON Schema is strict and carries the defaults editors show", () => {
  const schema = configJsonSchema() as {
    additionalProperties: boolean;
    properties: Record<string, { default?: unknown; properties?: Record<string, unknown>; additionalProperties?: boolean }>;
  };
  expect(schema.additionalProperties).toBe(false);
  expect(Object.keys(schema.properties)).toEqual(["$schema", "project", "docs", "model", "maxRepairCycles", "maxTurns", "providerTimeoutSeconds", "providerDeadlineSeconds", "providerRetries", "strict", "checks"]);
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
