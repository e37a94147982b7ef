import { defineCommand } from "citty";
import { runCheck } from "../commands/check.ts";
import { ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { describeCounts } from "../checks/result.ts";
import { projectArgs } from "./args.ts";
import { REPORT_FORMATS, renderReport, type ReportFormat } from "./formats/index.ts";
import { useColor, writeData } from "./output.ts";

export const checkCommand = defineCommand({
  meta: {
    name: "check",
    description: "Run ERC, DRC, schematic/board parity, routing, doc drift, requirements and proposal checks",
  },
  args: {
    ...projectArgs,
    fab: { type: "boolean", description: "Also check fabrication readiness; unconnected items become errors", default: false },
    strict: { type: "boolean", description: "Warnings fail too (default: the config's \"strict\")" },
    format: {
      type: "enum",
      options: [...REPORT_FORMATS],
      description: "Output format: text, json, sarif, github (workflow annotations) or junit",
      valueHint: "FORMAT",
    },
  },
  async run({ args }) {
    const format: ReportFormat = args.json ? "json" : ((args.format as ReportFormat | undefined) ?? "text");
    const report = await runCheck({ repo: args.repo, project: args.project, fab: args.fab, strict: args.strict });
    writeData(renderReport(report, format, { color: useColor() }));
    // Machine formats carry the verdict themselves; say it on stderr too for CI logs.
    if (format !== "text") log.info(`check ${report.ok ? "passed" : "failed"}: ${describeCounts(report.counts)}`);
    return report.ok ? ExitCode.ok : ExitCode.gate;
  },
});
