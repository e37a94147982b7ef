/**
 * Crash-safe, byte-identical rollback of exactly what a run changes (ARCHITECTURE.md, "Invariants").
 *
 * Every repo write of a run goes through a `RunJournal`. Before a path is first touched, its
 * original bytes and mode are copied to `<runDir>/backup/<n>` (or the journal notes that it
 * did not exist), and `journal.json` is made durable; only then is the repo changed. Folders
 * the run creates are recorded before they are made. So at any instant, a crash included,
 * the journal can put back every touched file and remove every file and folder the run added:
 * that is `rollback()` in-process, and `recoverUnfinished()` from a later command.
 *
 * Writes are atomic (a sibling temp file renamed over the target, with the target's mode), so
 * a crash never leaves a half-written schematic; a temp file left by a crash is removed on
 * rollback too, because its name is derived from the target's.
 *
 * The journal enforces confinement (`resolveRepoPath`) and nothing else: which paths a tool
 * may touch at all (docs only, never config) is the loop's decision.
 *
 * A journal found on disk is input like any other, and recovery acts on it only when it is
 * provably this clone's own unfinished run (see `recoverUnfinished`): sealed with this clone's
 * key (journal-seal.ts), untracked by git, reached without any symlink, every backup intact.
 *
 * The methods are synchronous: each is a handful of small file operations, and ordering them
 * (backup, fsync, write) is the whole point.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import { fsyncPath, tempPathFor, writeFileAtomic } from "./atomic-write.ts";
import { indexPathsAtHead, runGit } from "./git.ts";
import { lockHolder } from "./lock.ts";
import { seal, sealMatches, sha256 } from "./journal-seal.ts";
import { ownFolder, READ_LIMITS, readOwnFile, readRepoBytes } from "./repo-files.ts";
import { errorCode, lstatOrUndefined, resolveRepoPath } from "./repo-path.ts";
import { isRunId, RUNS_DIR } from "./run-dir.ts";

export const JOURNAL_SCHEMA = "copperhead.journal/2";
export const JOURNAL_FILE = "journal.json";

export type JournalState = "editing" | "committed" | "rolled_back" | "recovered";

export interface JournalEntry {
  /** Canonical repo-relative path. */
  path: string;
  /** Whether the file existed before the run first touched it. */
  existed: boolean;
  /** `backup/<n>` under the run dir, holding the original bytes; present when `existed`. */
  backup?: string;
  /** The original permission bits; present when `existed`. */
  mode?: number;
  /** SHA-256 of the backup's bytes; present when `existed`. */
  sha256?: string;
}

export interface JournalData {
  schema: typeof JOURNAL_SCHEMA;
  runId: string;
  pid: number;
  hostname: string;
  startedAt: string;
  /** `startedAt` of the repo lock the run holds: the run is live exactly while that lock is. */
  lockStartedAt: string;
  state: JournalState;
  /** In first-touch order; restored in reverse. */
  files: JournalEntry[];
  /** Folders the run created, parents first; removed (when empty) in reverse. */
  createdDirs: string[];
  /**
   * HEAD just before the run's commit. A run that dies after `git commit` landed but before
   * its journal said so must not be "restored" over its own commit: recovery sees HEAD moved
   * to a commit carrying this run's `Copperhead-Run` trailer and marks it committed instead.
   */
  commitBase?: string;
  /**
   * `git commit`'s pid, recorded the moment it is spawned. git runs in a process group of its
   * own and can outlive a killed copperhead, still able to land the commit: recovery waits
   * while it lives, then goes by what HEAD says.
   */
  commitPid?: number;
  /** HMAC of everything above under this clone's journal key (journal-seal.ts). */
  mac?: string;
}

export interface RecoveredRun {
  runId: string;
  /** Paths put back as they were before the run: restored, recreated or removed. */
  restored: string[];
}

const BACKUP = /^backup\/\d+$/;
/** The run's private commit index, in its folder; git holds `<it>.lock` while it commits. */
const COMMIT_INDEX = "commit.index";
/**
 * A commit lock with no pid recorded beside it (a kill in the instant between spawning git and
 * recording it) is taken for a live commit this long, then for one that died with it.
 */
const UNRECORDED_COMMIT_MS = 60 * 60_000;

export class RunJournal {
  private readonly byPath = new Map<string, JournalEntry>();

  private constructor(
    /** The symlink-resolved repo root. */
    readonly repoRoot: string,
    readonly runDir: string,
    private readonly data: JournalData,
  ) {}

  /**
   * Starts a run's journal; call it before the run's first write, inside `withRepoLock`. The
   * journal names the lock it was written under, which is how recovery tells a live run from
   * an abandoned one, in this process or another.
   */
  static begin(repoRoot: string, runId: string, runDir: string): RunJournal {
    const root = realpathSync(repoRoot);
    if (runDir !== join(root, RUNS_DIR, runId)) {
      throw new CopperheadError(
        "internal_error",
        `Run ${runId}'s journal must live in ${RUNS_DIR}/${runId}, not ${runDir}.`,
        {
          fix: "This is a bug in copperhead: pass the folder runDir() returns.",
        },
      );
    }
    const lock = lockHolder(root);
    if (lock?.pid !== process.pid || lock.hostname !== hostname()) {
      throw new CopperheadError("internal_error", `Run ${runId} started its journal without holding the repo lock.`, {
        fix: "This is a bug in copperhead: every journaled run must run inside withRepoLock.",
      });
    }
    const journal = new RunJournal(root, runDir, {
      schema: JOURNAL_SCHEMA,
      runId,
      pid: process.pid,
      hostname: lock.hostname,
      startedAt: new Date().toISOString(),
      lockStartedAt: lock.startedAt,
      state: "editing",
      files: [],
      createdDirs: [],
    });
    ownFolder(root, `${RUNS_DIR}/${runId}`);
    journal.persist();
    return journal;
  }

  get runId(): string {
    return this.data.runId;
  }

  get state(): JournalState {
    return this.data.state;
  }

  /** Writes a repo file atomically, keeping the mode of the file it replaces. */
  writeFile(relPath: string, content: string | Uint8Array): void {
    this.assertEditing();
    const target = resolveRepoPath(this.repoRoot, relPath);
    const before = lstatOrUndefined(target.abs);
    if (before?.isDirectory())
      throw new CopperheadError("bad_path", `Refused path ${JSON.stringify(relPath)}: it is a folder.`, {
        path: relPath,
      });
    this.remember(target.path, target.abs);
    this.createFolders(target.path, target.existingDirs);
    writeFileAtomic(target.abs, content, { mode: before ? before.mode & 0o7777 : undefined });
  }

  /** Deletes a repo file; `not_found` when there is none. */
  removeFile(relPath: string): void {
    this.assertEditing();
    const target = resolveRepoPath(this.repoRoot, relPath);
    const before = lstatOrUndefined(target.abs);
    if (!before?.isFile()) {
      throw new CopperheadError(
        "not_found",
        `Cannot remove ${relPath}: ${before ? "it is not a file" : "there is no such file"}.`,
        { path: relPath },
      );
    }
    this.remember(target.path, target.abs);
    unlinkSync(target.abs);
  }

  /**
   * What a repo file held when the run started: the backup of one the run changed, the file
   * itself otherwise; undefined when there was none (the run created it, or nobody did).
   */
  bytesBefore(relPath: string): Buffer | undefined {
    const target = resolveRepoPath(this.repoRoot, relPath);
    const entry = this.byPath.get(target.path);
    if (entry) return entry.existed ? backupBytes(this.repoRoot, this.runId, entry) : undefined;
    return lstatOrUndefined(target.abs) ? readRepoBytes(target.abs, { within: this.repoRoot }) : undefined;
  }

  /** Canonical repo-relative paths the run has touched, in first-touch order. */
  touched(): string[] {
    return this.data.files.map((entry) => entry.path);
  }

  /**
   * Puts every touched path back as it was, byte for byte and mode for mode, removes the
   * folders the run created once empty, and marks the journal `rolled_back`. Idempotent.
   * Returns the touched paths.
   */
  rollback(): string[] {
    if (this.data.state === "committed") {
      throw new CopperheadError(
        "internal_error",
        `Run ${this.runId} is committed already; rolling back its files would not undo the commit.`,
      );
    }
    restoreAll(this.repoRoot, this.runDir, this.data);
    this.complete("rolled_back");
    return this.touched();
  }

  /** Records the HEAD the run is about to commit on top of (see `commitBase`). */
  beforeCommit(head: string): void {
    this.data.commitBase = head;
    this.persist();
  }

  /** Records the `git commit` process that is committing the run (see `commitPid`). */
  commitSpawned(pid: number): void {
    this.data.commitPid = pid;
    this.persist();
  }

  /** Where the run's commit is built: a private index in the run folder (see `commitAll`). */
  get commitIndexFile(): string {
    return join(this.runDir, COMMIT_INDEX);
  }

  /** Closes the journal: `committed` after the commit, `rolled_back` after a rollback. */
  complete(state: Exclude<JournalState, "editing">): void {
    this.data.state = state;
    this.persist();
  }

  private assertEditing(): void {
    if (this.data.state !== "editing") {
      throw new CopperheadError(
        "internal_error",
        `Run ${this.runId} is ${this.data.state}; its journal takes no more writes.`,
      );
    }
  }

  /** Backs up a path's original bytes once, durably, before anything changes it. */
  private remember(path: string, abs: string): void {
    if (this.byPath.has(path)) return;
    const stat = lstatOrUndefined(abs);
    let entry: JournalEntry;
    if (stat) {
      // Copying a FIFO would block forever and a device would never end: only files are edited.
      if (!stat.isFile())
        throw new CopperheadError("bad_path", `Refused path ${JSON.stringify(path)}: it is not a regular file.`, {
          path,
          fix: `Replace ${path} with a regular file.`,
        });
      const bytes = readRepoBytes(abs, { within: this.repoRoot });
      const backup = `backup/${this.data.files.length}`;
      const backupAbs = join(this.runDir, backup);
      mkdirSync(dirname(backupAbs), { recursive: true });
      writeFileSync(backupAbs, bytes, { flag: "wx" });
      fsyncPath(backupAbs);
      entry = { path, existed: true, backup, mode: stat.mode & 0o7777, sha256: sha256(bytes) };
    } else {
      entry = { path, existed: false };
    }
    this.data.files.push(entry);
    this.byPath.set(path, entry);
    this.persist();
  }

  /** Records, then creates, the folders of `path` that do not exist yet. */
  private createFolders(path: string, existingDirs: number): void {
    const parts = path.split("/");
    const missing = parts.slice(existingDirs, -1).map((_, i) => parts.slice(0, existingDirs + i + 1).join("/"));
    if (missing.length === 0) return;
    this.data.createdDirs.push(...missing);
    this.persist();
    mkdirSync(join(this.repoRoot, ...parts.slice(0, -1)), { recursive: true });
  }

  private persist(): void {
    persistJournal(this.repoRoot, this.runDir, this.data);
  }
}

/**
 * Restores every run whose journal is still `editing` while the repo lock it was written
 * under is gone: its process died (the lock is stale or was taken over), or its process lives
 * on but the run ended without a rollback (a long-lived MCP server whose rollback failed, a
 * pipeline that threw). Marks each `recovered`.
 *
 * Only this clone's own journals are acted on. An unfinished journal that is tracked by git,
 * reached through a symlink, not sealed with this clone's key, or whose backups do not match
 * their hashes came from somewhere else (a hostile commit, an archive): nothing is restored
 * from it, and the command stops with `journal_refused`, which names the run folder to delete.
 * A linked `.copperhead` or `runs` folder is never followed at all.
 *
 * Call it at the start of every command that touches the repo; mutating commands inside
 * `withRepoLock`, right after taking it. Restoring is idempotent, so a read-only command racing
 * another recovery writes the same bytes.
 */
export async function recoverUnfinished(repoRoot: string): Promise<RecoveredRun[]> {
  const root = realpathSync(repoRoot);
  if (!isRealFolder(join(root, ".copperhead")) || !isRealFolder(join(root, RUNS_DIR))) return [];
  const names = readdirSync(join(root, RUNS_DIR)).filter(isRunId).sort();
  if (names.length === 0) return [];
  const tracked = await trackedRuns(root);
  const holder = lockHolder(root);
  const recovered: RecoveredRun[] = [];
  // One run that cannot be restored (or is refused) must not keep the others changed.
  let failed: unknown;
  for (const name of names) {
    const runDir = join(root, RUNS_DIR, name);
    let data: JournalData | undefined;
    try {
      data = ownUnfinishedJournal(root, name, tracked);
    } catch (err) {
      failed ??= err;
      continue;
    }
    if (!data) continue;
    if (holder?.pid === data.pid && holder.hostname === data.hostname && holder.startedAt === data.lockStartedAt)
      continue;
    if (data.commitBase && (await committedByRun(root, data))) {
      // The commit was built in a private index: the repo's own still says the files are as
      // HEAD was before, until it is told otherwise.
      await indexPathsAtHead(
        root,
        data.files.map((entry) => entry.path),
      );
      data.state = "committed";
      persistJournal(root, runDir, data);
      log.info(`Run ${data.runId} was interrupted after its commit landed; the commit stands.`);
      continue;
    }
    const committing = data.commitBase ? commitInFlight(runDir, data) : undefined;
    if (committing) {
      failed ??= committing;
      continue;
    }
    try {
      restoreAll(root, runDir, data);
    } catch (err) {
      failed ??= err;
      continue;
    }
    data.state = "recovered";
    persistJournal(root, runDir, data);
    recovered.push({ runId: data.runId, restored: data.files.map((entry) => entry.path) });
  }
  if (failed !== undefined) throw failed;
  return recovered;
}

/**
 * The journal of run `name` when it is an unfinished run this clone wrote; undefined when
 * there is nothing to act on (no journal, one that is finished, or not a journal at all);
 * a `journal_refused` error for an unfinished journal that cannot be trusted.
 */
function ownUnfinishedJournal(root: string, name: string, tracked: Set<string>): JournalData | undefined {
  const rel = `${RUNS_DIR}/${name}`;
  let bytes: Buffer | undefined;
  try {
    bytes = readOwnFile(root, `${rel}/${JOURNAL_FILE}`, READ_LIMITS.text);
  } catch (err) {
    throw journalRefused(name, err instanceof CopperheadError ? err.message : String(err), tracked);
  }
  if (bytes === undefined) return undefined;
  let data: JournalData;
  try {
    data = JSON.parse(bytes.toString("utf8")) as JournalData;
  } catch {
    log.warn(`Ignoring ${rel}/${JOURNAL_FILE}: it is not a copperhead journal.`);
    return undefined;
  }
  if (typeof data !== "object" || data === null || data.state !== "editing") return undefined;
  if (tracked.has(name))
    throw journalRefused(
      name,
      "it is tracked by git, so it came with the repository rather than from a run on this machine",
      tracked,
    );
  if (
    data.schema !== JOURNAL_SCHEMA ||
    !Array.isArray(data.files) ||
    !Array.isArray(data.createdDirs) ||
    data.runId !== name
  ) {
    throw journalRefused(name, `it is not a ${JOURNAL_SCHEMA} journal for run ${name}`, tracked);
  }
  if (data.hostname !== hostname())
    throw journalRefused(
      name,
      `it was written on another machine (${String(data.hostname)}); run copperhead there to restore it`,
      tracked,
    );
  if (!sealMatches(root, sealedPayload(data), data.mac)) {
    throw journalRefused(
      name,
      "it is not sealed by copperhead for this clone (it was not written here, or was changed since)",
      tracked,
    );
  }
  for (const entry of data.files) {
    if (!entry.existed) continue;
    try {
      backupBytes(root, data.runId, entry);
    } catch (err) {
      throw journalRefused(name, err instanceof Error ? err.message : String(err), tracked);
    }
  }
  return data;
}

function journalRefused(name: string, why: string, tracked: Set<string>): CopperheadError {
  const dir = `${RUNS_DIR}/${name}`;
  return new CopperheadError(
    "journal_refused",
    `Run folder ${dir} holds an unfinished journal that copperhead will not act on: ${why.replace(/\.$/, "")}. Nothing was restored from it.`,
    {
      fix: `Delete the run directory (\`rm -rf ${dir}\`${tracked.has(name) ? ` and \`git rm -r --cached ${dir}\`` : ""}), then run the command again.`,
      runId: name,
      file: dir,
    },
  );
}

/** Run ids with any file in git's index: a journal git tracks came with the repo. */
async function trackedRuns(root: string): Promise<Set<string>> {
  const listed = await runGit(root, ["--literal-pathspecs", "ls-files", "-z", "--cached", "--", RUNS_DIR]);
  const ids = new Set<string>();
  if (listed.code !== 0) return ids;
  for (const path of listed.stdout.split("\0")) {
    const id = path.slice(RUNS_DIR.length + 1).split("/")[0];
    if (path.startsWith(`${RUNS_DIR}/`) && id) ids.add(id);
  }
  return ids;
}

function isRealFolder(abs: string): boolean {
  const stat = lstatOrUndefined(abs);
  return stat !== undefined && stat.isDirectory();
}

/**
 * A `busy` error when the run's `git commit` may still be running (its process lives, or its
 * lock is there with no pid recorded and is recent): it can still land the commit, so nothing
 * is restored until it has ended one way or the other.
 */
function commitInFlight(runDir: string, data: JournalData): CopperheadError | undefined {
  const lock = lstatOrUndefined(join(runDir, `${COMMIT_INDEX}.lock`));
  const alive =
    data.commitPid !== undefined
      ? isGitProcess(data.commitPid)
      : lock !== undefined && Date.now() - lock.mtimeMs < UNRECORDED_COMMIT_MS;
  if (!alive) return undefined;
  const who = data.commitPid !== undefined ? `git commit (pid ${data.commitPid})` : "git commit";
  return new CopperheadError(
    "busy",
    `Run ${data.runId} was interrupted while its ${who} was running, and that commit may still land; nothing is restored until it ends.`,
    {
      fix:
        data.commitPid !== undefined
          ? `Wait for the user hooks of that commit to finish (or stop them: kill -- -${data.commitPid}), then run the command again.`
          : `Wait for that commit to finish, then run the command again; if no git commit is running, delete ${join(runDir, `${COMMIT_INDEX}.lock`)}.`,
      runId: data.runId,
      ...(data.commitPid !== undefined ? { pid: data.commitPid } : {}),
    },
  );
}

/** Whether `pid` is alive and, where the system says (Linux), a git process. */
function isGitProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (errorCode(err) !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((arg) => /(^|[\\/])git(\.exe)?$/.test(arg));
  } catch {
    return true;
  }
}

/** Whether HEAD moved past `commitBase` to a commit whose trailer names this run. */
async function committedByRun(root: string, data: JournalData): Promise<boolean> {
  const head = await runGit(root, ["log", "-1", "--format=%H%n%B"]);
  if (head.code !== 0) return false;
  const [hash, ...message] = head.stdout.split("\n");
  return hash !== data.commitBase && message.some((line) => line.trim() === `Copperhead-Run: ${data.runId}`);
}

/** What the seal covers: the whole journal but the seal itself. */
function sealedPayload(data: JournalData): string {
  return JSON.stringify({ ...data, mac: undefined });
}

/** journal.json, sealed, replaced atomically and durably. */
function persistJournal(root: string, runDir: string, data: JournalData): void {
  const file = join(runDir, JOURNAL_FILE);
  const sealed = { ...data, mac: seal(root, sealedPayload(data)) };
  writeFileAtomic(file, `${JSON.stringify(sealed, null, 2)}\n`, { tmp: `${file}.tmp` });
}

/** A backup's bytes, read without following links, and only when they match the journal's hash. */
function backupBytes(root: string, runId: string, entry: JournalEntry): Buffer {
  if (
    entry.backup === undefined ||
    !BACKUP.test(entry.backup) ||
    entry.mode === undefined ||
    typeof entry.sha256 !== "string"
  ) {
    throw new Error(`the journal entry for ${entry.path} has no backup`);
  }
  const bytes = readOwnFile(root, `${RUNS_DIR}/${runId}/${entry.backup}`, READ_LIMITS.design);
  if (bytes === undefined) throw new Error(`the backup of ${entry.path} (${entry.backup}) is missing`);
  if (sha256(bytes) !== entry.sha256)
    throw new Error(`the backup of ${entry.path} (${entry.backup}) does not match its hash`);
  return bytes;
}

/**
 * Puts back every entry (newest first), then removes created folders that are empty (deepest
 * first). Goes on past a failure so one stuck file does not keep the others changed, then
 * throws with all failures; the journal stays `editing`, so recovery tries again later.
 * Paths are confined again: a journal on disk is input like any other.
 */
function restoreAll(root: string, runDir: string, data: JournalData): void {
  const failures: string[] = [];
  const touchedDirs = new Set<string>();
  for (const entry of [...data.files].reverse()) {
    try {
      const target = resolveRepoPath(root, entry.path);
      rmSync(tempPathFor(target.abs), { force: true });
      if (entry.existed) {
        const original = backupBytes(root, data.runId, entry);
        if (!sameFile(target.abs, original, entry.mode!)) {
          mkdirSync(dirname(target.abs), { recursive: true });
          writeFileAtomic(target.abs, original, { mode: entry.mode });
          touchedDirs.add(dirname(target.abs));
        }
      } else if (lstatOrUndefined(target.abs)) {
        unlinkSync(target.abs);
        touchedDirs.add(dirname(target.abs));
      }
    } catch (err) {
      failures.push(`${entry.path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  for (const dir of [...data.createdDirs].reverse()) {
    try {
      rmdirSync(resolveRepoPath(root, dir).abs);
    } catch (err) {
      // Not empty: something else (kicad-cli output, the user) put a file there; keep it.
      if (errorCode(err) !== "ENOENT" && errorCode(err) !== "ENOTEMPTY" && errorCode(err) !== "EEXIST") {
        failures.push(`${dir}/: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  for (const dir of touchedDirs) if (existsSync(dir)) fsyncPath(dir);
  if (failures.length > 0) {
    throw new CopperheadError(
      "internal_error",
      `Could not restore every file of run ${data.runId}:\n${failures.join("\n")}`,
      {
        fix: `Fix what blocks these files, then run any copperhead command on the repo to finish restoring them; the original bytes are in ${join(runDir, "backup")}.`,
        runId: data.runId,
      },
    );
  }
}

function sameFile(abs: string, bytes: Uint8Array, mode: number): boolean {
  const stat = lstatOrUndefined(abs);
  return (
    stat !== undefined &&
    stat.isFile() &&
    (stat.mode & 0o7777) === mode &&
    stat.size === bytes.length &&
    readFileSync(abs).equals(bytes)
  );
}
