/**
 * The model's ways out. A model that sees a run cannot succeed must be able to say so instead
 * of burning every repair cycle: `refuse` declines at any point (before the proposal, or after
 * it, when an edit showed the request cannot be met), and `abandon` gives up an approved change.
 * Either ends the run at once; whatever was edited is rolled back byte for byte.
 */
import * as v from "valibot";
import type { RunContext } from "../context.ts";
import type { SpecOutcome } from "./spec.ts";
import { defineTool } from "./tool.ts";

const reason = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(2000));

export const exitTools = [
  defineTool({
    name: "refuse",
    family: "exit",
    description:
      "Decline the request (unsafe, impossible, or unclear), at any point of the run. Ends the run at once as refused; anything already edited is rolled back.",
    schema: v.strictObject({ reason }),
    run(_ctx: RunContext, { reason }): SpecOutcome {
      return { specDecision: { kind: "refused", reason: "spec_gate", detail: reason } };
    },
  }),
  defineTool({
    name: "abandon",
    family: "edit",
    description:
      "Give up the approved change when you know it cannot pass verification (say why). Ends the run at once: every edit is rolled back, byte for byte, and the reason is recorded.",
    schema: v.strictObject({ reason }),
    run(_ctx: RunContext, { reason }): SpecOutcome {
      return { specDecision: { kind: "abandoned", detail: reason } };
    },
  }),
];
