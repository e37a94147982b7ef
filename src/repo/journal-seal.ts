/**
 * Proof that a run journal was written by copperhead on this machine, for this clone.
 *
 * Recovery acts on a journal: it overwrites and deletes repo files as the journal says. A repo
 * is input, though, and a hostile upstream commit (or an archive) can carry a forged
 * `.copperhead/runs/<id>/journal.json` with forged backups. So every journal is sealed with an
 * HMAC under a key that lives in this clone's git folder (`<git-dir>/copperhead/journal.key`,
 * created on first use, mode 0600). Nothing in the git folder travels with a push, pull,
 * clone or archive of the work tree, so a journal that verifies was written here; one that
 * does not is refused, never "restored".
 *
 * The seal covers the whole journal and, through each entry's `sha256`, the bytes of every
 * backup, so a swapped backup is caught as well as a swapped journal.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { isAbsolute, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { runGitSync } from "./git.ts";
import { keyAt } from "./local-key.ts";

const keys = new Map<string, Buffer>();

/** The HMAC of `payload` (the journal without its seal) under this clone's key. */
export function seal(repoRoot: string, payload: string): string {
  return createHmac("sha256", journalKey(repoRoot, true)!).update(payload).digest("hex");
}

/** Whether `mac` seals `payload` under this clone's key; false when the clone has no key yet. */
export function sealMatches(repoRoot: string, payload: string, mac: unknown): boolean {
  if (typeof mac !== "string" || !/^[0-9a-f]{64}$/.test(mac)) return false;
  const key = journalKey(repoRoot, false);
  if (!key) return false;
  const expected = createHmac("sha256", key).update(payload).digest();
  return timingSafeEqual(expected, Buffer.from(mac, "hex"));
}

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function journalKey(repoRoot: string, create: boolean): Buffer | undefined {
  const cached = keys.get(repoRoot);
  if (cached) return cached;
  const dir = gitDir(repoRoot);
  if (dir === undefined) {
    // Without a git folder there is no key, and so no journal this clone could have written.
    if (!create) return undefined;
    throw new CopperheadError(
      "not_a_git_repo",
      `${repoRoot} is not a git repository, so copperhead cannot keep a run journal for it.`,
      {
        fix: "Run copperhead inside a git repository (`git init` and a first commit).",
      },
    );
  }
  const key = keyAt(join(dir, "copperhead", "journal.key"), create);
  if (key) keys.set(repoRoot, key);
  return key;
}

function gitDir(repoRoot: string): string | undefined {
  const result = runGitSync(repoRoot, ["rev-parse", "--absolute-git-dir"]);
  const dir = result.stdout.trim();
  return result.code === 0 && isAbsolute(dir) ? dir : undefined;
}
