/**
 * Propose and approve, the spec gate's side of the run: a proposal that passed validation (the
 * model's, or the one `sync` writes for drift it fixed) is approved — interactively, or AUTO —
 * and adopted: written to `docs/changes/<id>.md` before any edit and recorded everywhere. The
 * model's proposal names what the edits may touch; an amendment widens that, approved and
 * recorded the same way.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../agent/context.ts";
import type { ProposalArgs } from "../agent/tools/spec.ts";
import { CopperheadError } from "../errors.ts";
import { widen } from "../kicad/proposal-scope.ts";
import { lstatOrUndefined, resolveRepoPath } from "../repo/repo-path.ts";
import {
  describeAmendment,
  renderProposal,
  type Amendment,
  type Approval,
  type Proposal,
  type ProposalScope,
} from "../spec/proposal.ts";
import { proposalSlug } from "../spec/proposal-id.ts";
import { oneLine } from "../util/trim.ts";
import type { PreparedRun, RunState } from "./run-state.ts";

/** The model's validated proposal, approved and adopted; null when the person said no. */
export async function approveProposal(run: RunState, args: ProposalArgs): Promise<Proposal | null> {
  const { approve } = run.options;
  const approval: Approval = approve ? "interactive" : "auto";
  const scope: ProposalScope = { refs: args.refs, nets: args.nets, newRefs: args.new_refs, newNets: args.new_nets };
  const proposal: Proposal = {
    id: proposalId(run.ctx, args.title),
    title: args.title,
    approval,
    requirements: args.requirements_touched,
    why: args.why,
    changes: args.changes,
    verification: args.verification,
    runId: run.runId,
    scope,
  };
  if (approve && !(await approve(proposal))) return null;
  run.ctx.scope = namesOf(scope);
  run.ctx.amendProposal = (amendment) => amendProposal(run, amendment);
  return adoptProposal(run, proposal);
}

/**
 * An amendment that passed validation: approved like the proposal (asked again when the run
 * asks), then the scope widens and the proposal file, the summary and the transcript say so.
 */
async function amendProposal(run: RunState, amendment: Amendment): Promise<Proposal | null> {
  const { ctx, summary } = run;
  const current = ctx.proposal!;
  const recorded = { ...amendment, why: oneLine(amendment.why) };
  const amended: Proposal = { ...current, amendments: [...(current.amendments ?? []), recorded] };
  if (run.options.approve && !(await run.options.approve(amended))) {
    run.transcript.append({ type: "amendment", proposal: current.id, approved: false, ...recorded });
    return null;
  }
  ctx.scope = widen(ctx.scope ?? { refs: [], nets: [] }, namesOf(recorded.scope));
  ctx.proposal = amended;
  ctx.beginEdits().writeFile(proposalPath(ctx, amended), renderProposal(amended));
  summary.proposal = { ...summary.proposal!, amendments: amended.amendments };
  run.transcript.append({
    type: "amendment",
    proposal: current.id,
    approved: true,
    number: amended.amendments!.length,
    ...recorded,
    covers: ctx.scope,
  });
  run.progress({ type: "phase", phase: "approve", message: `proposal amended (${describeAmendment(recorded)})` });
  return amended;
}

/** The names the edits may touch, as the scope check reads them. */
function namesOf(scope: ProposalScope): { refs: string[]; nets: string[] } {
  return { refs: [...scope.refs, ...scope.newRefs], nets: [...scope.nets, ...scope.newNets] };
}

function proposalPath(ctx: RunContext, proposal: Proposal): string {
  return `${proposalFolder(ctx.docs)}/${proposal.id}.md`;
}

const proposalFolder = (docs: string) => `${docs}/changes`;

/**
 * The approved proposal is written to `<docs>/changes/` mid-run, so a folder there that cannot
 * take it is refused at preflight, before the model is called: `bad_path` when it (or a folder
 * above it) is a symlink out of the repo, dangling, or a link to another folder of the repo
 * (into `.copperhead`, say), where the record would land somewhere nobody reads it.
 */
export function assertProposalFolder(repoRoot: string, docs: string): void {
  const folder = proposalFolder(docs);
  resolveRepoPath(repoRoot, `${folder}/proposal.md`);
  if (lstatOrUndefined(join(repoRoot, folder))?.isSymbolicLink()) {
    throw new CopperheadError(
      "bad_path",
      `${folder} is a symlink; change proposals are written only into a real folder of the repository.`,
      {
        file: folder,
        fix: `Replace the symlink ${folder} with a folder (\`rm ${folder} && mkdir ${folder}\`, and commit that), then run again.`,
      },
    );
  }
}

/** The proposal copperhead wrote itself (sync), approved AUTO. */
export function adoptPrepared(run: RunState, prepared: PreparedRun): Proposal {
  return adoptProposal(run, {
    ...prepared.proposal,
    id: proposalId(run.ctx, prepared.proposal.title),
    approval: "auto",
    runId: run.runId,
  });
}

/** Writes the proposal that gates the edits and records the approval. */
function adoptProposal(run: RunState, proposal: Proposal): Proposal {
  const { ctx, summary } = run;
  summary.approval = proposal.approval;
  ctx.proposal = proposal;
  ctx.beginEdits().writeFile(proposalPath(ctx, proposal), renderProposal(proposal));
  summary.proposal = { id: proposal.id, path: proposalPath(ctx, proposal), title: proposal.title };
  run.transcript.append({ type: "proposal", id: proposal.id, approval: proposal.approval, title: proposal.title });
  return proposal;
}

/**
 * A proposal id: the date and the title's words (`proposalSlug`), unique among existing
 * proposals: a second proposal of one day with the same words gets `-2`, then `-3`, … (the
 * slug itself never ends in a number, so such a suffix is always this one).
 */
function proposalId(ctx: RunContext, title: string): string {
  const date = ctx.runId.slice(0, 8);
  const slug = proposalSlug(title);
  let id = `${date}-${slug}`;
  for (let n = 2; existsSync(join(ctx.repoRoot, ctx.docs, "changes", `${id}.md`)); n++) id = `${date}-${slug}-${n}`;
  return id;
}
