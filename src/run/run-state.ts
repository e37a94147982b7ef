/**
 * The one state a gated run carries from stage to stage: what it was asked to do, the record
 * it writes (transcript, summary), what the agent's tools see (the run context), and the work
 * running alongside the model (the baseline check, the schematic renders). Every stage takes
 * it and adds to it; nothing else is shared between stages.
 */
import { join } from "node:path";
import { checkProject } from "../checks/check.ts";
import type { CheckReport } from "../checks/types.ts";
import type { Config } from "../config/schema.ts";
import type { RunContext } from "../agent/context.ts";
import { emptyUsage, type ModelProvider } from "../agent/conversation.ts";
import type { ProgressListener } from "../agent/progress.ts";
import type { Tool } from "../agent/tools/tool.ts";
import { Transcript } from "../agent/transcript.ts";
import type { KicadCli } from "../kicad/cli/kicad-cli.ts";
import { projectLibraries, type Libraries } from "../kicad/library/libraries.ts";
import { boardFootprints } from "../kicad/board/footprint/library-copy.ts";
import { RunJournal } from "../repo/journal.ts";
import type { KicadProject } from "../repo/project.ts";
import { runDir } from "../repo/run-dir.ts";
import type { Proposal } from "../spec/proposal.ts";
import type { RenderOutcome } from "./renders.ts";
import type { RunSummary } from "./summary.ts";

/**
 * What one kind of run brings to the shared stages: `do` lets the model propose; `sync
 * --resolve` fixes what code can first and writes the proposal itself.
 */
export interface RunStrategy {
  /** What the run is for, in words (the user's request, or the drift sync found). */
  request: string;
  /** The tools the model may call; locked ones are refused by phase. */
  tools: Tool<RunContext>[];
  /**
   * Work copperhead does itself before any model turn (sync's deterministic fixes). It returns
   * the proposal that gates the run — the model then starts with edits unlocked — and whether
   * anything is left for the model at all. Without it the model proposes (do).
   */
  prepare?: (ctx: RunContext) => Promise<PreparedRun>;
  /** Extra reasons the gate says no, beyond new check findings (sync: drift left over). */
  extraGate?: (ctx: RunContext) => string[];
}

export interface PreparedRun {
  proposal: Omit<Proposal, "id" | "approval" | "runId">;
  /** What the model is asked to do; undefined when code resolved everything. */
  modelTask?: string;
}

export interface GatedRunOptions {
  repoRoot: string;
  project: KicadProject;
  config: Config;
  /**
   * The model. None when the strategy's code resolves everything (`sync --resolve` of drift
   * that needs no judgement): then no model is asked, and none need be configured.
   */
  provider?: ModelProvider;
  strategy: RunStrategy;
  dryRun?: boolean;
  maxRepairCycles?: number;
  maxTurns?: number;
  /** Interactive approval; without it approval is AUTO (recorded as such everywhere). */
  approve?: (proposal: Proposal) => Promise<boolean>;
  onProgress?: ProgressListener;
  signal?: AbortSignal;
}

/** How a run's records name its model: the provider's label, or that code alone did the work. */
export function modelLabel(options: GatedRunOptions): string {
  return options.provider?.label ?? "none (resolved by code alone)";
}

export interface RunState {
  readonly options: GatedRunOptions;
  readonly runId: string;
  /** The run directory, `.copperhead/runs/<run-id>/`. */
  readonly dir: string;
  readonly cli: KicadCli;
  readonly transcript: Transcript;
  readonly progress: ProgressListener;
  /** The result, filled in as the run goes. */
  readonly summary: RunSummary;
  /** What the agent's tools work on; its journal is every repo write of the run. */
  readonly ctx: RunContext;
  /** Stops the model at once: the caller's cancellation, or a baseline that could not run. */
  readonly stop: AbortController;
  /** The check of the design before the run, from the baseline stage on. */
  baseline?: Baseline;
  /**
   * Schematic plots run alongside the model and the checks (see renders.ts); every way out of
   * the run waits for them, so none outlives the run or its temp folder.
   */
  renders: { before?: Promise<RenderOutcome>; after?: Promise<RenderOutcome> };
  /** The check report of the last verification, which the records quote. */
  lastReport?: CheckReport;
}

export interface Baseline {
  /** HEAD's check report; rejects when the baseline could not run. */
  report: Promise<CheckReport>;
  /** Why the baseline could not run, once it is known. */
  failure?: unknown;
  /** HEAD's DRC with its pours refilled by KiCad, once the gate has asked for it (`checkCommittedRefilled`). */
  refilled?: Promise<CheckReport>;
}

/**
 * A run's libraries: the project's tables, falling back to the board's own copy of a footprint
 * no library holds (a vendor library in no table), as KiCad's "update from board" would.
 */
export function runLibraries(project: KicadProject, cli: KicadCli): Libraries {
  const libraries = projectLibraries(project.projectFile, cli);
  if (project.board) libraries.footprintFallback = boardFootprints(project.board, project.repoRoot);
  return libraries;
}

/** Opens the run's record and context; nothing in the repo is touched yet. */
export function openRun(options: GatedRunOptions, runId: string, cli: KicadCli, recovered: string[]): RunState {
  const { repoRoot, project, config } = options;
  const dir = runDir(repoRoot, runId);
  const rel = (file: string) => `.copperhead/runs/${runId}/${file}`;
  const stop = new AbortController();
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  const ctx: RunContext = {
    repoRoot,
    project,
    docs: config.docs,
    runId,
    libraries: runLibraries(project, cli),
    check: () => checkProject(project, config),
    layoutPending: new Map(),
    decisions: [],
    // The journal is written before the first edit, whichever tool makes it.
    beginEdits: () => (ctx.journal ??= RunJournal.begin(repoRoot, runId, dir)),
  };
  return {
    options,
    runId,
    dir,
    cli,
    transcript: new Transcript(dir),
    progress: options.onProgress ?? (() => {}),
    summary: {
      schema: "copperhead.do/1",
      status: "refused",
      runId,
      request: options.strategy.request,
      approval: null,
      dryRun: options.dryRun === true,
      filesTouched: [],
      verification: {
        ok: null,
        newFindings: [],
        checks: [],
        repairCycles: 0,
        maxRepairCycles: options.maxRepairCycles ?? config.maxRepairCycles,
      },
      transcriptPath: rel("transcript.jsonl"),
      summaryPath: rel("summary.md"),
      usage: emptyUsage(),
      layoutPending: [],
      renders: [],
      diff: null,
      recovered,
    },
    ctx,
    stop,
    renders: {},
  };
}

/** Where the before/after schematic plots go. */
export function renderDir(run: RunState): string {
  return join(run.dir, "render");
}
