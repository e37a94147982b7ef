/**
 * A fingerprint of everything a run has changed so far: the paths its journal touched and their
 * bytes now. The loop compares it at each `finish` with the one taken when verification last
 * failed — the same state cannot pass either, so re-verifying it would only burn a cycle.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../agent/context.ts";
import { readRepoBytes } from "../repo/repo-files.ts";

export function editState(ctx: RunContext): string {
  const hash = createHash("sha256");
  for (const path of ctx.journal?.touched() ?? []) {
    hash.update(path).update("\0");
    const abs = join(ctx.repoRoot, path);
    hash.update(existsSync(abs) ? readRepoBytes(abs, { within: ctx.repoRoot }) : "(absent)").update("\0");
  }
  return hash.digest("hex");
}
