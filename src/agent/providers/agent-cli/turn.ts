/**
 * What the run is waiting for from an agent CLI, and what its event stream said so far.
 *
 * The CLI's tool calls (through the bridge), its exit, a safety stop: each is an {@link Incoming}
 * queued in the {@link Inbox} until the provider takes it. The words, token usage, session id
 * and failure the CLI's JSON events report are folded into the {@link TurnRecord} as its lines
 * arrive, and taken with the turn's answer.
 */
import type { ContentBlock, ToolUseBlock, Usage } from "../../conversation.ts";
import type { BridgeCall } from "./bridge.ts";
import type { AgentCliDriver } from "./driver.ts";

export type Incoming =
  | { kind: "call"; block: ToolUseBlock; call: BridgeCall }
  /** The CLI exited; `stderr` is the last of what it wrote there. */
  | { kind: "exit"; code: number; stderr: string }
  | { kind: "stopped"; detail: string };

export class Inbox {
  private readonly items: Incoming[] = [];
  private wake: (() => void) | undefined;

  push(item: Incoming): void {
    this.items.push(item);
    this.poke();
  }

  /** Wakes the waiter without an item: something outside the queue (a deadline, an abort) changed. */
  poke(): void {
    this.wake?.();
  }

  /** The next item, a safety stop overtaking calls queued before it; undefined when none. */
  take(): Incoming | undefined {
    const stop = this.items.findIndex((i) => i.kind === "stopped");
    return stop >= 0 ? this.items.splice(stop, 1)[0] : this.items.shift();
  }

  /** Resolves at the next push or poke. */
  changed(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** Every queued tool call, taken out (the CLI makes several at once). */
  takeCalls(): Array<Extract<Incoming, { kind: "call" }>> {
    const calls = this.items.filter((i): i is Extract<Incoming, { kind: "call" }> => i.kind === "call");
    this.items.splice(0, this.items.length, ...this.items.filter((i) => i.kind !== "call"));
    return calls;
  }

  /** Empties the queue, returning the calls that were waiting in it. */
  clear(): BridgeCall[] {
    const calls = this.items.flatMap((i) => (i.kind === "call" ? [i.call] : []));
    this.items.length = 0;
    return calls;
  }
}

export class TurnRecord {
  /** The CLI's session, to resume when the loop nudges it after it ended its turn. */
  session: string | undefined;
  /** The error the CLI reported in its events, if any. */
  failure: string | undefined;
  private text: string[] = [];
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };

  constructor(
    private readonly driver: AgentCliDriver,
    /** Told of a tool the CLI has or used that copperhead did not give it. */
    private readonly onForeignTool: (name: string) => void,
  ) {}

  /** One line of the CLI's stdout. */
  line(line: string): void {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return; // chatter that is not an event (some CLIs print notices on stdout)
    }
    if (!event || typeof event !== "object") return;
    for (const e of this.driver.readEvent(event as Record<string, unknown>)) {
      if (e.type === "session") this.session = e.id;
      else if (e.type === "text") this.text.push(e.text);
      else if (e.type === "usage") {
        const { type: _, ...usage } = e;
        this.usage = addCallUsage(this.usage, usage);
      } else if (e.type === "failed") this.failure = e.message;
      else if (e.type === "foreign_tool") this.onForeignTool(e.name);
    }
  }

  takeText(): ContentBlock[] {
    return this.text.splice(0).map((text) => ({ type: "text", text }));
  }

  takeUsage(): Usage {
    const usage = this.usage;
    this.usage = { inputTokens: 0, outputTokens: 0 };
    return usage;
  }
}

/** Two usage reports as one; the cache counts appear once either has them. */
function addCallUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  if (a.cacheReadTokens !== undefined || b.cacheReadTokens !== undefined)
    sum.cacheReadTokens = (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0);
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined)
    sum.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  return sum;
}
