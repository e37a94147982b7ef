/**
 * The repo most pipeline tests start from: usb-led (or a corpus project) in a fresh git repo,
 * the design committed, then `copperhead init` (without the hook) committed — a clean tree, as
 * `do` and `sync` need.
 */
import { cpSync } from "node:fs";
import { join } from "node:path";
import { runInit } from "../../src/commands/init.ts";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { copyCorpusProject, type CorpusProject } from "./corpora.ts";
import { copyFixture, makeTempDir, requireKicadCli } from "./kicad.ts";

/** Run records, the check cache and the lock are local state, not part of the tree a run may change. */
export const LOCAL_STATE = [".git", ".copperhead/runs", ".copperhead/cache", ".copperhead/lock"];

/** Hash and mode of every file a run could change, for byte-identical assertions. */
export const fingerprint = (repo: string) => treeFingerprint(repo, LOCAL_STATE);

/** Environment for spawned binaries: no user git config, no model provider unless a test names one. */
export const ISOLATED_ENV: Record<string, string | undefined> = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
  COPPERHEAD_BASE_URL: undefined,
  COPPERHEAD_API_KEY: undefined,
  COPPERHEAD_MODEL: undefined,
  COPPERHEAD_PROVIDER_TIMEOUT: undefined,
  NO_COLOR: "1",
};

/** `extra` runs between `init` and its commit, for variants that ship in the initial state. */
export async function initialisedRepo(extra?: (repo: string) => void): Promise<string> {
  await requireKicadCli();
  return initialise(await copyFixture("usb-led"), "usb-led design", extra);
}

/** A copy of a corpus project (see support/corpora.ts) set up the same way; returns the repo. */
export async function initialisedCorpusRepo(project: CorpusProject): Promise<string> {
  await requireKicadCli();
  const copy = await copyCorpusProject(project);
  // A folder with two projects (ecc83 holds ecc83-pp and ecc83-pp_v2) needs the one named.
  return initialise(copy.root, `${project.id} design`, undefined, project.projectFile);
}

async function initialise(
  repo: string,
  message: string,
  extra?: (repo: string) => void,
  project?: string,
): Promise<string> {
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "config", "user.name", "Test User");
  await git(repo, "config", "user.email", "test@example.com");
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", message);
  await runInit({ repo, hooks: false, project });
  extra?.(repo);
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "copperhead init");
  return repo;
}

/** A private copy (with .git) of a template repo, so tests never share one. */
export async function copyRepo(template: string): Promise<string> {
  const repo = join(await makeTempDir(), "usb-led");
  cpSync(template, repo, { recursive: true });
  return repo;
}
