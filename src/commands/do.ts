/**
 * `copperhead do`: the spec-gated, verification-gated loop (see ARCHITECTURE.md, "The gated run"). A change either passes
 * the same checks a person would run and is committed with the proposal that explains it, or
 * the repo is left exactly as it was — whatever the model does, whether the network fails,
 * the user presses Ctrl-C, or the process is killed (the journal restores the next command).
 */
import type { ModelProvider } from "../agent/conversation.ts";
import type { ProgressListener } from "../agent/progress.ts";
import type { HostSampler } from "../agent/providers/host.ts";
import { resolveProvider } from "../agent/providers/index.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { CopperheadError } from "../errors.ts";
import { assertGitRepo } from "../repo/git.ts";
import { locateRepo } from "../repo/project.ts";
import { doStrategy } from "../run/do-strategy.ts";
import { runGatedChange, type RunSummary } from "../run/gated-run.ts";
import type { Proposal } from "../spec/proposal.ts";

export type DoSummary = RunSummary;

export interface DoOptions {
  request: string;
  repo?: string;
  project?: string;
  dryRun?: boolean;
  model?: string;
  /** `--provider-timeout`: seconds a model server may stay silent (see `agent/providers/patience.ts`). */
  providerTimeoutSeconds?: number;
  /** `--provider-deadline`: seconds one model call may take in all (see `agent/providers/patience.ts`). */
  providerDeadlineSeconds?: number;
  maxRepairCycles?: number;
  maxTurns?: number;
  /** Interactive approval; without it approval is AUTO (recorded as such everywhere). */
  approve?: (proposal: Proposal) => Promise<boolean>;
  onProgress?: ProgressListener;
  signal?: AbortSignal;
  /** A ready provider (tests, the demo); otherwise resolved from `model`, the environment and config. */
  provider?: ModelProvider;
  /** The MCP client's model, when the command runs under `copperhead mcp`. */
  host?: HostSampler;
}

/** Requests past this size are refused before anything starts (they are prompts, not files). */
export const MAX_REQUEST_BYTES = 16 * 1024;

export async function runDo(options: DoOptions): Promise<DoSummary> {
  const request = options.request.trim();
  if (!request)
    throw new CopperheadError("usage", "The request is empty.", {
      fix: 'Say what to change, e.g. copperhead do "add a 100 nF decoupling capacitor on +3V3".',
    });
  if (Buffer.byteLength(request) > MAX_REQUEST_BYTES) {
    throw new CopperheadError(
      "input_too_large",
      `The request is ${Buffer.byteLength(request)} bytes; the limit is ${MAX_REQUEST_BYTES}.`,
      { fix: "Describe the change in a few sentences." },
    );
  }
  const { root: repoRoot, within } = locateRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project, within);
  const provider =
    options.provider ??
    resolveProvider({
      model: options.model,
      providerTimeoutSeconds: options.providerTimeoutSeconds,
      providerDeadlineSeconds: options.providerDeadlineSeconds,
      config,
      host: options.host,
    });
  await assertGitRepo(repoRoot);
  await provider.preflight?.();
  try {
    return await runGatedChange({
      repoRoot,
      project,
      config,
      provider,
      strategy: doStrategy(request),
      dryRun: options.dryRun,
      maxRepairCycles: options.maxRepairCycles,
      maxTurns: options.maxTurns,
      approve: options.approve,
      onProgress: options.onProgress,
      signal: options.signal,
    });
  } finally {
    await provider.close?.();
  }
}
