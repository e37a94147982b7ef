/**
 * `copperhead sync`: verify that the docs and the board still agree with the
 * schematic, and with `resolve`, bring them back in line through the same gated pipeline as
 * `do` — code first (regenerate the BOM, sync the board, restore missing records), then a
 * gated model run limited to doc edits and board sync for what only prose can fix. Requirement
 * violations are never resolved: they are reported for a human.
 */
import type { ModelProvider } from "../agent/model.ts";
import type { ProgressListener } from "../agent/progress.ts";
import type { HostSampler } from "../agent/providers/host.ts";
import { resolveProvider } from "../agent/providers/index.ts";
import { resolvable, verifySync, type SyncReport } from "../checks/sync.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { CopperheadError } from "../errors.ts";
import { assertGitRepo } from "../repo/git.ts";
import { openRepo } from "../repo/recovery.ts";
import { runGatedChange, type RunSummary } from "../run/gated-run.ts";
import { syncStrategy } from "../run/sync.ts";

export type { SyncItem, SyncReport } from "../checks/sync.ts";

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

export interface SyncResult extends SyncReport {
  /** The gated run that resolved drift (with `resolve`), committed or rolled back. */
  resolution?: RunSummary;
}

export async function runSync(options: SyncOptions = {}): Promise<SyncResult> {
  const repoRoot = await openRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project);
  const docs = config.docs;
  const report = verifySync({ project, docs });
  if (!options.resolve) return report;
  // A resolve needs a model even when nothing turns out to need one: the contract is that a
  // keyless resolve is missing_api_key and starts nothing, whatever the repo holds.
  let provider: ModelProvider;
  try {
    provider = options.provider ?? resolveProvider({ model: options.model, providerTimeoutSeconds: options.providerTimeoutSeconds, providerDeadlineSeconds: options.providerDeadlineSeconds, config, host: options.host });
  } catch (err) {
    // Without a key nothing starts, but the verify report is still the answer to "what drifted".
    if (err instanceof CopperheadError) throw new CopperheadError(err.code, err.message, { ...err.details, report }, err.exitCode);
    throw err;
  }
  // Only what copperhead may resolve starts a run; the rest is a person's.
  if (!report.drift.some(resolvable)) return report;
  await assertGitRepo(repoRoot);
  await provider.preflight?.();
  try {
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
    await provider.close?.();
  }
}
