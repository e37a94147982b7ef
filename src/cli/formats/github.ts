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

export function renderGithub(report: CheckReport): string {
  // A missing library is one annotation, not one per part from it.
  const { libraries, rest } = groupMissingLibraries(report.checks.flatMap((check) => check.findings));
  const findings = [...libraries.map((lib) => lib.finding), ...rest];
  return (report.baseline ? findings.filter((f) => f.baselineState === "new") : findings).map(annotation).join("\n");
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
