/**
 * The git pre-commit hook `init` installs (ARCHITECTURE.md, "Invariants"): before every commit it checks what
 * is staged against HEAD, and blocks the commit only on findings that are new — errors, and
 * warnings too when the config says `strict`. Findings already committed are the baseline, not
 * blockers, so a board with accepted findings adopts copperhead without fixing them first.
 *
 * - A commit that stages nothing a check reads (design and library files, the docs folder,
 *   `.copperhead/config.json`) passes at once, without loading the design or starting kicad-cli.
 *   A repo's first commit has no HEAD, so everything staged is checked.
 * - The hook runs the copperhead that installed it, by absolute path, so a binary that is not on
 *   PATH (`./dist/copperhead init`, a release archive) still runs; when that path is gone, it
 *   falls back to `copperhead` on PATH, and says how to fix it when neither is there.
 * - Ours is recognised by its marker line, `# copperhead:pre-commit-hook`. A hook without it
 *   belongs to someone else (husky, pre-commit, a hand-written script) and is never
 *   overwritten, even with `--force`: the outcome is `refused`, with the lines to add to it.
 * - It steps aside when `COPPERHEAD_RUN` is set: `do` verified its commit already and sets it.
 * - The hooks folder comes from `git rev-parse --git-path hooks`, so `core.hooksPath` and
 *   linked worktrees are honoured; the hook is installed only when the repo root is the top
 *   of its git work tree (`locateRepo` finds it so), where git runs hooks and where `check`
 *   then finds the repository's config.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { runGitSync } from "./git.ts";
import { fileURLToPath } from "node:url";
import { writeGitFile, type FileOutcome } from "./owned-files.ts";
import { READ_LIMITS, readRepoTextIfPresent } from "./repo-files.ts";
import { repoRelative } from "./repo-path.ts";

export const HOOK_MARKER = "# copperhead:pre-commit-hook";

/** The line a foreign hook needs to run copperhead too. */
export const HOOK_CHAIN_LINES = '[ -n "$COPPERHEAD_RUN" ] || copperhead check --staged || exit 1';

/**
 * The hook for a copperhead started by `command` (the binary, or bun and copperhead's entry
 * script when it runs from source).
 */
export function preCommitHook(command: string[]): string {
  const recorded = command.map(shellQuote).join(" ");
  return `#!/bin/sh
${HOOK_MARKER}
# Installed by \`copperhead init\`, which keeps it up to date; delete it to stop checking
# before each commit, or bypass it once with \`git commit --no-verify\`.
#
# Checks what is staged against HEAD and blocks the commit only on new findings (errors;
# warnings too when the config says strict): findings already committed are the baseline.
# A commit that stages no design, library, docs or config file passes at once. Commits made
# by a \`copperhead do\` run were verified already and carry COPPERHEAD_RUN, so they skip it.
[ -n "$COPPERHEAD_RUN" ] && exit 0
set -- ${recorded}
if [ ! -x "$1" ]; then
  if ! command -v copperhead >/dev/null 2>&1; then
    echo "copperhead pre-commit hook: copperhead is neither at $1 (where 'copperhead init' ran from) nor on PATH." >&2
    echo "Install it or put it on PATH, then run 'copperhead init' again to record where it is; or commit with --no-verify." >&2
    exit 1
  fi
  set -- copperhead
fi
# The report is shown when the commit is blocked; otherwise only its verdict.
report=$("$@" check --staged 2>&1)
status=$?
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$report" >&2
  exit "$status"
fi
printf '%s\n' "$report" | tail -n 1 >&2
`;
}

/** The command line that starts this copperhead: the compiled binary, or bun and the entry script. */
export function currentCommand(): string[] {
  const compiled = import.meta.path.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(import.meta.path);
  return compiled ? [process.execPath] : [process.execPath, fileURLToPath(new URL("../main.ts", import.meta.url))];
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Installs or refreshes the hook; `skipped` outside a git work tree whose top is `repoRoot`. */
export function installPreCommitHook(repoRoot: string, command: string[] = currentCommand()): FileOutcome {
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
  return writeGitFile(abs, path, preCommitHook(command), 0o755);
}

function gitHooksDir(repoRoot: string): { hooksDir: string } | { skip: string } {
  let result;
  try {
    result = runGitSync(repoRoot, ["rev-parse", "--show-toplevel", "--git-path", "hooks"]);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "git_failed")
      return { skip: "git is not installed, so no pre-commit hook was installed" };
    throw err;
  }
  if (result.code !== 0)
    return {
      skip: "not a git repository, so no pre-commit hook was installed; run copperhead init again after git init",
    };
  const [top = "", hooks = ""] = result.stdout.split("\n");
  if (realpathSync(top) !== repoRoot) {
    return {
      skip: `the repo is inside the git work tree at ${top}, not at its top, so no pre-commit hook was installed`,
    };
  }
  return { hooksDir: isAbsolute(hooks) ? hooks : join(repoRoot, hooks) };
}
