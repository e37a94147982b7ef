/**
 * A logged-in agent CLI (Claude Code, Codex) as the run's model, with its saved login and no
 * tools of its own.
 *
 * The loop asks a provider for one turn at a time; an agent CLI instead runs its own loop and
 * calls tools when it likes. This adapter turns one into the other: each tool call the CLI
 * makes through the run's private bridge becomes a `tool_use` answer to the loop, and the
 * loop's `tool_result` (with any note the loop adds, such as approval or repair feedback)
 * becomes the answer to the CLI's call. So the spec gate, the phase locks, verification, repair
 * cycles, turn budgets and rollback stay copperhead's; the CLI only chooses calls.
 *
 * When the CLI ends its session without calling `finish`, the turn ends with its last words,
 * and the loop's nudge resumes the same session. A CLI that uses a tool it was not given (its
 * shell, its file tools, another MCP server), or calls a tool the run did not list, is stopped
 * at once and the run fails with `provider_error`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { CopperheadError } from "../../../errors.ts";
import type { ContentBlock, ModelProvider, ModelRequest, ModelResponse, ToolUseBlock, Usage } from "../../model.ts";
import { openToolBridge, type BridgeCall, type ToolBridge } from "./bridge.ts";

/** One line of the CLI's JSON event stream, in the terms the adapter needs. */
export type CliEvent =
  | { type: "session"; id: string }
  | { type: "text"; text: string }
  | ({ type: "usage" } & Usage)
  /** The CLI has, or used, a tool copperhead did not give it. */
  | { type: "foreign_tool"; name: string }
  | { type: "failed"; message: string };

export interface LaunchOptions {
  prompt: string;
  system: string;
  model?: string;
  /** The session to continue, when the CLI already ended one this run. */
  resume?: string;
  /** How the CLI starts the bridge: this binary's `mcp-bridge`, with the run's socket. */
  bridge: { command: string; args: string[]; env: Record<string, string> };
  /** The private folder the CLI runs in. */
  dir: string;
  /** The environment the CLI runs with (where its own config lives). */
  env: Record<string, string | undefined>;
}

/** What differs between CLIs: flags, files and the event format. */
export interface AgentCliDriver {
  /** `claude-code` or `codex`. */
  readonly provider: string;
  /** The executable looked up on PATH. */
  readonly executable: string;
  readonly product: string;
  readonly install: string;
  /** The command that saves a login, named in every login error. */
  readonly login: string;
  /** Arguments that exit 0 exactly when a login is saved. */
  readonly loginStatusArgs: string[];
  launch(options: LaunchOptions): { args: string[]; files?: Record<string, string>; env?: Record<string, string> };
  readEvent(event: Record<string, unknown>): CliEvent[];
}

export interface AgentCliOptions {
  /** The model id after the colon, passed to the CLI's own `--model`. */
  model?: string;
  /** How to start this binary (`mcp-bridge` is appended). */
  selfCommand: string[];
  env?: Record<string, string | undefined>;
}

type Incoming =
  | { kind: "call"; block: ToolUseBlock; call: BridgeCall }
  | { kind: "exit"; code: number }
  | { kind: "stopped"; detail: string };

/** How long a CLI may take to end its turn once the run is over, before it is stopped. */
const CLOSE_GRACE_MS = 10_000;

/** Long enough for a full check of a big design inside `finish`. */
export const TOOL_TIMEOUT_SECONDS = 3600;

export type AgentCliProvider = ModelProvider & { preflight(): Promise<void>; close(): Promise<Usage> };

export function createAgentCliProvider(driver: AgentCliDriver, options: AgentCliOptions): AgentCliProvider {
  const env = options.env ?? process.env;
  const label = `${driver.provider}${options.model ? `:${options.model}` : ""} (your logged-in ${driver.product} CLI)`;
  let bridge: ToolBridge | undefined;
  let child: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  let session: string | undefined;
  let stderrTail = "";
  let failure: string | undefined;
  let toolNames = new Set<string>();
  const inbox: Incoming[] = [];
  let wake: (() => void) | undefined;
  const awaiting = new Map<string, BridgeCall>();
  const pending = { text: [] as string[], usage: { inputTokens: 0, outputTokens: 0 } as Usage };
  let callCount = 0;
  /** Set once the run is over: every call from then on is answered at once with the news. */
  let over = false;
  const OVER = "The copperhead run is over; end your turn now without calling tools.";

  const push = (item: Incoming) => {
    inbox.push(item);
    wake?.();
  };

  const openBridge = (): ToolBridge => {
    const opened = openToolBridge();
    opened.onCall((call) => {
      if (over) {
        call.reply({ content: OVER, isError: true });
        return;
      }
      if (!toolNames.has(call.name)) {
        call.reply({ content: `copperhead gave you no tool called ${call.name}`, isError: true });
        push({ kind: "stopped", detail: `the ${driver.product} CLI called ${JSON.stringify(call.name)}, a tool copperhead did not give it; copperhead stopped it` });
        return;
      }
      const block: ToolUseBlock = { type: "tool_use", id: `cli-${++callCount}`, name: call.name, input: call.arguments ?? {} };
      push({ kind: "call", block, call });
    });
    return opened;
  };

  const start = (prompt: string, system: string) => {
    const dir = bridge!.dir;
    const launch = driver.launch({
      prompt,
      system,
      model: options.model,
      resume: session,
      dir,
      env,
      bridge: { command: options.selfCommand[0]!, args: [...options.selfCommand.slice(1), "mcp-bridge"], env: bridge!.env },
    });
    for (const [name, text] of Object.entries(launch.files ?? {})) writeFileSync(join(dir, name), text, { mode: 0o600 });
    const childEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...env, ...launch.env })) if (value !== undefined) childEnv[key] = value;
    failure = undefined;
    stderrTail = "";
    const proc = Bun.spawn([driver.executable, ...launch.args], { cwd: dir, env: childEnv, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    child = proc;
    void (async () => {
      await Promise.all([readEvents(proc.stdout), readStderr(proc.stderr)]);
      const code = await proc.exited;
      if (child === proc) child = undefined;
      push({ kind: "exit", code });
    })();
  };

  const readEvents = async (stream: ReadableStream<Uint8Array>) => {
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line) handleLine(line);
      }
    }
    if (buffer.trim()) handleLine(buffer.trim());
  };

  const handleLine = (line: string) => {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return; // chatter that is not an event (some CLIs print notices on stdout)
    }
    if (!event || typeof event !== "object") return;
    for (const e of driver.readEvent(event as Record<string, unknown>)) {
      if (e.type === "session") session = e.id;
      else if (e.type === "text") pending.text.push(e.text);
      else if (e.type === "usage") {
        const { type: _, ...usage } = e;
        pending.usage = addCallUsage(pending.usage, usage);
      } else if (e.type === "failed") failure = e.message;
      else if (e.type === "foreign_tool") {
        push({ kind: "stopped", detail: `the ${driver.product} CLI has or used ${e.name}, a tool copperhead did not give it; copperhead stopped it` });
      }
    }
  };

  const readStderr = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) stderrTail = (stderrTail + decoder.decode(chunk, { stream: true })).slice(-2000);
  };

  const stopChild = async () => {
    const proc = child;
    child = undefined;
    if (!proc) return;
    proc.kill("SIGTERM");
    if (!(await exitsWithin(proc, 3000))) proc.kill("SIGKILL");
  };

  const next = async (signal?: AbortSignal): Promise<Incoming> => {
    for (;;) {
      // A safety stop overtakes calls queued before it.
      const stop = inbox.findIndex((i) => i.kind === "stopped");
      const item = stop >= 0 ? inbox.splice(stop, 1)[0] : inbox.shift();
      if (item) return item;
      if (signal?.aborted) throw cancelled();
      await new Promise<void>((resolve) => {
        wake = resolve;
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      wake = undefined;
    }
  };

  const takeUsage = (): Usage => {
    const usage = pending.usage;
    pending.usage = { inputTokens: 0, outputTokens: 0 };
    return usage;
  };

  const takeText = (): ContentBlock[] => pending.text.splice(0).map((text) => ({ type: "text", text }));

  const providerError = (message: string) => {
    const loginHint = /log ?in|logged|api key|auth|401|403|credential/i.test(message);
    return new CopperheadError("provider_error", message, {
      fix: loginHint ? `Log ${driver.product} in with \`${driver.login}\`, then run the change again.` : `Check that \`${driver.executable}\` works on its own, then run the change again.`,
    });
  };

  return {
    provider: driver.provider,
    model: options.model ?? "",
    label,
    // Pictures reach the CLI as MCP image content from the bridge; the CLI gives them to its model.
    supportsImages: true,
    async preflight() {
      const path = Bun.which(driver.executable, { PATH: env.PATH ?? "" });
      if (!path) throw notInstalledError(driver);
      const status = Bun.spawn([path, ...driver.loginStatusArgs], { env: env as Record<string, string>, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
      if ((await status.exited) !== 0) {
        throw new CopperheadError("cli_not_logged_in", `${driver.product} is installed but not logged in (\`${driver.executable} ${driver.loginStatusArgs.join(" ")}\` failed).`, {
          fix: `Run \`${driver.login}\` once, then run the change again.`,
        });
      }
    },
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      bridge ??= openBridge();
      bridge.setTools(request.tools);
      toolNames = new Set(request.tools.map((t) => t.name));
      const last = request.messages[request.messages.length - 1];
      const results = last?.content.filter((b) => b.type === "tool_result") ?? [];
      if (results.length > 0) {
        const notes = last!.content.flatMap((b) => (b.type === "text" ? [b.text] : []));
        results.forEach((result, i) => {
          const call = awaiting.get(result.toolUseId);
          awaiting.delete(result.toolUseId);
          const content = i === results.length - 1 && notes.length ? [result.content, ...notes].join("\n\n") : result.content;
          call?.reply({ content, isError: result.isError === true, ...(result.images?.length ? { images: result.images } : {}) });
        });
      } else {
        const prompt = last?.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n") ?? "";
        if (child) await stopChild();
        start(prompt, request.system);
      }
      let item: Incoming;
      try {
        item = await next(signal);
      } catch (err) {
        await stopChild();
        throw err;
      }
      if (item.kind === "stopped") {
        await stopChild();
        throw new CopperheadError("provider_error", item.detail, { fix: `This is a safety stop: copperhead gives ${driver.product} only its own tools. Report it if it happens with an unmodified CLI.` });
      }
      if (item.kind === "exit") {
        if (item.code !== 0) {
          const why = failure ?? (stderrTail.trim().split("\n").pop() || `exit code ${item.code}`);
          throw providerError(`${driver.product} ended with an error: ${why}`);
        }
        const text = takeText();
        return { content: text.length ? text : [{ type: "text", text: "(the CLI ended its turn without a word)" }], stopReason: "end_turn", usage: takeUsage() };
      }
      const calls = [item, ...inbox.splice(0).filter((i): i is Extract<Incoming, { kind: "call" }> => i.kind === "call")];
      for (const c of calls) awaiting.set(c.block.id, c.call);
      return { content: [...takeText(), ...calls.map((c) => c.block)], stopReason: "tool_use", usage: takeUsage() };
    },
    async close() {
      over = true;
      const proc = child;
      for (const call of [...awaiting.values(), ...inbox.flatMap((i) => (i.kind === "call" ? [i.call] : []))]) call.reply({ content: OVER, isError: true });
      inbox.length = 0;
      awaiting.clear();
      // A CLI reports some usage only as its turn ends: give it a moment to end on its own.
      if (proc) await exitsWithin(proc, CLOSE_GRACE_MS);
      await stopChild();
      bridge?.close();
      bridge = undefined;
      return takeUsage();
    },
  };
}

/** A token count from a CLI's event, or 0 when it is missing or malformed. */
/** Two usage reports as one; the cache counts appear once either has them. */
function addCallUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  if (a.cacheReadTokens !== undefined || b.cacheReadTokens !== undefined) sum.cacheReadTokens = (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0);
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) sum.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  return sum;
}

export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function notInstalledError(driver: AgentCliDriver): CopperheadError {
  return new CopperheadError("cli_not_found", `${driver.product}'s \`${driver.executable}\` is not on PATH.`, {
    fix: `${driver.install}, run \`${driver.login}\`, then run the change again; or pick another model with --model.`,
  });
}

/** Whether `proc` exits within `ms`; the timer never outlives the answer (it would hold the process open). */
async function exitsWithin(proc: Subprocess, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([proc.exited.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function cancelled(): CopperheadError {
  return new CopperheadError("provider_error", "The model call was cancelled.", { cancelled: true });
}
