import { defineCommand } from "citty";
import { describeProgress } from "../agent/progress.ts";
import { runSync, type SyncItem, type SyncResult } from "../commands/sync.ts";
import type { FileOutcome } from "../repo/owned-files.ts";
import { CopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { resolvable } from "../checks/sync-report.ts";
import { withCancellation } from "../repo/cancel.ts";
import { modelArg, projectArgs, providerDeadline, providerTimeout } from "./args.ts";
import { renderDoSummary } from "./do.ts";
import { writeData, writeJson } from "./output.ts";

export const syncCommand = defineCommand({
  meta: { name: "sync", description: "Verify that docs and board agree with the schematic; --resolve fixes the drift" },
  args: {
    ...projectArgs,
    resolve: {
      type: "boolean",
      description:
        "Fix drift: code regenerates the BOM and pinout and syncs the board without a model; only prose to reword needs one (a gated run)",
      default: false,
    },
    ...modelArg,
  },
  async run({ args }) {
    const result = await withCancellation((signal) =>
      runSyncShowingReport({
        repo: args.repo,
        project: args.project,
        resolve: args.resolve,
        model: args.model,
        providerTimeoutSeconds: providerTimeout(args["provider-timeout"]),
        providerDeadlineSeconds: providerDeadline(args["provider-deadline"]),
        signal,
        json: args.json,
        onProgress: (event) => {
          if (event.type !== "turn") log.info(describeProgress(event));
        },
      }),
    );
    if (args.json) writeJson(result);
    else writeData(renderSync(result));
    return syncExitCode(result);
  },
});

/**
 * A resolve that cannot start (no key) still carries the verify report; show it before the
 * error so the user sees what drifted. (With --json the error object carries it.)
 */
async function runSyncShowingReport(options: Parameters<typeof runSync>[0] & { json: boolean }): Promise<SyncResult> {
  try {
    return await runSync(options);
  } catch (err) {
    const report = err instanceof CopperheadError ? (err.details.report as SyncResult | undefined) : undefined;
    if (report && !options.json) writeData(renderSync(report));
    throw err;
  }
}

/**
 * 2 when a human is needed (requirement violations, or drift only a person may fix), whether or
 * not the rest was resolved; 1 when drift is left or the resolve did not commit; else 0.
 */
export function syncExitCode(result: SyncResult): number {
  if (result.needsHuman) return ExitCode.human;
  if (result.drift.length > 0 || (result.resolution && result.resolution.status !== "committed")) return ExitCode.gate;
  return ExitCode.ok;
}

function renderItems(title: string, items: SyncItem[]): string[] {
  if (items.length === 0) return [];
  return [
    `${title} (${items.length})`,
    ...items.flatMap((i) => [
      `  ${i.kind.padEnd(11)} ${i.doc ? `${i.doc}${i.line ? `:${i.line}` : ""} ` : ""}${i.key}`,
      `              claims ${i.claim || "(empty)"}; actually ${i.actual || "(empty)"} → ${i.resolution}`,
    ]),
  ];
}

export function renderSync(result: SyncResult): string {
  const lines: string[] = [];
  if (result.resolution) lines.push(renderDoSummary(result.resolution, "copperhead sync --resolve"), "");
  if (result.written) lines.push(...renderWritten(result.written), "");
  lines.push(
    ...renderItems("drift", result.drift),
    ...renderItems("requirement violations — a human must decide", result.violations),
  );
  if (result.ok) lines.push("in sync: docs and board agree with the design, and every requirement rule passes");
  else if (!result.resolution && !result.written && result.drift.some(resolvable))
    lines.push("", resolveAdvice(result.drift));
  return lines.join("\n");
}

/** The exact command, and whether it needs a model: only prose to reword does. */
export function resolveAdvice(drift: SyncItem[]): string {
  const prose = drift.filter((item) => item.resolution === "model").length;
  if (prose === 0) return "run `copperhead sync --resolve` to fix the drift (code alone: no model needed)";
  return `run \`copperhead sync --resolve\` to fix the drift (${prose} prose mention(s) need a model: --model, or reword them by hand)`;
}

/** Files a resolve wrote beside the user's own changes: theirs to stage with them. */
function renderWritten(written: FileOutcome[]): string[] {
  const width = Math.max(...written.map((f) => f.action.length));
  return [
    "resolved by code in the working tree:",
    ...written.map((f) => `  ${f.action.padEnd(width)}  ${f.path}${f.reason ? ` (${f.reason})` : ""}`),
    "stage them with your change (git add) and commit; the pre-commit hook checks the result.",
  ];
}
