/**
 * What the MCP tools return is what they advertise: the compiled binary over real stdio, each of
 * the four tools called on a real project (check, with and without a baseline; init; sync, to
 * verify and to resolve; do, committed and rolled back, through `replay:` sessions), and every
 * `structuredContent` validated against the tool's `outputSchema` from `tools/list` by a JSON
 * Schema 2020-12 validator in strict mode. Each result is validated a second time with every
 * object closed (`additionalProperties: false`), so a field a tool sends but its schema does
 * not declare fails too: the result types are exactly the schemas they are inferred from.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import {
  ADD_CAP_REQUEST,
  buildTemplateRepo,
  copyRepo,
  PROVIDER_VARS,
  replayModel,
  TOOL_NAMES,
} from "../support/mcp.ts";
import { BINARY, requireBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  requireBinary();
  template = await buildTemplateRepo();
}, 60_000);

const LONG = 600_000;

interface Server {
  client: Client;
  tools: Map<string, Tool>;
  close(): Promise<void>;
}

async function serve(repo: string, env: Record<string, string> = {}): Promise<Server> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !PROVIDER_VARS.includes(k)),
  ) as Record<string, string>;
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp", "--repo", repo],
    env: { ...base, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", NO_COLOR: "1", ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "copperhead-output-schemas", version: "0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, tools: new Map(tools.map((t) => [t.name, t])), close: () => transport.close() };
}

/** A copy of `schema` in which every object schema admits only the properties it declares. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const out = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === "properties" ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, closed(s)])) : closed(v),
    ]),
  );
  if (out.type === "object" && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);

/** Which tools had a result validated, and what each result said (status, for the record). */
const validated = new Map<string, string[]>();

/** Calls `name` and validates its structuredContent against the advertised outputSchema, open and closed. */
async function callValidated(
  server: Server,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = (await server.client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout: LONG,
  })) as CallToolResult;
  expect(result.isError ?? false).toBe(false);
  const content = result.structuredContent!;
  const schema = server.tools.get(name)!.outputSchema!;
  for (const form of [schema, closed(schema)] as object[]) {
    const validate = ajv.compile(form);
    const valid = validate(content);
    expect(
      valid ? [] : validate.errors!.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`),
    ).toEqual([]);
  }
  validated.set(name, [...(validated.get(name) ?? []), String(content.status ?? content.ok ?? content.schema)]);
  return content;
}

/** Docs that drifted from the design (a stale reference, a hand-edited BOM) and a violated requirement. */
function drift(repo: string): void {
  writeFileSync(join(repo, "docs/NOTES.md"), "# Notes\n\nThe LED current is set by `R9`.\n");
  const spec = join(repo, "docs/SPEC.md");
  writeFileSync(
    spec,
    readFileSync(spec, "utf8").trimEnd() +
      "\n- REQ-LED-1: The LED series resistor is at least 2k.\n  - check: R3.value >= 2k\n",
  );
  const bom = join(repo, "docs/BOM.md");
  writeFileSync(bom, readFileSync(bom, "utf8").replace("| R3 | 1k |", "| R3 | 2k2 |"));
}

describe("MCP structuredContent matches each tool's advertised outputSchema (compiled binary, stdio)", () => {
  test(
    "copperhead_check and copperhead_init, on drifted docs, against a baseline, with a refused file",
    async () => {
      const repo = await copyRepo(template);
      drift(repo);
      const server = await serve(repo);
      expect([...server.tools.keys()].sort()).toEqual(TOOL_NAMES);
      const summary = await callValidated(server, "copperhead_check", { fab: true, strict: true });
      expect((summary.findings as unknown[]).length).toBeGreaterThan(0);
      const baselined = await callValidated(server, "copperhead_check", { baseline: "HEAD", only_new: true, limit: 1 });
      expect((baselined.baseline as { counts: { new: number } }).counts.new).toBeGreaterThan(0);
      const init = await callValidated(server, "copperhead_init");
      expect(
        (init.files as Array<{ action: string; reason?: string }>).some((f) => f.action === "refused" && f.reason),
      ).toBe(true);
      await server.close();
    },
    LONG,
  );

  test(
    "copperhead_sync: the report of drift and a violation, then resolving the drift through a gated run",
    async () => {
      const repo = await copyRepo(template);
      drift(repo);
      await git(repo, "add", "-A");
      await git(repo, "commit", "--quiet", "-m", "docs drifted");

      const server = await serve(repo, { COPPERHEAD_MODEL: replayModel("sync-respects-requirements") });
      const report = await callValidated(server, "copperhead_sync");
      expect([(report.drift as unknown[]).length, (report.violations as unknown[]).length]).toEqual([2, 1]);
      const resolved = await callValidated(server, "copperhead_sync", { resolve: true });
      expect((resolved.resolution as { status: string }).status).toBe("committed");
      await server.close();
    },
    LONG,
  );

  test(
    "copperhead_do: a committed change with its design diff, and a change rolled back with new findings",
    async () => {
      const committed = await serve(await copyRepo(template), { COPPERHEAD_MODEL: replayModel("add-decoupling-cap") });
      const summary = await callValidated(committed, "copperhead_do", { request: ADD_CAP_REQUEST });
      await committed.close();
      expect(summary.status).toBe("committed");
      expect((summary.diff as { board: unknown }).board).not.toBeNull();

      const rolledBack = await serve(await copyRepo(template), { COPPERHEAD_MODEL: replayModel("erc-never-repaired") });
      const failed = await callValidated(rolledBack, "copperhead_do", {
        request: "Add a 10k pull-down resistor R4 to GND",
      });
      await rolledBack.close();
      expect(failed.status).toBe("rolled_back");
      expect((failed.verification as { newFindings: unknown[] }).newFindings.length).toBeGreaterThan(0);
    },
    LONG,
  );

  test("every tool's result was validated", () => {
    expect([...validated.keys()].sort()).toEqual(TOOL_NAMES);
  });
});
