/**
 * `copperhead check`: the deterministic gate over the repo as it is (see `checks/check.ts`),
 * with the repo's own settings from `.copperhead/config.json`. No network, no model.
 */
import { checkProject } from "../checks/check.ts";
import type { CheckReport } from "../checks/types.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { openRepo } from "../repo/recovery.ts";

export interface CheckOptions {
  repo?: string;
  project?: string;
  /** Also run the fabrication checks; unconnected items become errors. */
  fab?: boolean;
  /** Warnings fail their family too. Default: the config's `strict`. */
  strict?: boolean;
}

export async function runCheck(options: CheckOptions = {}): Promise<CheckReport> {
  const repoRoot = await openRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project);
  return checkProject(project, { ...config, strict: options.strict ?? config.strict, fab: options.fab });
}
