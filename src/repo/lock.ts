/**
 * Per-repo serialisation of mutating work (`do`, `init`, `sync --resolve`): the lock stage of
 * a gated run (ARCHITECTURE.md).
 *
 * Two layers, because they guard against different things:
 * - an in-process promise chain keyed on the repo's real path: two `copperhead_do` calls to
 *   one MCP server queue up and run one after the other;
 * - the lock file `.copperhead/lock` (`{ pid, hostname, startedAt, runId? }`) against other
 *   processes: a live holder is a typed `busy` error, never a wait, so an agent learns at once
 *   that someone else is changing the repo.
 *
 * The file is created exclusively and complete: written to a temp file and hard-linked into
 * place (link(2) fails with EEXIST like O_EXCL), so no reader ever sees a half-written lock.
 * A lock whose pid is dead on this host is stale, from a crashed or killed copperhead, and is
 * taken over; the caller then runs `recoverUnfinished` to restore that run's files. A lock
 * from another host cannot be checked, so it counts as live.
 *
 * Not re-entrant: a `withRepoLock` inside another for the same repo waits for itself forever.
 *
 * Release happens in `finally`. A SIGINT/SIGTERM that nobody else handles (no
 * `withCancellation` around the work) releases the lock and then terminates the process as the
 * signal would have; `process.exit` releases it too. Only SIGKILL or a power cut leaves it
 * behind, and then it is stale.
 */
import { linkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { runGitSync } from "./git.ts";
import { ownFolder, readOwnFile } from "./repo-files.ts";
import { errorCode } from "./repo-path.ts";
import { signalHandledElsewhere } from "../util/signals.ts";

export const LOCK_PATH = ".copperhead/lock";
/** A lock is one short JSON line; anything bigger is not ours. */
const MAX_LOCK_BYTES = 64 * 1024;

export interface LockInfo {
  pid: number;
  hostname: string;
  startedAt: string;
  runId?: string;
}

export interface RepoLockOptions {
  /** Called once when this call has to queue behind another one in this process. */
  onWait?: () => void;
  /** Recorded in the lock file, so a `busy` error can name the run that holds the repo. */
  runId?: string;
}

/** Tail of each repo's in-process queue. */
const queues = new Map<string, Promise<void>>();
/** Lock files this process holds, by real repo root: released on signals and exit. */
const held = new Map<string, LockInfo>();

export async function withRepoLock<T>(
  repoRoot: string,
  fn: () => Promise<T> | T,
  options: RepoLockOptions = {},
): Promise<T> {
  const key = realpathSync(repoRoot);
  const ahead = queues.get(key);
  let leave!: () => void;
  const mine = new Promise<void>((resolve) => (leave = resolve));
  queues.set(key, mine);
  try {
    if (ahead) {
      options.onWait?.();
      await ahead;
    }
    const lock = acquireLockFile(key, options.runId);
    try {
      return await fn();
    } finally {
      releaseLockFile(key, lock);
    }
  } finally {
    leave();
    if (queues.get(key) === mine) queues.delete(key);
  }
}

/** The live process the repo's lock file names, this one included. */
export function lockHolder(repoRoot: string): LockInfo | undefined {
  const key = realpathSync(repoRoot);
  const info = held.get(key) ?? readLock(key)?.info;
  return info && (held.has(key) || isLive(info)) ? info : undefined;
}

function acquireLockFile(root: string, runId: string | undefined): LockInfo {
  const path = join(ownFolder(root, dirname(LOCK_PATH)), basename(LOCK_PATH));
  const mine: LockInfo = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    ...(runId ? { runId } : {}),
  };
  // Three tries: a holder may release, or another process take a stale lock over, in between.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusive(path, `${JSON.stringify(mine)}\n`)) {
      held.set(root, mine);
      installReleaseHandlers();
      return mine;
    }
    const found = readLock(root);
    if (found === undefined) continue;
    refuseTrackedLock(root);
    if (found.info === undefined) {
      throw new CopperheadError(
        "busy",
        `The lock file ${LOCK_PATH} is unreadable, so copperhead cannot tell whether another run holds the repo.`,
        {
          fix: `If no copperhead is running on this repo, delete ${LOCK_PATH} and try again.`,
        },
      );
    }
    if (isLive(found.info)) throw busyError(found.info);
    // Stale. Remove it only if it is still the file judged stale, not a fresh lock that
    // another process took over with in the meantime.
    if (readLock(root)?.raw === found.raw) rmSync(path, { force: true });
  }
  throw new CopperheadError("busy", "Another copperhead process keeps taking this repo's lock.", {
    fix: "Wait for the other copperhead runs on this repo to finish, then try again.",
  });
}

/**
 * A lock file git tracks came with the repository, not from a run on this machine: it would
 * make every run `busy` for good, and taking it over would delete a tracked file. Like a
 * tracked journal, it is refused with the fix, and left as it is.
 */
function refuseTrackedLock(root: string): void {
  const listed = runGitSync(root, ["--literal-pathspecs", "ls-files", "--cached", "--", LOCK_PATH]);
  if (listed.code !== 0 || listed.stdout.trim() === "") return;
  throw new CopperheadError(
    "lock_refused",
    `The lock file ${LOCK_PATH} is tracked by git, so it came with the repository rather than from a copperhead run on this machine.`,
    {
      fix: `Remove it from the repository (\`git rm --cached ${LOCK_PATH}\`, commit, then \`rm ${LOCK_PATH}\`); copperhead's own lock is never committed.`,
      file: LOCK_PATH,
    },
  );
}

function releaseLockFile(root: string, mine: LockInfo): void {
  held.delete(root);
  if (held.size === 0) removeReleaseHandlers();
  const path = join(root, LOCK_PATH);
  const current = readLock(root)?.info;
  if (current?.pid === mine.pid && current.startedAt === mine.startedAt && current.hostname === mine.hostname) {
    rmSync(path, { force: true });
  }
}

function createExclusive(path: string, content: string): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, content, { flag: "wx" });
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if (errorCode(err) === "EEXIST") return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * undefined: no lock file; `info` undefined: a lock file that is not one of ours (garbage, too
 * big, a symlink or a FIFO in its place: read without following or blocking).
 */
function readLock(root: string): { raw: string; info?: LockInfo } | undefined {
  let raw: string;
  try {
    const bytes = readOwnFile(root, LOCK_PATH, MAX_LOCK_BYTES);
    if (bytes === undefined) return undefined;
    raw = bytes.toString("utf8");
  } catch (err) {
    if (err instanceof CopperheadError) return { raw: `unreadable: ${err.message}` };
    throw err;
  }
  try {
    const info = JSON.parse(raw) as Partial<LockInfo>;
    if (typeof info.pid === "number" && typeof info.hostname === "string" && typeof info.startedAt === "string") {
      return { raw, info: info as LockInfo };
    }
  } catch {
    // fall through: unreadable
  }
  return { raw };
}

/**
 * A lock naming this very process, found while this process holds none for the repo, was
 * left by an earlier process that had the same pid (containers reuse low pids), so it is stale.
 */
function isLive(info: LockInfo): boolean {
  if (info.hostname !== hostname()) return true;
  if (info.pid === process.pid) return false;
  return pidAlive(info.pid);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === "EPERM";
  }
}

function busyError(holder: LockInfo): CopperheadError {
  const who = `pid ${holder.pid}${holder.hostname === hostname() ? "" : ` on ${holder.hostname}`}`;
  const run = holder.runId ? `, run ${holder.runId}` : "";
  return new CopperheadError(
    "busy",
    `Another copperhead process (${who}${run}, since ${holder.startedAt}) is changing this repo.`,
    {
      fix:
        holder.hostname === hostname()
          ? `Wait for it to finish and try again, or stop it (kill ${holder.pid}); its changes are rolled back either way.`
          : `Wait for it to finish on ${holder.hostname}; if nothing runs there any more, delete ${LOCK_PATH}.`,
      pid: holder.pid,
      hostname: holder.hostname,
      startedAt: holder.startedAt,
      ...(holder.runId ? { runId: holder.runId } : {}),
    },
  );
}

function releaseAllHeld(): void {
  for (const [root, info] of [...held]) {
    try {
      releaseLockFile(root, info);
    } catch {
      // Exiting anyway; a lock left behind is stale and taken over next time.
    }
  }
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

function onSignal(signal: NodeJS.Signals): void {
  // Someone else (withCancellation, an MCP server) turns the signal into an orderly stop, and
  // `finally` releases the lock then.
  if (signalHandledElsewhere(signal, onSignal)) return;
  releaseAllHeld();
  removeReleaseHandlers();
  process.kill(process.pid, signal);
}

let handlersInstalled = false;

function installReleaseHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", releaseAllHeld);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function removeReleaseHandlers(): void {
  if (!handlersInstalled) return;
  handlersInstalled = false;
  process.off("exit", releaseAllHeld);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
