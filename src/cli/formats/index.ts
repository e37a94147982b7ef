/**
 * Every way `check` can print its report. Each renderer is a pure function of the report, so
 * the same repo state prints the same bytes in every format; writing to stdout is the CLI's job.
 */
import type { CheckReport } from "../../checks/types.ts";
import { redactedJson } from "../../redact.ts";
import { VERSION } from "../../version.ts";
import { renderGithub } from "./github.ts";
import { renderJunit } from "./junit.ts";
import { renderSarif, renderSarifFailure } from "./sarif.ts";
import { renderText } from "./text.ts";

export const REPORT_FORMATS = ["text", "json", "sarif", "github", "junit"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface RenderOptions {
  /** Colour for the text format; the CLI decides (a TTY without NO_COLOR). Other formats ignore it. */
  color: boolean;
  /** The text format lists every finding instead of the first few of each rule. */
  all?: boolean;
}

/**
 * What a format prints when the check could not run, when it must still be a document: a SARIF
 * file is uploaded as it is, so it carries the error; the other formats print nothing then.
 */
export function renderFailure(
  error: { code: string; message: string; fix?: string },
  format: ReportFormat,
): string | undefined {
  return format === "sarif" ? renderSarifFailure(error, { version: VERSION }) : undefined;
}

export function renderReport(report: CheckReport, format: ReportFormat, opts: RenderOptions): string {
  switch (format) {
    case "text":
      return renderText(report, opts);
    case "json":
      return redactedJson(report, { space: 2 });
    case "sarif":
      return renderSarif(report, { version: VERSION });
    case "github":
      return renderGithub(report);
    case "junit":
      return renderJunit(report);
  }
}
