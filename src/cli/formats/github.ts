/**
 * GitHub Actions workflow commands: one annotation per finding, so findings show on the pull
 * request's diff and in the run summary. Checked against a baseline, only new findings are
 * annotated: the pull request is about what it introduces. Nothing but the commands goes to
 * stdout; the runner would otherwise echo stray lines into the log and, worse, might read them
 * as commands.
 */
import { groupMissingLibraries } from "../../checks/missing-libraries.ts";
import type { CheckReport, Finding, Severity } from "../../checks/types.ts";

const COMMAND: Record<Severity, string> = { error: "error", warning: "warning", info: "notice" };

/**
 * GitHub shows at most 10 error and 10 warning annotations (and 10 notices) of a step; the rest
 * are dropped unseen. Past that, the last shown of a severity says how many more there are and
 * where they are: only what is new against a baseline, or the whole report.
 */
export const SHOWN_PER_SEVERITY = 10;

export function renderGithub(report: CheckReport): string {
  // A missing library is one annotation, not one per part from it.
  const { libraries, rest } = groupMissingLibraries(report.checks.flatMap((check) => check.findings));
  const all = [...libraries.map((lib) => lib.finding), ...rest];
  const findings = report.baseline ? all.filter((f) => f.baselineState === "new") : all;
  // In report order; a severity past the limit keeps room for the annotation that says so.
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const room = (severity: Severity) =>
    counts[severity] > SHOWN_PER_SEVERITY ? SHOWN_PER_SEVERITY - 1 : SHOWN_PER_SEVERITY;
  const seen: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  const shown = findings.filter((f) => ++seen[f.severity] <= room(f.severity));
  const more = (["error", "warning", "info"] as const)
    .filter((s) => counts[s] > SHOWN_PER_SEVERITY)
    .map((s) => moreAnnotation(s, counts[s] - room(s), report));
  return [...shown.map(annotation), ...more].join("\n");
}

function moreAnnotation(severity: Severity, more: number, report: CheckReport): string {
  const noun = { error: "errors", warning: "warnings", info: "notices" }[severity];
  const where = report.baseline
    ? "the whole report is `copperhead check --format json` (or sarif, for code scanning)"
    : "check against the base branch (`copperhead check --baseline origin/main`) to annotate only what the change adds, or see the whole report with `--format json`";
  return `::${COMMAND[severity]} title=${escapeProperty("copperhead")}::${escapeData(`${more} more ${noun} not annotated (GitHub shows ${SHOWN_PER_SEVERITY} per step): ${where}`)}`;
}

function annotation(finding: Finding): string {
  const props: string[] = [];
  const loc = finding.location;
  // A line without a file means nothing to the runner, so both depend on the file.
  if (loc) {
    props.push(`file=${escapeProperty(loc.file)}`);
    if (loc.line !== undefined) props.push(`line=${loc.line}`);
    if (loc.line !== undefined && loc.column !== undefined) props.push(`col=${loc.column}`);
  }
  props.push(`title=${escapeProperty(`${finding.check}/${finding.rule}`)}`);
  return `::${COMMAND[finding.severity]} ${props.join(",")}::${escapeData(finding.message)}`;
}

/**
 * The runner's own rules (actions/toolkit `command.ts`): `%`, CR and LF are percent-encoded in
 * the message, so a newline in a message cannot start a forged command on the next line.
 */
function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Properties additionally encode the `:` and `,` that delimit them. */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}
