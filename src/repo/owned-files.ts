/**
 * Writing the files copperhead owns, reporting what happened to each. `init` (and later `sync`)
 * print one line per file, so the outcome is data, not a log message; and a file whose bytes
 * would not change is left alone, mtime included, so a second run is a no-op.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** `skipped`: nothing to do by design (no git repo, `--no-hooks`); `refused`: a human must act. */
export type FileAction = "created" | "unchanged" | "updated" | "refused" | "skipped";

export interface FileOutcome {
  /** Repo-relative, `/`-separated. */
  path: string;
  action: FileAction;
  /** Why a file was refused or skipped, and what to do about it. */
  reason?: string;
}

/** Reads a repo file, or undefined when it does not exist. */
export function readRepoFile(repoRoot: string, path: string): string | undefined {
  const abs = join(repoRoot, path);
  return existsSync(abs) ? readFileSync(abs, "utf8") : undefined;
}

/**
 * Writes `content` to `path` unless it already holds exactly that (and, with `mode`, has that
 * mode). Parent folders are created as needed.
 */
export function writeOwnedFile(repoRoot: string, path: string, content: string, mode?: number): FileOutcome {
  const abs = join(repoRoot, path);
  const existed = existsSync(abs);
  const sameBytes = existed && readFileSync(abs, "utf8") === content;
  const sameMode = mode === undefined || !existed || (statSync(abs).mode & 0o777) === mode;
  if (sameBytes && sameMode) return { path, action: "unchanged" };
  if (!sameBytes) {
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  if (mode !== undefined) chmodSync(abs, mode);
  return { path, action: existed ? "updated" : "created" };
}
