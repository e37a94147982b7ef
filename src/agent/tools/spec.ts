/**
 * The spec gate (ARCHITECTURE.md, "The gated run"): before anything is edited the model must say what it will
 * change and why, and copperhead validates that deterministically — the references, nets and
 * requirement ids it names exist (or are declared new), and no requirement has to change.
 *
 * What the approved proposal names binds the edits (scope.ts). When an edit shows the change
 * needs more, `amend_proposal` widens it: validated by the same code, approved the same way,
 * and recorded in the proposal file, the transcript and the commit.
 */
import * as v from "valibot";
import { evaluateRequirements } from "../../checks/requirements.ts";
import { lookupNet } from "../../kicad/netlist/net-names.ts";
import { partOf } from "../../kicad/proposal-scope.ts";
import type { Amendment } from "../../spec/proposal.ts";
import { currentDesign, type RunContext } from "../context.ts";
import { defineTool, ToolError } from "./tool.ts";

const text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
const names = v.optional(v.array(text(100)), []);
const requirementIds = v.array(v.pipe(v.string(), v.regex(/^REQ-[A-Z0-9-]+$/)));

/** The parts and nets a proposal (or an amendment) names: the edits may touch these and nothing else. */
const scopeNames = {
  refs: v.pipe(names, v.description("Existing references the change touches (a unit such as U1A is its part, U1)")),
  nets: v.pipe(
    names,
    v.description("Existing nets the change touches (netlist name such as /DATA, or the short name DATA)"),
  ),
  new_refs: v.pipe(names, v.description("References the change will create")),
  new_nets: v.pipe(names, v.description("Nets the change will create")),
};

const requirementChange = v.optional(
  v.pipe(
    v.strictObject({ id: v.string(), why: text(2000) }),
    v.description(
      "Only if the request cannot be met without changing a requirement: which one and why. This ends the run: a human must change requirements.",
    ),
  ),
);

export const ProposalInput = v.strictObject({
  title: v.pipe(text(120), v.description("One line, imperative: what the change does")),
  why: v.pipe(text(4000), v.description("Why the change is needed")),
  changes: v.pipe(v.array(text(400)), v.minLength(1), v.description("The planned changes, one line each")),
  requirements_touched: v.pipe(
    requirementIds,
    v.description("Ids of the requirements this change serves or affects (they must exist; none may change)"),
  ),
  verification: v.pipe(text(2000), v.description("How the result will be verified")),
  ...scopeNames,
  requirement_change: requirementChange,
});
export type ProposalArgs = v.InferOutput<typeof ProposalInput>;

export const AmendmentInput = v.pipe(
  v.strictObject({
    why: v.pipe(text(2000), v.description("Why the change needs more than the approved proposal names")),
    changes: v.pipe(v.optional(v.array(text(400)), []), v.description("Planned changes this adds, one line each")),
    requirements_touched: v.pipe(
      v.optional(requirementIds, []),
      v.description("Further requirement ids involved (they must exist; none may change)"),
    ),
    ...scopeNames,
    requirement_change: requirementChange,
  }),
  v.check(
    (a) => [a.refs, a.nets, a.new_refs, a.new_nets, a.changes].some((list) => list.length > 0),
    "name at least one ref, net, new ref or new net to add (or a planned change)",
  ),
);
export type AmendmentArgs = v.InferOutput<typeof AmendmentInput>;

/** What the spec gate (or one of the ways out, tools/exit.ts) decided. */
export type SpecDecision =
  | { kind: "proposal"; args: ProposalArgs }
  | { kind: "refused"; reason: "refused" | "requirement_change" | "needs_input"; detail: string }
  | { kind: "abandoned"; detail: string };

/** Spec tools return this marker; the loop acts on it (approval, or ending the run). */
export interface SpecOutcome {
  specDecision: SpecDecision;
}

/**
 * A change that needs a requirement changed ends the run: only people change requirements. The
 * refusal says which requirement and why it stands in the way, and keeps what was proposed (or
 * amended), with its reasons, so a person can decide without the transcript.
 */
function requirementRefusal(
  change: { id: string; why: string },
  proposed: { title?: string; why: string; changes: string[] },
): SpecOutcome {
  const detail = [
    `${change.id} would have to change: ${change.why}`,
    proposed.title !== undefined ? `Proposed: ${proposed.title}. ${proposed.why}` : `Amendment: ${proposed.why}`,
    ...(proposed.changes.length > 0 ? ["Changes:", ...proposed.changes.map((c) => `- ${c}`)] : []),
  ].join("\n");
  return { specDecision: { kind: "refused", reason: "requirement_change", detail } };
}

/**
 * A proposal is made once, before approval; amending it or giving it up needs it approved. The
 * loop unlocks `propose` and `exit` tools in both phases, so these refuse the phase they are not for.
 */
export function requireApproved(ctx: RunContext, tool: string): void {
  if (!ctx.proposal)
    throw new ToolError(`${tool} is locked until a proposal is accepted and approved: call propose_change first`);
}

const proposeTool = defineTool({
  name: "propose_change",
  effect: "propose",
  description:
    "Propose the change before editing anything. Name every existing ref and net you will touch and every ref/net you will create; list the requirements involved. Validated deterministically; edit tools unlock only after it is accepted and approved.",
  schema: ProposalInput,
  run(ctx: RunContext, args): SpecOutcome {
    if (ctx.proposal)
      throw new ToolError(
        "propose_change is not available now: the proposal is already approved; use the edit tools and finish",
      );
    if (args.requirement_change) return requirementRefusal(args.requirement_change, args);
    const problems = validateProposal(ctx, args);
    if (problems.length > 0)
      throw new ToolError(
        `the proposal does not match the design:\n- ${problems.join("\n- ")}\nFix the proposal and call propose_change again.`,
      );
    return { specDecision: { kind: "proposal", args } };
  },
});

/**
 * `amend_proposal`, an edit-phase tool: the approved proposal names too little for the change.
 * It is checked like the proposal (the names agree with the design as it is now, the
 * requirements exist, none has to change) and, once approved, widens what the edits may touch.
 */
const amendTool = defineTool({
  name: "amend_proposal",
  effect: "propose",
  prose: ["why", "changes"],
  description:
    'Widen the approved proposal when the change needs a part or net it does not name (an edit tool refused with "out of scope" says which). Add the refs, nets, new_refs and new_nets, say why, and list any planned changes it adds. Validated like propose_change and approved the same way; it is recorded in the proposal file, the transcript and the commit. A requirement_change ends the run, as in propose_change.',
  schema: AmendmentInput,
  async run(
    ctx: RunContext,
    args,
  ): Promise<SpecOutcome | { amendment: number; covers: { refs: string[]; nets: string[] } }> {
    requireApproved(ctx, "amend_proposal");
    if (args.requirement_change) return requirementRefusal(args.requirement_change, args);
    if (!ctx.amendProposal)
      throw new ToolError(
        "this run's proposal was written by copperhead and binds nothing to amend; make the changes, then call finish",
      );
    const problems = validateProposal(ctx, args);
    if (problems.length > 0)
      throw new ToolError(
        `the amendment does not match the design:\n- ${problems.join("\n- ")}\nFix it and call amend_proposal again.`,
      );
    const amendment: Amendment = {
      why: args.why,
      changes: args.changes,
      requirements: args.requirements_touched,
      scope: { refs: args.refs, nets: args.nets, newRefs: args.new_refs, newNets: args.new_nets },
    };
    const amended = await ctx.amendProposal(amendment);
    if (!amended)
      throw new ToolError(
        "the amendment was not approved: stay within the approved proposal, or call abandon with the reason",
      );
    return { amendment: amended.amendments?.length ?? 0, covers: ctx.scope ?? { refs: [], nets: [] } };
  },
});

/** The spec gate's tools: the proposal, and (once it is approved) its amendments. */
export const specTools = [proposeTool, amendTool];

/** What a proposal or an amendment names and why: checked against the design by one function. */
type NamedChange = Pick<ProposalArgs, "refs" | "nets" | "new_refs" | "new_nets" | "requirements_touched">;

/** Every name a proposal (or an amendment) uses must agree with the design as it is. */
export function validateProposal(ctx: RunContext, args: NamedChange): string[] {
  const design = currentDesign(ctx);
  const refs = new Set(design.components.map((c) => c.ref));
  const nets = new Set(design.netlist.nets.map((n) => n.name));
  const hasNet = (name: string) => lookupNet(nets, name).kind !== "missing";
  const problems: string[] = [];
  for (const ref of args.refs)
    if (!refs.has(ref) && !refs.has(partOf(ref)))
      problems.push(`ref ${ref} does not exist (declare it in new_refs if the change creates it)`);
  for (const ref of args.new_refs)
    if (refs.has(ref)) problems.push(`ref ${ref} already exists; list it in refs, or pick a free reference`);
  for (const net of args.nets)
    if (!hasNet(net)) problems.push(`net ${net} does not exist (declare it in new_nets if the change creates it)`);
  for (const net of args.new_nets) if (hasNet(net)) problems.push(`net ${net} already exists; list it in nets`);
  const requirements = evaluateRequirements(design, { docsDir: ctx.docs });
  const ids =
    requirements.state === "evaluated" ? new Set(requirements.spec.requirements.map((r) => r.id)) : new Set<string>();
  for (const id of args.requirements_touched)
    if (!ids.has(id)) problems.push(`requirement ${id} is not defined in ${ctx.docs}/SPEC.md`);
  return problems;
}
