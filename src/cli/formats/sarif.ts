/**
 * SARIF 2.1.0, the format GitHub code scanning and other CI dashboards ingest. The log is as
 * deterministic as the report (no timestamps, no absolute paths), and every result carries the
 * finding's stable `key` as a partial fingerprint, so code scanning keeps tracking an alert when
 * an unrelated edit moves it to another line.
 *
 * Checked against a baseline (`--baseline`), every result carries its `baselineState` (`new`,
 * `unchanged`, and `absent` for the baseline's findings that are gone, which are listed too), so
 * a dashboard shows what a pull request introduced.
 */
import { groupMissingLibraries } from "../../checks/missing-libraries.ts";
import type { CheckReport, Finding, Severity } from "../../checks/types.ts";
import { redactedJson } from "../../redact.ts";

export interface SarifOptions {
  /** The copperhead version, for `tool.driver.version`. */
  version: string;
  /** Where a reader of the log learns about copperhead; omitted when not known. */
  informationUri?: string;
}

const LEVEL: Record<Severity, string> = { error: "error", warning: "warning", info: "note" };

/** Versioned, as SARIF advises, so a future change of what `key` means cannot collide with old alerts. */
const FINGERPRINT = "copperheadKey/v1";

/**
 * The log for a check that could not run (no project, kicad-cli missing, a bad config): still
 * one valid SARIF document, so `--format sarif > results.sarif` never leaves a file an uploader
 * rejects; the error is the run's tool execution notification, and the run is marked failed.
 */
export function renderSarifFailure(error: { code: string; message: string; fix?: string }, opts: SarifOptions): string {
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: driver(opts, []) },
        invocations: [
          {
            executionSuccessful: false,
            exitCode: 3,
            toolExecutionNotifications: [
              {
                level: "error",
                descriptor: { id: error.code },
                message: { text: error.fix ? `${error.message} Fix: ${error.fix}` : error.message },
              },
            ],
          },
        ],
        results: [],
      },
    ],
  };
  return JSON.stringify(log, null, 2);
}

function driver(opts: SarifOptions, rules: object[]): object {
  return {
    name: "copperhead",
    version: opts.version,
    ...(opts.informationUri ? { informationUri: opts.informationUri } : {}),
    rules,
  };
}

export function renderSarif(report: CheckReport, opts: SarifOptions): string {
  // A missing library is one result, not one per part from it.
  const findings = [report.checks.flatMap((check) => check.findings), report.baseline?.absent ?? []].flatMap((list) => {
    const { libraries, rest } = groupMissingLibraries(list);
    return [...libraries.map((lib) => lib.finding), ...rest];
  });
  // One rule per distinct check/rule, in code-unit order so the log does not depend on locale.
  const rules = [...new Map(findings.map((f) => [ruleId(f), f.check])).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const ruleIndex = new Map(rules.map(([id], i) => [id, i]));
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: driver(
            opts,
            rules.map(([id, check]) => ({ id, shortDescription: { text: id }, properties: { tags: [check] } })),
          ),
        },
        results: findings.map((finding) => result(finding, ruleIndex.get(ruleId(finding)) ?? 0, report.project)),
        properties: {
          project: report.project,
          kicadVersion: report.kicad?.version ?? null,
          strict: report.strict,
          fab: report.fab,
          ...(report.baseline ? { baseline: { ref: report.baseline.ref, commit: report.baseline.commit } } : {}),
        },
      },
    ],
  };
  return redactedJson(log, { space: 2 });
}

function ruleId(finding: Finding): string {
  return `${finding.check}/${finding.rule}`;
}

function result(finding: Finding, index: number, project: string): object {
  const loc = finding.location;
  const { ref, pin, net, sheet } = loc ?? {};
  const design = Object.fromEntries(Object.entries({ ref, pin, net, sheet }).filter(([, v]) => v !== undefined));
  return {
    ruleId: ruleId(finding),
    ruleIndex: index,
    level: LEVEL[finding.severity],
    message: { text: finding.message },
    // Code scanning shows only results that have a location; a finding about the design as a
    // whole is pinned to the project file rather than dropped.
    locations: [{ physicalLocation: physicalLocation(loc?.file ?? project, loc?.line, loc?.column) }],
    partialFingerprints: { [FINGERPRINT]: finding.key },
    ...(finding.baselineState ? { baselineState: finding.baselineState } : {}),
    ...(Object.keys(design).length ? { properties: design } : {}),
  };
}

function physicalLocation(file: string, line: number | undefined, column: number | undefined): object {
  const artifactLocation = { uri: fileUri(file), uriBaseId: "%SRCROOT%" };
  if (line === undefined) return { artifactLocation };
  return {
    artifactLocation,
    region: column === undefined ? { startLine: line } : { startLine: line, startColumn: column },
  };
}

/** A repo-relative path as a relative URI reference: each segment percent-encoded, `/` kept. */
function fileUri(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
