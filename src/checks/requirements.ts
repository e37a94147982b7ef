/**
 * The `requirements` check family: every `check:` rule in `docs/SPEC.md`,
 * evaluated against the design. A failing rule is a requirement violation, never
 * auto-resolved; a rule that cannot be parsed is an error that names file, line and column.
 *
 * `evaluateRequirements` exposes the per-rule outcomes so `do` can demand that every rule
 * that passed at baseline still passes; `checkRequirements` turns them into the report.
 */
import { isAbsolute, join } from "node:path";
import { readRepoDoc } from "../repo/repo-files.ts";
import { evaluateRule } from "../spec/evaluate.ts";
import { parseRequirements, type ParsedSpec, type Rule } from "../spec/requirements.ts";
import { repoPath, type Design } from "../design/design.ts";
import { compareFindings, type CheckResult, type Finding } from "./types.ts";

export interface RequirementsOptions {
  /** Docs folder, relative to the repo root or absolute; default `docs`. */
  docsDir?: string;
}

export interface RuleOutcome {
  reqId: string;
  rule: Rule;
  /** `requirements:<REQ-ID>:<canonical rule text>`, stable across edits elsewhere in the file. */
  key: string;
  pass: boolean;
  /** What the design has, e.g. `R3.value is 1k, expected >= 680`. */
  actual: string;
}

export type RequirementsEvaluation =
  | { state: "no-spec"; file: string }
  | { state: "no-section"; file: string }
  | { state: "evaluated"; file: string; spec: ParsedSpec; outcomes: RuleOutcome[] };

/** Reads and evaluates the spec; `file` is repo-relative. */
export function evaluateRequirements(design: Design, options: RequirementsOptions = {}): RequirementsEvaluation {
  const docsDir = options.docsDir ?? "docs";
  const path = join(isAbsolute(docsDir) ? docsDir : join(design.project.repoRoot, docsDir), "SPEC.md");
  const file = repoPath(design, path);
  const text = readRepoDoc(design.project.repoRoot, path);
  if (text === undefined) return { state: "no-spec", file };
  const spec = parseRequirements(text, file);
  if (!spec) return { state: "no-section", file };
  const outcomes = spec.requirements.flatMap((req) =>
    req.checks.map((rule) => ({ reqId: req.id, rule, key: ruleKey(req.id, rule), ...evaluateRule(rule, design) })),
  );
  return { state: "evaluated", file, spec, outcomes };
}

export function ruleKey(reqId: string, rule: Rule): string {
  return `requirements:${reqId}:${rule.text}`;
}

export function checkRequirements(design: Design, options: RequirementsOptions = {}): CheckResult {
  return requirementsResult(evaluateRequirements(design, options));
}

/** The report entry for an evaluation; split out so callers that already evaluated reuse it. */
export function requirementsResult(evaluation: RequirementsEvaluation): CheckResult {
  const { file } = evaluation;
  if (evaluation.state === "no-spec") {
    return skipped(`no ${file}; run \`copperhead init\` to create one with a Requirements section`);
  }
  if (evaluation.state === "no-section") {
    return skipped(`${file} has no \`## Requirements\` section; add one (\`copperhead init\` writes a template)`);
  }
  const { spec, outcomes } = evaluation;
  const findings: Finding[] = [];
  for (const o of outcomes) {
    if (o.pass) continue;
    findings.push({
      check: "requirements",
      rule: o.reqId,
      severity: "error",
      message: `${o.reqId}: ${o.actual} (check: ${o.rule.text})`,
      key: o.key,
      location: { file, line: o.rule.span.line },
    });
  }
  for (const p of spec.problems) {
    findings.push({
      check: "requirements",
      rule: p.kind,
      severity: "error",
      message: p.message,
      key: `requirements:${p.kind}:${p.reqId ?? "-"}:${p.source}`,
      location: { file, line: p.line, column: p.column },
    });
  }
  const withProblems = new Set(spec.problems.map((p) => p.reqId));
  for (const req of spec.requirements) {
    if (req.checks.length > 0 || withProblems.has(req.id)) continue;
    findings.push({
      check: "requirements",
      rule: "unchecked",
      severity: "info",
      message: `${req.id} has no \`check:\` rules; it is prose only and nothing verifies it`,
      key: `requirements:unchecked:${req.id}`,
      location: { file, line: req.line },
    });
  }
  findings.sort(compareFindings);
  const passed = outcomes.filter((o) => o.pass).length;
  const parts = [
    outcomes.length === 0 && spec.problems.length === 0
      ? `no rules yet; add \`- check:\` bullets under requirements in ${file}`
      : `${passed}/${outcomes.length} rules pass`,
  ];
  if (spec.problems.length > 0)
    parts.push(`${spec.problems.length} spec problem${spec.problems.length === 1 ? "" : "s"}`);
  const failed = findings.some((f) => f.severity === "error");
  return { id: "requirements", status: failed ? "fail" : "pass", summary: parts.join(", "), findings };
}

function skipped(summary: string): CheckResult {
  return { id: "requirements", status: "skipped", summary, findings: [] };
}
