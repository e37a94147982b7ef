/**
 * The one way copperhead replaces a file's bytes: a sibling temp file, written in full and
 * fsynced, renamed over the target, the folder fsynced. Until the rename the original stays
 * whole, so a write cut short (a kill, a full disk, a file-size limit) leaves the old bytes,
 * never a truncated design file. Design files inside and outside a run, the journal's writes
 * and restores, and the check cache all go through here.
 *
 * The temp file is created exclusively (`O_EXCL`), after removing anything left at its name,
 * so a symlink planted there is never written through; the rename replaces a symlink at the
 * target itself, it does not follow it. Confinement (which paths may be written at all) is
 * the caller's: `resolveRepoPath` or `ownFolder`.
 */
import { closeSync, fchmodSync, fsyncSync, lstatSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { errorCode } from "./repo-path.ts";

export interface AtomicWriteOptions {
  /** Permission bits for the file; default the mode of the file replaced, else 0o666 less the umask. */
  mode?: number;
  /** The temp file's name; default one derived from the target's (see `tempPathFor`). */
  tmp?: string;
}

/** The sibling temp file an atomic write of `abs` uses; fixed, so a rollback can clean it up. */
export function tempPathFor(abs: string): string {
  return join(dirname(abs), `.${basename(abs)}.copperhead-tmp`);
}

/** Throws `write_failed` (naming the file, and saying it is unchanged) when the disk refuses. */
export function writeFileAtomic(abs: string, bytes: Uint8Array | string, options: AtomicWriteOptions = {}): void {
  try {
    replaceFile(abs, bytes, options);
  } catch (err) {
    const code = errorCode(err);
    if (code === undefined) throw err;
    throw new CopperheadError(
      "write_failed",
      `Could not write ${abs}: ${WHY[code] ?? (err instanceof Error ? err.message : code)}; the file is unchanged.`,
      {
        file: abs,
        fix: "Free disk space or lift the file-size limit, check the folder's permissions, then run the command again.",
      },
    );
  }
}

const WHY: Record<string, string> = {
  EFBIG: "the file is larger than the process may write (a file-size limit)",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the filesystem is read-only",
};

function replaceFile(abs: string, bytes: Uint8Array | string, options: AtomicWriteOptions): void {
  const tmp = options.tmp ?? tempPathFor(abs);
  const mode = options.mode ?? existingMode(abs);
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, "wx", mode ?? 0o666);
  try {
    const data = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
    for (let written = 0; written < data.length; ) written += writeSync(fd, data, written, data.length - written);
    if (mode !== undefined) fchmodSync(fd, mode);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, abs);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncPath(dirname(abs));
}

/** fsync of a file or folder, so a rename or a backup survives a power cut. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function existingMode(abs: string): number | undefined {
  try {
    const stat = lstatSync(abs);
    return stat.isFile() ? stat.mode & 0o7777 : undefined;
  } catch {
    return undefined;
  }
}
