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
 * at once and the run fails with `provider_error`; so is one that stays silent past the idle
 * timeout or takes longer than the call's deadline for its next move.
 *
 * The stages of a session each live in their own module: the process (spawn, the prompt on
 * stdin, its output, teardown of its process group) in cli-process.ts, the event stream read
 * into the turn's words and usage in turn.ts, and the deadlines of each call in deadlines.ts.
 */
import { CopperheadError } from "../../../errors.ts";
import type {
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from "../../conversation.ts";
import { openToolBridge, type BridgeCall, type ToolBridge } from "./bridge.ts";
import { CliProcess } from "./cli-process.ts";
import { CallDeadlines, expiredError, type CallLimits } from "./deadlines.ts";
import { notInstalledError, type AgentCliDriver } from "./driver.ts";
import { Inbox, TurnRecord, type Incoming } from "./turn.ts";

export interface AgentCliOptions {
  /** The model id after the colon, passed to the CLI's own `--model`. */
  model?: string;
  /** How to start this binary (`mcp-bridge` is appended). */
  selfCommand: string[];
  env?: Record<string, string | undefined>;
  /** The idle timeout and the total deadline of each model call (see deadlines.ts). */
  limits: CallLimits;
  /** Where the model is chosen, for errors (`howToPickModel` in providers/index.ts). */
  howToPickModel: string;
}

/** How long a CLI may take to end its turn once the run is over, before it is stopped. */
const CLOSE_GRACE_MS = 10_000;

export type AgentCliProvider = ModelProvider & { preflight(): Promise<void>; close(): Promise<Usage> };

export function createAgentCliProvider(driver: AgentCliDriver, options: AgentCliOptions): AgentCliProvider {
  const env = options.env ?? process.env;
  const label = `${driver.provider}${options.model ? `:${options.model}` : ""} (your logged-in ${driver.product} CLI)`;
  const OVER = "The copperhead run is over; end your turn now without calling tools.";
  const inbox = new Inbox();
  const turn = new TurnRecord(driver, (name) =>
    inbox.push({
      kind: "stopped",
      detail: `the ${driver.product} CLI has or used ${name}, a tool copperhead did not give it; copperhead stopped it`,
    }),
  );
  /** The CLI's calls the loop is answering, by the tool_use id they were given. */
  const awaiting = new Map<string, BridgeCall>();
  let bridge: ToolBridge | undefined;
  let cli: CliProcess | undefined;
  /** The deadlines of the call in progress, which the CLI's output keeps alive. */
  let clock: CallDeadlines | undefined;
  let toolNames = new Set<string>();
  let callCount = 0;
  /** Set once the run is over: every call from then on is answered at once with the news. */
  let over = false;

  const openBridge = (): ToolBridge => {
    const opened = openToolBridge();
    opened.onCall((call) => {
      if (over) {
        call.reply({ content: OVER, isError: true });
        return;
      }
      if (!toolNames.has(call.name)) {
        call.reply({ content: `copperhead gave you no tool called ${call.name}`, isError: true });
        inbox.push({
          kind: "stopped",
          detail: `the ${driver.product} CLI called ${JSON.stringify(call.name)}, a tool copperhead did not give it; copperhead stopped it`,
        });
        return;
      }
      const block: ToolUseBlock = {
        type: "tool_use",
        id: `cli-${++callCount}`,
        name: call.name,
        input: call.arguments ?? {},
      };
      inbox.push({ kind: "call", block, call });
    });
    return opened;
  };

  /** A CLI process for a new prompt, resuming the CLI's own session when it has one. */
  const start = (prompt: string, system: string): void => {
    const dir = bridge!.dir;
    const bridgeCommand = {
      command: options.selfCommand[0]!,
      args: [...options.selfCommand.slice(1), "mcp-bridge"],
      env: bridge!.env,
    };
    const launch = driver.launch({
      prompt,
      system,
      model: options.model,
      resume: turn.session,
      dir,
      env,
      bridge: bridgeCommand,
    });
    turn.failure = undefined;
    const proc: CliProcess = CliProcess.start(
      {
        executable: driver.executable,
        args: launch.args,
        dir,
        files: launch.files,
        env: { ...env, ...launch.env },
        stdin: launch.stdin,
      },
      {
        line: (text) => turn.line(text),
        activity: () => clock?.touch(),
        exit: (code) => {
          if (cli === proc) cli = undefined;
          // What it started may still run: the group goes with it.
          void proc.stop();
          inbox.push({ kind: "exit", code, stderr: proc.stderrTail });
        },
      },
    );
    cli = proc;
  };

  const stopCli = async (): Promise<void> => {
    const proc = cli;
    cli = undefined;
    await proc?.stop();
  };

  /** The CLI's next move (a tool call, its exit, a safety stop), within the call's deadlines. */
  const nextMove = async (signal: AbortSignal | undefined): Promise<Incoming> => {
    const deadlines = new CallDeadlines(options.limits, () => inbox.poke());
    clock = deadlines;
    const onAbort = () => inbox.poke();
    signal?.addEventListener("abort", onAbort);
    try {
      for (;;) {
        const item = inbox.take();
        if (item) return item;
        if (signal?.aborted) throw cancelled();
        if (deadlines.fired) throw expiredError(driver.product, deadlines.fired);
        await inbox.changed();
      }
    } finally {
      deadlines.stop();
      clock = undefined;
      signal?.removeEventListener("abort", onAbort);
    }
  };

  /** The loop's tool results (and the notes it adds after them) become the answers to the CLI's calls. */
  const answerCalls = (content: ModelRequest["messages"][number]["content"]): void => {
    const results = content.filter((b): b is ToolResultBlock => b.type === "tool_result");
    const notes = content.flatMap((b) => (b.type === "text" ? [b.text] : []));
    results.forEach((result, i) => {
      const call = awaiting.get(result.toolUseId);
      awaiting.delete(result.toolUseId);
      const text = i === results.length - 1 && notes.length ? [result.content, ...notes].join("\n\n") : result.content;
      call?.reply({
        content: text,
        isError: result.isError === true,
        ...(result.images?.length ? { images: result.images } : {}),
      });
    });
  };

  const providerError = (message: string) => {
    const loginHint = /log ?in|logged|api key|auth|401|403|credential/i.test(message);
    return new CopperheadError("provider_error", message, {
      fix: loginHint
        ? `Log ${driver.product} in with \`${driver.login}\`, then run the change again.`
        : `Check that \`${driver.executable}\` works on its own, then run the change again.`,
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
      if (!path) throw notInstalledError(driver, options.howToPickModel);
      const status = Bun.spawn([path, ...driver.loginStatusArgs], {
        env: env as Record<string, string>,
        stdin: "ignore",
        stdout: "ignore",
        stderr: "ignore",
      });
      if ((await status.exited) !== 0) {
        throw new CopperheadError(
          "cli_not_logged_in",
          `${driver.product} is installed but not logged in (\`${driver.executable} ${driver.loginStatusArgs.join(" ")}\` failed).`,
          {
            fix: `Run \`${driver.login}\` once, then run the change again.`,
          },
        );
      }
    },
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      bridge ??= openBridge();
      bridge.setTools(request.tools);
      toolNames = new Set(request.tools.map((t) => t.name));
      const last = request.messages[request.messages.length - 1];
      if (last?.content.some((b) => b.type === "tool_result")) answerCalls(last.content);
      else {
        const prompt = last?.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n") ?? "";
        await stopCli();
        start(prompt, request.system);
      }
      let item: Incoming;
      try {
        item = await nextMove(signal);
      } catch (err) {
        await stopCli();
        throw err;
      }
      if (item.kind === "stopped") {
        await stopCli();
        throw new CopperheadError("provider_error", item.detail, {
          fix: `This is a safety stop: copperhead gives ${driver.product} only its own tools. Report it if it happens with an unmodified CLI.`,
        });
      }
      if (item.kind === "exit") {
        if (item.code !== 0) {
          const why = turn.failure ?? (item.stderr.trim().split("\n").pop() || `exit code ${item.code}`);
          throw providerError(`${driver.product} ended with an error: ${why}`);
        }
        const text = turn.takeText();
        return {
          content: text.length ? text : [{ type: "text", text: "(the CLI ended its turn without a word)" }],
          stopReason: "end_turn",
          usage: turn.takeUsage(),
        };
      }
      const calls = [item, ...inbox.takeCalls()];
      for (const c of calls) awaiting.set(c.block.id, c.call);
      return {
        content: [...turn.takeText(), ...calls.map((c) => c.block)],
        stopReason: "tool_use",
        usage: turn.takeUsage(),
      };
    },
    async close() {
      over = true;
      const proc = cli;
      for (const call of [...awaiting.values(), ...inbox.clear()]) call.reply({ content: OVER, isError: true });
      awaiting.clear();
      // A CLI reports some usage only as its turn ends: give it a moment to end on its own.
      if (proc) await proc.exitsWithin(CLOSE_GRACE_MS);
      await stopCli();
      bridge?.close();
      bridge = undefined;
      return turn.takeUsage();
    },
  };
}

function cancelled(): CopperheadError {
  return new CopperheadError("provider_error", "The model call was cancelled.", { cancelled: true });
}
