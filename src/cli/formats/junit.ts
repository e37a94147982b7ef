/**
 * JUnit XML for CI test dashboards: one `<testsuite>` per check family, one `<testcase>` per
 * finding. Test names are finding keys, which survive coordinate changes, so a dashboard's
 * per-test history follows the same violation from run to run.
 *
 * A finding is a `<failure>` when it gates: errors always, warnings under `--strict`, and,
 * checked against a baseline, only when it is new. Other findings are passing test cases whose
 * text sits in `<system-out>` (with `unchanged since <ref>`), visible without turning the
 * dashboard red. A family with nothing to report gets one passing (or skipped) test case
 * named after it, so every family appears on the dashboard.
 */
import type { CheckReport, CheckResult, Finding } from "../../checks/types.ts";
import { describeLocation } from "../../checks/location.ts";
import { spellOut } from "../../visible.ts";

interface Suite {
  xml: string[];
  tests: number;
  failures: number;
  skipped: number;
}

export function renderJunit(report: CheckReport): string {
  const suites = report.checks.map((check) => suite(check, report));
  const total = (field: "tests" | "failures" | "skipped") => suites.reduce((n, s) => n + s[field], 0);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="copperhead check" tests="${total("tests")}" failures="${total("failures")}" errors="0" skipped="${total("skipped")}">`,
    ...suites.flatMap((s) => s.xml),
    `</testsuites>`,
  ].join("\n");
}

function suite(check: CheckResult, report: CheckReport): Suite {
  const classname = `copperhead.${check.id}`;
  const cases: string[] = [];
  let failures = 0;
  let skipped = 0;
  if (check.status === "skipped") {
    cases.push(testcase(classname, check.id, {}, [`<skipped message="${attr(check.summary)}"/>`]));
    skipped = 1;
  } else {
    for (const finding of check.findings) {
      const gates =
        (finding.severity === "error" || (report.strict && finding.severity === "warning")) &&
        finding.baselineState !== "unchanged";
      if (gates) failures++;
      cases.push(findingCase(classname, finding, gates, report.baseline?.ref));
    }
    // A failed family must show red even when no single finding gates on its own (against a
    // baseline, a family that fails only on what was there already is not this change's failure).
    if (check.status === "fail" && failures === 0 && !report.baseline) {
      cases.push(
        testcase(classname, check.id, {}, [`<failure message="${attr(check.summary)}" type="${attr(check.id)}"/>`]),
      );
      failures = 1;
    }
    if (cases.length === 0) cases.push(testcase(classname, check.id, {}, []));
  }
  const header =
    `  <testsuite name="${attr(check.id)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">\n` +
    `    <properties>\n` +
    `      <property name="status" value="${attr(check.status)}"/>\n` +
    `      <property name="summary" value="${attr(check.summary)}"/>\n` +
    `    </properties>`;
  return { xml: [header, ...cases, `  </testsuite>`], tests: cases.length, failures, skipped };
}

function findingCase(classname: string, finding: Finding, gates: boolean, baselineRef: string | undefined): string {
  const loc = finding.location;
  const since = finding.baselineState && baselineRef ? `${finding.baselineState} since ${baselineRef}` : undefined;
  const body = [
    `${finding.severity}: ${finding.message}`,
    loc && describeLocation(loc),
    `rule ${finding.check}/${finding.rule}`,
    since,
  ]
    .filter(Boolean)
    .join("\n");
  const child = gates
    ? `<failure message="${attr(finding.message)}" type="${attr(`${finding.check}/${finding.rule}`)}">${text(body)}</failure>`
    : `<system-out>${text(body)}</system-out>`;
  return testcase(classname, finding.key, { file: loc?.file, line: loc?.line }, [child]);
}

function testcase(
  classname: string,
  name: string,
  where: { file?: string; line?: number },
  children: string[],
): string {
  let open = `    <testcase name="${attr(name)}" classname="${attr(classname)}"`;
  if (where.file !== undefined) open += ` file="${attr(where.file)}"`;
  if (where.line !== undefined) open += ` line="${where.line}"`;
  if (children.length === 0) return `${open}/>`;
  return [`${open}>`, ...children.map((c) => `      ${c}`), `    </testcase>`].join("\n");
}

/**
 * XML 1.0 cannot carry most C0 controls, lone surrogates or U+FFFE/U+FFFF at all, not even as
 * character references, so they are spelled out as `\uXXXX` rather than silently dropped.
 */
function xmlChars(s: string): string {
  return s.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, spellOut);
}

/**
 * Character data; `>` too, so a `]]>` in a message cannot end anything, and CR as a reference
 * because parsers otherwise fold it into the following newline.
 */
function text(s: string): string {
  return xmlChars(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;");
}

/** Attribute values; whitespace is encoded because parsers normalise literal tabs and newlines in attributes to spaces. */
function attr(s: string): string {
  return text(s).replace(/"/g, "&quot;").replace(/'/g, "&apos;").replace(/\t/g, "&#9;").replace(/\n/g, "&#10;");
}
