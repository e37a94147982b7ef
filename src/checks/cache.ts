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
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { writeFileAtomic } from "../repo/atomic-write.ts";
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
    hash.update(existsSync(file) ? createHash("sha256").update(readRepoBytes(file, { within: inputs.repoRoot })).digest("hex") : "absent");
    hash.update("\n");
  }
  return hash.digest("hex");
}

/**
 * A repo's cache folder, made as needed; a snapshot of another state shares its repo's. The
 * cache is a repo write like any other: `.copperhead` and `.copperhead/cache` must be real
 * folders inside the repo (`ownFolder`), so a committed symlink is `bad_path` and nothing is
 * written through it. A folder that cannot be made (a read-only checkout) is no cache:
 * undefined, and the check still runs.
 */
export function openCache(repoRoot: string): CheckCache | undefined {
  let dir: string;
  try {
    dir = ownFolder(repoRoot, CACHE_DIR);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "bad_path") throw err;
    return undefined;
  }
  const cache = { repoRoot, dir };
  // Self-ignoring, so a repo that never ran `copperhead init` does not show the cache in git;
  // exclusive, so a link planted in its place (even a dangling one) is never written through.
  bestEffort(() => writeFileSync(join(dir, ".gitignore"), "*\n", { flag: "wx" }));
  return cache;
}

export interface CheckCache {
  repoRoot: string;
  /** The cache folder, a real folder inside the repo. */
  dir: string;
}

/** The cache folder of a repo, for listing it (`cachedJobs`). */
export function cacheDirOf(repoRoot: string): string {
  return join(repoRoot, CACHE_DIR);
}

/** An entry, or undefined: a missing, oversized, linked, non-regular or corrupt entry is a miss. */
export function readCache<T>(cache: CheckCache | undefined, key: string): T | undefined {
  if (!cache) return undefined;
  try {
    const bytes = readOwnFile(cache.repoRoot, `${CACHE_DIR}/${key}.json`, MAX_ENTRY_BYTES);
    return bytes === undefined ? undefined : (JSON.parse(bytes.toString("utf8")) as T);
  } catch {
    return undefined;
  }
}

/** Best effort: failing to write an entry never fails the check. */
export function writeCache(cache: CheckCache | undefined, key: string, value: unknown): void {
  if (!cache) return;
  const tmp = join(cache.dir, `${key}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  bestEffort(() => writeFileAtomic(join(cache.dir, `${key}.json`), JSON.stringify(value), { tmp }));
}

function bestEffort(write: () => void): void {
  try {
    write();
  } catch {
    // Caching is an optimisation; failing to write must never fail the check.
  }
}
