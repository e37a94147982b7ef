/**
 * The agent loop's conversation, the propose → approve → edit → verify/repair stages of a gated
 * run (ARCHITECTURE.md): the model proposes with read tools only, the spec gate validates,
 * approval unlocks the edit tools, and `finish` hands over to verification — whose new findings
 * come back as repair cycles. The loop decides nothing about files: the gated run (`src/run/`)
 * owns preflight, commit and rollback.
 *
 * The model cannot skip a gate: tools outside the current phase are refused with a tool error,
 * invalid arguments are refused before a handler runs, and only the spec gate's own decision
 * moves the conversation from proposing to editing.
 */
import { asCopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import type { Proposal } from "../spec/proposal.ts";
import { forgetEditors, type RunContext } from "./context.ts";
import { History, type ContextOptions } from "./history.ts";
import {
  addUsage,
  emptyUsage,
  type ContentBlock,
  type Message,
  type ModelProvider,
  type ModelRequest,
  type ToolImage,
  type ToolUseBlock,
  type UsageTotals,
} from "./conversation.ts";
import type { ProgressListener } from "./progress.ts";
import { redactDeep } from "../redact.ts";
import { exceedsNesting, MAX_NESTING } from "../util/nesting.ts";
import { systemPrompt, approvedMessage, repairMessage, nudgeMessage } from "./prompt.ts";
import type { SpecDecision, SpecOutcome } from "./tools/spec.ts";
import {
  invalidArguments,
  parseArgs,
  refusesSecret,
  ToolError,
  toolSpec,
  WithImages,
  type Tool,
  type ToolEffect,
} from "./tools/tool.ts";
import type { Transcript } from "./transcript.ts";

export type LoopEnd =
  | { kind: "verified"; repairCycles: number }
  | { kind: "refused"; reason: "refused" | "requirement_change" | "needs_input" | "not_approved"; detail: string }
  | {
      kind: "failed";
      reason:
        | "verification_failed"
        | "turn_budget_exhausted"
        | "stalled"
        | "abandoned"
        | "provider_error"
        | "cancelled";
      detail: string;
      repairCycles: number;
    };

export interface VerifyOutcome {
  ok: boolean;
  /** What the model reads when it did not pass: the new findings, one per line. */
  feedback: string;
  newFindings: number;
}

export interface LoopOptions {
  provider: ModelProvider;
  ctx: RunContext;
  tools: Tool<RunContext>[];
  /** The first user message: the request, or the task copperhead prepared. */
  request: string;
  /** The proposal was adopted before the loop (sync): edits are unlocked from the start. */
  startInEditPhase?: boolean;
  maxTurns: number;
  maxRepairCycles: number;
  signal?: AbortSignal;
  transcript: Transcript;
  onProgress?: ProgressListener;
  /** Shows the accepted proposal for approval; resolves to the approval given, or null for "no". */
  approve(args: SpecDecision & { kind: "proposal" }): Promise<Proposal | null>;
  /** Runs after `finish`: derived docs, then the full check against the baseline. */
  verify(): Promise<VerifyOutcome>;
  /**
   * A fingerprint of what the run has changed so far: a `finish` on the same state as the last
   * failed verification cannot pass either, so it ends the run as stalled instead.
   */
  editState(): string;
  /** Model calls this run may make in a row without calling any tool before it is stalled. */
  maxIdleTurns?: number;
  /**
   * Where the turns and tokens are counted as they happen (default: a fresh count), so a run
   * that ends by an error thrown mid-conversation still records what the model used.
   */
  usage?: LoopResult["usage"];
  /** The request budget and whether the history is compacted to it (agent/history.ts). */
  context: ContextOptions;
}

export interface LoopResult {
  end: LoopEnd;
  usage: UsageTotals;
}

/** Room for reasoning models to think and still call tools. */
const MAX_TOKENS = 16_000;
/**
 * The most tool calls one turn may make. Models make a handful in parallel; a turn of thousands
 * (which once held the repo for minutes) is a model gone wrong, and ends the run.
 */
export const MAX_TOOL_CALLS_PER_TURN = 64;
/** The most one tool call's arguments may hold, as JSON: far more than any edit needs. */
export const MAX_TOOL_ARGUMENT_BYTES = 1024 * 1024;

export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  const usage = options.usage ?? emptyUsage();
  try {
    return await converse(options, usage);
  } finally {
    // The conversation is over whatever ended it: an agent CLI may report its last usage as it exits.
    const late = await options.provider.close?.();
    if (late) addUsage(usage, late);
  }
}

/** What the conversation carries from turn to turn. */
interface Conversation {
  readonly options: LoopOptions;
  readonly usage: LoopResult["usage"];
  readonly progress: ProgressListener;
  /** The system prompt, tools and token budget: fixed for the whole conversation. */
  readonly prefix: Omit<ModelRequest, "messages">;
  /** What the model has said and been told, compacted to the request budget. */
  readonly history: History;
  phase: "propose" | "edit";
  repairCycles: number;
  /** Model calls in a row that called no tool. */
  idle: number;
  /** `editState()` when the last verification failed, and what it found. */
  failed?: { state: string; feedback: string };
}

async function converse(options: LoopOptions, usage: LoopResult["usage"]): Promise<LoopResult> {
  // Everything the loop says leaves the process (stderr, MCP notifications, the provider), so
  // all of it is redacted: what the model wrote can echo a key it saw anywhere.
  const redact = options.transcript.redact;
  const talk: Conversation = {
    options,
    usage,
    progress: (event) => options.onProgress?.(redactDeep(event, redact)),
    // The system prompt and tool list stay fixed for the whole conversation (providers that
    // cache or verify the prefix reject changes); locked tools are refused per call instead.
    prefix: { system: systemPrompt(options.ctx), tools: options.tools.map(toolSpec), maxTokens: MAX_TOKENS },
    history: new History(options.context),
    phase: options.startInEditPhase ? "edit" : "propose",
    repairCycles: 0,
    idle: 0,
  };
  talk.history.push({ role: "user", content: [{ type: "text", text: redact(options.request) }] });
  talk.progress(
    talk.phase === "propose"
      ? { type: "phase", phase: "propose", message: "the model studies the design and proposes a change" }
      : { type: "phase", phase: "edit", message: "the model resolves what code could not" },
  );
  for (;;) {
    // Let timers, signals and child processes run between turns: a provider that answers at
    // once (a replay) would otherwise keep Ctrl-C and the baseline check waiting to the end.
    await new Promise((resolve) => setImmediate(resolve));
    const end = await turn(talk);
    if (end) return { end, usage };
  }
}

/** One model call and the tool calls it makes; how the run ends, when this turn ends it. */
async function turn(talk: Conversation): Promise<LoopEnd | undefined> {
  const { options, usage, history } = talk;
  const failed = (reason: Extract<LoopEnd, { kind: "failed" }>["reason"], detail: string): LoopEnd => ({
    kind: "failed",
    reason,
    detail,
    repairCycles: talk.repairCycles,
  });
  if (options.signal?.aborted) return failed("cancelled", "cancelled by the user");
  if (usage.turns >= options.maxTurns)
    return failed("turn_budget_exhausted", `the model used all ${options.maxTurns} turns`);
  usage.turns++;
  talk.progress({ type: "turn", turn: usage.turns, maxTurns: options.maxTurns });
  const fit = history.fit(talk.prefix);
  const { messages } = history;
  options.transcript.append({
    type: "model_request",
    turn: usage.turns,
    phase: talk.phase,
    messages: messages.length,
    ...fit,
  });
  let response;
  try {
    response = await options.provider.complete({ ...talk.prefix, messages: [...messages] }, options.signal);
  } catch (err) {
    if (options.signal?.aborted) return failed("cancelled", "cancelled by the user");
    const typed = asCopperheadError(err);
    options.transcript.append({ type: "error", where: "provider", code: typed.code, message: typed.message });
    return failed("provider_error", typed.message);
  }
  addUsage(usage, response.usage);
  const callCount = response.content.filter((b) => b.type === "tool_use").length;
  if (callCount > MAX_TOOL_CALLS_PER_TURN) {
    const detail = `${options.provider.label}: the model made ${callCount} tool calls in one turn; at most ${MAX_TOOL_CALLS_PER_TURN} are allowed (the tool-calls-per-turn cap)`;
    options.transcript.append({
      type: "error",
      where: "provider",
      code: "provider_error",
      cap: "tool_calls_per_turn",
      message: detail,
    });
    return failed("provider_error", detail);
  }
  boundArguments(response.content);
  options.transcript.append({
    type: "model_response",
    turn: usage.turns,
    stopReason: response.stopReason,
    content: response.content,
    usage: response.usage,
  });
  const answer: Message = { role: "assistant", content: redactDeep(response.content, options.transcript.redact) };
  history.push(answer);

  const calls = response.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
  if (calls.length === 0) {
    if (++talk.idle >= (options.maxIdleTurns ?? 3)) return failed("stalled", "the model stopped calling tools");
    history.push({ role: "user", content: [{ type: "text", text: nudgeMessage(talk.phase) }] });
    return undefined;
  }
  talk.idle = 0;

  const results: ContentBlock[] = [];
  let decision: SpecDecision | undefined;
  let finished = false;
  for (const call of calls) {
    const outcome = await callTool(options, talk.phase, call);
    const result: ContentBlock = {
      type: "tool_result",
      toolUseId: call.id,
      content: outcome.content,
      ...(outcome.images ? { images: outcome.images } : {}),
      ...(outcome.isError ? { isError: true } : {}),
    };
    results.push(result);
    // The proposal (and each amendment) stays whole in the history, call and result.
    if (outcome.effect === "propose" && !outcome.isError) {
      history.keep(result);
      const sent = answer.content.find((b) => b.type === "tool_use" && b.id === call.id);
      if (sent) history.keep(sent);
    }
    talk.progress({
      type: "tool",
      name: call.name,
      ok: !outcome.isError,
      message: outcome.isError ? firstLine(outcome.content) : "ok",
    });
    if (outcome.decision && !decision) decision = outcome.decision;
    if (outcome.effect === "finish" && !outcome.isError) finished = true;
  }
  const end =
    (decision && (await decide(talk, decision, results))) ||
    (finished ? await verifyFinished(talk, results) : undefined);
  history.push({ role: "user", content: results });
  return end;
}

/**
 * The spec gate or a way out decided: a refusal or an abandoned change ends the run; an approved
 * proposal unlocks the edit tools.
 */
async function decide(
  talk: Conversation,
  decision: SpecDecision,
  results: ContentBlock[],
): Promise<LoopEnd | undefined> {
  if (decision.kind === "refused") return { kind: "refused", reason: decision.reason, detail: decision.detail };
  if (decision.kind === "abandoned")
    return { kind: "failed", reason: "abandoned", detail: decision.detail, repairCycles: talk.repairCycles };
  talk.progress({ type: "phase", phase: "approve", message: decision.args.title });
  const proposal = await talk.options.approve(decision);
  if (!proposal) return { kind: "refused", reason: "not_approved", detail: "the proposal was not approved" };
  talk.options.ctx.proposal = proposal;
  talk.phase = "edit";
  talk.options.transcript.append({ type: "phase", phase: "edit", proposal: proposal.id, approval: proposal.approval });
  talk.progress({ type: "phase", phase: "edit", message: `approved (${proposal.approval}); edit tools unlocked` });
  const approved: ContentBlock = { type: "text", text: approvedMessage(proposal) };
  talk.history.keep(approved);
  results.push(approved);
  return undefined;
}

/** The model called `finish`: verify, and either end the run or start a repair cycle. */
async function verifyFinished(talk: Conversation, results: ContentBlock[]): Promise<LoopEnd | undefined> {
  const { options } = talk;
  const state = options.editState();
  if (state === talk.failed?.state) {
    const detail = `finish was called again on a design unchanged since the last failed verification, which found:\n${talk.failed.feedback}`;
    return { kind: "failed", reason: "stalled", detail, repairCycles: talk.repairCycles };
  }
  talk.progress({ type: "phase", phase: "verify", message: "running the full check" });
  const verdict = await options.verify();
  options.transcript.append({
    type: "verify",
    ok: verdict.ok,
    newFindings: verdict.newFindings,
    repairCycles: talk.repairCycles,
    feedback: verdict.feedback,
  });
  talk.progress({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings });
  if (verdict.ok) return { kind: "verified", repairCycles: talk.repairCycles };
  if (talk.repairCycles >= options.maxRepairCycles)
    return { kind: "failed", reason: "verification_failed", detail: verdict.feedback, repairCycles: talk.repairCycles };
  // Taken after the check: verification itself regenerates the derived docs.
  talk.failed = { state: options.editState(), feedback: verdict.feedback };
  talk.repairCycles++;
  options.ctx.finished = undefined;
  options.transcript.append({ type: "repair", cycle: talk.repairCycles, maxRepairCycles: options.maxRepairCycles });
  talk.progress({ type: "repair", cycle: talk.repairCycles, maxRepairCycles: options.maxRepairCycles });
  const findings: ContentBlock = {
    type: "text",
    text: repairMessage(verdict.feedback, talk.repairCycles, options.maxRepairCycles),
  };
  talk.history.keepLatest("findings", findings);
  results.push(findings);
  return undefined;
}

/**
 * What each phase unlocks. A proposal is made before approval and widened after it: each
 * `propose` tool refuses the phase it is not for, as `abandon` refuses a run with nothing
 * approved to give up.
 */
const PHASE_EFFECTS: Record<"propose" | "edit", ToolEffect[]> = {
  propose: ["read", "propose", "exit"],
  edit: ["read", "propose", "edit", "exit", "finish"],
};

/**
 * Tool arguments nested deeper than any tool takes, or larger than the cap, are replaced before
 * anything walks or keeps them (the transcript, the conversation, validation, redaction) by a
 * marker the tool's validation reports back to the model: bad input, not a stack overflow or a
 * transcript of hundreds of megabytes.
 */
function boundArguments(content: ContentBlock[]): void {
  for (const block of content) {
    if (block.type !== "tool_use") continue;
    if (exceedsNesting(block.input)) {
      block.input = invalidArguments(`they are nested more than ${MAX_NESTING} levels deep`);
      continue;
    }
    const bytes = Buffer.byteLength(JSON.stringify(block.input ?? {}) ?? "");
    if (bytes > MAX_TOOL_ARGUMENT_BYTES) {
      block.input = invalidArguments(
        `they are ${bytes} bytes as JSON; a tool call's arguments may hold at most ${MAX_TOOL_ARGUMENT_BYTES} (the tool-argument cap)`,
      );
    }
  }
}

interface ToolOutcome {
  content: string;
  /** Pictures for providers that take images (the transcript records only how many). */
  images?: ToolImage[];
  isError: boolean;
  /** The tool error's kind, for the transcript. */
  code?: string;
  /** The called tool's effect; none for a call to a tool that does not exist. */
  effect?: ToolEffect;
  decision?: SpecDecision;
}

/** The effects whose result may carry the spec gate's decision or a way out (`SpecOutcome`). */
const DECIDES: ToolEffect[] = ["propose", "exit"];

/** Runs one tool call; every failure the model can act on becomes a tool error, not a crash. */
async function callTool(options: LoopOptions, phase: "propose" | "edit", call: ToolUseBlock): Promise<ToolOutcome> {
  const { transcript, ctx } = options;
  transcript.append({ type: "tool_call", id: call.id, name: call.name, input: call.input });
  const tool = options.tools.find((t) => t.name === call.name);
  let outcome: ToolOutcome;
  try {
    if (!tool) throw new ToolError(`there is no tool called ${call.name}`);
    if (!PHASE_EFFECTS[phase].includes(tool.effect)) {
      throw new ToolError(
        phase === "propose"
          ? `${call.name} is locked until a proposal is accepted and approved: call propose_change first`
          : `${call.name} is not available now: the proposal is already approved; use the edit tools and finish`,
      );
    }
    // A model can echo a secret it saw (a key in an error message, a pasted token) into an
    // argument. Into prose (docs, proposals, the commit message) it goes redacted; into a
    // design file it never goes at all: the call fails, so not even `[REDACTED]` is drawn.
    if (refusesSecret(tool, call.input, transcript.redact)) {
      throw new ToolError(
        `the arguments hold a secret (the value of a configured key or token, or text shaped like one), and copperhead never writes one into a design file; ${tool.name} was not run`,
      );
    }
    const args = parseArgs(tool, redactDeep(call.input, transcript.redact));
    const answer = await tool.run(ctx, args);
    const result = answer instanceof WithImages ? answer.result : answer;
    const decision = DECIDES.includes(tool.effect) ? (result as SpecOutcome).specDecision : undefined;
    outcome = {
      content: JSON.stringify(decision ? { accepted: decision.kind === "proposal" } : (result ?? { ok: true })),
      isError: false,
      effect: tool.effect,
      decision,
    };
    if (answer instanceof WithImages && answer.images.length > 0) outcome.images = answer.images;
  } catch (err) {
    outcome = failedCall(ctx, tool, err);
  }
  // The model reads it, the transcript records it, progress shows its first line.
  outcome.content = transcript.redact(outcome.content);
  transcript.append({
    type: "tool_result",
    id: call.id,
    name: call.name,
    isError: outcome.isError,
    ...(outcome.code ? { code: outcome.code } : {}),
    content: outcome.content,
    ...(outcome.images ? { images: outcome.images.length } : {}),
  });
  return outcome;
}

/**
 * What the model reads when a tool call failed; throws what ends the run instead. An error the
 * model can act on comes back with its fix; one that ends the run (`CopperheadError.endsRun`)
 * is thrown on. A fault of copperhead's own (an untyped exception, or `internal_error`) comes
 * back too, as a tool error saying the run goes on, when the tool's effect lets the run recover:
 * an edit is all or nothing until it is written (`SchematicEditor`, `BoardEditor`), and after
 * an edit tool the run's editors are dropped, so the next tool reads the files as they are. The
 * fault is logged with its stack, for a bug report. A `propose` tool may have half-recorded an
 * amendment: its fault ends the run.
 */
function failedCall(ctx: RunContext, tool: Tool<RunContext> | undefined, err: unknown): ToolOutcome {
  if (err instanceof ToolError) return { content: err.message, isError: true, ...(err.code ? { code: err.code } : {}) };
  const typed = asCopperheadError(err);
  if (typed.endsRun) throw err;
  if (typed.code !== "internal_error")
    return { content: typed.fix ? `${typed.message} (${typed.fix})` : typed.message, isError: true };
  if (!tool || !RECOVERS.includes(tool.effect)) throw err;
  log.error(
    `${tool.name} failed on a fault of copperhead's own; the run goes on without it. Please report this with the stack below.\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  if (tool.effect === "edit") forgetEditors(ctx);
  return {
    content: `${tool.name} failed on a fault of copperhead's own (${typed.message}), not on your arguments as such. The design is as its files say (an edit not yet written was dropped; read again what you need), and the run goes on: try another way (other arguments, another tool), or abandon with the reason.`,
    isError: true,
    code: "internal_error",
  };
}

/** The effects whose faults the run recovers from (see `failedCall`). */
const RECOVERS: ToolEffect[] = ["read", "edit", "exit", "finish"];

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}
