/**
 * Stand-ins for the `claude` and `codex` CLIs, for testing copperhead's `claude-code` and
 * `codex` providers without a real CLI or a network.
 *
 * Each behaves like the real CLI as its documentation describes, for the parts copperhead
 * relies on: it parses the flags it is given (and refuses the combinations the real one
 * refuses), loads only the MCP servers its flags allow, starts them and calls their tools
 * over stdio MCP, and prints the CLI's JSON event format on stdout. What the "model" does is
 * a recorded `copperhead.session/1` file (`fixtures/sessions/`), named by
 * `COPPERHEAD_STANDIN_SESSION`: each turn's tool_use blocks are called in order, a turn with no
 * tool_use ends the CLI's session (a later `--resume` continues with the next turn). A tool name
 * that starts with a capital letter (`Bash`, `Read`) is one of the CLI's own built-in tools.
 *
 * `COPPERHEAD_STANDIN_LOGGED_OUT=1` makes it a CLI without a saved login;
 * `COPPERHEAD_STANDIN_FAIL_AT=<n>` makes it fail at the n-th turn of the session (1-based) the
 * way the real CLI reports an API error, exiting 1;
 * `COPPERHEAD_STANDIN_ECHO=<VAR>` makes its model repeat that variable's value in its words (a
 * secret the CLI can see must still never reach copperhead's records);
 * `COPPERHEAD_STANDIN_HANG=silent` makes it start a helper process of its own and then wait
 * forever without a word, `=chatty` the same but printing a progress event every 0.5 s.
 * Like the real CLIs, it takes the prompt on stdin when none is given as an argument (`-` for
 * Codex), and the system prompt from a file (`--append-system-prompt-file`,
 * `-c model_instructions_file=…`). Every invocation's arguments, pid and the prompts it read,
 * its helper's pid, and the environment its MCP servers were given, are appended to
 * `COPPERHEAD_STANDIN_LOG` when set, so tests can pin the flags and look for leaks.
 *
 * Usage (through a wrapper named `claude` or `codex` on PATH): `bun agent-cli-standin.ts claude …`.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

interface Block {
  type: string;
  text?: string;
  name?: string;
  input?: unknown;
}
interface Session {
  turns: { content?: Block[]; usage?: { inputTokens: number; outputTokens: number } }[];
}
interface ServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

const [cli, ...argv] = process.argv.slice(2);
const print = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);
const fail = (message: string): never => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};
const log = (entry: object) => {
  if (process.env.COPPERHEAD_STANDIN_LOG)
    appendFileSync(process.env.COPPERHEAD_STANDIN_LOG, `${JSON.stringify(entry)}\n`);
};
log({ args: [cli, ...argv] });
const echo = process.env.COPPERHEAD_STANDIN_ECHO ? ` (${process.env[process.env.COPPERHEAD_STANDIN_ECHO]})` : "";
const loggedIn = process.env.COPPERHEAD_STANDIN_LOGGED_OUT !== "1";
const failAt = Number(process.env.COPPERHEAD_STANDIN_FAIL_AT ?? 0);

if (cli === "claude") await claude(argv);
else if (cli === "codex") await codex(argv);
else fail(`unknown CLI ${cli}`);
// Like the real CLIs, exit once the session's last event is out.
process.exit(0);

async function claude(args: string[]): Promise<void> {
  if (args[0] === "auth" && args[1] === "status") process.exit(loggedIn ? 0 : 1);
  const flags = parseFlags(args, new Set(["-p", "--print", "--verbose", "--strict-mcp-config"]));
  if (!flags.has("-p") && !flags.has("--print")) fail("the stand-in only knows print mode (-p)");
  const prompt = flags.positional[0] ?? (await Bun.stdin.text());
  if (!prompt.trim())
    fail("Error: Input must be provided either through stdin or as a prompt argument when using --print");
  if (flags.get("--output-format") === "stream-json" && !flags.has("--verbose")) {
    fail("Error: When using --print, --output-format=stream-json requires --verbose");
  }
  const systemFile = flags.get("--append-system-prompt-file");
  if (systemFile !== undefined && !existsSync(systemFile))
    fail(`Error: Append system prompt file not found: ${systemFile}`);
  log({
    pid: process.pid,
    prompt,
    system: systemFile !== undefined ? readFileSync(systemFile, "utf8") : (flags.get("--append-system-prompt") ?? ""),
  });
  await hangIfAsked({ type: "system", subtype: "status", status: "requesting" });
  const sessionId = flags.get("--resume") ?? crypto.randomUUID();
  if (!loggedIn) {
    print({
      type: "result",
      subtype: "success",
      is_error: true,
      result: "Invalid API key · Please run /login",
      session_id: sessionId,
      num_turns: 0,
    });
    process.exit(1);
  }
  // --mcp-config takes a file or a JSON string; --strict-mcp-config ignores every other source.
  const servers: Record<string, ServerConfig> = {};
  if (!flags.has("--strict-mcp-config")) Object.assign(servers, userServers());
  const mcpConfig = flags.get("--mcp-config");
  if (mcpConfig)
    Object.assign(
      servers,
      (
        JSON.parse(existsSync(mcpConfig) ? readFileSync(mcpConfig, "utf8") : mcpConfig) as {
          mcpServers: Record<string, ServerConfig>;
        }
      ).mcpServers,
    );
  const builtIns = flags.get("--tools") === "" ? [] : ["Bash", "Edit", "Glob", "Grep", "Read", "Write"];
  const allowed = (flags.get("--allowedTools") ?? "").split(/[ ,]+/).filter(Boolean);
  const clients = await connectAll(servers);
  const tools = [...builtIns, ...clients.flatMap((c) => c.tools.map((t) => `mcp__${c.name}__${t}`))];
  print({
    type: "system",
    subtype: "init",
    session_id: sessionId,
    tools,
    mcp_servers: clients.map((c) => ({ name: c.name, status: "connected" })),
    model: flags.get("--model") ?? "claude-standin",
  });

  const state = loadState(sessionId);
  let turns = 0;
  for (; state.turn < session().turns.length; state.turn++) {
    if (state.turn + 1 === failAt) {
      print({
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        result: "API Error: 529 Overloaded",
        session_id: sessionId,
        num_turns: turns,
      });
      process.exit(1);
    }
    const turn = session().turns[state.turn]!;
    const blocks = turn.content ?? [];
    const uses = blocks.filter((b) => b.type === "tool_use");
    const usage = { input_tokens: turn.usage?.inputTokens ?? 0, output_tokens: turn.usage?.outputTokens ?? 0 };
    turns++;
    const messageId = `msg_${state.turn}`;
    print({
      type: "assistant",
      session_id: sessionId,
      message: {
        id: messageId,
        role: "assistant",
        content: blocks.filter((b) => b.type === "text").map((b) => ({ type: "text", text: `${b.text}${echo}` })),
        usage,
      },
    });
    if (uses.length === 0) {
      state.turn++;
      saveState(sessionId, state);
      print({
        type: "result",
        subtype: "success",
        is_error: false,
        num_turns: turns,
        result: blocks.map((b) => b.text ?? "").join(""),
        session_id: sessionId,
        usage,
      });
      await closeAll(clients);
      return;
    }
    for (const use of uses) {
      const id = `toolu_${crypto.randomUUID().slice(0, 8)}`;
      const builtIn = /^[A-Z]/.test(use.name!);
      const name = builtIn ? use.name! : `mcp__copperhead__${use.name}`;
      print({
        type: "assistant",
        session_id: sessionId,
        message: {
          id: messageId,
          role: "assistant",
          content: [{ type: "tool_use", id, name, input: use.input }],
          usage,
        },
      });
      let result: { text: string; isError: boolean };
      if (builtIn)
        result = builtIns.includes(use.name!)
          ? { text: "(built-in tool output)", isError: false }
          : { text: `No such tool available: ${use.name}`, isError: true };
      else if (!allowed.some((a) => name === a || name.startsWith(`${a}__`)))
        result = {
          text: `Claude requested permissions to use ${name}, but you haven't granted it yet.`,
          isError: true,
        };
      else result = await callTool(clients, "copperhead", use.name!, use.input);
      print({
        type: "user",
        session_id: sessionId,
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, content: result.text, is_error: result.isError }],
        },
      });
    }
  }
  print({ type: "result", subtype: "success", is_error: false, num_turns: turns, result: "", session_id: sessionId });
  await closeAll(clients);
}

async function codex(args: string[]): Promise<void> {
  // Global -c overrides come before the subcommand.
  const overrides: Record<string, unknown> = {};
  while (args[0] === "-c" || args[0] === "--config") {
    const [key, ...value] = args[1]!.split("=");
    overrides[key!] = parseToml(value.join("="));
    args = args.slice(2);
  }
  if (args[0] === "login" && args[1] === "status") {
    process.stderr.write(loggedIn ? "Logged in using ChatGPT\n" : "Not logged in\n");
    process.exit(loggedIn ? 0 : 1);
  }
  if (args[0] !== "exec") fail("the stand-in only knows `codex exec` and `codex login status`");
  const flags = parseFlags(
    args.slice(1),
    new Set(["--json", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules"]),
  );
  if (!flags.has("--json")) fail("the stand-in only prints --json events");
  if (!flags.has("--skip-git-repo-check") && !existsSync(join(process.cwd(), ".git"))) {
    fail("Not inside a trusted directory and --skip-git-repo-check was not specified.");
  }
  const resuming = flags.positional[0] === "resume";
  const threadId = resuming ? flags.positional[1]! : crypto.randomUUID();
  const given = resuming ? flags.positional[2] : flags.positional[0];
  // No prompt argument, or `-`: the prompt is read from stdin.
  const prompt = given === undefined || given === "-" ? await Bun.stdin.text() : given;
  if (!prompt.trim()) fail("No prompt provided.");
  const instructions = overrides.model_instructions_file;
  if (instructions !== undefined && (typeof instructions !== "string" || !existsSync(instructions)))
    fail(`Error: failed to read model_instructions_file ${String(instructions)}`);
  log({
    pid: process.pid,
    prompt,
    system:
      instructions !== undefined
        ? readFileSync(instructions as string, "utf8")
        : String(overrides.developer_instructions ?? ""),
  });
  await hangIfAsked({ type: "item.updated", item: { id: "item_0", type: "reasoning", text: "" } });
  if (!loggedIn) {
    print({ type: "error", message: "Not logged in: run `codex login`" });
    process.exit(1);
  }
  const servers: Record<string, ServerConfig> = flags.has("--ignore-user-config") ? {} : userServers();
  for (const [key, value] of Object.entries(overrides)) {
    const match = /^mcp_servers\.([^.]+)\.(command|args|env|env_vars)$/.exec(key);
    if (!match) continue;
    const server = (servers[match[1]!] ??= { command: "" });
    // env_vars forwards the named variables from Codex's own environment.
    if (match[2] === "env_vars")
      server.env = {
        ...server.env,
        ...Object.fromEntries((value as string[]).map((name) => [name, process.env[name] ?? ""])),
      };
    else server[match[2] as "command"] = value as never;
  }
  const shell = overrides["features.shell_tool"] !== false;
  const sandbox = flags.get("--sandbox") ?? "workspace-write";
  const clients = await connectAll(servers);
  print({ type: "thread.started", thread_id: threadId });
  print({ type: "turn.started" });
  const state = loadState(threadId);
  let item = 0;
  const usage = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 };
  for (; state.turn < session().turns.length; state.turn++) {
    if (state.turn + 1 === failAt) {
      print({ type: "turn.failed", error: { message: "stream error: 503 Service Unavailable" } });
      process.exit(1);
    }
    const turn = session().turns[state.turn]!;
    usage.input_tokens += turn.usage?.inputTokens ?? 0;
    usage.output_tokens += turn.usage?.outputTokens ?? 0;
    const blocks = turn.content ?? [];
    for (const block of blocks.filter((b) => b.type === "text"))
      print({
        type: "item.completed",
        item: { id: `item_${item++}`, type: "agent_message", text: `${block.text}${echo}` },
      });
    const uses = blocks.filter((b) => b.type === "tool_use");
    if (uses.length === 0) {
      state.turn++;
      break;
    }
    for (const use of uses) {
      const id = `item_${item++}`;
      if (/^[A-Z]/.test(use.name!)) {
        const command = JSON.stringify(use.input ?? "");
        print({
          type: "item.started",
          item: {
            id,
            type: "command_execution",
            command,
            aggregated_output: "",
            exit_code: null,
            status: "in_progress",
          },
        });
        const allowed = shell && sandbox !== "read-only";
        print({
          type: "item.completed",
          item: {
            id,
            type: "command_execution",
            command,
            aggregated_output: allowed ? "(output)" : "",
            exit_code: allowed ? 0 : 1,
            status: allowed ? "completed" : "declined",
          },
        });
        continue;
      }
      print({
        type: "item.started",
        item: {
          id,
          type: "mcp_tool_call",
          server: "copperhead",
          tool: use.name,
          arguments: use.input ?? {},
          result: null,
          error: null,
          status: "in_progress",
        },
      });
      const result = await callTool(clients, "copperhead", use.name!, use.input);
      print({
        type: "item.completed",
        item: {
          id,
          type: "mcp_tool_call",
          server: "copperhead",
          tool: use.name,
          arguments: use.input ?? {},
          result: { content: [{ type: "text", text: result.text }], structured_content: null },
          error: null,
          status: result.isError ? "failed" : "completed",
        },
      });
    }
  }
  saveState(threadId, state);
  print({ type: "turn.completed", usage });
  await closeAll(clients);
}

/**
 * `COPPERHEAD_STANDIN_HANG`: a CLI that started a helper of its own (a real one starts MCP
 * servers and shells) and then never finishes its move, silent or printing `chatter` every 0.5 s.
 */
async function hangIfAsked(chatter: object): Promise<void> {
  const mode = process.env.COPPERHEAD_STANDIN_HANG;
  if (!mode) return;
  const helper = Bun.spawn(["sleep", "600"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  log({ helper: helper.pid });
  if (mode === "chatty") setInterval(() => print(chatter), 500);
  await new Promise(() => {});
}

/** Flags as `--name value` (or a bare switch from `switches`), and the positional arguments. */
function parseFlags(args: string[], switches: Set<string>) {
  const values = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith("-") && arg !== "-") {
      if (switches.has(arg)) values.set(arg, "");
      else values.set(arg, args[++i] ?? fail(`error: option '${arg}' argument missing`));
    } else positional.push(arg);
  }
  return { has: (name: string) => values.has(name), get: (name: string) => values.get(name), positional };
}

/** The MCP servers a user's own config would add (one a run must never see). */
function userServers(): Record<string, ServerConfig> {
  return { "user-files": { command: "false" } };
}

/** The few TOML value forms copperhead passes in -c overrides. */
function parseToml(text: string): unknown {
  const t = text.trim();
  if (t === "true" || t === "false") return t === "true";
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t.startsWith('"')) return JSON.parse(t);
  if (t.startsWith("[")) return JSON.parse(t);
  if (t.startsWith("{")) {
    const entries = [...t.slice(1, -1).matchAll(/([A-Za-z0-9_]+)\s*=\s*("(?:[^"\\]|\\.)*")/g)].map((m) => [
      m[1],
      JSON.parse(m[2]!),
    ]);
    return Object.fromEntries(entries);
  }
  return t;
}

interface Connected {
  name: string;
  client: Client;
  tools: string[];
}

async function connectAll(servers: Record<string, ServerConfig>): Promise<Connected[]> {
  const out: Connected[] = [];
  for (const [name, config] of Object.entries(servers)) {
    if (config.command === "false") fail(`MCP server ${name} failed to start`);
    log({ server: name, env: config.env ?? {} });
    const client = new Client({ name: `${cli}-standin`, version: "0.0.0" });
    // Like the real CLIs, a server gets a minimal environment plus what its config names.
    await client.connect(
      new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...config.env },
        stderr: "inherit",
      }),
    );
    const { tools } = await client.listTools();
    out.push({ name, client, tools: tools.map((t) => t.name) });
  }
  return out;
}

async function callTool(
  clients: Connected[],
  server: string,
  name: string,
  input: unknown,
): Promise<{ text: string; isError: boolean }> {
  const target = clients.find((c) => c.name === server);
  if (!target) return { text: `no MCP server ${server}`, isError: true };
  const result = await target.client.callTool(
    { name, arguments: (input ?? {}) as Record<string, unknown> },
    undefined,
    { timeout: 3_600_000 },
  );
  const text = (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
  return { text, isError: result.isError === true };
}

async function closeAll(clients: Connected[]): Promise<void> {
  await Promise.all(clients.map((c) => c.client.close()));
}

function session(): Session {
  const file = process.env.COPPERHEAD_STANDIN_SESSION ?? fail("COPPERHEAD_STANDIN_SESSION names no session file");
  return JSON.parse(readFileSync(file, "utf8")) as Session;
}

/** Where a session stopped, so `--resume` / `exec resume` continue it. */
function loadState(id: string): { turn: number } {
  const file = join(process.cwd(), `.standin-${id}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { turn: number }) : { turn: 0 };
}

function saveState(id: string, state: { turn: number }): void {
  writeFileSync(join(process.cwd(), `.standin-${id}.json`), JSON.stringify(state));
}
