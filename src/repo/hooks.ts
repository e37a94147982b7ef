/**
 * The git pre-commit hook `init` installs: it runs `copperhead check` before
 * every commit, so a design that fails the gate cannot be committed by accident.
 *
 * - Ours is recognised by its marker line, `# copperhead:pre-commit-hook`. A hook without it
 *   belongs to someone else (husky, pre-commit, a hand-written script) and is never
 *   overwritten, even with `--force`: the outcome is `refused`, with the lines to add to it.
 * - It steps aside when `COPPERHEAD_RUN` is set: `do` verified its commit already and sets it.
 * - The hooks folder comes from `git rev-parse --git-path hooks`, so `core.hooksPath` and
 *   linked worktrees are honoured; the hook is installed only when the repo root is the top
 *   of its git work tree, because a hook at an enclosing repo's top would run `check` there.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { runGitSync } from "./git.ts";
import { writeGitFile, type FileOutcome } from "./owned-files.ts";
import { READ_LIMITS, readRepoTextIfPresent } from "./repo-files.ts";
import { repoRelative } from "./repo-path.ts";

export const HOOK_MARKER = "# copperhead:pre-commit-hook";

/** The lines a foreign hook needs to run copperhead too. */
export const HOOK_CHAIN_LINES = '[ -n "$COPPERHEAD_RUN" ] || copperhead check || exit 1';

export const PRE_COMMIT_HOOK = `#!/bin/sh
${HOOK_MARKER}
# Installed by \`copperhead init\`, which keeps it up to date; delete it to stop checking
# before each commit, or bypass it once with \`git commit --no-verify\`.
#
# Blocks the commit when \`copperhead check\` fails or cannot run. Commits made by a
# \`copperhead do\` run were verified already and carry COPPERHEAD_RUN, so they skip it.
[ -n "$COPPERHEAD_RUN" ] && exit 0
if ! command -v copperhead >/dev/null 2>&1; then
  echo "copperhead pre-commit hook: copperhead is not on PATH; install it, or commit with --no-verify" >&2
  exit 1
fi
exec copperhead check
`;

/** Installs or refreshes the hook; `skipped` outside a git work tree whose top is `repoRoot`. */
export function installPreCommitHook(repoRoot: string): FileOutcome {
  const git = gitHooksDir(repoRoot);
  if ("skip" in git) return { path: ".git/hooks/pre-commit", action: "skipped", reason: git.skip };
  const abs = join(git.hooksDir, "pre-commit");
  const path = repoRelative(repoRoot, abs);
  const existing = readRepoTextIfPresent(abs, { within: null, maxBytes: READ_LIMITS.text });
  if (existing !== undefined && !existing.split(/\r?\n/).includes(HOOK_MARKER)) {
    return {
      path,
      action: "refused",
      reason: `a pre-commit hook copperhead did not install is already there; copperhead never overwrites it. To chain copperhead, add this line to ${path}: ${HOOK_CHAIN_LINES}`,
    };
  }
  return writeGitFile(abs, path, PRE_COMMIT_HOOK, 0o755);
}

function gitHooksDir(repoRoot: string): { hooksDir: string } | { skip: string } {
  let result;
  try {
    result = runGitSync(repoRoot, ["rev-parse", "--show-toplevel", "--git-path", "hooks"]);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "git_failed") return { skip: "git is not installed, so no pre-commit hook was installed" };
    throw err;
  }
  if (result.code !== 0) return { skip: "not a git repository, so no pre-commit hook was installed; run copperhead init again after git init" };
  const [top = "", hooks = ""] = result.stdout.split("\n");
  if (realpathSync(top) !== repoRoot) {
    return { skip: `the repo is inside the git work tree at ${top}, not at its top, so no pre-commit hook was installed` };
  }
  return { hooksDir: isAbsolute(hooks) ? hooks : join(repoRoot, hooks) };
}
