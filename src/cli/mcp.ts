import { defineCommand } from "citty";
import { serveStdio } from "../mcp/server.ts";
import { openRepo } from "../repo/recovery.ts";

export const mcpCommand = defineCommand({
  meta: {
    name: "mcp",
    description: "Serve the four outcome tools (copperhead_check, _do, _sync, _init) to an AI host over stdio MCP",
  },
  args: {
    repo: { type: "string", description: "The repository to serve (default: current directory)", valueHint: "PATH" },
  },
  async run({ args }) {
    await serveStdio(await openRepo(args.repo));
    return 0;
  },
});
