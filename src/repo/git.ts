/**
 * A thin, typed wrapper over the git CLI, the only place copperhead runs git.
 *
 * - git runs with captured output and no inherited stdio: stdout carries `--json` and MCP
 *   frames, so neither git nor a user's hook may write to it.
 * - The variables that point git at another repository (GIT_DIR, GIT_INDEX_FILE, ...) are
 *   dropped: inside a user's git hook they name that hook's repo, not `repoRoot`.
 * - Paths are passed with `--literal-pathspecs`, so a file named `*.kicad_sch` means itself.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CopperheadError } from "../errors.ts";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An environment to add; undefined values are skipped, so `{ ...process.env }` fits. */
export type GitEnv = Record<string, string | undefined>;

export interface GitOptions {
  /** Added verbatim to the environment, after the repository-locating variables are dropped. */
  env?: GitEnv;
  /** Written to git's stdin; without it stdin is empty. */
  input?: string | Uint8Array;
  /**
   * Runs git in a process group of its own, so a Ctrl-C at the terminal (or a signal to
   * copperhead's group) does not kill it halfway; `onSpawn` learns its pid.
   */
  detached?: boolean;
  onSpawn?: (pid: number) => void;
}

/** `git rev-parse --local-env-vars`: what makes git look somewhere other than its cwd. */
const REPO_LOCATING_VARS = new Set([
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_CONFIG",
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_PARAMETERS",
  "GIT_DIR",
  "GIT_GRAFT_FILE",
  "GIT_IMPLICIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_NO_REPLACE_OBJECTS",
  "GIT_OBJECT_DIRECTORY",
  "GIT_PREFIX",
  "GIT_REPLACE_REF_BASE",
  "GIT_SHALLOW_FILE",
  "GIT_WORK_TREE",
]);

/**
 * copperhead's own bookkeeping, never part of a change even when no .gitignore covers it: run
 * records, the check cache, the lock and the temp files the lock is created from.
 */
const OWN_PREFIXES = [".copperhead/runs/", ".copperhead/cache/", ".copperhead/lock."];
const OWN_LOCK = ".copperhead/lock";

/** The identity used for each of user.name / user.email the user has not configured. */
const FALLBACK_IDENTITY = { "user.name": "copperhead", "user.email": "copperhead@localhost" } as const;

/**
 * The environment every git process gets: this process's, minus what would point git at
 * another repository, with prompts off and `extra` added last.
 */
function gitEnvironment(extra: GitEnv = {}): Record<string, string> {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: "0", ...withoutRepoLocating(process.env) };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) env[key] = value;
  return env;
}

/** The git on PATH and what `git --version` says of it, or undefined when there is none. */
export function installedGit(): { path: string; version: string } | undefined {
  const path = Bun.which("git");
  if (!path) return undefined;
  return {
    path,
    version: Bun.spawnSync([path, "--version"], { env: gitEnvironment(), stderr: "ignore" }).stdout.toString().trim(),
  };
}

export async function runGit(repoRoot: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  let proc;
  try {
    proc = Bun.spawn(["git", ...args], {
      cwd: repoRoot,
      env: gitEnvironment(options.env),
      stdin: options.input === undefined ? "ignore" : new Blob([options.input]),
      stdout: "pipe",
      stderr: "pipe",
      ...(options.detached ? { detached: true } : {}),
    });
  } catch (err) {
    throw new CopperheadError("git_failed", `Could not run git: ${err instanceof Error ? err.message : String(err)}`, {
      fix: "Install git and make sure it is on PATH.",
    });
  }
  options.onSpawn?.(proc.pid);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * `runGit` for the few places that must stay synchronous (the journal signs every write
 * before it happens); same environment rules, no stdin.
 */
export function runGitSync(repoRoot: string, args: string[]): GitResult {
  let proc;
  try {
    proc = Bun.spawnSync(["git", ...args], {
      cwd: repoRoot,
      env: gitEnvironment(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (err) {
    throw new CopperheadError("git_failed", `Could not run git: ${err instanceof Error ? err.message : String(err)}`, {
      fix: "Install git and make sure it is on PATH.",
    });
  }
  return { code: proc.exitCode ?? 1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

function withoutRepoLocating(env: GitEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (value !== undefined && !REPO_LOCATING_VARS.has(key)) kept[key] = value;
  return kept;
}

/** Runs git and returns stdout, or throws `git_failed` with git's own words. */
async function gitOk(repoRoot: string, args: string[], options: GitOptions = {}): Promise<string> {
  const result = await runGit(repoRoot, args, options);
  if (result.code !== 0) {
    throw new CopperheadError(
      "git_failed",
      `git ${args.find((a) => !a.startsWith("-"))} failed: ${(result.stderr || result.stdout).trim()}`,
      {
        fix: "Run the same git command yourself in the repo to see what git needs.",
        exitStatus: result.code,
      },
    );
  }
  return result.stdout;
}

/**
 * Throws `not_a_git_repo` unless `repoRoot` is the top of a git work tree with at least one
 * commit: rollback and the commit gate both need a HEAD to stand on.
 */
export async function assertGitRepo(repoRoot: string): Promise<void> {
  const top = await runGit(repoRoot, ["rev-parse", "--show-toplevel"]);
  if (top.code !== 0) {
    throw new CopperheadError("not_a_git_repo", `${repoRoot} is not a git repository.`, {
      fix: "Run `git init`, then commit the design (`git add -A && git commit -m 'Initial design'`), and run copperhead again.",
    });
  }
  const topPath = top.stdout.trim();
  if (realpathSync(topPath) !== realpathSync(repoRoot)) {
    throw new CopperheadError(
      "not_a_git_repo",
      `${repoRoot} is inside the git work tree at ${topPath}, not at its top.`,
      {
        fix: `Run copperhead with --repo ${topPath}, or make ${repoRoot} a repository of its own with \`git init\` and a first commit.`,
      },
    );
  }
  const head = await runGit(repoRoot, ["rev-parse", "--verify", "--quiet", "HEAD"]);
  if (head.code !== 0) {
    throw new CopperheadError("not_a_git_repo", `The git repository at ${repoRoot} has no commit yet.`, {
      fix: "Commit the design first (`git add -A && git commit -m 'Initial design'`): copperhead needs a commit to roll back to.",
    });
  }
}

/**
 * Repo-relative paths with any change against HEAD: modified, staged, deleted, renamed (both
 * names) and untracked files; ignored files are not changes. copperhead's run records, cache
 * and lock never count, whether or not a .gitignore covers them.
 */
export async function dirtyPaths(repoRoot: string): Promise<string[]> {
  // `-uall` lists files inside untracked folders one by one, so an untracked `.copperhead/`
  // holding only run records is not reported as a whole.
  const out = await gitOk(repoRoot, [
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--ignored=no",
    "--no-renames",
  ]);
  const paths = new Set<string>();
  for (const entry of out.split("\0")) {
    if (entry.length < 4) continue;
    const path = entry.slice(3);
    if (path === OWN_LOCK || OWN_PREFIXES.some((prefix) => path.startsWith(prefix))) continue;
    paths.add(path);
  }
  return [...paths].sort();
}

/**
 * Whether git ignores the repo-relative `path` and does not track it (`git check-ignore`, which
 * leaves tracked files out): a file the model must not write, since the commit would leave it
 * changed and outside the change.
 */
export async function isIgnored(repoRoot: string, path: string): Promise<boolean> {
  return (await runGit(repoRoot, ["check-ignore", "-q", "--", path])).code === 0;
}

export async function headCommit(repoRoot: string): Promise<string> {
  return (await gitOk(repoRoot, ["rev-parse", "--verify", "HEAD"])).trim();
}

export interface CommitOptions {
  message: string;
  /** Repo-relative paths the run added, modified or deleted; exactly these are committed. */
  paths: string[];
  /**
   * Added to the environment of git and the user's hooks (the loop sets COPPERHEAD_RUN).
   * Variables that would point git at another repository or index are dropped.
   */
  env?: GitEnv;
  /**
   * The private index the commit is built in (a run passes one in its run folder; by default a
   * temporary file). While `git commit` runs, git holds `<indexFile>.lock`.
   */
  indexFile?: string;
  /** Learns `git commit`'s pid the moment it is spawned (the journal records it). */
  onCommitSpawned?: (pid: number) => void;
}

export type CommitResult = { ok: true; hash: string } | { ok: false; output: string };

/**
 * Commits exactly `paths` with the user's identity and the user's hooks.
 *
 * - The commit is built in a private index (`indexFile`: HEAD, plus `paths` as they are on
 *   disk), never in the repo's own: a process killed at any point leaves the repo's index as
 *   the clean tree the run started from left it, so a restored tree is one git sees as
 *   unchanged. Once the commit landed, the repo's index entries for `paths` are set to it.
 * - `git commit` runs in a process group of its own: a Ctrl-C meant for copperhead does not
 *   kill it halfway through the user's hooks. If copperhead itself dies meanwhile, the commit
 *   may still land; recovery waits for it (see `recoverUnfinished`).
 * - `user.name` and `user.email` fall back to copperhead's one by one, so a box with only an
 *   email configured still commits as that email.
 * - The message is kept as written (`--cleanup=whitespace`): a summary line that starts with
 *   `#` is not a comment, and trailers stay where they are.
 * - A failed commit (a hook said no, signing failed, nothing to commit) returns git's and the
 *   hook's combined output; nothing of it is left staged anywhere.
 */
export async function commitAll(repoRoot: string, options: CommitOptions): Promise<CommitResult> {
  const env = withoutRepoLocating(options.env ?? {});
  const identity: string[] = [];
  for (const [key, fallback] of Object.entries(FALLBACK_IDENTITY)) {
    const configured = await runGit(repoRoot, ["config", "--get", key], { env });
    if (configured.code !== 0 || configured.stdout.trim() === "") identity.push("-c", `${key}=${fallback}`);
  }
  const scratch = options.indexFile === undefined ? await mkdtemp(join(tmpdir(), "copperhead-index-")) : undefined;
  const indexFile = options.indexFile ?? join(scratch!, "index");
  const privateIndex = { ...env, GIT_INDEX_FILE: indexFile };
  try {
    // A repo's first commit starts from an empty index; every later one from HEAD's tree.
    const head = await runGit(repoRoot, ["rev-parse", "--verify", "--quiet", "HEAD"], { env });
    if (head.code === 0) await gitOk(repoRoot, ["read-tree", "HEAD"], { env: privateIndex });
    await stagePaths(repoRoot, options.paths, privateIndex);
    const commit = await runGit(repoRoot, [...identity, "commit", "--quiet", "--cleanup=whitespace", "--file=-"], {
      env: privateIndex,
      input: options.message,
      detached: true,
      onSpawn: options.onCommitSpawned,
    });
    if (commit.code !== 0)
      return {
        ok: false,
        output: [commit.stdout, commit.stderr]
          .filter((s) => s.trim() !== "")
          .join("\n")
          .trim(),
      };
  } finally {
    await rm(scratch ?? indexFile, { recursive: true, force: true });
  }
  await indexPathsAtHead(repoRoot, options.paths, env);
  return { ok: true, hash: await headCommit(repoRoot) };
}

/**
 * Sets the repo index's entries for `paths` to HEAD's: after a commit built in a private
 * index, the working tree, the index and HEAD then agree on them.
 */
export async function indexPathsAtHead(repoRoot: string, paths: string[], env: GitEnv = {}): Promise<void> {
  if (paths.length > 0)
    await gitOk(repoRoot, ["--literal-pathspecs", "reset", "--quiet", "HEAD", "--", ...paths], { env });
}

/**
 * The unified diff a commit of `paths` would make against HEAD: new files, deletions, and
 * binary files in `git apply` form. It is built in a throwaway index, so the repo's own index
 * is never touched.
 */
export async function diffPatch(repoRoot: string, paths: string[]): Promise<string> {
  if (paths.length === 0) return "";
  const dir = await mkdtemp(join(tmpdir(), "copperhead-index-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  try {
    await gitOk(repoRoot, ["read-tree", "HEAD"], { env });
    await stagePaths(repoRoot, paths, env);
    return await gitOk(
      repoRoot,
      [
        "--literal-pathspecs",
        "diff",
        "--cached",
        "--binary",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "HEAD",
        "--",
        ...paths,
      ],
      { env },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Writes `commit`'s tree into the folder `into` (`git archive | tar -x`): the files with
 * checkout's line-ending rules, and nothing from `.git`. `repoRoot` is the top of the work tree
 * (`locateRepo`): run in a subfolder, `git archive` would hold only that folder, moved up.
 */
export async function extractCommit(repoRoot: string, commit: string, into: string): Promise<void> {
  const archive = Bun.spawn(["git", "archive", "--format=tar", commit], {
    cwd: repoRoot,
    env: gitEnvironment(),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const untar = Bun.spawn(["tar", "-x", "-f", "-", "-C", into], {
    stdin: archive.stdout,
    stdout: "ignore",
    stderr: "pipe",
  });
  const [archived, extracted, archiveErr, untarErr] = await Promise.all([
    archive.exited,
    untar.exited,
    new Response(archive.stderr).text(),
    new Response(untar.stderr).text(),
  ]);
  if (archived !== 0 || extracted !== 0) {
    throw new CopperheadError(
      "git_failed",
      `Could not read commit ${commit.slice(0, 12)} into a temporary folder: ${(archiveErr || untarErr).trim()}`,
      {
        fix: `Check that \`git archive ${commit.slice(0, 12)}\` works in this repo and that the temp folder has space.`,
      },
    );
  }
}

/**
 * Stages additions, modifications and deletions of exactly `paths`. Untracked files a
 * .gitignore excludes stay out, as `git add` would keep them out; a path that neither exists
 * nor is tracked is a no-op.
 */
async function stagePaths(repoRoot: string, paths: string[], env: GitEnv): Promise<void> {
  if (paths.length === 0) return;
  const ignored = await runGit(repoRoot, ["check-ignore", "-z", "--stdin"], { env, input: nulList(paths) });
  if (ignored.code > 1) throw new CopperheadError("git_failed", `git check-ignore failed: ${ignored.stderr.trim()}`);
  const skip = new Set(ignored.stdout.split("\0"));
  const staged = paths.filter((p) => !skip.has(p));
  await gitOk(repoRoot, ["update-index", "--add", "--remove", "-z", "--stdin"], { env, input: nulList(staged) });
}

function nulList(paths: string[]): string {
  return paths.map((p) => `${p}\0`).join("");
}
