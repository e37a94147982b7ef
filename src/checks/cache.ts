/**
 * Content-addressed cache of kicad-cli results under `.copperhead/cache/`.
 *
 * Each kicad-cli job (ERC, DRC, the fab export) is one entry, keyed by the content of the
 * files that job reads (`kicadInputs` in `kicad-run.ts`) together with the installed KiCad
 * (binary and stock libraries, identified without starting a process) and the copperhead
 * version. An unchanged repo therefore re-checks without starting kicad-cli at all, an edit
 * re-runs only the jobs that read the edited file, and an upgrade or library change misses
 * the cache. Entries are written atomically; a corrupt entry is a miss.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRepoBytes } from "../repo/repo-files.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { VERSION } from "../version.ts";

export const CACHE_DIR = ".copperhead/cache";

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

/** The cache folder of a repo; a snapshot of another state shares its repo's. */
export function cacheDirOf(repoRoot: string): string {
  return join(repoRoot, CACHE_DIR);
}

export function readCache<T>(cacheDir: string, key: string): T | undefined {
  try {
    return JSON.parse(readFileSync(join(cacheDir, `${key}.json`), "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** Makes the cache folder, self-ignoring, so a repo that never ran `copperhead init` does not show the cache in git. */
export function makeCacheDir(cacheDir: string): void {
  mkdirSync(cacheDir, { recursive: true });
  if (!existsSync(join(cacheDir, ".gitignore"))) writeFileSync(join(cacheDir, ".gitignore"), "*\n");
}

/** Best effort: a read-only checkout still checks, it just does not cache. */
export function writeCache(cacheDir: string, key: string, value: unknown): void {
  try {
    makeCacheDir(cacheDir);
    const tmp = join(cacheDir, `${key}.${process.pid}.tmp`);
    writeFileSync(tmp, JSON.stringify(value));
    renameSync(tmp, join(cacheDir, `${key}.json`));
  } catch {
    // Caching is an optimisation; failing to write must never fail the check.
  }
}
