/**
 * `copperhead sync`: verify that the docs and the board still agree with the schematic, and
 * with `resolve`, bring them back in line. Code resolves what needs no judgement (regenerate the
 * BOM and pinout, sync the board, restore missing records) without a model; a model is asked for
 * only when prose must be reworded, through the same gated pipeline as `do`. Requirement
 * violations are never resolved: they are reported for a human.
 *
 * Drift that code alone resolves is resolved in one of two ways:
 * - on a clean tree, as a gated run with no model: verified, recorded and committed;
 * - beside the user's own uncommitted changes (a schematic edit the pre-commit hook blocked
 *   because the BOM no longer matches), in the working tree, as `init` and `board sync` write:
 *   the files are left for the user to stage and commit with their change, which the hook then
 *   checks. A gated run could not start there: it needs a clean tree to roll back to.
 */
import * as v from "valibot";
import type { ModelProvider } from "../agent/conversation.ts";
import type { ProgressListener } from "../agent/progress.ts";
import type { HostSampler } from "../agent/providers/host.ts";
import { resolveProvider } from "../agent/providers/index.ts";
import { resolvable, SyncReportSchema, verifySync, type SyncItem, type SyncReport } from "../checks/sync-report.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { CopperheadError } from "../errors.ts";
import type { Config } from "../config/config.ts";
import { loadDesign } from "../design/design.ts";
import { syncBoard } from "../kicad/board/sync/sync-board.ts";
import { assertGitRepo, dirtyPaths } from "../repo/git.ts";
import { withRepoLock } from "../repo/lock.ts";
import { FileOutcomeSchema, refusedWhenConfined, type FileOutcome } from "../repo/owned-files.ts";
import type { KicadProject } from "../repo/project.ts";
import { openRepo } from "../repo/recovery.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { GENERATED_DOCS } from "../spec/generated-docs.ts";
import { changelogTemplate, decisionsTemplate } from "../spec/templates.ts";
import { createOnce, writeGenerated } from "./init.ts";
import { runGatedChange } from "../run/gated-run.ts";
import { RunSummarySchema } from "../run/summary.ts";
import { syncStrategy } from "../run/sync-strategy.ts";

export type { SyncItem, SyncReport } from "../checks/sync-report.ts";

export interface SyncOptions {
  repo?: string;
  project?: string;
  resolve?: boolean;
  model?: string;
  /** `--provider-timeout`: seconds a model server may stay silent (see `agent/providers/patience.ts`). */
  providerTimeoutSeconds?: number;
  /** `--provider-deadline`: seconds one model call may take in all (see `agent/providers/patience.ts`). */
  providerDeadlineSeconds?: number;
  /** A ready provider (tests); otherwise resolved from `model`, the environment and config. */
  provider?: ModelProvider;
  /** The MCP client's model, when the command runs under `copperhead mcp`. */
  host?: HostSampler;
  onProgress?: ProgressListener;
  signal?: AbortSignal;
}

/** What `sync` returns (`sync --json`, the MCP result): its type, and the tool's `outputSchema`. */
export const SyncResultSchema = v.object({
  ...SyncReportSchema.entries,
  /** The gated run that resolved drift (with `resolve`), committed or rolled back. */
  resolution: v.optional(RunSummarySchema),
  /**
   * What a resolve wrote in the working tree beside the user's uncommitted changes (drift code
   * alone resolves), for the user to stage and commit with them; the report above is of after.
   */
  written: v.optional(v.array(FileOutcomeSchema)),
});
export type SyncResult = v.InferOutput<typeof SyncResultSchema>;

export async function runSync(options: SyncOptions = {}): Promise<SyncResult> {
  const { root: repoRoot, within } = await openRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project, within);
  const docs = config.docs;
  const report = verifySync({ project, docs });
  if (!options.resolve) return report;
  // Only what copperhead may resolve starts anything; the rest is a person's. A model is asked
  // for only when prose needs rewording; one named with --model is checked all the same.
  const resolving = report.drift.filter(resolvable);
  const judgement = resolving.filter((item) => item.resolution === "model");
  const model =
    judgement.length > 0 || options.model !== undefined
      ? (options.provider ?? modelFor(judgement, report, options, config))
      : undefined;
  const provider = judgement.length > 0 ? model : undefined;
  try {
    if (resolving.length === 0) return report;
    await assertGitRepo(repoRoot);
    if (!provider && (await dirtyPaths(repoRoot)).length > 0) {
      const written = await withRepoLock(repoRoot, () => resolveInWorkingTree(project, docs, resolving));
      return { ...verifySync({ project, docs }), written };
    }
    await provider?.preflight?.();
    const resolution = await runGatedChange({
      repoRoot,
      project,
      config,
      provider,
      strategy: syncStrategy(report, docs),
      onProgress: options.onProgress,
      signal: options.signal,
    });
    return { ...verifySync({ project, docs }), resolution };
  } finally {
    await model?.close?.();
  }
}

/**
 * The model for drift that needs judgement. Without one nothing starts, and the error names
 * those items (the rest code would resolve keylessly) and still carries the verify report,
 * the answer to "what drifted".
 */
function modelFor(judgement: SyncItem[], report: SyncReport, options: SyncOptions, config: Config): ModelProvider {
  try {
    return resolveProvider({
      model: options.model,
      providerTimeoutSeconds: options.providerTimeoutSeconds,
      providerDeadlineSeconds: options.providerDeadlineSeconds,
      config,
      host: options.host,
    });
  } catch (err) {
    if (!(err instanceof CopperheadError)) throw err;
    if (judgement.length === 0)
      throw new CopperheadError(err.code, err.message, { ...err.details, report }, err.exitCode);
    const items = judgement.map((item) => `${item.doc}${item.line ? `:${item.line}` : ""} (${item.claim})`).join(", ");
    const message = `${judgement.length} drift item(s) need a model to reword prose: ${items}. ${err.message}`;
    const fix = `Reword them by hand and run \`copperhead sync --resolve\` again (code resolves the rest without a model), or: ${err.details.fix ?? "configure a model"}`;
    throw new CopperheadError(err.code, message, { ...err.details, fix, report }, err.exitCode);
  }
}

/** Code's fixes, written in the working tree: the board synced, tables regenerated, missing records created. */
async function resolveInWorkingTree(project: KicadProject, docs: string, items: SyncItem[]): Promise<FileOutcome[]> {
  const written: FileOutcome[] = [];
  if (items.some((item) => item.kind === "board")) {
    const { board, written: changed } = await syncBoard(project);
    written.push({ path: repoRelative(project.repoRoot, board), action: changed ? "updated" : "unchanged" });
  }
  const design = loadDesign(project);
  for (const doc of GENERATED_DOCS) {
    const path = `${docs}/${doc.file}`;
    if (items.some((item) => item.resolution === "regenerate" && item.doc === path))
      written.push(refusedWhenConfined(path, () => writeGenerated(design, doc, path, false)));
  }
  for (const item of items.filter((i) => i.resolution === "create")) {
    const file = item.doc!;
    written.push(
      createOnce(project.repoRoot, file, () =>
        file.endsWith("DECISIONS.md") ? decisionsTemplate() : changelogTemplate(docs),
      ),
    );
  }
  // A committed proposal's missing CHANGELOG entry names the run that restores it: that is the
  // gated resolve's, on a clean tree; here it stays reported as drift.
  return written;
}
