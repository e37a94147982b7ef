/**
 * Run ids and run directories (`.copperhead/runs/<run-id>/`).
 *
 * Ids sort by start time as plain strings (UTC, second resolution) and carry a random suffix,
 * so two runs started in the same second (two MCP clients, two repos) never share a folder.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CopperheadError } from "../errors.ts";
import { ownFolder } from "./repo-files.ts";
import { lstatOrUndefined } from "./repo-path.ts";

export const RUNS_DIR = ".copperhead/runs";

const RUN_ID = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/** e.g. `20261129T214501Z-ab12cd`. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}Z$/, "Z");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

export function isRunId(value: string): boolean {
  return RUN_ID.test(value);
}

/**
 * Creates (if needed) and returns the absolute path of a run's directory. When the repo has
 * no `.copperhead/.gitignore` (no `copperhead init` yet), `runs/` gets a self-ignoring
 * `.gitignore`, so run records never show up as changes or get committed by a `git add -A`.
 *
 * `.copperhead`, `runs` and the run's own folder must be real folders inside the repo
 * (`ownFolder`): a committed symlink would carry the whole run record out of the repo.
 */
export function runDir(repoRoot: string, runId: string): string {
  if (!isRunId(runId)) {
    throw new CopperheadError("bad_path", `Not a copperhead run id: ${JSON.stringify(runId)}`, {
      fix: "Run ids look like 20261129T214501Z-ab12cd; use newRunId() to make one.",
    });
  }
  const dir = ownFolder(repoRoot, `${RUNS_DIR}/${runId}`);
  const runs = dirname(dir);
  if (!lstatOrUndefined(join(runs, "..", ".gitignore")) && !lstatOrUndefined(join(runs, ".gitignore"))) {
    // Exclusive: never written through a link planted in its place.
    writeFileSync(join(runs, ".gitignore"), "*\n", { flag: "wx" });
  }
  return dir;
}
