/**
 * The repository as committed at a git ref, as files in a temporary folder: the one way
 * copperhead looks at a state other than the working tree (the gated run's baseline, `check
 * --baseline`, `diff --base`). It is never a checkout in the user's tree: the user's files,
 * index and HEAD stay untouched, so it is safe in the middle of someone's work and alongside a
 * run that edits the tree. The folder holds the whole tracked tree, laid out as in the repo,
 * so project discovery, sheet references and library tables resolve exactly as they would
 * there.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";
import { CopperheadError } from "../errors.ts";
import { extractCommit, runGit } from "./git.ts";

export interface Snapshot {
  /** The ref as the caller named it (`HEAD`, `main`, `v1.2`, a hash). */
  ref: string;
  /** The commit it resolved to, 40 hex digits. */
  commit: string;
  /** Absolute path of the temporary folder holding the commit's tree. */
  root: string;
}

/**
 * The commit a ref names, or `not_found` saying how to name one. A ref that starts with `-`
 * is refused outright rather than handed to git, where it would read as an option.
 */
export async function resolveCommit(repoRoot: string, ref: string): Promise<string> {
  const unknown = (why: string) =>
    new CopperheadError(
      "not_found",
      `${JSON.stringify(ref)} does not name a commit in ${repoRoot}${why ? `: ${why}` : ""}.`,
      {
        ref,
        fix: "Name a commit: a branch, a tag, a hash, or HEAD~1 (`git log --oneline` lists them).",
      },
    );
  if (ref === "" || ref.startsWith("-")) throw unknown("");
  const result = await runGit(repoRoot, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  if (result.code !== 0) {
    const inRepo = await runGit(repoRoot, ["rev-parse", "--git-dir"]);
    if (inRepo.code !== 0) {
      throw new CopperheadError(
        "not_a_git_repo",
        `${repoRoot} is not a git repository, so there is no ${ref} to compare with.`,
        {
          fix: "Run copperhead inside the git repository that holds the KiCad project, or pass --repo PATH.",
        },
      );
    }
    throw unknown(result.stderr.trim());
  }
  return result.stdout.trim();
}

/**
 * Extracts `ref`'s tree into a fresh temporary folder, runs `use` on it and removes the folder
 * afterwards, whatever `use` does.
 */
export async function withSnapshot<T>(
  repoRoot: string,
  ref: string,
  use: (snapshot: Snapshot) => Promise<T>,
): Promise<T> {
  const commit = await resolveCommit(repoRoot, ref);
  // Real path: project discovery compares resolved paths (macOS's /var is a symlink).
  const root = realpathSync(mkdtempSync(join(tmpdir(), "copperhead-snapshot-")));
  try {
    await extractCommit(repoRoot, commit, root);
    return await use({ ref, commit, root });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The index a commit being made will record. Inside a pre-commit hook git names it in
 * `GIT_INDEX_FILE` (`git commit -a` and `git commit <paths>` stage into a temporary index),
 * relative to the hook's working directory; otherwise it is the repo's own index.
 */
function indexEnvironment(): { GIT_INDEX_FILE?: string } {
  const file = process.env.GIT_INDEX_FILE;
  return file ? { GIT_INDEX_FILE: resolve(process.cwd(), file) } : {};
}

/**
 * Extracts what is staged — the tree the next commit would record — into a fresh temporary
 * folder, runs `use` on it and removes the folder afterwards. Like `withSnapshot`, it never
 * touches the user's files, index or HEAD.
 */
export async function withStagedSnapshot<T>(repoRoot: string, use: (root: string) => Promise<T>): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), "copperhead-staged-"));
  try {
    const result = await runGit(repoRoot, ["checkout-index", "--all", "--force", `--prefix=${root}${sep}`], {
      env: indexEnvironment(),
    });
    if (result.code !== 0) {
      throw new CopperheadError(
        "git_failed",
        `Could not read the staged files into a temporary folder: ${result.stderr.trim()}`,
        {
          fix: "Check that `git status` works in this repo and that the temp folder has space.",
        },
      );
    }
    return await use(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Repo-relative paths the staged tree changes against HEAD (added, modified, deleted or
 * renamed, both names of a rename), or every staged path when there is no commit yet.
 */
export async function stagedPaths(repoRoot: string): Promise<string[]> {
  const head = await headOrNothing(repoRoot);
  const args = head
    ? ["diff", "--cached", "--name-only", "--no-renames", "-z", "HEAD"]
    : ["ls-files", "--cached", "-z"];
  const result = await runGit(repoRoot, args, { env: indexEnvironment() });
  if (result.code !== 0) {
    throw new CopperheadError("git_failed", `Could not list the staged changes: ${result.stderr.trim()}`, {
      fix: "Run `git status` in the repo to see what git needs.",
    });
  }
  return result.stdout.split("\0").filter(Boolean);
}

/** The commit HEAD names, or undefined in a repo with no commit yet. */
export async function headOrNothing(repoRoot: string): Promise<string | undefined> {
  const head = await runGit(repoRoot, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  return head.code === 0 ? head.stdout.trim() : undefined;
}
