/**
 * Propose → approve → edit → verify/repair. For `do` this is the model's conversation
 * (agent/loop.ts) with the spec gate, approval and the verification gate wired in. For
 * `sync --resolve`, code makes its fixes and writes the proposal first; the model, when
 * anything is left for it, starts with the edit tools unlocked, and otherwise the result is
 * verified once.
 */
import { contextOptions } from "../agent/history.ts";
import { runLoop, type LoopEnd } from "../agent/loop.ts";
import { CopperheadError } from "../errors.ts";
import { editState } from "./edit-state.ts";
import { adoptPrepared, approveProposal } from "./propose.ts";
import type { RunState } from "./run-state.ts";
import { verify, verifyOnce } from "./verify.ts";

export async function change(run: RunState): Promise<LoopEnd> {
  const { options, ctx, summary } = run;
  const { strategy } = options;
  const prepared = strategy.prepare ? await strategy.prepare(ctx) : undefined;
  if (prepared) adoptPrepared(run, prepared);
  let end: LoopEnd;
  if (prepared && prepared.modelTask === undefined) {
    const verdict = await verifyOnce(run);
    end = verdict.ok
      ? { kind: "verified", repairCycles: 0 }
      : { kind: "failed", reason: "verification_failed", detail: verdict.feedback, repairCycles: 0 };
  } else {
    if (!options.provider) {
      throw new CopperheadError("missing_api_key", "This change needs a model, and none was given.", {
        fix: "Configure a model provider (see `copperhead doctor`) or pass --model.",
      });
    }
    const result = await runLoop({
      provider: options.provider,
      ctx,
      tools: strategy.tools,
      request: prepared?.modelTask ?? strategy.request,
      startInEditPhase: prepared !== undefined,
      maxTurns: options.maxTurns ?? options.config.maxTurns,
      maxRepairCycles: summary.verification.maxRepairCycles,
      signal: run.stop.signal,
      transcript: run.transcript,
      onProgress: run.progress,
      approve: ({ args }) => approveProposal(run, args),
      verify: () => verify(run),
      editState: () => editState(ctx),
      usage: summary.usage,
      context: contextOptions(options.config.contextBudgetTokens, options.provider),
    });
    end = result.end;
  }
  summary.layoutPending = [...ctx.layoutPending]
    .map(([ref, reason]) => ({ ref, reason }))
    .sort((a, b) => a.ref.localeCompare(b.ref, "en", { numeric: true }));
  return end;
}
