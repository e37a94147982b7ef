/**
 * The one way copperhead reads a file out of a repo: design files, docs, the config, change
 * proposals, its own journals. A cloned repo is input like any other, so every read is
 * - confined: the path must resolve inside the repo once symlinks are followed, so a
 *   `Sheetfile "../../../../etc/passwd"` or a `docs -> /` link reads nothing outside it;
 * - of a regular file: a FIFO, a device (`/dev/zero`, `/dev/stdin`), a socket or a folder in a
 *   file's place is refused, and the file is opened non-blocking, so a FIFO can never hang a
 *   command (or, under MCP, read the server's own protocol stream);
 * - capped: a file over its kind's limit is `input_too_large`, read no further than the cap;
 * - typed: every filesystem failure (ENOENT, EISDIR, ELOOP, ENOTDIR, EACCES, …) becomes a
 *   `CopperheadError` that names the file and says what to do.
 *
 * Library files that live outside the repo by design (KiCad's stock libraries, a global
 * lib table) are read with `within: null`: no confinement, the other rules unchanged.
 *
 * Writes are confined by `resolveRepoPath` (repo-path.ts); copperhead's own folders under
 * `.copperhead/` must in addition be real folders (`ownFolder`), never symlinks.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
} from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { CopperheadError } from "../errors.ts";
import { errorCode } from "./repo-path.ts";

const MiB = 1024 * 1024;

/**
 * Per-kind limits. Design files are generous (the largest open-hardware boards are ~70 MB of
 * text, and the parsed tree stays within a few times that); prose and config are small by nature.
 */
export const READ_LIMITS = {
  /** Schematics, boards, symbol and footprint libraries, lib tables, `.kicad_pro`. */
  design: 256 * MiB,
  /** Markdown docs, change proposals, journals. */
  text: 16 * MiB,
  /** `.copperhead/config.json`. */
  config: 1 * MiB,
} as const;

export interface ReadOptions {
  /**
   * The folder the file must resolve inside after symlinks (the repo root), or `null` for a
   * file outside the repo by design (a stock library).
   */
  within: string | null;
  /** Defaults to `READ_LIMITS.design`. */
  maxBytes?: number;
}

/**
 * The bytes of `path` (absolute, or relative to `within`). Throws `not_found`, `bad_path`,
 * `input_too_large` or `unreadable`, each naming the file.
 */
export function readRepoBytes(path: string, options: ReadOptions): Buffer {
  const { abs, shown } = locate(path, options.within);
  return readRegular(resolveInside(abs, shown, options.within), shown, options.maxBytes ?? READ_LIMITS.design);
}

/**
 * One of copperhead's own files (`.copperhead/lock`, a run's journal or backups), or undefined
 * when it is absent. These are never reached through a symlink: every folder on the way from
 * the repo root must be a real folder and the file a regular one, or it is `bad_path` — a
 * committed or planted link must not make copperhead trust (or act on) a file it did not write.
 */
export function readOwnFile(repoRoot: string, rel: string, maxBytes: number): Buffer | undefined {
  const root = realpathSync(repoRoot);
  const parts = rel.split("/").filter(Boolean);
  let abs = root;
  for (const [i, part] of parts.entries()) {
    abs = join(abs, part);
    let stat;
    try {
      stat = lstatSync(abs);
    } catch (err) {
      if (errorCode(err) === "ENOENT") return undefined;
      throw fileError(err, parts.slice(0, i + 1).join("/"));
    }
    if (stat.isSymbolicLink()) throw symlinkInOwnPath(parts.slice(0, i + 1).join("/"));
  }
  return readRegular(abs, rel, maxBytes);
}

function readRegular(real: string, shown: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    throw fileError(err, shown);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw folderInPlace(shown);
    if (!stat.isFile()) throw notRegular(shown);
    if (stat.size > maxBytes) throw tooLarge(shown, stat.size, maxBytes);
    return readAll(fd, stat.size, maxBytes, shown);
  } catch (err) {
    if (err instanceof CopperheadError) throw err;
    throw fileError(err, shown);
  } finally {
    closeSync(fd);
  }
}

/** `readRepoBytes` decoded as UTF-8. */
export function readRepoText(path: string, options: ReadOptions): string {
  return readRepoBytes(path, options).toString("utf8");
}

/** `readRepoText`, or undefined when nothing is at the path (every other failure still throws). */
export function readRepoTextIfPresent(path: string, options: ReadOptions): string | undefined {
  try {
    return readRepoText(path, options);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "not_found") return undefined;
    throw err;
  }
}

/** A doc, proposal or other text file of the repo (the text cap), or undefined when absent. */
export function readRepoDoc(repoRoot: string, path: string): string | undefined {
  return readRepoTextIfPresent(path, { within: repoRoot, maxBytes: READ_LIMITS.text });
}

/** The entry names of a repo folder (confined like a read, sorted), or [] when there is none. */
export function listRepoFolder(repoRoot: string, path: string): string[] {
  const { abs, shown } = locate(path, repoRoot);
  let real: string;
  try {
    real = resolveInside(abs, shown, repoRoot);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "not_found") return [];
    throw err;
  }
  try {
    return readdirSync(real).sort();
  } catch (err) {
    if (errorCode(err) === "ENOTDIR")
      throw new CopperheadError("bad_path", `${shown} is a file, not a folder.`, {
        file: shown,
        fix: `Move ${shown} aside: copperhead expects a folder there.`,
      });
    throw fileError(err, shown);
  }
}

/**
 * Throws unless `path` is a regular file that resolves inside `within` and is under the cap;
 * for files copperhead hands to kicad-cli, which would read (or hang on) anything.
 */
export function assertRepoFile(path: string, options: ReadOptions): void {
  const { abs, shown } = locate(path, options.within);
  const real = resolveInside(abs, shown, options.within);
  let stat;
  try {
    stat = lstatSync(real);
  } catch (err) {
    throw fileError(err, shown);
  }
  if (stat.isDirectory()) throw folderInPlace(shown);
  if (!stat.isFile()) throw notRegular(shown);
  const maxBytes = options.maxBytes ?? READ_LIMITS.design;
  if (stat.size > maxBytes) throw tooLarge(shown, stat.size, maxBytes);
}

/**
 * Creates (as needed) and returns the absolute path of one of copperhead's own folders, e.g.
 * `.copperhead/runs/<id>`. Every component must be a real folder inside the repo: a committed
 * symlink (`.copperhead -> /tmp/x`) would otherwise carry run records, the lock or the cache
 * out of the repo, or let a forged run folder stand in for a real one.
 */
export function ownFolder(repoRoot: string, rel: string): string {
  const root = realpathSync(repoRoot);
  const parts = rel.split("/").filter(Boolean);
  let abs = root;
  parts.forEach((part, i) => {
    abs = join(abs, part);
    const shown = parts.slice(0, i + 1).join("/");
    let stat;
    try {
      stat = lstatSync(abs);
    } catch (err) {
      if (errorCode(err) !== "ENOENT") throw fileError(err, shown);
    }
    if (stat?.isSymbolicLink()) throw symlinkInOwnPath(shown);
    if (stat && !stat.isDirectory()) {
      throw new CopperheadError("bad_path", `${shown} is not a folder.`, {
        file: shown,
        fix: `Delete ${shown}; copperhead recreates it as a folder.`,
      });
    }
    if (!stat) {
      try {
        mkdirSync(abs);
      } catch (err) {
        if (errorCode(err) !== "EEXIST") throw fileError(err, shown);
      }
    }
  });
  return abs;
}

/** `path` made absolute, and the name errors show: repo-relative when it lies in the repo. */
function locate(path: string, within: string | null): { abs: string; shown: string } {
  const abs = within === null || isAbsolute(path) ? resolve(path) : resolve(within, path);
  if (within === null) return { abs, shown: abs };
  const rel = relative(resolve(within), abs);
  return { abs, shown: rel.startsWith("..") || isAbsolute(rel) || rel === "" ? abs : rel.split(sep).join("/") };
}

/** The symlink-resolved path, refused when it leaves `within`. */
function resolveInside(abs: string, shown: string, within: string | null): string {
  let real: string;
  try {
    real = realpathSync(abs);
  } catch (err) {
    throw fileError(err, shown);
  }
  // `/dev/stdin` on a pipe resolves to `pipe:[…]` (likewise sockets): no file, and no place in the repo.
  if (!isAbsolute(real) && within === null) throw notRegular(shown);
  if (within === null) return real;
  const rel = relative(realpathSync(within), real);
  if (!isAbsolute(real) || rel.startsWith("..") || isAbsolute(rel)) {
    throw new CopperheadError(
      "bad_path",
      `${shown} resolves to ${real}, outside the repository; copperhead reads only files inside it.`,
      {
        file: shown,
        fix: `Make ${shown} a file inside the repository (replace the symlink, or fix the path that names it).`,
      },
    );
  }
  return real;
}

function readAll(fd: number, size: number, maxBytes: number, shown: string): Buffer {
  // The size is a hint: a file that grows while it is read is still cut at the cap.
  const chunks: Buffer[] = [];
  let total = 0;
  let chunk = Buffer.allocUnsafe(Math.max(1, Math.min(size + 1, maxBytes + 1)));
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw tooLarge(shown, total, maxBytes);
    chunks.push(chunk.subarray(0, n));
    chunk = Buffer.allocUnsafe(Math.min(MiB, maxBytes + 1 - total));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

function symlinkInOwnPath(shown: string): CopperheadError {
  return new CopperheadError(
    "bad_path",
    `${shown} is a symlink; copperhead keeps its own records only in real folders and files inside the repository.`,
    {
      file: shown,
      fix: `Delete the symlink ${shown} (and remove it from git if it is committed); copperhead recreates what it needs.`,
    },
  );
}

function folderInPlace(shown: string): CopperheadError {
  return new CopperheadError("bad_path", `${shown} is a folder, not a file.`, {
    file: shown,
    fix: `Put the file back in place of the folder ${shown} (e.g. \`git checkout -- ${shown}\`), or fix the reference to it.`,
  });
}

function notRegular(shown: string): CopperheadError {
  return new CopperheadError(
    "bad_path",
    `${shown} is not a regular file (a FIFO, device or socket); copperhead reads only regular files.`,
    {
      file: shown,
      fix: `Replace ${shown} with the real file, or fix the reference to it.`,
    },
  );
}

function tooLarge(shown: string, size: number, maxBytes: number): CopperheadError {
  return new CopperheadError(
    "input_too_large",
    `${shown} is over ${describeBytes(maxBytes)}, copperhead's limit for this kind of file${size > maxBytes ? ` (${describeBytes(size)} read)` : ""}.`,
    {
      file: shown,
      limitBytes: maxBytes,
      fix: `Check that ${shown} is the file it should be; restore it from git if it was damaged.`,
    },
  );
}

function describeBytes(n: number): string {
  return n >= MiB ? `${Math.round((n / MiB) * 10) / 10} MiB` : `${n} bytes`;
}

/** A filesystem error as a typed one, by errno. */
export function fileError(err: unknown, shown: string): CopperheadError {
  const code = errorCode(err);
  switch (code) {
    case "ENOENT":
      return new CopperheadError("not_found", `${shown} does not exist.`, {
        file: shown,
        fix: `Restore ${shown} (e.g. from git), or fix the reference to it.`,
      });
    case "EISDIR":
      return folderInPlace(shown);
    case "ELOOP":
      return new CopperheadError(
        "bad_path",
        `${shown} is a symlink loop (or a symlink where copperhead needs a file).`,
        {
          file: shown,
          fix: `Replace the symlink ${shown} with the file it should be.`,
        },
      );
    case "ENOTDIR":
      return new CopperheadError("bad_path", `${shown}: a folder on its path is a file.`, {
        file: shown,
        fix: `Fix the path ${shown}: one of its folders is a plain file.`,
      });
    case "ENAMETOOLONG":
      return new CopperheadError("bad_path", `${shown}: the path is too long.`, {
        file: shown,
        fix: "Use a shorter path.",
      });
    case "EACCES":
    case "EPERM":
      return new CopperheadError("unreadable", `${shown} cannot be read: permission denied.`, {
        file: shown,
        fix: `Give your user read access to ${shown}.`,
      });
    default:
      return new CopperheadError(
        "unreadable",
        `${shown} cannot be read: ${err instanceof Error ? err.message : String(err)}.`,
        {
          file: shown,
          fix: `Check ${shown} and the disk it is on, then try again.`,
        },
      );
  }
}
