import { defineCommand, parseArgs, type ArgsDef } from "citty";
import { runCheck } from "../commands/check.ts";
import { asCopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { projectArgs } from "./args.ts";
import { describeVerdict } from "./formats/text.ts";
import { REPORT_FORMATS, renderFailure, renderReport, type ReportFormat } from "./formats/index.ts";
import { useColor, writeData } from "./output.ts";

const args = {
  ...projectArgs,
  fab: {
    type: "boolean",
    description: "Also check fabrication readiness; unconnected items become errors",
    default: false,
  },
  strict: { type: "boolean", description: 'Warnings fail too (default: the config\'s "strict")' },
  baseline: {
    type: "string",
    description: "Compare with the design at this git ref (default HEAD): only findings new since then fail",
    valueHint: "REF",
  },
  staged: {
    type: "boolean",
    description: "Check what is staged, against HEAD (what the pre-commit hook runs)",
    default: false,
  },
  all: {
    type: "boolean",
    description:
      "Text format: list every finding (by default a long family shows its counts by rule and the first few of each)",
    default: false,
  },
  format: {
    type: "enum",
    options: [...REPORT_FORMATS],
    description: "Output format: text, json, sarif, github (workflow annotations) or junit",
    valueHint: "FORMAT",
  },
} as const satisfies ArgsDef;

export const checkCommand = defineCommand({
  meta: {
    name: "check",
    description: "Run ERC, DRC, schematic/board parity, routing, doc drift, requirements and proposal checks",
  },
  args,
  async run({ args: given, rawArgs }) {
    const parsed = withBaselineRef(given, rawArgs);
    const format: ReportFormat = parsed.json ? "json" : ((parsed.format as ReportFormat | undefined) ?? "text");
    const report = await runCheck({
      repo: parsed.repo,
      project: parsed.project,
      fab: parsed.fab,
      strict: parsed.strict,
      baseline: parsed.baseline,
      staged: parsed.staged,
    }).catch((err: unknown) => {
      // The error still goes to stderr with exit 3 (the runner); a format that must stay a document says it too.
      const document = renderFailure(asCopperheadError(err), format);
      if (document) writeData(document);
      throw err;
    });
    writeData(renderReport(report, format, { color: useColor(), all: parsed.all }));
    // Machine formats carry the verdict themselves; say it on stderr too for CI logs.
    if (format !== "text") log.info(describeVerdict(report));
    return report.ok ? ExitCode.ok : ExitCode.gate;
  },
});

/** The options `run` reads. */
interface CheckFlags {
  repo?: string;
  project?: string;
  json: boolean;
  fab: boolean;
  strict?: boolean;
  baseline?: string;
  staged: boolean;
  all: boolean;
  format?: string;
}

/**
 * `--baseline` takes an optional ref: alone, or followed by another option, it means HEAD.
 * citty reads the next word as the value whatever it is (`--baseline --strict` would be the ref
 * "--strict"), so then the command's own words are read again with the default spelled out; the
 * global options given before the subcommand are kept.
 */
function withBaselineRef(given: CheckFlags, rawArgs: string[]): CheckFlags {
  if (given.baseline === undefined || (given.baseline !== "" && !given.baseline.startsWith("-"))) return given;
  const words = rawArgs.flatMap((arg, i) =>
    arg === "--baseline" && (i === rawArgs.length - 1 || rawArgs[i + 1]!.startsWith("-")) ? [arg, "HEAD"] : [arg],
  );
  const again = parseArgs(words, args) as unknown as CheckFlags;
  return { ...again, repo: again.repo ?? given.repo, json: again.json || given.json };
}
