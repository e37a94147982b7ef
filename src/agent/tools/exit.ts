/**
 * The model's ways out. A model that sees a run cannot succeed must be able to say so instead
 * of burning every repair cycle: `refuse` declines at any point (before the proposal, or after
 * it, when an edit showed the request cannot be met), and `abandon` gives up an approved change.
 * Either ends the run at once; whatever was edited is rolled back byte for byte. `ask` is the
 * third way, for a request only its author can settle ("change LED1" on a board without LED1):
 * the run ends refused as `needs_input` with the question, for the person to answer.
 */
import * as v from "valibot";
import type { RunContext } from "../context.ts";
import { requireApproved, type SpecOutcome } from "./spec.ts";
import { defineTool, ToolError } from "./tool.ts";

const reason = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2000));

export const exitTools = [
  defineTool({
    name: "refuse",
    effect: "exit",
    description:
      "Decline the request (unsafe, impossible, or unclear), at any point of the run. Ends the run at once as refused; anything already edited is rolled back.",
    schema: v.strictObject({ reason }),
    run(_ctx: RunContext, { reason }): SpecOutcome {
      return { specDecision: { kind: "refused", reason: "refused", detail: reason } };
    },
  }),
  defineTool({
    name: "ask",
    effect: "exit",
    description:
      "Ask the person who made the request a question, when it is ambiguous or names something the design does not have (which part, which value, which net?) and guessing would be wrong. Any time before your first edit. Ends the run at once as refused (needs_input) with your question; nothing is written. They run the request again with the answer.",
    schema: v.strictObject({
      question: v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1),
        v.maxLength(1000),
        v.description("One clear question, with the choices you see"),
      ),
    }),
    run(ctx: RunContext, { question }): SpecOutcome {
      const edited = (ctx.journal?.touched() ?? []).filter((path) => !path.startsWith(`${ctx.docs}/changes/`));
      if (edited.length > 0)
        throw new ToolError(
          `too late to ask: this run has already edited ${edited.join(", ")}; finish the change, or abandon it with your question as the reason`,
        );
      return { specDecision: { kind: "refused", reason: "needs_input", detail: question } };
    },
  }),
  defineTool({
    name: "abandon",
    effect: "exit",
    description:
      "Give up the approved change when you know it cannot pass verification (say why). Ends the run at once: every edit is rolled back, byte for byte, and the reason is recorded.",
    schema: v.strictObject({ reason }),
    run(ctx: RunContext, { reason }): SpecOutcome {
      requireApproved(ctx, "abandon");
      return { specDecision: { kind: "abandoned", detail: reason } };
    },
  }),
];
