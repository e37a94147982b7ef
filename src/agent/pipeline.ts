/**
 * The gated run every repo-changing pipeline shares (DESIGN §5): preflight under the repo lock,
 * a baseline check, edits that all go through the journal, the verification gate, then a
 * commit with the proposal that gated it — or a byte-identical rollback. `do` and
 * `sync --resolve` differ only in how the change is proposed (by the model, or written by
 * copperhead for drift it found) and which tools the model gets.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeLocation } from "../checks/location.ts";
import type { CheckReport, Finding } from "../checks/types.ts";
import { checkProject } from "../checks/check.ts";
import type { Config } from "../config/schema.ts";
import { asCopperheadError, CopperheadError } from "../errors.ts";
import { findKicadCli } from "../kicad/kicad-cli.ts";
import { projectLibraries } from "../kicad/library.ts";
import { commitAll, diffPatch, dirtyPaths, headCommit } from "../repo/git.ts";
import { RunJournal } from "../repo/journal.ts";
import { withRepoLock } from "../repo/lock.ts";
import type { KicadProject } from "../repo/project.ts";
import { restoreInterruptedRuns } from "../repo/recovery.ts";
import { newRunId, runDir } from "../repo/run-dir.ts";
import { renderBom } from "../spec/bom.ts";
import { renderProposal, type Approval, type Proposal } from "../spec/proposal.ts";
import { insertChangelogEntries } from "../spec/changelog.ts";
import { changelogTemplate, decisionsTemplate } from "../spec/templates.ts";
import { currentDesign, type RunContext } from "./context.ts";
import { evaluateGate, verificationLine } from "./gate.ts";
import { runLoop, type LoopEnd, type VerifyOutcome } from "./loop.ts";
import type { ModelProvider } from "./model.ts";
import type { ProgressListener } from "./progress.ts";
import type { Tool } from "./tools/tool.ts";
import { checkCommitted } from "./baseline.ts";
import { renderCommitted, renderWorkingTree, type RenderOutcome } from "./renders.ts";
import { Transcript } from "./transcript.ts";

export type RunStatus = "committed" | "rolled_back" | "refused" | "proposed";
export type RunReason =
  | "dirty_tree"
  | "spec_gate"
  | "requirement_change"
  | "not_approved"
  | "verification_failed"
  | "turn_budget_exhausted"
  | "provider_error"
  | "cancelled"
  | "commit_failed"
  | "stalled"
  | "internal_error";

export interface RunSummary {
  schema: "copperhead.do/1";
  status: RunStatus;
  reason?: RunReason;
  /** Why, in a sentence a person reads (the refusal, the failing findings, the error). */
  detail?: string;
  runId: string;
  request: string;
  approval: Approval | null;
  dryRun: boolean;
  commit?: string;
  filesTouched: string[];
  proposal?: { id: string; path: string; title: string };
  verification: { ok: boolean; newFindings: Finding[]; checks: { id: string; status: string; summary: string }[]; repairCycles: number; maxRepairCycles: number };
  transcriptPath: string;
  summaryPath: string;
  usage: { turns: number; inputTokens: number; outputTokens: number };
  /** Footprints added to the board that a person still has to place and route. */
  layoutPending: string[];
  /** Before/after SVG renders of the schematic in the run directory (repo-relative). */
  renders: string[];
  /** Earlier runs that had crashed mid-edit and were restored before this one started. */
  recovered: string[];
}

export interface GatedRunOptions {
  repoRoot: string;
  project: KicadProject;
  config: Config;
  /** What the run is for, in words (the user's request, or the drift sync found). */
  request: string;
  provider: ModelProvider;
  /** The tools the model may call; locked ones are refused by phase. */
  tools: Tool<RunContext>[];
  dryRun?: boolean;
  maxRepairCycles?: number;
  maxTurns?: number;
  /** Interactive approval; without it approval is AUTO (recorded as such everywhere). */
  approve?: (proposal: Proposal) => Promise<boolean>;
  /**
   * Work copperhead does itself before any model turn (sync's deterministic fixes). It returns
   * the proposal that gates the run — the model then starts with edits unlocked — and whether
   * anything is left for the model at all. Without it the model proposes (do).
   */
  prepare?: (ctx: RunContext) => Promise<PreparedRun>;
  /** Extra reasons the gate says no, beyond new check findings (sync: drift left over). */
  extraGate?: (ctx: RunContext) => string[];
  onProgress?: ProgressListener;
  signal?: AbortSignal;
}

export interface PreparedRun {
  proposal: Omit<Proposal, "id" | "approval" | "runId">;
  /** What the model is asked to do; undefined when code resolved everything. */
  modelTask?: string;
}

export async function runGatedChange(options: GatedRunOptions): Promise<RunSummary> {
  const { repoRoot, project, config, provider, request } = options;
  const cli = await findKicadCli();
  const runId = newRunId();
  return withRepoLock(repoRoot, async () => {
    const recovered = await restoreInterruptedRuns(repoRoot);
    const dir = runDir(repoRoot, runId);
    const rel = (file: string) => `.copperhead/runs/${runId}/${file}`;
    const transcript = new Transcript(dir);
    const progress = options.onProgress ?? (() => {});
    const maxRepairCycles = options.maxRepairCycles ?? config.maxRepairCycles;
    const summary: RunSummary = {
      schema: "copperhead.do/1",
      status: "refused",
      runId,
      request,
      approval: null,
      dryRun: options.dryRun === true,
      filesTouched: [],
      verification: { ok: false, newFindings: [], checks: [], repairCycles: 0, maxRepairCycles },
      transcriptPath: rel("transcript.jsonl"),
      summaryPath: rel("summary.md"),
      usage: { turns: 0, inputTokens: 0, outputTokens: 0 },
      layoutPending: [],
      renders: [],
      recovered,
    };
    transcript.append({ type: "phase", phase: "preflight", runId, request, model: provider.label, dryRun: summary.dryRun, recovered });
    // Schematic plots run alongside the model and the checks (see renders.ts); every way out
    // of the run waits for them, so none outlives the run or its temp folder.
    let before: Promise<RenderOutcome> | undefined;
    let after: Promise<RenderOutcome> | undefined;
    const finish = async (status: RunStatus, reason?: RunReason, detail?: string): Promise<RunSummary> => {
      await Promise.all([before, after]);
      Object.assign(summary, { status }, reason ? { reason } : {}, detail ? { detail } : {});
      transcript.append({ type: "end", status, reason, detail });
      writeFileSync(join(dir, "summary.md"), transcript.redact(renderRunSummary(summary, provider.label)));
      return summary;
    };

    progress({ type: "phase", phase: "preflight", message: `run ${runId} with ${provider.label}` });
    const dirty = await dirtyPaths(repoRoot);
    if (dirty.length > 0) {
      return finish("refused", "dirty_tree", `the working tree has uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", …" : ""}); commit or stash them first`);
    }

    const strict = config.strict;
    const check = () => checkProject(project, { ...config, strict });
    progress({ type: "phase", phase: "baseline", message: "checking the design before any change (alongside the model)" });
    const baselineCheck = checkCommitted(project, strict);
    // A baseline that cannot run (kicad-cli cannot load HEAD's files) stops the model at once;
    // the run then rolls back and reports that error, as a check would have.
    const stop = new AbortController();
    options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
    let baselineFailure: unknown;
    baselineCheck.catch((err) => {
      baselineFailure = err;
      stop.abort();
    });
    // Plotted while the model proposes and edits, which leaves a core idle (see renders.ts).
    const renderDir = join(dir, "render");
    before = renderCommitted(project, join(renderDir, "before"), cli);

    let journal: RunJournal | undefined;
    const ctx: RunContext = {
      repoRoot,
      project,
      docs: config.docs,
      runId,
      libraries: projectLibraries(project.projectFile, cli),
      check,
      layoutPending: new Set(),
      decisions: [],
      beginEdits: () => {
        journal ??= RunJournal.begin(repoRoot, runId, dir);
        ctx.journal = journal;
        return journal;
      },
    };

    let lastReport: CheckReport | undefined;
    const verify = async (): Promise<VerifyOutcome> => {
      regenerateDerivedDocs(ctx);
      await after;
      after = renderWorkingTree(project, join(renderDir, "after"), cli);
      const [current, base] = await Promise.allSettled([check(), baselineCheck]);
      // A baseline that could not run ends the run (see failBaseline), whatever the model did.
      if (base.status === "rejected") throw base.reason;
      if (current.status === "rejected") {
        const typed = asCopperheadError(current.reason);
        return { ok: false, newFindings: 1, feedback: `- the design no longer loads: ${typed.message}` };
      }
      const report = current.value;
      const baseline = base.value;
      lastReport = report;
      const gate = evaluateGate(baseline, report, strict);
      const extra = options.extraGate?.(ctx) ?? [];
      summary.verification.newFindings = gate.newFindings;
      summary.verification.checks = report.checks.map((c) => ({ id: c.id, status: c.status, summary: c.summary }));
      const feedback = [...gate.newFindings.map(describeFinding), ...extra.map((e) => `- ${e}`)].join("\n");
      return { ok: gate.ok && extra.length === 0, newFindings: gate.newFindings.length + extra.length, feedback };
    };

    /** The baseline could not run: undo whatever the model did, then report it like check would. */
    const failBaseline = async (): Promise<never> => {
      const typed = asCopperheadError(baselineFailure);
      transcript.append({ type: "error", where: "baseline", code: typed.code, message: typed.message });
      await rollback("internal_error", `the baseline check could not run: ${typed.message}`);
      throw typed;
    };

    const rollback = async (reason: RunReason, detail: string): Promise<RunSummary> => {
      progress({ type: "phase", phase: "rollback", message: reason });
      summary.filesTouched = journal?.touched() ?? [];
      journal?.rollback();
      transcript.append({ type: "rollback", reason, files: summary.filesTouched });
      progress({ type: "rollback", reason });
      return finish("rolled_back", reason, detail);
    };

    /** Writes the proposal that gates the edits and records the approval. */
    const adopt = (proposal: Proposal): Proposal => {
      summary.approval = proposal.approval;
      ctx.proposal = proposal;
      ctx.beginEdits().writeFile(`${ctx.docs}/changes/${proposal.id}.md`, renderProposal(proposal));
      summary.proposal = { id: proposal.id, path: `${ctx.docs}/changes/${proposal.id}.md`, title: proposal.title };
      transcript.append({ type: "proposal", id: proposal.id, approval: proposal.approval, title: proposal.title });
      return proposal;
    };

    let end: LoopEnd;
    try {
      const prepared = options.prepare ? await options.prepare(ctx) : undefined;
      if (prepared) adopt({ ...prepared.proposal, id: proposalId(ctx, prepared.proposal.title), approval: "auto", runId });
      if (prepared && prepared.modelTask === undefined) {
        progress({ type: "phase", phase: "verify", message: "running the full check" });
        const verdict = await verify();
        transcript.append({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings, repairCycles: 0 });
        progress({ type: "verify", ok: verdict.ok, newFindings: verdict.newFindings });
        end = verdict.ok ? { kind: "verified", repairCycles: 0 } : { kind: "failed", reason: "verification_failed", detail: verdict.feedback, repairCycles: 0 };
      } else {
        const result = await runLoop({
          provider,
          ctx,
          tools: options.tools,
          request: prepared?.modelTask ?? request,
          startInEditPhase: prepared !== undefined,
          maxTurns: options.maxTurns ?? config.maxTurns,
          maxRepairCycles,
          signal: stop.signal,
          transcript,
          onProgress: progress,
          approve: async ({ args }) => {
            const approval: Approval = options.approve ? "interactive" : "auto";
            const proposal: Proposal = { id: proposalId(ctx, args.title), title: args.title, approval, requirements: args.requirements_touched, why: args.why, changes: args.changes, verification: args.verification, runId };
            if (options.approve && !(await options.approve(proposal))) return null;
            return adopt(proposal);
          },
          verify,
        });
        end = result.end;
        summary.usage = result.usage;
      }
      summary.layoutPending = [...ctx.layoutPending].sort();
    } catch (err) {
      if (baselineFailure !== undefined) return failBaseline();
      const typed = asCopperheadError(err);
      transcript.append({ type: "error", where: "pipeline", code: typed.code, message: typed.message });
      return rollback("internal_error", typed.message);
    }
    if (baselineFailure !== undefined) return failBaseline();

    if (end.kind === "refused") {
      journal?.rollback();
      return finish("refused", end.reason, end.detail);
    }
    summary.verification.repairCycles = end.repairCycles;
    if (end.kind === "failed") return rollback(end.reason, end.detail);

    summary.verification.ok = true;
    try {
      return await conclude();
    } catch (err) {
      const typed = asCopperheadError(err);
      transcript.append({ type: "error", where: "commit", code: typed.code, message: typed.message });
      return rollback(typed.code === "git_failed" ? "commit_failed" : "internal_error", typed.message);
    }

    /** Records, diff, then commit — or, for a dry run, restore. */
    async function conclude(): Promise<RunSummary> {
      appendRecords(ctx, lastReport!);
      summary.filesTouched = journal!.touched();
      writeFileSync(join(dir, "diff.patch"), await diffPatch(repoRoot, summary.filesTouched));
      const plotted = [(await before) ?? { files: [], skipped: "no baseline" }, (await after) ?? { files: [], skipped: "not verified" }];
      if (summary.filesTouched.some((f) => f.endsWith(".kicad_sch"))) {
        summary.renders = plotted.flatMap((r) => r.files);
        for (const r of plotted) if (r.skipped) transcript.append({ type: "note", renders: `not rendered: ${r.skipped}` });
      } else rmSync(renderDir, { recursive: true, force: true });
      if (summary.dryRun) {
        journal!.rollback();
        transcript.append({ type: "dry_run", files: summary.filesTouched });
        return finish("proposed", undefined, "dry run: verified, not committed; the diff is in diff.patch");
      }
      progress({ type: "phase", phase: "commit", message: "committing" });
      journal!.beforeCommit(await headCommit(repoRoot));
      const committed = await commitAll(repoRoot, {
        message: commitMessage(ctx, summary, lastReport!),
        paths: summary.filesTouched,
        env: { COPPERHEAD_RUN: runId },
      });
      if (!committed.ok) {
        transcript.append({ type: "commit", ok: false, output: committed.output });
        return rollback("commit_failed", `git commit failed: ${committed.output.trim().split("\n").slice(-5).join(" / ")}`);
      }
      journal!.complete("committed");
      summary.commit = committed.hash;
      transcript.append({ type: "commit", ok: true, commit: committed.hash });
      progress({ type: "commit", commit: committed.hash });
      return finish("committed");
    }
  }, { runId });
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

/** Derived docs follow the design by code, never by the model: the BOM table is regenerated. */
export function regenerateDerivedDocs(ctx: RunContext): void {
  const bom = `${ctx.docs}/BOM.md`;
  const path = join(ctx.repoRoot, bom);
  if (!existsSync(path)) return;
  const existing = readFileSync(path, "utf8");
  let regenerated: string;
  try {
    regenerated = renderBom(currentDesign(ctx), existing);
  } catch (err) {
    // A table a person broke is theirs to mend (`init --force`); the drift check reports it.
    if (err instanceof CopperheadError) return;
    throw err;
  }
  if (regenerated !== existing) (ctx.journal ?? ctx.beginEdits()).writeFile(bom, regenerated);
}

/** DECISIONS.md and CHANGELOG.md are appended by the pipeline, once the change verified. */
function appendRecords(ctx: RunContext, report: CheckReport): void {
  const journal = ctx.journal!;
  const date = `${ctx.runId.slice(0, 4)}-${ctx.runId.slice(4, 6)}-${ctx.runId.slice(6, 8)}`;
  const proposal = ctx.proposal!;
  if (ctx.decisions.length > 0) {
    const file = `${ctx.docs}/DECISIONS.md`;
    const existing = readOr(ctx, file, decisionsTemplate());
    const lines = ctx.decisions.map((d) => `- ${date} ${ctx.runId}: ${oneLine(d.decision)} — ${oneLine(d.why)}`);
    journal.writeFile(file, `${existing}${existing.endsWith("\n") ? "" : "\n"}${lines.join("\n")}\n`);
  }
  const file = `${ctx.docs}/CHANGELOG.md`;
  const existing = readOr(ctx, file, changelogTemplate(ctx.docs));
  const entry = [
    `### ${date} — ${proposal.title}`,
    "",
    oneLine(ctx.finished ?? proposal.why),
    "",
    `Change: \`${ctx.docs}/changes/${proposal.id}.md\` · Run: \`${ctx.runId}\` · Verification: ${verificationLine(report)}`,
    "",
  ].join("\n");
  const updated = insertChangelogEntries(existing, [entry]);
  journal.writeFile(file, updated);
}

function readOr(ctx: RunContext, rel: string, fallback: string): string {
  const path = join(ctx.repoRoot, rel);
  return existsSync(path) ? readFileSync(path, "utf8") : fallback;
}

function commitMessage(ctx: RunContext, summary: RunSummary, report: CheckReport): string {
  const proposal = ctx.proposal!;
  return [
    `copperhead: ${proposal.title}`,
    "",
    ctx.finished ?? proposal.why,
    "",
    `Change: ${summary.proposal!.path}`,
    `Verification: ${verificationLine(report)}`,
    `Copperhead-Run: ${summary.runId}`,
    `Copperhead-Approval: ${proposal.approval}`,
    "",
  ].join("\n");
}

function describeFinding(f: Finding): string {
  return `- [${f.check}/${f.rule}] ${f.message}${f.location ? ` (${describeLocation(f.location)})` : ""}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** The run's `summary.md`: what a person opens first. */
function renderRunSummary(s: RunSummary, model: string): string {
  const lines = [
    `# copperhead run ${s.runId}`,
    "",
    `- Request: ${oneLine(s.request)}`,
    `- Model: ${model}`,
    `- Status: **${s.status}**${s.reason ? ` (${s.reason})` : ""}${s.dryRun ? " — dry run" : ""}`,
    ...(s.detail ? [`- Detail: ${oneLine(s.detail)}`] : []),
    ...(s.proposal ? [`- Proposal: ${s.proposal.path} — ${s.proposal.title} (approval: ${s.approval})`] : []),
    ...(s.commit ? [`- Commit: ${s.commit}`] : []),
    `- Verification: ${s.verification.ok ? "passed" : "not passed"}, ${s.verification.repairCycles}/${s.verification.maxRepairCycles} repair cycles`,
    `- Model usage: ${s.usage.turns} turns, ${s.usage.inputTokens} input and ${s.usage.outputTokens} output tokens`,
    ...(s.layoutPending.length ? [`- Layout pending (place and route these footprints): ${s.layoutPending.join(", ")}`] : []),
    ...(s.renders.length ? [`- Schematic renders: ${s.renders.join(", ")}`] : []),
    ...(s.recovered.length ? [`- Recovered before starting: ${s.recovered.join(", ")}`] : []),
    "",
    "## Files",
    "",
    ...(s.filesTouched.length ? s.filesTouched.map((f) => `- ${f}`) : ["- none"]),
    "",
  ];
  if (s.verification.newFindings.length > 0) {
    lines.push("## New findings", "", ...s.verification.newFindings.map(describeFinding), "");
  }
  return lines.join("\n");
}
