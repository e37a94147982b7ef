/**
 * The spec gate (ARCHITECTURE.md, "The gated run"): before anything is edited the model must say what it will
 * change and why, and copperhead validates that deterministically — the references, nets and
 * requirement ids it names exist (or are declared new), and no requirement has to change.
 */
import * as v from "valibot";
import { evaluateRequirements } from "../../checks/requirements.ts";
import { lookupNet } from "../../kicad/net-names.ts";
import { currentDesign, type RunContext } from "../context.ts";
import { defineTool, ToolError } from "./tool.ts";

const text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
const names = v.optional(v.array(text(100)), []);

export const ProposalInput = v.strictObject({
  title: v.pipe(text(120), v.description("One line, imperative: what the change does")),
  why: v.pipe(text(4000), v.description("Why the change is needed")),
  changes: v.pipe(v.array(text(400)), v.minLength(1), v.description("The planned changes, one line each")),
  requirements_touched: v.pipe(v.array(v.pipe(v.string(), v.regex(/^REQ-[A-Z0-9-]+$/))), v.description("Ids of the requirements this change serves or affects (they must exist; none may change)")),
  verification: v.pipe(text(2000), v.description("How the result will be verified")),
  refs: v.pipe(names, v.description("Existing references the change touches")),
  nets: v.pipe(names, v.description("Existing nets the change touches")),
  new_refs: v.pipe(names, v.description("References the change will create")),
  new_nets: v.pipe(names, v.description("Nets the change will create")),
  requirement_change: v.optional(
    v.pipe(v.strictObject({ id: v.string(), why: text(2000) }), v.description("Only if the request cannot be met without changing a requirement: which one and why. This ends the run: a human must change requirements.")),
  ),
});
export type ProposalArgs = v.InferOutput<typeof ProposalInput>;

/** What the spec gate (or one of the ways out, tools/exit.ts) decided. */
export type SpecDecision =
  | { kind: "proposal"; args: ProposalArgs }
  | { kind: "refused"; reason: "spec_gate" | "requirement_change"; detail: string }
  | { kind: "abandoned"; detail: string };

/** Spec tools return this marker; the loop acts on it (approval, or ending the run). */
export interface SpecOutcome {
  specDecision: SpecDecision;
}

export const specTools = [
  defineTool({
    name: "propose_change",
    family: "spec",
    description:
      "Propose the change before editing anything. Name every existing ref and net you will touch and every ref/net you will create; list the requirements involved. Validated deterministically; edit tools unlock only after it is accepted and approved.",
    schema: ProposalInput,
    run(ctx: RunContext, args): SpecOutcome {
      if (args.requirement_change) {
        return { specDecision: { kind: "refused", reason: "requirement_change", detail: `${args.requirement_change.id}: ${args.requirement_change.why}` } };
      }
      const problems = validateProposal(ctx, args);
      if (problems.length > 0) throw new ToolError(`the proposal does not match the design:\n- ${problems.join("\n- ")}\nFix the proposal and call propose_change again.`);
      return { specDecision: { kind: "proposal", args } };
    },
  }),
];

/** Every name the proposal uses must agree with the design as it is. */
export function validateProposal(ctx: RunContext, args: ProposalArgs): string[] {
  const design = currentDesign(ctx);
  const refs = new Set(design.components.map((c) => c.ref));
  const nets = new Set(design.netlist.nets.map((n) => n.name));
  const hasNet = (name: string) => lookupNet(nets, name).kind !== "missing";
  const problems: string[] = [];
  for (const ref of args.refs) if (!refs.has(ref)) problems.push(`ref ${ref} does not exist (declare it in new_refs if the change creates it)`);
  for (const ref of args.new_refs) if (refs.has(ref)) problems.push(`ref ${ref} already exists; list it in refs, or pick a free reference`);
  for (const net of args.nets) if (!hasNet(net)) problems.push(`net ${net} does not exist (declare it in new_nets if the change creates it)`);
  for (const net of args.new_nets) if (hasNet(net)) problems.push(`net ${net} already exists; list it in nets`);
  const requirements = evaluateRequirements(design, { docsDir: ctx.docs });
  const ids = requirements.state === "evaluated" ? new Set(requirements.spec.requirements.map((r) => r.id)) : new Set<string>();
  for (const id of args.requirements_touched) if (!ids.has(id)) problems.push(`requirement ${id} is not defined in ${ctx.docs}/SPEC.md`);
  return problems;
}
