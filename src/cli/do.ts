import { createInterface } from "node:readline/promises";
import { defineCommand } from "citty";
import { describeProgress, type ProgressEvent } from "../agent/progress.ts";
import { describeLocation } from "../checks/location.ts";
import { runDo, type DoSummary } from "../commands/do.ts";
import { diffText } from "../diff/format.ts";
import { CopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { withCancellation } from "../repo/cancel.ts";
import { failedBeforeEditing } from "../run/summary.ts";
import { describeAmendment, renderProposal, type Proposal } from "../spec/proposal.ts";
import { modelArg, projectArgs, providerDeadline, providerTimeout } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

export const doCommand = defineCommand({
  meta: {
    name: "do",
    description: "Make a design change through the spec gate and the verification gate, or roll it back",
  },
  args: {
    ...projectArgs,
    request: { type: "positional", description: "What to change, in words", required: true },
    "dry-run": {
      type: "boolean",
      description: "Do everything but commit: keep diff.patch, restore the tree",
      default: false,
    },
    yes: {
      type: "boolean",
      description: "Approve the proposal without asking (the approval is recorded as AUTO)",
      default: false,
    },
    ...modelArg,
    "max-repair-cycles": {
      type: "string",
      description: "Repair cycles before rolling back (default: config, 3)",
      valueHint: "N",
    },
    "max-turns": { type: "string", description: "Model turns before giving up (default: config, 40)", valueHint: "N" },
  },
  async run({ args }) {
    const interactive = !args.yes && !args.json && Boolean(process.stdin.isTTY && process.stderr.isTTY);
    const status = statusLine();
    const summary = await withCancellation((signal) =>
      runDo({
        request: args.request,
        repo: args.repo,
        project: args.project,
        dryRun: args["dry-run"],
        model: args.model,
        providerTimeoutSeconds: providerTimeout(args["provider-timeout"]),
        providerDeadlineSeconds: providerDeadline(args["provider-deadline"]),
        maxRepairCycles: count(args["max-repair-cycles"], "--max-repair-cycles"),
        maxTurns: count(args["max-turns"], "--max-turns"),
        approve: interactive ? (proposal) => askApproval(proposal, status) : undefined,
        onProgress: status.update,
        signal,
      }),
    );
    status.done();
    if (args.json) writeJson(summary);
    else writeData(renderDoSummary(summary));
    return exitCodeOf(summary);
  },
});

export function exitCodeOf(summary: DoSummary): number {
  switch (summary.status) {
    case "committed":
    case "proposed":
      return ExitCode.ok;
    case "rolled_back":
      return ExitCode.gate;
    case "refused":
      return ExitCode.human;
  }
}

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new CopperheadError("usage", `${flag} needs a whole number, not "${value}".`, {
      fix: `Pass ${flag} 3, for example.`,
    });
  return n;
}

/** A live status line on a terminal's stderr; plain log lines when stderr is not a terminal. */
function statusLine() {
  const tty = Boolean(process.stderr.isTTY);
  let shown = false;
  return {
    update(event: ProgressEvent) {
      const text = describeProgress(event);
      if (!tty) {
        if (event.type !== "turn") log.info(text);
        return;
      }
      const width = Math.max(20, (process.stderr.columns ?? 80) - 1);
      process.stderr.write(`\r\x1b[2K${text.slice(0, width)}`);
      shown = true;
    },
    done() {
      if (tty && shown) process.stderr.write("\r\x1b[2K");
      shown = false;
    },
  };
}

async function askApproval(proposal: Proposal, status: { done(): void }): Promise<boolean> {
  status.done();
  process.stderr.write(`\n${renderProposal({ ...proposal, approval: "interactive" })}\n`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const amendments = proposal.amendments?.length ?? 0;
    const answer = await rl.question(
      amendments ? `Approve amendment ${amendments} of this change? [y/N] ` : "Apply this change? [y/N] ",
    );
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => (line ? `  ${line}` : line))
    .join("\n");
}

/** The readable end-of-run report: proposal, files, verification, what changed, outcome, transcript. */
export function renderDoSummary(s: DoSummary, command = "copperhead do"): string {
  const early = failedBeforeEditing(s);
  if (early) return `${command}: ${early}\ntranscript: ${s.transcriptPath}`;
  if (s.reason === "needs_input") {
    return [
      `${command}: needs input — nothing was changed. The model asks:`,
      `  ${s.detail!.split("\n").join("\n  ")}`,
      "Run the request again with your answer in it.",
      `transcript: ${s.transcriptPath}`,
    ].join("\n");
  }
  const outcome =
    s.status === "committed"
      ? `committed ${s.commit}`
      : s.status === "proposed"
        ? "verified (dry run): nothing committed, the tree is as it was"
        : s.status === "refused"
          ? `refused (${s.reason === "refused" ? "the model declined" : s.reason}): nothing was changed`
          : `rolled back (${s.reason}): the tree is byte-identical to before`;
  const lines = [`${command}: ${outcome}`];
  if (s.detail) lines.push(`  ${s.detail.split("\n").join("\n  ")}`);
  if (s.proposal) lines.push(`proposal: ${s.proposal.title} — ${s.proposal.path} (approval: ${s.approval})`);
  for (const [i, a] of (s.proposal?.amendments ?? []).entries())
    lines.push(`  amendment ${i + 1}: ${describeAmendment(a)} — ${a.why}`);
  if (s.filesTouched.length) lines.push(`files: ${s.filesTouched.join(", ")}`);
  const v = s.verification;
  if (v.ok === null) lines.push("verification: not run");
  else
    lines.push(
      `verification: ${v.ok ? "passed" : "failed"} after ${v.repairCycles} repair cycle${v.repairCycles === 1 ? "" : "s"} — ${v.checks.map((c) => `${c.id} ${c.status}`).join(", ")}`,
    );
  for (const f of v.newFindings)
    lines.push(`  new: [${f.check}/${f.rule}] ${f.message}${f.location ? ` (${describeLocation(f.location)})` : ""}`);
  if (s.diff)
    lines.push("design changes:", indent(diffText(s.diff, { base: "HEAD", head: "the change" }, { heading: null })));
  if (s.verificationLine) lines.push(`verification line: ${s.verificationLine}`);
  for (const p of s.layoutPending) lines.push(`layout pending: ${p.ref} — ${p.reason}`);
  if (s.recovered.length) lines.push(`recovered first: ${s.recovered.join(", ")}`);
  const cached = s.usage.cacheReadTokens > 0 ? ` (${s.usage.cacheReadTokens} input tokens from the prompt cache)` : "";
  lines.push(`model: ${s.usage.turns} turns, ${s.usage.inputTokens}+${s.usage.outputTokens} tokens${cached}`);
  lines.push(`transcript: ${s.transcriptPath}`, `summary: ${s.summaryPath}`);
  return lines.join("\n");
}
