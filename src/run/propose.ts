/**
 * Propose and approve, the spec gate's side of the run: a proposal that passed validation (the
 * model's, or the one `sync` writes for drift it fixed) is approved — interactively, or AUTO —
 * and adopted: written to `docs/changes/<id>.md` before any edit and recorded everywhere.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../agent/context.ts";
import type { ProposalArgs } from "../agent/tools/spec.ts";
import { renderProposal, type Approval, type Proposal } from "../spec/proposal.ts";
import type { PreparedRun, RunState } from "./state.ts";

/** The model's validated proposal, approved and adopted; null when the person said no. */
export async function approveProposal(run: RunState, args: ProposalArgs): Promise<Proposal | null> {
  const { approve } = run.options;
  const approval: Approval = approve ? "interactive" : "auto";
  const proposal: Proposal = { id: proposalId(run.ctx, args.title), title: args.title, approval, requirements: args.requirements_touched, why: args.why, changes: args.changes, verification: args.verification, runId: run.runId };
  if (approve && !(await approve(proposal))) return null;
  run.ctx.scope = { refs: [...args.refs, ...args.new_refs], nets: [...args.nets, ...args.new_nets] };
  return adoptProposal(run, proposal);
}

/** The proposal copperhead wrote itself (sync), approved AUTO. */
export function adoptPrepared(run: RunState, prepared: PreparedRun): Proposal {
  return adoptProposal(run, { ...prepared.proposal, id: proposalId(run.ctx, prepared.proposal.title), approval: "auto", runId: run.runId });
}

/** Writes the proposal that gates the edits and records the approval. */
function adoptProposal(run: RunState, proposal: Proposal): Proposal {
  const { ctx, summary } = run;
  summary.approval = proposal.approval;
  ctx.proposal = proposal;
  ctx.beginEdits().writeFile(`${ctx.docs}/changes/${proposal.id}.md`, renderProposal(proposal));
  summary.proposal = { id: proposal.id, path: `${ctx.docs}/changes/${proposal.id}.md`, title: proposal.title };
  run.transcript.append({ type: "proposal", id: proposal.id, approval: proposal.approval, title: proposal.title });
  return proposal;
}

/** A proposal id: the date and a slug of the title (whole words), unique among existing proposals. */
function proposalId(ctx: RunContext, title: string): string {
  const date = ctx.runId.slice(0, 8);
  const words = title.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  let slug = "";
  for (const word of words) if ((slug + "-" + word).length <= 48 || !slug) slug = slug ? `${slug}-${word}` : word.slice(0, 48);
  slug ||= "change";
  let id = `${date}-${slug}`;
  for (let n = 2; existsSync(join(ctx.repoRoot, ctx.docs, "changes", `${id}.md`)); n++) id = `${date}-${slug}-${n}`;
  return id;
}
