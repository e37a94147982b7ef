import { defineCommand } from "citty";
import { runInit, type InitResult } from "../commands/init.ts";
import { describeCounts } from "../checks/result.ts";
import { ExitCode } from "../errors.ts";
import { projectArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

export const initCommand = defineCommand({
  meta: {
    name: "init",
    description:
      "Set the repo up for copperhead: config, docs (SPEC, BOM, DECISIONS, CHANGELOG) and the pre-commit hook",
  },
  args: {
    ...projectArgs,
    force: {
      type: "boolean",
      description: "Regenerate a BOM table whose generated cells were edited by hand (never overwrites a foreign hook)",
      default: false,
    },
    hooks: {
      type: "boolean",
      description: "Install the git pre-commit hook (the default)",
      negativeDescription: "Do not install the pre-commit hook",
      default: true,
    },
  },
  async run({ args }) {
    const result = await runInit({ repo: args.repo, project: args.project, force: args.force, hooks: args.hooks });
    if (args.json) writeJson(result);
    else writeData(renderInit(result));
    // A refused file needs a person: the rest was done, but the repo is not fully set up.
    return result.files.some((f) => f.action === "refused") ? ExitCode.human : ExitCode.ok;
  },
});

/** One line per file: the action, the path, and for refused or skipped files the reason. */
export function renderInit(result: InitResult): string {
  const width = Math.max(...result.files.map((f) => f.action.length));
  const lines = result.files.map(
    (f) => `${f.action.padEnd(width)}  ${f.path}${f.reason ? `\n${" ".repeat(width + 2)}${f.reason}` : ""}`,
  );
  return [...rootLines(result), `project ${result.project}`, ...lines, ...baselineLines(result.baseline)].join("\n");
}

/** Run from a subfolder, init set up the repository's root: said first, so no one looks for the files in the subfolder. */
function rootLines(result: InitResult): string[] {
  if (result.from === undefined) return [];
  return [
    `Set up the repository's root, ${result.root}, not ${result.from}/: every copperhead command anywhere in the repository reads the root's .copperhead/.`,
  ];
}

/** What the first check found, and what that means for the hook. */
function baselineLines(baseline: InitResult["baseline"]): string[] {
  if (!baseline) return [];
  if ("error" in baseline)
    return [
      "",
      `The design could not be checked: ${baseline.error}`,
      "Until it can, the pre-commit hook blocks commits that touch the design.",
    ];
  const { error, warning } = baseline.counts;
  if (error + warning === 0) return ["", "The design checks clean."];
  return [
    "",
    `The design has ${describeCounts({ ...baseline.counts, info: 0 })} today. They are the baseline, not blockers:`,
    "the pre-commit hook and copperhead do fail only on findings that are new. See them with `copperhead check`.",
  ];
}
