/**
 * `claude-code[:<model>]`: Claude Code's non-interactive print mode, with its saved login.
 *
 * What this relies on (pinned by the stand-in CLI the tests run):
 * - `claude -p --output-format stream-json --verbose` reads the prompt from stdin when none is
 *   given as an argument, and prints one JSON event per line (stream-json needs --verbose): `system`/`init` with `session_id` and the `tools` the session
 *   has, `assistant` messages with `text` and `tool_use` content and `usage`, `user` messages
 *   with tool results, and a final `result` with `is_error`;
 * - `--tools ""` removes every built-in tool, and `--strict-mcp-config --mcp-config <file>`
 *   loads only the servers in that file, so copperhead's bridge is the session's only source
 *   of tools (its tools are named `mcp__copperhead__<tool>`); `--allowedTools mcp__copperhead`
 *   lets them run without a permission prompt;
 * - `--append-system-prompt-file <file>` (print mode; the CLI's help lists only its sibling
 *   `--append-system-prompt <text>`, which would put the system prompt in the process table),
 *   `--model`, `--resume <session_id>`;
 * - `claude auth status` exits 0 exactly when a login is saved; `claude login` saves one.
 * The `system`/`init` tool list is checked too: any tool that is not copperhead's stops the run.
 */
import { join } from "node:path";
import { SYSTEM_PROMPT_FILE, tokenCount, TOOL_TIMEOUT_SECONDS, type AgentCliDriver, type CliEvent } from "./driver.ts";

const SERVER = "copperhead";
const PREFIX = `mcp__${SERVER}__`;

export const claudeCodeDriver: AgentCliDriver = {
  provider: "claude-code",
  executable: "claude",
  product: "Claude Code",
  install: "Install Claude Code (npm install -g @anthropic-ai/claude-code)",
  login: "claude login",
  loginStatusArgs: ["auth", "status"],
  launch({ prompt, system, model, resume, bridge, dir }) {
    const config = {
      mcpServers: { [SERVER]: { type: "stdio", command: bridge.command, args: bridge.args, env: bridge.env } },
    };
    const args = [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--tools",
      "",
      "--strict-mcp-config",
      "--mcp-config",
      "mcp-config.json",
      "--allowedTools",
      `mcp__${SERVER}`,
      "--append-system-prompt-file",
      join(dir, SYSTEM_PROMPT_FILE),
      ...(model ? ["--model", model] : []),
      ...(resume ? ["--resume", resume] : []),
    ];
    // Claude Code reads its MCP timeouts (milliseconds) from the environment. With as many
    // tools as copperhead's, it would otherwise hold some back behind a tool search (the model
    // sees a placeholder, not the tool): ENABLE_TOOL_SEARCH=false offers every one of them.
    return {
      args,
      files: { "mcp-config.json": JSON.stringify(config), [SYSTEM_PROMPT_FILE]: system },
      stdin: prompt,
      env: { MCP_TOOL_TIMEOUT: String(TOOL_TIMEOUT_SECONDS * 1000), MCP_TIMEOUT: "60000", ENABLE_TOOL_SEARCH: "false" },
    };
  },
  readEvent(event) {
    const out: CliEvent[] = [];
    if (event.type === "system" && event.subtype === "init") {
      if (typeof event.session_id === "string") out.push({ type: "session", id: event.session_id });
      for (const tool of asArray(event.tools))
        if (typeof tool === "string" && !tool.startsWith(PREFIX)) out.push({ type: "foreign_tool", name: tool });
      const server = asArray(event.mcp_servers).find((s) => (s as { name?: unknown })?.name === SERVER) as
        | { status?: unknown }
        | undefined;
      if (server && server.status !== "connected")
        out.push({
          type: "failed",
          message: `Claude Code could not start copperhead's tool server (${String(server.status)})`,
        });
    } else if (event.type === "assistant") {
      const message = (event.message ?? {}) as { content?: unknown; usage?: Record<string, unknown> };
      for (const block of asArray(message.content) as { type?: unknown; text?: unknown; name?: unknown }[]) {
        if (block?.type === "text" && typeof block.text === "string" && block.text.trim())
          out.push({ type: "text", text: block.text });
        if (block?.type === "tool_use" && typeof block.name === "string" && !block.name.startsWith(PREFIX))
          out.push({ type: "foreign_tool", name: block.name });
      }
      const usage = message.usage;
      // Claude Code marks its own cache breakpoints; as in the Messages API, input_tokens leaves
      // the cache's reads and writes out, and copperhead's input count holds them.
      if (usage) {
        const [read, write] = [
          tokenCount(usage.cache_read_input_tokens),
          tokenCount(usage.cache_creation_input_tokens),
        ];
        out.push({
          type: "usage",
          inputTokens: tokenCount(usage.input_tokens) + read + write,
          outputTokens: tokenCount(usage.output_tokens),
          ...(read || write ? { cacheReadTokens: read, cacheWriteTokens: write } : {}),
        });
      }
    } else if (event.type === "result" && event.is_error === true) {
      out.push({
        type: "failed",
        message: typeof event.result === "string" && event.result ? event.result : String(event.subtype ?? "error"),
      });
    }
    return out;
  },
};

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
