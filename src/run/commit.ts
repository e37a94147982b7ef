/**
 * Commit, for a verified change: the records (DECISIONS, CHANGELOG), `diff.patch`, the design
 * diff and the renders go into the run's record, then exactly the files the run touched are
 * committed with the proposal's message. A dry run restores the tree instead and ends `proposed`.
 *
 * A cancellation (Ctrl-C, SIGTERM, the MCP request's) is honoured as soon as it is safe: up to
 * the moment `git commit` starts, the run rolls back as `cancelled`; once it has started (the
 * user's hooks may take a while) it is let finish, because stopping git halfway is what
 * leaves a repo inconsistent, and the summary says the cancellation came too late.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareStates } from "../diff/compare.ts";
import type { DesignDiff } from "../diff/diff.ts";
import { unchangedByRun } from "../agent/context.ts";
import { asCopperheadError } from "../errors.ts";
import { commitAll, diffPatch, headCommit } from "../repo/git.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { judgedBaseline } from "./baseline.ts";
import { verificationLine } from "./gate.ts";
import { commitMessage } from "./commit-message.ts";
import { endRun, rollback } from "./end.ts";
import { appendRecords } from "./records.ts";
import type { RunState } from "./run-state.ts";
import type { RunSummary } from "./summary.ts";

/**
 * The semantic diff of the verified change, HEAD against the tree as the run left it. It is the
 * reviewer's summary, not part of the gate: when it cannot be made, the transcript says why and
 * the run goes on without it.
 */
async function designDiff(run: RunState): Promise<DesignDiff | null> {
  const { repoRoot, project } = run.options;
  try {
    const { diff } = await compareStates({
      repoRoot,
      projectFile: repoRelative(repoRoot, project.projectFile),
      docs: run.ctx.docs,
      base: "HEAD",
    });
    return diff;
  } catch (err) {
    run.transcript.append({ type: "note", diff: `no design diff: ${asCopperheadError(err).message}` });
    return null;
  }
}

/** What a committed summary says when the cancellation arrived after `git commit` started. */
export const CANCELLED_DURING_COMMIT =
  "the cancellation arrived while git commit was running, so copperhead let it finish: the change is committed";

/** Whether the caller cancelled the run (a baseline that could not run stops it too, but is not this). */
export function cancelled(run: RunState): boolean {
  return run.options.signal?.aborted === true;
}

export async function commit(run: RunState): Promise<RunSummary> {
  const { ctx, summary, transcript, options } = run;
  const journal = ctx.journal!;
  // A verified run had its baseline; the records count what the change added against it, as the gate did.
  const baseline = run.baseline && (await judgedBaseline(run.baseline).catch(() => undefined));
  summary.verificationLine = verificationLine(run.lastReport!, baseline, ctx.layoutPending, unchangedByRun(ctx));
  appendRecords(ctx, run.lastReport!, baseline);
  summary.filesTouched = journal.touched();
  writeFileSync(join(run.dir, "diff.patch"), await diffPatch(options.repoRoot, summary.filesTouched));
  summary.diff = await designDiff(run);
  if (summary.dryRun) {
    journal.rollback();
    transcript.append({ type: "dry_run", files: summary.filesTouched });
    return endRun(run, "proposed", undefined, "dry run: verified, not committed; the diff is in diff.patch");
  }
  if (cancelled(run)) return rollback(run, "cancelled", "cancelled before the commit started; nothing was committed");
  run.progress({ type: "phase", phase: "commit", message: "committing" });
  journal.beforeCommit(await headCommit(options.repoRoot));
  const committed = await commitAll(options.repoRoot, {
    message: commitMessage(ctx, summary, run.lastReport!, baseline),
    paths: summary.filesTouched,
    env: { COPPERHEAD_RUN: run.runId },
    indexFile: journal.commitIndexFile,
    onCommitSpawned: (pid) => journal.commitSpawned(pid),
  });
  if (!committed.ok) {
    transcript.append({ type: "commit", ok: false, output: committed.output });
    return rollback(
      run,
      "commit_failed",
      `git commit failed: ${committed.output.trim().split("\n").slice(-5).join(" / ")}`,
    );
  }
  journal.complete("committed");
  summary.commit = committed.hash;
  transcript.append({ type: "commit", ok: true, commit: committed.hash });
  run.progress({ type: "commit", commit: committed.hash });
  const late = cancelled(run) ? CANCELLED_DURING_COMMIT : undefined;
  if (late) transcript.append({ type: "note", cancel: late });
  return endRun(run, "committed", undefined, late);
}
