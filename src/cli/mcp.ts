import { defineCommand } from "citty";
import { serveStdio } from "../mcp/server.ts";
import { join } from "node:path";
import { openRepo } from "../repo/recovery.ts";

export const mcpCommand = defineCommand({
  meta: {
    name: "mcp",
    description: "Serve the four outcome tools (copperhead_check, _do, _sync, _init) to an AI host over stdio MCP",
  },
  args: {
    repo: {
      type: "string",
      description: "A folder of the repository to serve (default: current directory); the repository is its git root",
      valueHint: "PATH",
    },
  },
  async run({ args }) {
    // The tools take the folder the server was started in, so they find the project as a
    // command run there would; the repository is its git root all the same.
    const { root, within } = await openRepo(args.repo);
    await serveStdio(join(root, within));
    return 0;
  },
});
