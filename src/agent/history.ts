/**
 * The conversation a run sends, kept small enough for the model's window and cheap to resend.
 *
 * Every request repeats the whole history, so without care a long run resends every picture it
 * ever took and every page of every check on every turn, and a few dozen turns on a dense board
 * outgrow the window. Three rules keep it small, applied in place to the one history the loop
 * keeps (so what was compacted stays compacted, and the front of the conversation stays the same
 * from turn to turn, which is what a prompt cache reuses):
 *
 * 1. Only the last {@link KEEP_PICTURES} pictures are sent; an older one becomes a line saying
 *    what it showed ("board view of C1 at turn 12, superseded").
 * 2. A tool result older than the latest turn that is longer than {@link LONG_RESULT_CHARS}
 *    keeps its beginning and says how to read the rest again.
 * 3. A budget bounds every request, by the estimate below: when the next request would pass
 *    it, the oldest turns are compacted first (their results become one line each, long
 *    arguments and text are cut), then, if that is not enough, left out whole; down to
 *    {@link REFILL_SHARE} of the budget, so the next turns send the same front again. Blocks
 *    the loop keeps (the proposal, its approval, the latest findings) are never compacted, and
 *    a tool call and its result are compacted or left out together, so every `tool_use` still
 *    has its `tool_result` for both APIs.
 *
 * A run never fails on context length: when everything older is compacted and the request is
 * still over the budget, the latest results are cut too.
 */
import { DEFAULT_CONTEXT_BUDGET_TOKENS, type Config } from "../config/schema.ts";
import type {
  ContentBlock,
  Message,
  ModelProvider,
  ModelRequest,
  ToolResultBlock,
  ToolUseBlock,
} from "./conversation.ts";

/** The estimate of a request's size: characters of text per token. */
export const CHARS_PER_TOKEN = 3.5;
/** The estimate of a picture's size in tokens (a view's PNG, as the vision APIs count it). */
export const TOKENS_PER_PICTURE = 1_600;
/** Pictures sent with each request: the latest view and the one before, to compare. */
export const KEEP_PICTURES = 2;
/** An older tool result longer than this keeps only its beginning. */
export const LONG_RESULT_CHARS = 4_000;
/** How much of a long older result is kept. */
const KEPT_HEAD_CHARS = 1_500;
/** Text and arguments of a compacted turn are cut to this. */
const COMPACTED_CHARS = 300;
/** Compaction goes down to this share of the budget, so it does not run again every turn. */
const REFILL_SHARE = 0.75;
/**
 * `COPPERHEAD_FULL_CONTEXT=1` turns compaction and cache breakpoints off: every request carries
 * the whole history, as before either existed. For measuring what they save (`bench/`), not
 * for real runs.
 */
export const FULL_CONTEXT_VARIABLE = "COPPERHEAD_FULL_CONTEXT";

export interface ContextOptions {
  /** The most tokens (estimated) one request may carry. */
  budgetTokens: number;
  /** False: the history is sent whole (see {@link FULL_CONTEXT_VARIABLE}). */
  compact: boolean;
}

/**
 * The budget for this provider and model: the config's `contextBudgetTokens`, a number or an
 * object keyed by `provider:model`, `provider` or `default` (the most specific wins).
 */
export function contextOptions(
  setting: Config["contextBudgetTokens"],
  provider: Pick<ModelProvider, "provider" | "model">,
  env: Record<string, string | undefined> = process.env,
): ContextOptions {
  const budget =
    typeof setting === "number"
      ? setting
      : (setting?.[`${provider.provider}:${provider.model}`] ??
        setting?.[provider.provider] ??
        setting?.default ??
        DEFAULT_CONTEXT_BUDGET_TOKENS);
  return { budgetTokens: budget, compact: env[FULL_CONTEXT_VARIABLE] !== "1" };
}

/** A request's size by the estimate: its text (JSON included) / 3.5, plus 1,600 per picture. */
export function estimateTokens(request: Pick<ModelRequest, "system" | "tools" | "messages">): number {
  const fixed = request.system.length + JSON.stringify(request.tools).length;
  return Math.ceil(fixed / CHARS_PER_TOKEN) + request.messages.reduce((sum, m) => sum + messageTokens(m), 0);
}

export function messageTokens(message: Message): number {
  let chars = 0;
  let pictures = 0;
  for (const block of message.content) {
    if (block.type === "text") chars += block.text.length;
    else if (block.type === "tool_use") chars += block.name.length + (JSON.stringify(block.input ?? {})?.length ?? 0);
    else {
      chars += block.content.length;
      pictures += block.images?.length ?? 0;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + pictures * TOKENS_PER_PICTURE;
}

/** What one {@link History.fit} did, for the transcript. */
export interface FitReport {
  estimatedTokens: number;
  /** Pictures replaced by a line, long results cut, turns compacted, turns left out. */
  pictures: number;
  results: number;
  compactedTurns: number;
  droppedTurns: number;
}

export class History {
  readonly messages: Message[] = [];
  private readonly kept = new WeakSet<ContentBlock>();
  private readonly latest = new Map<string, ContentBlock>();
  /** Messages already compacted for the budget (they are not compacted twice). */
  private readonly compacted = new WeakSet<Message>();
  /** Turns left out, and the note in the first message that says so. */
  private dropped = 0;

  constructor(private readonly options: ContextOptions) {}

  push(message: Message): void {
    this.messages.push(message);
  }

  /** A block that is never compacted: the proposal's call and result, its approval. */
  keep(block: ContentBlock): void {
    this.kept.add(block);
  }

  /** The latest block of a kind is kept; the one it replaces may be compacted (findings). */
  keepLatest(kind: string, block: ContentBlock): void {
    const before = this.latest.get(kind);
    if (before) this.kept.delete(before);
    this.latest.set(kind, block);
    this.kept.add(block);
  }

  /** Compacts the history (in place) for the next request with this system prompt and tools. */
  fit(prefix: Pick<ModelRequest, "system" | "tools">): FitReport {
    const report: FitReport = { estimatedTokens: 0, pictures: 0, results: 0, compactedTurns: 0, droppedTurns: 0 };
    if (this.options.compact) {
      report.pictures = this.supersedePictures();
      report.results = this.shortenOldResults();
      const size = () => estimateTokens({ ...prefix, messages: this.messages });
      if (size() > this.options.budgetTokens) {
        const target = this.options.budgetTokens * REFILL_SHARE;
        report.compactedTurns = this.compactOldest(size, target);
        if (size() > target) report.droppedTurns = this.dropOldest(size, target);
        if (size() > this.options.budgetTokens) this.cutLatest(size);
      }
    }
    report.estimatedTokens = estimateTokens({ ...prefix, messages: this.messages });
    return report;
  }

  /** Rule 1: all but the last {@link KEEP_PICTURES} pictures become a line each. */
  private supersedePictures(): number {
    let seen = 0;
    let replaced = 0;
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const message = this.messages[i]!;
      for (let j = message.content.length - 1; j >= 0; j--) {
        const block = message.content[j]!;
        if (block.type !== "tool_result" || !block.images?.length) continue;
        const keep = Math.max(0, KEEP_PICTURES - seen);
        seen += block.images.length;
        if (keep >= block.images.length) continue;
        const lines = block.images
          .slice(0, block.images.length - keep)
          .map(() => `(${this.describePicture(block, turnOf(i))}, superseded by later views)`);
        const images = block.images.slice(block.images.length - keep);
        this.replace(message, j, {
          ...withoutImages(block),
          content: `${block.content}\n${lines.join("\n")}`,
          ...(images.length ? { images } : {}),
        });
        replaced += block.images.length - images.length;
      }
    }
    return replaced;
  }

  /** Rule 2: results before the latest turn keep their beginning when they are long. */
  private shortenOldResults(): number {
    let shortened = 0;
    for (const [i, message] of this.messages.entries()) {
      if (i === this.messages.length - 1 || message.role !== "user") continue;
      for (const [j, block] of message.content.entries()) {
        if (block.type !== "tool_result" || block.content.length <= LONG_RESULT_CHARS || this.kept.has(block)) continue;
        const call = this.callOf(block.toolUseId);
        const head = cutAtLine(block.content, KEPT_HEAD_CHARS);
        const rest = block.content.length - head.length;
        this.replace(message, j, {
          ...block,
          content: `${head}\n… (${rest} more characters left out to keep the conversation small; ${again(call)} to read them)`,
        });
        shortened++;
      }
    }
    return shortened;
  }

  /**
   * Rule 3, first step: from the oldest turn on (never the request, never the latest turn),
   * results become one line and long text and arguments are cut, until the request fits `target`.
   */
  private compactOldest(size: () => number, target: number): number {
    let turns = 0;
    for (let i = 1; i < this.messages.length - 2 && size() > target; i++) {
      const message = this.messages[i]!;
      if (this.compacted.has(message)) continue;
      const content = message.content.map((block) =>
        this.kept.has(block) ? block : this.compactBlock(block, turnOf(i)),
      );
      const smaller: Message = { role: message.role, content };
      this.compacted.add(smaller);
      this.messages[i] = smaller;
      if (message.role === "assistant") turns++;
    }
    return turns;
  }

  private compactBlock(block: ContentBlock, turn: number): ContentBlock {
    switch (block.type) {
      case "text":
        return block.text.length > COMPACTED_CHARS
          ? { type: "text", text: `${block.text.slice(0, COMPACTED_CHARS)}… (cut to fit the context budget)` }
          : block;
      case "tool_use": {
        const json = JSON.stringify(block.input ?? {}) ?? "";
        return json.length > COMPACTED_CHARS
          ? {
              ...block,
              input: { left_out: `${json.length} characters of arguments, left out to fit the context budget` },
            }
          : block;
      }
      case "tool_result": {
        const call = this.callOf(block.toolUseId);
        const what = call ? `${call.name} result from turn ${turn}` : `tool result from turn ${turn}`;
        return {
          ...withoutImages(block),
          content: `(${what}, left out to fit the context budget; ${again(call)} if it is still needed)`,
        };
      }
    }
  }

  /**
   * Rule 3, second step: the oldest turns (a model answer and the results of its calls) are
   * left out whole, as long as they hold nothing kept; the request says how many.
   */
  private dropOldest(size: () => number, target: number): number {
    let dropped = 0;
    let i = 1;
    while (i + 1 < this.messages.length - 2 && size() > target) {
      const pair = this.messages.slice(i, i + 2);
      if (pair[0]!.role !== "assistant" || pair.some((m) => m.content.some((b) => this.kept.has(b)))) {
        i += 2;
        continue;
      }
      this.messages.splice(i, 2);
      dropped++;
      this.dropped++;
      this.noteDropped();
    }
    return dropped;
  }

  /** The first message (the request) says how many turns were left out, in one note it updates. */
  private noteDropped(): void {
    const first = this.messages[0]!;
    const note: ContentBlock = {
      type: "text",
      text: `(${this.dropped} earlier turn${this.dropped === 1 ? " was" : "s were"} left out to fit the context budget; the design holds what they did: read it again where needed.)`,
    };
    const at = first.content.findIndex(
      (b) => b.type === "text" && b.text.endsWith("read it again where needed.)") && !this.kept.has(b),
    );
    first.content = at < 0 ? [...first.content, note] : first.content.map((b, j) => (j === at ? note : b));
  }

  /** The last resort: the latest results are cut to what the budget leaves room for. */
  private cutLatest(size: () => number): void {
    const last = this.messages.at(-1)!;
    for (const [j, block] of last.content.entries()) {
      if (block.type !== "tool_result" || this.kept.has(block)) continue;
      const over = (size() - this.options.budgetTokens) * CHARS_PER_TOKEN;
      if (over <= 0) return;
      const keep = Math.max(COMPACTED_CHARS, block.content.length - over - 200);
      if (keep >= block.content.length && !block.images?.length) continue;
      const call = this.callOf(block.toolUseId);
      const head = block.content.slice(0, keep);
      this.replace(last, j, {
        ...withoutImages(block),
        content: `${head}\n… (${block.content.length - head.length} more characters left out to fit the context budget; ${again(call)} with a narrower question)`,
      });
    }
  }

  /** Swaps a block for its smaller form; a kept block stays kept. */
  private replace(message: Message, index: number, block: ContentBlock): void {
    const before = message.content[index]!;
    if (this.kept.has(before)) this.kept.add(block);
    message.content = message.content.map((b, j) => (j === index ? block : b));
  }

  private callOf(toolUseId: string): ToolUseBlock | undefined {
    for (const message of this.messages) {
      if (message.role !== "assistant") continue;
      for (const block of message.content) if (block.type === "tool_use" && block.id === toolUseId) return block;
    }
    return undefined;
  }

  /** "board view of C1 at turn 12": what a superseded picture showed. */
  private describePicture(result: ToolResultBlock, turn: number): string {
    const call = this.callOf(result.toolUseId);
    if (call?.name !== "view") return `picture from ${call?.name ?? "a tool"} at turn ${turn}`;
    const input = (call.input ?? {}) as {
      document?: string;
      ref?: string;
      net?: string;
      x?: number;
      y?: number;
      sheet?: string;
    };
    const where =
      input.ref ??
      input.net ??
      (input.x !== undefined && input.y !== undefined
        ? `(${input.x}, ${input.y})`
        : input.document === "board"
          ? "the whole board"
          : `sheet ${input.sheet ?? "/"}`);
    return `${input.document === "board" ? "board" : "schematic"} view of ${where} at turn ${turn}`;
  }
}

/** The turn a message belongs to: the request is turn 0, then each answer and its results. */
function turnOf(index: number): number {
  return Math.ceil(index / 2);
}

function withoutImages(block: ToolResultBlock): ToolResultBlock {
  const { images: _, ...rest } = block;
  return rest;
}

/** How to read a result again: the same call, said with its arguments when they are short. */
function again(call: ToolUseBlock | undefined): string {
  if (!call) return "call the tool again";
  const args = JSON.stringify(call.input ?? {}) ?? "{}";
  const page = call.name === "run_check" ? " (offset and limit page through its findings)" : "";
  return args.length <= 200
    ? `call ${call.name} again with ${args}${page}`
    : `call ${call.name} again with the same arguments${page}`;
}

/** The beginning of `text`, up to `max` characters, cut after a whole line when there is one. */
function cutAtLine(text: string, max: number): string {
  const head = text.slice(0, max);
  const newline = head.lastIndexOf("\n");
  return newline > max / 2 ? head.slice(0, newline) : head;
}
