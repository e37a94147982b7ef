import { defineCommand } from "citty";
import { serveToolBridge } from "../mcp/bridge-server.ts";

/** Started by an agent CLI during a `do` run that uses it as the model; never by hand. */
export const mcpBridgeCommand = defineCommand({
  meta: {
    name: "mcp-bridge",
    description: "The private MCP server a logged-in agent CLI uses during one copperhead run",
    hidden: true,
  },
  async run() {
    await serveToolBridge();
    return 0;
  },
});
