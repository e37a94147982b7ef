/**
 * The protocol pinned: what the server answers to `initialize` (2025-06-18 and the SDK's latest
 * version) and `tools/list` must equal the golden fixtures in fixtures/mcp/, byte for byte once
 * `serverInfo.version` is normalised. A diff here means hosts would see something new: review
 * it, then regenerate with `bun scripts/gen-mcp-fixtures.ts`.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { fixtureText, goldenExchanges, MCP_FIXTURES_DIR } from "../../scripts/gen-mcp-fixtures.ts";

describe("golden MCP fixtures", async () => {
  const exchanges = await goldenExchanges();

  test("the fixture folder holds exactly the golden exchanges", () => {
    expect(
      readdirSync(MCP_FIXTURES_DIR)
        .filter((f) => f.endsWith(".json"))
        .sort(),
    ).toEqual(Object.keys(exchanges).sort());
  });

  for (const [name, exchange] of Object.entries(exchanges)) {
    test(`${name} matches what the server answers now`, () => {
      const stored = readFileSync(join(MCP_FIXTURES_DIR, name), "utf8");
      expect(JSON.parse(stored)).toEqual(JSON.parse(fixtureText(exchange)));
      expect(stored).toBe(fixtureText(exchange));
    });
  }

  test("the server negotiates both pinned versions and lists the four tools", () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain("2025-06-18");
    const version = (name: string) =>
      (exchanges[name]!.response as unknown as { result: { protocolVersion: string } }).result.protocolVersion;
    expect(version("initialize-2025-06-18.json")).toBe("2025-06-18");
    expect(version("initialize-latest.json")).toBe(LATEST_PROTOCOL_VERSION);
    const tools = (exchanges["tools-list.json"]!.response as unknown as { result: { tools: Array<{ name: string }> } })
      .result.tools;
    expect(tools.map((t) => t.name)).toEqual([
      "copperhead_check",
      "copperhead_do",
      "copperhead_sync",
      "copperhead_init",
    ]);
  });
});
