/**
 * The default, human format: one header line per check family in report order, its findings
 * beneath, then a one-line verdict. Laid out for an 80-column terminal; colour is opt-in because
 * the caller alone knows whether stdout is a terminal that wants it.
 *
 * A board with history has hundreds of findings, so a long family shows its counts by rule and
 * the first few findings of each, and one line at the end says how to see everything (`all`,
 * or the JSON format). Findings new against a baseline are always listed in full.
 */
import { styleText } from "node:util";
import { SYNC_FIX } from "../../checks/drift.ts";
import {
  CHECK_IDS,
  type CheckReport,
  type CheckResult,
  type CheckStatus,
  type Finding,
  type Severity,
} from "../../checks/types.ts";
import { describeExplained, groupMissingLibraries } from "../../checks/missing-libraries.ts";
import { countSeverities, describeCounts } from "../../checks/result.ts";
import { locationParts } from "../../checks/location.ts";
import { shown } from "../../visible.ts";

export interface TextOptions {
  color: boolean;
  /** List every finding, however many. */
  all?: boolean;
}

/** A family with more findings than this is shown by rule. */
const LONG_FAMILY = 10;
/** Findings shown per rule of a long family. */
const PER_RULE = 3;

type Style = Parameters<typeof styleText>[0];
type Paint = (style: Style, text: string) => string;

const WIDTH = 80;
const ID_WIDTH = Math.max(...CHECK_IDS.map((id) => id.length));
const STATUS_WIDTH = "skipped".length;
const FINDING_INDENT = "    ";
const SEVERITY_WIDTH = "warning".length + 2;
/** Continuation lines of a finding start under its message. */
const DETAIL_INDENT = " ".repeat(FINDING_INDENT.length + SEVERITY_WIDTH);

const STATUS_LOOK: Record<CheckStatus, { glyph: string; style: Style }> = {
  pass: { glyph: "✔", style: "green" },
  fail: { glyph: "✖", style: "red" },
  warn: { glyph: "⚠", style: "yellow" },
  skipped: { glyph: "–", style: "dim" },
};

const SEVERITY_STYLE: Record<Severity, Style> = { error: "red", warning: "yellow", info: "blue" };

export function renderText(report: CheckReport, opts: TextOptions): string {
  const paint = (style: Style, text: string): string =>
    opts.color ? styleText(style, text, { validateStream: false }) : text;
  const lines = [heading(report), ""];
  const baseline = report.baseline;
  // A missing library is one line of its own, above the families, instead of one per part from
  // it (unless all are asked for).
  const libraries = opts.all ? [] : groupMissingLibraries(report.checks.flatMap((c) => c.findings)).libraries;
  const grouped = new Set(libraries.flatMap((lib) => lib.findings));
  if (libraries.length > 0) {
    lines.push("Missing libraries (in no library table, or disabled; `copperhead doctor` says how to add them):");
    for (const lib of libraries) {
      const fresh =
        baseline && lib.finding.baselineState === "new"
          ? ` (${lib.findings.filter((f) => f.baselineState === "new").length} new)`
          : "";
      const severity = paint(SEVERITY_STYLE[lib.finding.severity], lib.finding.severity.padEnd(SEVERITY_WIDTH));
      lines.push(
        `${FINDING_INDENT}${severity}${lib.kind} library ${clean(lib.library)}: ${describeExplained(lib)}${fresh}`,
      );
    }
    lines.push("");
  }
  let elided = false;
  for (const check of report.checks) {
    lines.push(checkLine(check, paint));
    const findings = check.findings.filter((f) => !grouped.has(f));
    if (findings.length < check.findings.length)
      lines.push(
        paint("dim", `${FINDING_INDENT}${check.findings.length - findings.length} about missing libraries, above`),
      );
    // Against a baseline the findings that were already there are counted, not listed (unless
    // all are asked for): what a person has to act on is what is new, so that is listed in full.
    const fresh = baseline ? findings.filter((f) => f.baselineState === "new") : [];
    const rest = baseline ? findings.filter((f) => f.baselineState !== "new") : findings;
    for (const finding of fresh) lines.push(...findingLines(finding, paint));
    if (baseline && rest.length > 0)
      lines.push(paint("dim", `${FINDING_INDENT}${rest.length} unchanged since ${baseline.ref}`));
    if (baseline && !opts.all) continue;
    if (opts.all || rest.length <= LONG_FAMILY) for (const finding of rest) lines.push(...findingLines(finding, paint));
    else elided = byRule(rest, lines, paint) || elided;
  }
  if (baseline && baseline.absent.length > 0) {
    lines.push("", `Gone since ${baseline.ref}:`);
    for (const finding of baseline.absent) lines.push(...findingLines(finding, paint));
  }
  // The verdict stays the last line; how to see what was left out comes just before it.
  if (elided)
    lines.push(
      "",
      paint(
        "dim",
        `Long families show the first ${PER_RULE} findings of each rule: --all lists every finding, --format json gives them all as data.`,
      ),
    );
  else if (baseline && !opts.all && baseline.counts.unchanged > 0)
    lines.push(
      "",
      paint("dim", "Unchanged findings are counted: --all lists them, --format json gives them all as data."),
    );
  const fix = codeFix(report);
  if (fix) lines.push("", fix);
  lines.push("", verdict(report, paint));
  return lines.join("\n");
}

/**
 * When what fails is drift code resolves (a BOM or pinout row, the board behind the schematic),
 * the way out, named just above the verdict: it is what the pre-commit hook shows when it blocks
 * an ordinary KiCad edit.
 */
function codeFix(report: CheckReport): string | undefined {
  const failing = report.checks
    .flatMap((c) => c.findings)
    .filter(
      (f) =>
        (!report.baseline || f.baselineState === "new") &&
        (f.severity === "error" || (report.strict && f.severity === "warning")),
    );
  const byCode = failing.some(
    (f) => f.check === "parity" || (f.check === "drift" && (f.rule === "bom" || f.rule === "pinout")),
  );
  if (!byCode) return undefined;
  return `fix: run \`${SYNC_FIX}\`: it regenerates the BOM and pinout and updates the board from the schematic, no model needed; then stage what it wrote (git add) and commit.`;
}

/** A long family: per rule its counts and first findings; whether any were left out. */
function byRule(findings: Finding[], lines: string[], paint: Paint): boolean {
  const rules = new Map<string, Finding[]>();
  for (const f of findings) rules.set(f.rule, [...(rules.get(f.rule) ?? []), f]);
  let elided = false;
  for (const [rule, list] of rules) {
    lines.push(`${FINDING_INDENT}${paint("bold", clean(rule))}: ${describeCounts(countSeverities(list))}`);
    for (const finding of list.slice(0, PER_RULE)) lines.push(...findingLines(finding, paint));
    if (list.length > PER_RULE) {
      lines.push(paint("dim", `${DETAIL_INDENT}… and ${list.length - PER_RULE} more ${clean(rule)}`));
      elided = true;
    }
  }
  return elided;
}

function heading(report: CheckReport): string {
  const modes = [report.strict && "strict", report.fab && "fab"].filter(Boolean);
  const kicad = report.kicad ? ` with KiCad ${report.kicad.version}` : "";
  const against = report.baseline
    ? ` against ${clean(report.baseline.ref)} (${report.baseline.commit.slice(0, 12)})`
    : "";
  return `Checked ${clean(report.project)}${kicad}${against}${modes.length ? ` (${modes.join(", ")})` : ""}`;
}

function checkLine(check: CheckResult, paint: Paint): string {
  const look = STATUS_LOOK[check.status];
  const head = `${paint(look.style, look.glyph)} ${paint("bold", check.id.padEnd(ID_WIDTH))}  `;
  if (!check.summary) return head + paint(look.style, check.status);
  return `${head}${paint(look.style, check.status.padEnd(STATUS_WIDTH))}  ${clean(check.summary)}`;
}

function findingLines(finding: Finding, paint: Paint): string[] {
  const width = WIDTH - DETAIL_INDENT.length;
  const message = clean(finding.message)
    .split("\n")
    .flatMap((paragraph) => wrap(paragraph.split(" "), " ", width));
  const detail = [...(finding.location ? locationParts(finding.location) : []), `rule ${finding.rule}`];
  const [first = "", ...rest] = message;
  const severity = paint(SEVERITY_STYLE[finding.severity], finding.severity.padEnd(SEVERITY_WIDTH));
  return [
    `${FINDING_INDENT}${severity}${first}`,
    ...rest.map((line) => DETAIL_INDENT + line),
    ...wrap(detail.map(clean), " · ", width).map((line) => DETAIL_INDENT + paint("dim", line)),
  ];
}

function verdict(report: CheckReport, paint: Paint): string {
  return paint(["bold", report.ok ? "green" : "red"], describeVerdict(report));
}

/**
 * The one-line verdict, also what the CLI says on stderr for the machine formats:
 * `check failed: 2 errors, 1 warning`, or against a baseline
 * `check failed: new since HEAD: 1 error; unchanged: 6 errors, 1 warning; 2 gone`.
 */
export function describeVerdict(report: CheckReport): string {
  const passed = `check ${report.ok ? "passed" : "failed"}`;
  // Nothing was checked at all (a commit that stages no design file): say why, not "no findings".
  if (report.checks.every((c) => c.status === "skipped") && report.checks[0])
    return `${passed}: ${report.checks[0].summary}`;
  const baseline = report.baseline;
  if (!baseline) return `${passed}: ${describeCounts(report.counts)}`;
  const findings = report.checks.flatMap((c) => c.findings);
  const inState = (state: string) => countSeverities(findings.filter((f) => f.baselineState === state));
  const parts = [`new since ${clean(baseline.ref)}: ${describeCounts(inState("new"))}`];
  if (baseline.counts.unchanged > 0) parts.push(`unchanged: ${describeCounts(inState("unchanged"))}`);
  if (baseline.counts.absent > 0) parts.push(`${baseline.counts.absent} gone`);
  return `${passed}: ${parts.join("; ")}`;
}

/**
 * Messages carry text from design files, which an agent or a stranger may have written: control
 * and bidi characters (a stray ESC could repaint the terminal or forge a verdict) are shown as
 * escapes (visible.ts), and tabs become spaces so the columns hold. Newlines are kept; `wrap`
 * honours them.
 */
function clean(text: string): string {
  return shown(text.replace(/\r\n?/g, "\n").replace(/\t/g, "  "));
}

/**
 * Joins `pieces` with `sep` into lines of at most `width` display columns, breaking only between
 * pieces: a single over-long piece overflows rather than splitting a path or net name.
 */
function wrap(pieces: string[], sep: string, width: number): string[] {
  const out: string[] = [];
  let line: string | undefined;
  for (const piece of pieces) {
    if (line !== undefined && line !== "" && Bun.stringWidth(line + sep + piece) > width) {
      out.push(line);
      line = piece;
    } else {
      line = line === undefined ? piece : line + sep + piece;
    }
  }
  out.push(line ?? "");
  return out;
}
