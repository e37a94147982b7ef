/**
 * The relay block: the first text block of every MCP tool result, a few plain sentences a host
 * passes to its human as they are ("Committed 5522706: Add a pull-up on SDA; ERC/DRC: nothing
 * new; layout: nothing pending"). The JSON block after it stays exactly what `--json` prints;
 * this only says, in words, what that JSON holds.
 */
import type { CopperheadError } from "../errors.ts";
import type { DoSummary } from "../commands/do.ts";
import type { InitResult } from "../commands/init.ts";
import type { SyncResult } from "../commands/sync.ts";
import { failedBeforeEditing } from "../run/summary.ts";
import { PER_RULE, type CheckSummary } from "./check-summary.ts";
import { oneLine } from "../util/trim.ts";

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

export function relayCheck(report: CheckSummary): string {
  const failing = report.checks
    .filter((c) => c.status === "fail" || c.status === "warn")
    .map((c) => `${c.id} ${c.summary}`);
  const state = failing.length ? failing.join("; ") : "every check passed";
  const verdict = report.baseline
    ? `Check against ${report.baseline.ref}: ${report.ok ? "nothing new fails" : "new findings fail"} (${plural(report.baseline.counts.new, "new finding")}, ${report.baseline.counts.absent} fixed). ${state}.`
    : `Check ${report.ok ? "passed" : "failed"}: ${state}.`;
  return `${verdict}${shown(report)}`;
}

/** Which findings the answer lists, when it does not list every one of the report. */
function shown(report: CheckSummary): string {
  const { page } = report;
  const total = report.counts.error + report.counts.warning + report.counts.info;
  const next = page.next === undefined ? "" : `; offset ${page.next} gives the next page`;
  if (page.mode === "filter") return ` Listed ${page.returned} of the ${page.selected} findings asked for${next}.`;
  if (page.returned === total) return "";
  return ` Listed ${page.returned} of ${total} findings (every new one and the first ${PER_RULE} of each rule)${next}; check, rule, severity, only_new, limit and offset ask for others.`;
}

export function relayDo(s: DoSummary): string {
  const early = failedBeforeEditing(s);
  if (early) return `${capitalise(early)}.`;
  const title = s.proposal?.title ?? oneLine(s.request);
  switch (s.status) {
    case "committed":
      return `Committed ${s.commit!.slice(0, 7)}: ${title}; ERC/DRC: no new errors; layout: ${layout(s)}.`;
    case "proposed":
      return `Verified as a dry run, nothing committed: ${title}; layout: ${layout(s)}.`;
    case "refused":
      if (s.reason === "needs_input") {
        return `copperhead needs an answer before it changes anything: ${oneLine(s.detail ?? "")} Ask your user, then call copperhead_do again with the request and their answer.`;
      }
      return `Refused (${s.reason === "refused" ? "the model declined" : s.reason}), nothing was changed: ${oneLine(s.detail ?? "")}`;
    case "rolled_back": {
      const findings = s.verification.newFindings.length
        ? ` New findings: ${s.verification.newFindings.map((f) => `${f.check}/${f.rule}`).join(", ")}.`
        : "";
      return `Rolled back (${s.reason}), the design is as it was: ${firstLine(s.detail ?? title)}${findings}`;
    }
  }
}

export function relaySync(r: SyncResult): string {
  if (r.resolution) return relayDo(r.resolution);
  if (r.written) {
    const files = r.written.filter((f) => f.action === "updated" || f.action === "created").map((f) => f.path);
    const left = r.ok ? "" : ` Still out of sync: ${plural(r.drift.length + r.violations.length, "item")}.`;
    return `Resolved by code beside the uncommitted changes, nothing committed: ${files.length ? files.join(", ") : "no file needed changing"}. Stage them with the change and commit.${left}`;
  }
  if (r.ok) return "Docs and board agree with the schematic; every requirement rule passes.";
  const parts = [
    r.drift.length ? plural(r.drift.length, "drift item") : "",
    r.violations.length ? plural(r.violations.length, "requirement violation") : "",
  ].filter(Boolean);
  const prose = r.drift.filter((item) => item.resolution === "model").length;
  const next = r.needsHuman
    ? "some need a person to decide"
    : `copperhead_sync with resolve can fix them${prose ? ` (${plural(prose, "prose mention")} need a model)` : " without a model"}`;
  return `Out of sync: ${parts.join(", ")}; ${next}.`;
}

export function relayInit(r: InitResult): string {
  const by = new Map<string, string[]>();
  for (const f of r.files) by.set(f.action, [...(by.get(f.action) ?? []), f.path]);
  const files = [...by].map(([action, paths]) => `${action} ${paths.join(", ")}`).join("; ");
  return `Set up ${r.project}: ${files}.`;
}

/** What went wrong as a sentence of its own, then what to do about it after "To fix:", so a host can tell them apart. */
export function relayError(err: CopperheadError): string {
  return `copperhead could not do it (${err.code}): ${sentence(oneLine(err.message))}${err.fix ? ` To fix: ${sentence(oneLine(err.fix))}` : ""}`;
}

/** `text`, ending in a full stop unless it ends a sentence already. */
function sentence(text: string): string {
  return /[.?!)]$/.test(text) ? text : `${text}.`;
}

function layout(s: DoSummary): string {
  return s.layoutPending.length ? `place and route ${s.layoutPending.join(", ")}` : "nothing pending";
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.replace(/^- /, "")
      .trim() ?? ""
  );
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
