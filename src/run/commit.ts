/**
 * Commit, for a verified change: the records (DECISIONS, CHANGELOG), `diff.patch`, the design
 * diff and the renders go into the run's record, then exactly the files the run touched are
 * committed with the proposal's message. A dry run restores the tree instead and ends `proposed`.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareStates } from "../diff/compare.ts";
import type { DesignDiff } from "../diff/diff.ts";
import { asCopperheadError } from "../errors.ts";
import { commitAll, diffPatch, headCommit } from "../repo/git.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { commitMessage } from "./commit-message.ts";
import { finish, rollback } from "./end.ts";
import { appendRecords } from "./records.ts";
import { renderDir, type RunState } from "./state.ts";
import type { RunSummary } from "./summary.ts";

/**
 * The semantic diff of the verified change, HEAD against the tree as the run left it. It is the
 * reviewer's summary, not part of the gate: when it cannot be made, the transcript says why and
 * the run goes on without it.
 */
async function designDiff(run: RunState): Promise<DesignDiff | null> {
  const { repoRoot, project } = run.options;
  try {
    const { diff } = await compareStates({ repoRoot, projectFile: repoRelative(repoRoot, project.projectFile), docs: run.ctx.docs, base: "HEAD" });
    return diff;
  } catch (err) {
    run.transcript.append({ type: "note", diff: `no design diff: ${asCopperheadError(err).message}` });
    return null;
  }
}

export async function commit(run: RunState): Promise<RunSummary> {
  const { ctx, summary, transcript, options } = run;
  const journal = ctx.journal!;
  appendRecords(ctx, run.lastReport!);
  summary.filesTouched = journal.touched();
  writeFileSync(join(run.dir, "diff.patch"), await diffPatch(options.repoRoot, summary.filesTouched));
  summary.diff = await designDiff(run);
  const plotted = [(await run.renders.before) ?? { files: [], skipped: "no baseline" }, (await run.renders.after) ?? { files: [], skipped: "not verified" }];
  if (summary.filesTouched.some((f) => f.endsWith(".kicad_sch"))) {
    summary.renders = plotted.flatMap((r) => r.files);
    for (const r of plotted) if (r.skipped) transcript.append({ type: "note", renders: `not rendered: ${r.skipped}` });
  } else rmSync(renderDir(run), { recursive: true, force: true });
  if (summary.dryRun) {
    journal.rollback();
    transcript.append({ type: "dry_run", files: summary.filesTouched });
    return finish(run, "proposed", undefined, "dry run: verified, not committed; the diff is in diff.patch");
  }
  run.progress({ type: "phase", phase: "commit", message: "committing" });
  journal.beforeCommit(await headCommit(options.repoRoot));
  const committed = await commitAll(options.repoRoot, {
    message: commitMessage(ctx, summary, run.lastReport!),
    paths: summary.filesTouched,
    env: { COPPERHEAD_RUN: run.runId },
  });
  if (!committed.ok) {
    transcript.append({ type: "commit", ok: false, output: committed.output });
    return rollback(run, "commit_failed", `git commit failed: ${committed.output.trim().split("\n").slice(-5).join(" / ")}`);
  }
  journal.complete("committed");
  summary.commit = committed.hash;
  transcript.append({ type: "commit", ok: true, commit: committed.hash });
  run.progress({ type: "commit", commit: committed.hash });
  return finish(run, "committed");
}
