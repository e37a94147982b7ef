/**
 * The agent-CLI bridge through the compiled binary: `copperhead mcp-bridge`, started as an agent
 * CLI starts it, answers an MCP client's `tools/call` with the run's result, pictures included as
 * MCP image content (the run's end of the bridge is opened here, as a run opens it).
 */
import { afterEach, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { openToolBridge, type ToolBridge } from "../../src/agent/providers/agent-cli/bridge.ts";
import { requireBinary } from "./binary.ts";

let bridge: ToolBridge | undefined;
afterEach(() => bridge?.close());

test("a tool result's images reach the CLI as MCP image content after the text", async () => {
  bridge = openToolBridge();
  bridge.setTools([{ name: "view", description: "Shows a region", inputSchema: { type: "object", properties: {} } }]);
  // A few hundred KB of base64, as a rendered region is: more than one socket write holds.
  const data = Buffer.alloc(300 * 1024, 7).toString("base64");
  bridge.onCall((call) =>
    call.reply({ content: `legend for ${call.name}`, isError: false, images: [{ mediaType: "image/png", data }] }),
  );
  const client = new Client({ name: "cli-under-test", version: "0" });
  await client.connect(
    new StdioClientTransport({
      command: requireBinary(),
      args: ["mcp-bridge"],
      env: { ...(process.env as Record<string, string>), ...bridge.env },
    }),
  );
  try {
    const result = await client.callTool({ name: "view", arguments: {} });
    expect(result.content).toEqual([
      { type: "text", text: "legend for view" },
      { type: "image", data, mimeType: "image/png" },
    ]);
  } finally {
    await client.close();
  }
}, 30_000);
