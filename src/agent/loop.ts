/**
 * The agent loop's conversation (propose → approve → edit → verify/repair, see ARCHITECTURE.md): the model proposes with read tools
 * only, the spec gate validates, approval unlocks the edit tools, and `finish` hands over to
 * verification — whose new findings come back as repair cycles. The loop decides nothing
 * about files: the gated run (`src/run/`) owns preflight, commit and rollback.
 *
 * The model cannot skip a gate: tools outside the current phase are refused with a tool error,
 * invalid arguments are refused before a handler runs, and only the spec gate's own decision
 * moves the conversation from proposing to editing.
 */
import { asCopperheadError, CopperheadError } from "../errors.ts";
import type { Proposal } from "../spec/proposal.ts";
import type { RunContext } from "./context.ts";
import type { ContentBlock, Message, ModelProvider, ToolUseBlock, Usage } from "./model.ts";
import type { ProgressListener } from "./progress.ts";
import { redactDeep } from "./redact.ts";
import { systemPrompt, approvedMessage, repairMessage, nudgeMessage } from "./prompt.ts";
import type { SpecDecision, SpecOutcome } from "./tools/spec.ts";
import { parseArgs, ToolError, toolSpec, type Tool, type ToolFamily } from "./tools/tool.ts";
import type { Transcript } from "./transcript.ts";

export type LoopEnd =
  | { kind: "verified"; repairCycles: number }
  | { kind: "refused"; reason: "spec_gate" | "requirement_change" | "not_approved"; detail: string }
  | { kind: "failed"; reason: "verification_failed" | "turn_budget_exhausted" | "stalled" | "provider_error" | "cancelled"; detail: string; repairCycles: number };

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
  /** Model calls this run may make in a row without calling any tool before it is stalled. */
  maxIdleTurns?: number;
}

export interface LoopResult {
  end: LoopEnd;
  usage: { turns: number; inputTokens: number; outputTokens: number };
}

/** Room for reasoning models to think and still call tools. */
const MAX_TOKENS = 16_000;

export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  const usage = { turns: 0, inputTokens: 0, outputTokens: 0 };
  try {
    return await converse(options, usage);
  } finally {
    // The conversation is over whatever ended it: an agent CLI may report its last usage as it exits.
    const late = await options.provider.close?.();
    if (late) addUsage(usage, late);
  }
}

async function converse(options: LoopOptions, usage: LoopResult["usage"]): Promise<LoopResult> {
  const { provider, ctx, transcript, signal } = options;
  const progress = options.onProgress ?? (() => {});
  let phase: keyof typeof PHASE_FAMILIES = options.startInEditPhase ? "edit" : "propose";
  let repairCycles = 0;
  let idle = 0;
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: options.request }] }];
  // The system prompt and tool list stay fixed for the whole conversation (providers that cache
  // or verify the prefix reject changes); locked tools are refused per call instead.
  const system = systemPrompt(ctx);
  const tools = options.tools.map(toolSpec);
  const end = (e: LoopEnd): LoopResult => ({ end: e, usage });

  progress(
    phase === "propose"
      ? { type: "phase", phase: "propose", message: "the model studies the design and proposes a change" }
      : { type: "phase", phase: "edit", message: "the model resolves what code could not" },
  );
  for (;;) {
    // Let timers, signals and child processes run between turns: a provider that answers at
    // once (a replay) would otherwise keep Ctrl-C and the baseline check waiting to the end.
    await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) return end({ kind: "failed", reason: "cancelled", detail: "cancelled by the user", repairCycles });
    if (usage.turns >= options.maxTurns) {
      return end({ kind: "failed", reason: "turn_budget_exhausted", detail: `the model used all ${options.maxTurns} turns`, repairCycles });
    }
    usage.turns++;
    progress({ type: "turn", turn: usage.turns, maxTurns: options.maxTurns });
    const request = { system, messages, tools, maxTokens: MAX_TOKENS };
    transcript.append({ type: "model_request", turn: usage.turns, phase, messages: messages.length });
    let response;
    try {
      response = await provider.complete(request, signal);
    } catch (err) {
      if (signal?.aborted) return end({ kind: "failed", reason: "cancelled", detail: "cancelled by the user", repairCycles });
      const typed = asCopperheadError(err);
      transcript.append({ type: "error", where: "provider", code: typed.code, message: typed.message });
      return end({ kind: "failed", reason: "provider_error", detail: typed.message, repairCycles });
    }
    addUsage(usage, response.usage);
    transcript.append({ type: "model_response", turn: usage.turns, stopReason: response.stopReason, content: response.content, usage: response.usage });
    messages.push({ role: "assistant", content: response.content });

    const calls = response.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
    if (calls.length === 0) {
      idle++;
      if (idle >= (options.maxIdleTurns ?? 3)) {
        return end({ kind: "failed", reason: "stalled", detail: "the model stopped calling tools", repairCycles });
      }
      messages.push({ role: "user", content: [{ type: "text", text: nudgeMessage(phase) }] });
      continue;
    }
    idle = 0;

    const results: ContentBlock[] = [];
    let decision: SpecDecision | undefined;
    let finished = false;
    for (const call of calls) {
      const outcome = await callTool(options, phase, call);
      results.push({ type: "tool_result", toolUseId: call.id, content: outcome.content, ...(outcome.isError ? { isError: true } : {}) });
      progress({ type: "tool", name: call.name, ok: !outcome.isError, message: outcome.isError ? firstLine(outcome.content) : "ok" });
      if (outcome.decision && !decision) decision = outcome.decision;
      if (call.name === "finish" && !outcome.isError) finished = true;
    }

    if (decision?.kind === "refused") {
      messages.push({ role: "user", content: results });
      return end({ kind: "refused", reason: decision.reason, detail: decision.detail });
    }
    if (decision?.kind === "proposal") {
      progress({ type: "phase", phase: "approve", message: decision.args.title });
      const proposal = await options.approve(decision);
      if (!proposal) {
        messages.push({ role: "user", content: results });
        return end({ kind: "refused", reason: "not_approved", detail: "the proposal was not approved" });
      }
      ctx.proposal = proposal;
      phase = "edit";
      transcript.append({ type: "phase", phase: "edit", proposal: proposal.id, approval: proposal.approval });
      progress({ type: "phase", phase: "edit", message: `approved (${proposal.approval}); edit tools unlocked` });
      results.push({ type: "text", text: approvedMessage(proposal) });
    }
    if (finished) {
      progress({ type: "phase", phase: "verify", message: "running the full check" });
      const verdict = await options.verify();
      transcript.append({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings, repairCycles });
      progress({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings });
      if (verdict.ok) {
        messages.push({ role: "user", content: results });
        return end({ kind: "verified", repairCycles });
      }
      if (repairCycles >= options.maxRepairCycles) {
        messages.push({ role: "user", content: results });
        return end({ kind: "failed", reason: "verification_failed", detail: verdict.feedback, repairCycles });
      }
      repairCycles++;
      ctx.finished = undefined;
      transcript.append({ type: "repair", cycle: repairCycles, maxRepairCycles: options.maxRepairCycles });
      progress({ type: "repair", cycle: repairCycles, maxRepairCycles: options.maxRepairCycles });
      results.push({ type: "text", text: repairMessage(verdict.feedback, repairCycles, options.maxRepairCycles) });
    }
    messages.push({ role: "user", content: results });
  }
}

const PHASE_FAMILIES: Record<"propose" | "edit", ToolFamily[]> = { propose: ["read", "spec"], edit: ["read", "edit"] };

interface ToolOutcome {
  content: string;
  isError: boolean;
  decision?: SpecDecision;
}

/** Runs one tool call; every failure the model can act on becomes a tool error, not a crash. */
async function callTool(options: LoopOptions, phase: "propose" | "edit", call: ToolUseBlock): Promise<ToolOutcome> {
  const { transcript, ctx } = options;
  transcript.append({ type: "tool_call", id: call.id, name: call.name, input: call.input });
  const tool = options.tools.find((t) => t.name === call.name);
  let outcome: ToolOutcome;
  try {
    if (!tool) throw new ToolError(`there is no tool called ${call.name}`);
    if (!PHASE_FAMILIES[phase].includes(tool.family)) {
      throw new ToolError(
        phase === "propose"
          ? `${call.name} is locked until a proposal is accepted and approved: call propose_change first`
          : `${call.name} is not available now: the proposal is already approved; use the edit tools and finish`,
      );
    }
    // A model can echo a secret it saw (a key in an error message, a pasted token) into an
    // argument, and arguments end up in docs, proposals, commit messages and the summary:
    // redact them before any tool sees them, as the transcript does (ARCHITECTURE.md, "Invariants").
    const args = parseArgs(tool, redactDeep(call.input, transcript.redact));
    const result = await tool.run(ctx, args);
    const decision = (result as SpecOutcome | undefined)?.specDecision;
    outcome = { content: JSON.stringify(decision ? { accepted: decision.kind === "proposal" } : (result ?? { ok: true })), isError: false, decision };
  } catch (err) {
    if (err instanceof ToolError) outcome = { content: err.message, isError: true };
    else if (err instanceof CopperheadError && err.code !== "internal_error") outcome = { content: err.fix ? `${err.message} (${err.fix})` : err.message, isError: true };
    else throw err;
  }
  transcript.append({ type: "tool_result", id: call.id, name: call.name, isError: outcome.isError, content: outcome.content });
  return outcome;
}

function addUsage(total: { inputTokens: number; outputTokens: number }, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}
