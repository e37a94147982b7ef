#!/usr/bin/env bun
/**
 * Writes schema/config.schema.json from the valibot definition in src/config/schema.ts, so the
 * schema editors see can never disagree with what copperhead validates. A test fails when the
 * shipped file is stale; run `bun scripts/gen-config-schema.ts` after changing the schema.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { configJsonSchemaText } from "../src/config/schema.ts";

const target = resolve(import.meta.dir, "..", "schema", "config.schema.json");
writeFileSync(target, configJsonSchemaText());
process.stderr.write(`wrote ${target}\n`);
