/**
 * Secret keys kept outside the repository, for proving that a file in it was written by
 * copperhead here rather than carried in by a commit, a clone or an archive: run journals are
 * sealed under a key in the clone's git folder (`journal-seal.ts`), check cache entries under
 * one in the user's state folder (`checks/cache.ts`). Neither folder travels with the work tree.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { errorCode } from "./repo-path.ts";

const KEY_BYTES = 32;

/**
 * The key in `file` (64 hex digits), or undefined when there is none. With `create`, a missing
 * key is made: random, mode 0600, in a folder made 0700. Two processes making it at once agree
 * (the file is created exclusively, and the loser reads the winner's).
 */
export function keyAt(file: string, create: boolean): Buffer | undefined {
  let key = readKey(file);
  if (!key && create) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(KEY_BYTES).toString("hex") + "\n", { flag: "wx", mode: 0o600 });
    } catch (err) {
      if (errorCode(err) !== "EEXIST") throw err;
    }
    key = readKey(file);
  }
  return key;
}

function readKey(file: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch (err) {
    if (errorCode(err) === "ENOENT") return undefined;
    throw err;
  }
  return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, "hex") : undefined;
}
