/**
 * The run's lines in the repo's append-only records, written once the change verified:
 * `DECISIONS.md` (one line per decision the model recorded) and `CHANGELOG.md` (one entry per
 * committed run, newest first). What the model wrote is shown with its hidden characters
 * spelled out (visible.ts), like every record.
 */
import { unchangedByRun, type RunContext } from "../agent/context.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
import { verificationLine } from "./gate.ts";
import type { CheckReport } from "../checks/types.ts";
import { insertChangelogEntries } from "../spec/changelog.ts";
import { changelogTemplate, decisionsTemplate } from "../spec/templates.ts";
import { oneLine } from "../util/trim.ts";
import { shown } from "../visible.ts";

export function appendRecords(ctx: RunContext, report: CheckReport, baseline?: CheckReport): void {
  const journal = ctx.journal!;
  const date = `${ctx.runId.slice(0, 4)}-${ctx.runId.slice(4, 6)}-${ctx.runId.slice(6, 8)}`;
  const proposal = ctx.proposal!;
  if (ctx.decisions.length > 0) {
    const file = `${ctx.docs}/DECISIONS.md`;
    const existing = readRepoDoc(ctx.repoRoot, file) ?? decisionsTemplate();
    const lines = ctx.decisions.map((d) => `- ${date} ${ctx.runId}: ${oneLine(d.decision)} — ${oneLine(d.why)}`);
    journal.writeFile(file, `${existing}${existing.endsWith("\n") ? "" : "\n"}${shown(lines.join("\n"))}\n`);
  }
  const file = `${ctx.docs}/CHANGELOG.md`;
  const existing = readRepoDoc(ctx.repoRoot, file) ?? changelogTemplate(ctx.docs);
  const entry = [
    `### ${date} — ${proposal.title}`,
    "",
    oneLine(ctx.finished ?? proposal.why),
    "",
    `Change: \`${ctx.docs}/changes/${proposal.id}.md\` · Run: \`${ctx.runId}\` · Verification: ${verificationLine(report, baseline, ctx.layoutPending, unchangedByRun(ctx))}`,
    "",
  ].join("\n");
  const updated = insertChangelogEntries(existing, [shown(entry)]);
  journal.writeFile(file, updated);
}
