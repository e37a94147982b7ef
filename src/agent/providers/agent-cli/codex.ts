/**
 * `codex[:<model>]`: the Codex CLI's `exec` mode, with its saved login.
 *
 * What this relies on (pinned by the stand-in CLI the tests run):
 * - `codex [-c key=value]… exec --json … -` reads the prompt from stdin and prints one JSON
 *   event per line:
 *   `thread.started` (`thread_id`), `item.started`/`item.completed` items (`agent_message`,
 *   `reasoning`, `mcp_tool_call`, `command_execution`, `file_change`, `web_search`…),
 *   `turn.completed` with `usage`, `turn.failed` and `error`; `exec … resume <thread_id> -`
 *   continues a thread;
 * - `-c model_instructions_file=<file>` gives the model copperhead's system prompt, read from
 *   a file, in place of Codex's own instructions (which describe the shell and file tools the run
 *   switches off); the pinned version sends it as the first developer message. Codex's inline
 *   `developer_instructions` would put it in the process table, readable by any local user;
 * - `-c` overrides (TOML values) placed before `exec`; `--ignore-user-config` and
 *   `--ignore-rules` leave the user's config.toml (and the MCP servers and hooks in it) out
 *   while the saved login in CODEX_HOME still works; `features.shell_tool=false` removes the
 *   shell, `--sandbox read-only` forbids writes even so, and `mcp_servers.copperhead.*` starts
 *   copperhead's bridge as the only MCP server (`env_vars` forwards the named variables from
 *   Codex's own environment to it; `omit_tools_from` keeps its tools offered directly, as
 *   function tools in the `mcp__copperhead` namespace, where Codex would otherwise defer them
 *   behind its tool search or expose them only inside its JavaScript code mode);
 * - unknown `-c` keys are ignored silently (`--strict-config` rejects them; the e2e test runs
 *   the pinned CLI with it, so a renamed switch fails there);
 * - `-c model_provider=<id>` and `-c model_providers.<id>={…}` select a provider even with
 *   `--ignore-user-config`: the user's own provider is carried over that way;
 * - `codex login status` exits 0 exactly when a login is saved; `codex login` saves one.
 * Any item that is not the agent's words or a call to copperhead's server stops the run.
 */
import { userProviderOverrides } from "./codex-provider.ts";
import { join } from "node:path";
import { SYSTEM_PROMPT_FILE, tokenCount, TOOL_TIMEOUT_SECONDS, type AgentCliDriver, type CliEvent } from "./driver.ts";

const SERVER = "copperhead";

/** Items that are the CLI's own tools at work. */
const FOREIGN_ITEMS = new Set([
  "command_execution",
  "file_change",
  "web_search",
  "collab_tool_call",
  "image_generation",
]);

/**
 * Codex's own MCP-resource tools: their calls are reported as `mcp_tool_call` items naming the
 * server they read from, copperhead's included, but they are not copperhead's tools.
 */
const CODEX_RESOURCE_TOOLS = new Set(["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]);

export const codexDriver: AgentCliDriver = {
  provider: "codex",
  executable: "codex",
  product: "Codex",
  install: "Install the Codex CLI (npm install -g @openai/codex)",
  login: "codex login",
  loginStatusArgs: ["login", "status"],
  launch({ prompt, system, model, resume, bridge, dir, env }) {
    const overrides: Record<string, string> = {
      // The user's own model provider, the one thing kept from their config (codex-provider.ts).
      ...Object.fromEntries(userProviderOverrides(env)),
      // Codex's own tools off, by the names the pinned version knows them (`codex features list`).
      "features.shell_tool": "false",
      "features.view_image": "false",
      "features.image_generation": "false",
      "features.multi_agent": "false",
      "features.multi_agent_v2.disable_native_tools": "true",
      "features.goals": "false",
      "features.sleep_tool": "false",
      "features.apps": "false",
      "features.plugins": "false",
      web_search: toml("disabled"),
      approval_policy: toml("never"),
      model_instructions_file: toml(join(dir, SYSTEM_PROMPT_FILE)),
      [`mcp_servers.${SERVER}.command`]: toml(bridge.command),
      [`mcp_servers.${SERVER}.args`]: `[${bridge.args.map(toml).join(", ")}]`,
      // The bridge's socket and token reach it through Codex's environment, not its argv.
      [`mcp_servers.${SERVER}.env_vars`]: `[${Object.keys(bridge.env).map(toml).join(", ")}]`,
      // Offered to the model directly: not deferred behind Codex's tool search, not only inside
      // its JavaScript code mode (where its hosted models would otherwise put every MCP tool).
      [`mcp_servers.${SERVER}.omit_tools_from`]: '["deferred", "code_mode"]',
      [`mcp_servers.${SERVER}.default_tools_approval_mode`]: toml("approve"),
      [`mcp_servers.${SERVER}.required`]: "true",
      [`mcp_servers.${SERVER}.startup_timeout_sec`]: "60",
      [`mcp_servers.${SERVER}.tool_timeout_sec`]: String(TOOL_TIMEOUT_SECONDS),
    };
    const args = [
      ...Object.entries(overrides).flatMap(([key, value]) => ["-c", `${key}=${value}`]),
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--ignore-user-config",
      "--ignore-rules",
      "--sandbox",
      "read-only",
      ...(model ? ["--model", model] : []),
      ...(resume ? ["resume", resume] : []),
      // The prompt comes on stdin.
      "-",
    ];
    return { args, files: { [SYSTEM_PROMPT_FILE]: system }, env: bridge.env, stdin: prompt };
  },
  readEvent(event) {
    const out: CliEvent[] = [];
    if (event.type === "thread.started" && typeof event.thread_id === "string")
      out.push({ type: "session", id: event.thread_id });
    else if (event.type === "item.started" || event.type === "item.completed") {
      const item = (event.item ?? {}) as {
        type?: unknown;
        text?: unknown;
        server?: unknown;
        tool?: unknown;
        command?: unknown;
      };
      const kind = String(item.type ?? "");
      if (FOREIGN_ITEMS.has(kind))
        out.push({
          type: "foreign_tool",
          name: kind === "command_execution" ? `its shell (${String(item.command ?? "")})` : kind,
        });
      else if (kind === "mcp_tool_call" && (item.server !== SERVER || CODEX_RESOURCE_TOOLS.has(String(item.tool))))
        out.push({ type: "foreign_tool", name: `${String(item.server)}.${String(item.tool)}` });
      else if (
        kind === "agent_message" &&
        event.type === "item.completed" &&
        typeof item.text === "string" &&
        item.text.trim()
      )
        out.push({ type: "text", text: item.text });
    } else if (event.type === "turn.completed") {
      // Codex's requests carry a prompt_cache_key, so OpenAI caches the repeated prefix; the
      // cached part is included in input_tokens.
      const usage = (event.usage ?? {}) as {
        input_tokens?: unknown;
        cached_input_tokens?: unknown;
        output_tokens?: unknown;
      };
      const cached = tokenCount(usage.cached_input_tokens);
      out.push({
        type: "usage",
        inputTokens: tokenCount(usage.input_tokens),
        outputTokens: tokenCount(usage.output_tokens),
        ...(cached ? { cacheReadTokens: cached } : {}),
      });
    } else if (event.type === "turn.failed") {
      out.push({
        type: "failed",
        message: String((event.error as { message?: unknown } | undefined)?.message ?? "the turn failed"),
      });
    } else if (event.type === "error") {
      out.push({ type: "failed", message: String(event.message ?? "error") });
    }
    return out;
  },
};

/** A TOML basic string: JSON's escapes are valid TOML for every character JSON escapes. */
function toml(value: string): string {
  return JSON.stringify(value);
}
