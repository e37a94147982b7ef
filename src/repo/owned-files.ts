/**
 * Writing the files copperhead owns, reporting what happened to each. `init` (and later `sync`)
 * print one line per file, so the outcome is data, not a log message; and a file whose bytes
 * would not change is left alone, mtime included, so a second run is a no-op.
 *
 * Writes are confined like the agent's (`resolveRepoPath`): a committed `docs -> /elsewhere` or
 * `.copperhead -> /tmp/x` symlink makes the file `refused`, never written through.
 */
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import * as v from "valibot";
import { CopperheadError } from "../errors.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { READ_LIMITS, readRepoDoc, readRepoTextIfPresent } from "./repo-files.ts";
import { resolveRepoPath } from "./repo-path.ts";

/** `skipped`: nothing to do by design (no git repo, `--no-hooks`); `refused`: a human must act. */
const FileActionSchema = v.picklist(["created", "unchanged", "updated", "refused", "skipped"]);
export type FileAction = v.InferOutput<typeof FileActionSchema>;

export const FileOutcomeSchema = v.object({
  /** Repo-relative, `/`-separated. */
  path: v.string(),
  action: FileActionSchema,
  /** Why a file was refused or skipped, and what to do about it. */
  reason: v.optional(v.string()),
});
export type FileOutcome = v.InferOutput<typeof FileOutcomeSchema>;

/**
 * Writes `content` to the repo file `path` unless it already holds exactly that (and, with
 * `mode`, has that mode). Parent folders are created as needed.
 */
export function writeOwnedFile(repoRoot: string, path: string, content: string, mode?: number): FileOutcome {
  return refusedWhenConfined(path, () => {
    const target = resolveRepoPath(repoRoot, path);
    return writeIfChanged(target.abs, path, readRepoDoc(repoRoot, target.path), content, mode);
  });
}

/**
 * The same for a file in the git folder (the pre-commit hook), which is not part of the work
 * tree and may live elsewhere (`core.hooksPath`, linked worktrees): `abs` as git named it.
 */
export function writeGitFile(abs: string, path: string, content: string, mode?: number): FileOutcome {
  return refusedWhenConfined(path, () =>
    writeIfChanged(abs, path, readRepoTextIfPresent(abs, { within: null, maxBytes: READ_LIMITS.text }), content, mode),
  );
}

/**
 * Runs one file's step; a path copperhead may not touch (outside the repo through a symlink, a
 * folder or FIFO in the file's place) is `refused` with the reason, so the other files are
 * still set up and the person learns which one needs them.
 */
export function refusedWhenConfined(path: string, step: () => FileOutcome): FileOutcome {
  try {
    return step();
  } catch (err) {
    if (
      err instanceof CopperheadError &&
      (err.code === "bad_path" || err.code === "input_too_large" || err.code === "unreadable")
    ) {
      return { path, action: "refused", reason: `${err.message}${err.fix ? ` ${err.fix}` : ""}` };
    }
    throw err;
  }
}

function writeIfChanged(
  abs: string,
  path: string,
  existing: string | undefined,
  content: string,
  mode: number | undefined,
): FileOutcome {
  const existed = existing !== undefined;
  const sameBytes = existing === content;
  const sameMode = mode === undefined || !existed || (statSync(abs).mode & 0o777) === mode;
  if (sameBytes && sameMode) return { path, action: "unchanged" };
  if (!sameBytes) {
    mkdirSync(dirname(abs), { recursive: true });
    writeFileAtomic(abs, content);
  }
  if (mode !== undefined) chmodSync(abs, mode);
  return { path, action: existed ? "updated" : "created" };
}
