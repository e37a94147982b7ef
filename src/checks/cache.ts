/**
 * Content-addressed cache of kicad-cli results under `.copperhead/cache/`.
 *
 * Each kicad-cli job (ERC, DRC, the fab export) is one entry, keyed by the content of the
 * files that job reads (`kicadInputs` in `kicad-run.ts`) together with the installed KiCad
 * (binary and stock libraries, identified without starting a process) and the copperhead
 * version. An unchanged repo therefore re-checks without starting kicad-cli at all, an edit
 * re-runs only the jobs that read the edited file, and an upgrade or library change misses
 * the cache. Entries are written atomically; a corrupt entry is a miss. The folder is confined
 * like every repo write (`openCache`).
 *
 * A repo is input, and the key is the same on every identical KiCad install (a CI image
 * included), so an entry is trusted only when this user wrote it on this machine: each one is
 * signed with an HMAC under a key in the user's state folder (`cacheSecret`), which no commit,
 * clone or archive carries. An entry with a missing or wrong MAC is a miss and is run again,
 * and a cache file git tracks is neither read nor written over, and is reported.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import { writeFileAtomic } from "../repo/atomic-write.ts";
import { runGitSync } from "../repo/git.ts";
import { keyAt } from "../repo/local-key.ts";
import { userStateDir } from "../util/user-dirs.ts";
import { ownFolder, readOwnFile, readRepoBytes } from "../repo/repo-files.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { VERSION } from "../version.ts";

export const CACHE_DIR = ".copperhead/cache";
/** Entries are a few KiB of findings; a bigger file is not one copperhead wrote. */
const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

export interface CacheKeyInputs {
  repoRoot: string;
  /** Absolute paths of the files kicad-cli reads. */
  files: string[];
  /** Identifies the KiCad install (see `kicadInstallStamp`). */
  kicadStamp: string;
  /** What was asked of kicad-cli, e.g. "erc" or "drc". */
  variant: string;
}

export function cacheKey(inputs: CacheKeyInputs): string {
  const hash = createHash("sha256");
  hash.update(`copperhead ${VERSION}\n${inputs.kicadStamp}\n${inputs.variant}\n`);
  for (const file of [...new Set(inputs.files)].sort()) {
    const rel = repoRelative(inputs.repoRoot, file);
    hash.update(`${rel}\n`);
    hash.update(
      existsSync(file)
        ? createHash("sha256")
            .update(readRepoBytes(file, { within: inputs.repoRoot }))
            .digest("hex")
        : "absent",
    );
    hash.update("\n");
  }
  return hash.digest("hex");
}

/**
 * A repo's cache folder, made as needed; a snapshot of another state shares its repo's. The
 * cache is a repo write like any other: `.copperhead` and `.copperhead/cache` must be real
 * folders inside the repo (`ownFolder`), so a committed symlink is `bad_path` and nothing is
 * written through it. A folder that cannot be made (a read-only checkout), or a signing key
 * that cannot be read or made (a read-only home), is no cache: undefined, and the check still
 * runs.
 */
export function openCache(repoRoot: string): CheckCache | undefined {
  let dir: string;
  let secret: Buffer | undefined;
  try {
    dir = ownFolder(repoRoot, CACHE_DIR);
    secret = cacheSecret();
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "bad_path") throw err;
    return undefined;
  }
  if (!secret) return undefined;
  const cache = { repoRoot, dir, secret, tracked: trackedCacheFiles(repoRoot) };
  // Self-ignoring, so a repo that never ran `copperhead init` does not show the cache in git;
  // exclusive, so a link planted in its place (even a dangling one) is never written through.
  bestEffort(() => writeFileSync(join(dir, ".gitignore"), "*\n", { flag: "wx" }));
  return cache;
}

export interface CheckCache {
  repoRoot: string;
  /** The cache folder, a real folder inside the repo. */
  dir: string;
  /** The key entries are signed with. */
  secret: Buffer;
  /** Repo-relative paths of the cache files git tracks: never trusted, never written over. */
  tracked: ReadonlySet<string>;
}

/**
 * The user's cache signing key, `cache.key` in copperhead's state folder (`userStateDir`),
 * made on first use. Read once per process.
 */
function cacheSecret(): Buffer | undefined {
  userKey ??= keyAt(join(userStateDir(), "cache.key"), true);
  return userKey;
}

let userKey: Buffer | undefined;

/**
 * An entry, or undefined: a missing, oversized, linked, non-regular, tracked, unsigned,
 * wrongly signed or corrupt entry is a miss.
 */
export function readCache<T>(cache: CheckCache | undefined, key: string): T | undefined {
  if (!cache || cache.tracked.has(entryPath(key))) return undefined;
  try {
    const bytes = readOwnFile(cache.repoRoot, entryPath(key), MAX_ENTRY_BYTES);
    if (bytes === undefined) return undefined;
    const text = bytes.toString("utf8");
    const newline = text.indexOf("\n");
    const mac = text.slice(0, newline);
    const body = text.slice(newline + 1);
    if (newline < 0 || !/^[0-9a-f]{64}$/.test(mac) || !timingSafeEqual(Buffer.from(mac, "hex"), sign(cache, key, body)))
      return undefined;
    return JSON.parse(body) as T;
  } catch {
    return undefined;
  }
}

/** Best effort: failing to write an entry never fails the check. An entry is its MAC's line, then its JSON. */
export function writeCache(cache: CheckCache | undefined, key: string, value: unknown): void {
  if (!cache || cache.tracked.has(entryPath(key))) return;
  const body = JSON.stringify(value);
  const tmp = join(cache.dir, `${key}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  bestEffort(() =>
    writeFileAtomic(join(cache.dir, `${key}.json`), `${sign(cache, key, body).toString("hex")}\n${body}`, { tmp }),
  );
}

/** The MAC covers the entry's key too, so a signed entry moved under another key is a miss. */
function sign(cache: CheckCache, key: string, body: string): Buffer {
  return createHmac("sha256", cache.secret).update(`${key}\n${body}`).digest();
}

function entryPath(key: string): string {
  return `${CACHE_DIR}/${key}.json`;
}

/**
 * The cache files git tracks: they came with the repository, so they are ignored (and not
 * written over, which would change a tracked file), and reported once per process and repo
 * with the fix.
 */
function trackedCacheFiles(repoRoot: string): ReadonlySet<string> {
  const listed = runGitSync(repoRoot, ["--literal-pathspecs", "ls-files", "-z", "--cached", "--", CACHE_DIR]);
  // The folder's own `.gitignore` holds nothing to trust.
  const tracked = new Set(
    listed.code === 0
      ? listed.stdout.split("\0").filter((path) => path !== "" && path !== `${CACHE_DIR}/.gitignore`)
      : [],
  );
  if (tracked.size > 0 && !reported.has(repoRoot)) {
    reported.add(repoRoot);
    const [first] = tracked;
    log.warn(
      `${tracked.size === 1 ? `${first} is` : `${tracked.size} files of ${CACHE_DIR} (${first}, ...) are`} tracked by git, so they came with the repository rather than from a check on this machine: they are ignored and what they hold is checked again. Remove them with \`git rm -r --cached ${CACHE_DIR}\` and commit.`,
    );
  }
  return tracked;
}

const reported = new Set<string>();

function bestEffort(write: () => void): void {
  try {
    write();
  } catch {
    // Caching is an optimisation; failing to write must never fail the check.
  }
}
