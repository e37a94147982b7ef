/**
 * The copy-paste integrations in integrations/ stay usable: every host config registers
 * `copperhead mcp` over stdio, the skill and the AGENTS.md snippet carry the rules a host agent
 * must follow, and server.json keeps the shape the MCP registry accepts.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { MCP_TOOLS } from "../../src/mcp/tools.ts";

const ROOT = resolve(import.meta.dir, "../..");
const read = (rel: string) => readFileSync(resolve(ROOT, rel), "utf8");
const pkg = JSON.parse(read("package.json")) as { version: string };

describe("integrations/server.json", () => {
  /*
   * The essential structure of the registry's server.json, from the published schema
   * https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json (source:
   * github.com/modelcontextprotocol/registry, docs/reference/server-json/server.schema.json and
   * official-registry-requirements.md): required name (reverse-DNS, exactly one slash,
   * ^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$, 3–200 chars), description (1–100 chars) and version (an
   * exact version, no range, not "latest"); packages[] each with registryType, identifier,
   * version, transport ({ type: "stdio" } or an http transport with url), fileSha256 (64 hex)
   * required for mcpb, no properties beyond the schema's; arguments typed positional (with
   * value or valueHint) or named (with name); environment variables with a name.
   */
  const server = JSON.parse(read("integrations/server.json")) as Record<string, any>;

  test("has the registry's required fields in the required shapes", () => {
    expect(server.$schema).toBe("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.name.length).toBeGreaterThanOrEqual(3);
    expect(server.name.length).toBeLessThanOrEqual(200);
    // A GitHub namespace; OWNER is the placeholder filled in at release.
    expect(server.name).toBe("io.github.OWNER/copperhead");
    expect(server.description.length).toBeGreaterThanOrEqual(1);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.version).toBe(pkg.version);
    expect(server.version).not.toMatch(/^latest$|[\^~><=*x]|\|\|/);
    expect(server.repository).toEqual({ url: "https://github.com/OWNER/copperhead", source: "github" });
    const allowed = new Set([
      "$schema",
      "name",
      "title",
      "description",
      "version",
      "repository",
      "websiteUrl",
      "packages",
      "remotes",
      "icons",
      "_meta",
    ]);
    for (const key of Object.keys(server)) expect(allowed.has(key)).toBe(true);
    // stdio only: copperhead opens no network transport, so it has no remotes.
    expect(server.remotes).toBeUndefined();
  });

  test("its package runs `copperhead mcp` over stdio and declares keys as secrets, never required", () => {
    expect(server.packages).toHaveLength(1);
    const p = server.packages[0];
    const allowed = new Set([
      "registryType",
      "registryBaseUrl",
      "identifier",
      "version",
      "fileSha256",
      "runtimeHint",
      "transport",
      "runtimeArguments",
      "packageArguments",
      "environmentVariables",
    ]);
    for (const key of Object.keys(p)) expect(allowed.has(key)).toBe(true);
    expect(["npm", "pypi", "oci", "nuget", "mcpb"]).toContain(p.registryType);
    expect(typeof p.identifier).toBe("string");
    expect(p.version).toBe(pkg.version);
    if (p.registryType === "mcpb") {
      expect(p.identifier).toMatch(/^https:\/\/.+\.mcpb$/);
      expect(p.fileSha256).toMatch(/^[a-f0-9]{64}$/);
    }
    expect(p.transport).toEqual({ type: "stdio" });
    expect(p.packageArguments).toEqual([{ type: "positional", value: "mcp" }]);
    for (const env of p.environmentVariables) {
      expect(env.name).toMatch(/^[A-Z_]+$/);
      expect(env.isRequired).toBe(false);
      if (/_KEY$/.test(env.name)) expect(env.isSecret).toBe(true);
    }
    expect(p.environmentVariables.map((e: { name: string }) => e.name)).toEqual([
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "COPPERHEAD_BASE_URL",
      "COPPERHEAD_MODEL",
    ]);
  });
});

describe("host registrations", () => {
  const servers: Array<[string, { command: string; args: string[] }]> = [
    ["Cursor", JSON.parse(read("integrations/cursor/.cursor/mcp.json")).mcpServers.copperhead],
    [
      "Claude Desktop",
      JSON.parse(read("integrations/claude-desktop/claude_desktop_config.json")).mcpServers.copperhead,
    ],
    ["Windsurf", JSON.parse(read("integrations/windsurf/mcp_config.json")).mcpServers.copperhead],
    ["Codex", (Bun.TOML.parse(read("integrations/codex/config.toml")) as any).mcp_servers.copperhead],
  ];
  for (const [host, entry] of servers) {
    test(`${host} starts \`copperhead mcp\` over stdio`, () => {
      expect(entry.command).toBe("copperhead");
      expect(entry.args[0]).toBe("mcp");
      expect(entry.args.slice(1).every((a, i) => (i % 2 === 0 ? a === "--repo" : a.length > 0))).toBe(true);
      expect(JSON.stringify(entry)).not.toMatch(/"url"|http/);
    });
  }

  test("Claude Code: the documented one-liner, on the saved login", () => {
    const line = 'claude mcp add copperhead --env COPPERHEAD_MODEL=claude-code -- "$(command -v copperhead)" mcp';
    expect(read("integrations/claude-code/README.md")).toContain(line);
    expect(read("README.md")).toContain(line);
  });

  test("Codex: copperhead_do runs on the saved codex login", () => {
    expect((Bun.TOML.parse(read("integrations/codex/config.toml")) as any).mcp_servers.copperhead.env).toEqual({
      COPPERHEAD_MODEL: "codex",
    });
  });
});

describe("host agent instructions", () => {
  const skill = read("integrations/claude-code/skills/copperhead/SKILL.md");
  const agents = read("integrations/codex/AGENTS.md");

  test("the skill has name and description front matter", () => {
    const front = /^---\n([\s\S]*?)\n---\n/.exec(skill);
    expect(front).not.toBeNull();
    const fields = Object.fromEntries(
      front![1]!.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
    );
    expect(fields.name).toBe("copperhead");
    expect(fields.description!.length).toBeGreaterThan(50);
    expect(fields.description!.length).toBeLessThanOrEqual(1024);
  });

  for (const [name, text] of [
    ["SKILL.md", skill],
    ["AGENTS.md", agents],
  ] as const) {
    test(`${name}: changes only through copperhead_do, never own file tools; statuses relayed honestly`, () => {
      expect(text).toContain("copperhead_do");
      expect(text).toMatch(/[Nn]ever edit/);
      expect(text).toMatch(/file.*tools/);
      expect(text).toMatch(/honestly/);
      for (const status of ["committed", "rolled_back", "refused", "proposed"]) expect(text).toContain(`\`${status}\``);
      for (const tool of MCP_TOOLS) expect(text).toContain(tool.name);
    });
  }
});

test("docs/mcp.md documents the MCP server: registrations, the four tools, the smoke test, the key rules", () => {
  const section = read("docs/mcp.md");
  expect(section.length).toBeGreaterThan(500);
  for (const tool of MCP_TOOLS) expect(section).toContain(tool.name);
  for (const host of ["Claude Code", "Codex", "Cursor", "Claude Desktop", "Windsurf"]) expect(section).toContain(host);
  expect(section).toContain("printf");
  expect(section).toContain("copperhead mcp");
  expect(section).toContain("missing_api_key");
  expect(section).toContain("ANTHROPIC_API_KEY");
});
