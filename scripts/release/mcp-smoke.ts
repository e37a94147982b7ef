/**
 * The MCP smoke test shared by the Homebrew formula's `test do` block and the release tests:
 * initialize, then list tools; a working server answers with all four outcome tools.
 */
export const MCP_SMOKE_TEST_INPUT: string[] = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "0" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
].map((message) => JSON.stringify(message));

export const MCP_TOOL_NAMES = ["copperhead_check", "copperhead_do", "copperhead_sync", "copperhead_init"];
