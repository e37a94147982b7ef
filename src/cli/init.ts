import { defineCommand } from "citty";
import { runInit, type InitResult } from "../commands/init.ts";
import { ExitCode } from "../errors.ts";
import { projectArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

export const initCommand = defineCommand({
  meta: {
    name: "init",
    description: "Set the repo up for copperhead: config, docs (SPEC, BOM, DECISIONS, CHANGELOG) and the pre-commit hook",
  },
  args: {
    ...projectArgs,
    force: {
      type: "boolean",
      description: "Regenerate a BOM table whose generated cells were edited by hand (never overwrites a foreign hook)",
      default: false,
    },
    hooks: { type: "boolean", description: "Install the git pre-commit hook (--no-hooks to skip)", default: true },
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
  const lines = result.files.map((f) => `${f.action.padEnd(width)}  ${f.path}${f.reason ? `\n${" ".repeat(width + 2)}${f.reason}` : ""}`);
  return [`project ${result.project}`, ...lines].join("\n");
}
