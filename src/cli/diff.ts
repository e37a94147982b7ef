import { defineCommand } from "citty";
import { runDiff, type DiffResult } from "../commands/diff.ts";
import { diffMarkdown, diffText, type DiffLabels } from "../diff/format.ts";
import { CopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { globalArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

const FORMATS = ["text", "markdown"] as const;

export const diffCommand = defineCommand({
  meta: {
    name: "diff",
    description:
      "Show what changed in the design between two states: parts, nets, pins, board, requirements, BOM (default: HEAD against the working tree)",
  },
  args: {
    ...globalArgs,
    base: {
      type: "string",
      description: "The state before: a commit, branch or tag (default: HEAD)",
      valueHint: "REF",
    },
    head: {
      type: "string",
      description: "The state after: a commit, branch or tag (default: the working tree)",
      valueHint: "REF",
    },
    format: {
      type: "enum",
      options: [...FORMATS],
      description: "Output format: text or markdown (--json for the machine form)",
      valueHint: "FORMAT",
    },
    render: {
      type: "string",
      description:
        "Also write before/after SVGs and a what-changed image per changed sheet and for the board to DIR (needs kicad-cli)",
      valueHint: "DIR",
    },
    project: {
      type: "string",
      description: "The .kicad_pro to compare when the repo holds several",
      valueHint: "FILE",
    },
  },
  async run({ args }) {
    if (args.json && args.format) {
      throw new CopperheadError("usage", "--json and --format are two output formats; pass one.", {
        fix: "Use --json for the machine form, or --format text|markdown.",
      });
    }
    const result = await runDiff({
      repo: args.repo,
      project: args.project,
      base: args.base,
      head: args.head,
      render: args.render,
    });
    if (args.json) writeJson(result);
    else {
      const labels = diffLabels(result, args.base, args.head);
      writeData(args.format === "markdown" ? diffMarkdown(result, labels) : diffText(result, labels));
    }
    for (const skipped of result.renders?.skipped ?? []) log.warn(`not rendered: ${skipped}`);
    if (result.renders) log.info(`renders: ${renderCount(result)} file(s) in ${args.render}`);
    return ExitCode.ok;
  },
});

/** `HEAD (1a2b3c4)` and `the working tree`; a ref that is a commit hash is shown short. */
export function diffLabels(result: DiffResult, base: string | undefined, head: string | undefined): DiffLabels {
  const label = (ref: string, commit: string) =>
    commit.startsWith(ref.toLowerCase()) && /^[0-9a-f]{7,}$/i.test(ref)
      ? commit.slice(0, 7)
      : `${ref} (${commit.slice(0, 7)})`;
  return {
    base: label(base ?? "HEAD", result.base.commit),
    head: result.head.commit === null ? "the working tree" : label(head!, result.head.commit),
  };
}

function renderCount(result: DiffResult): number {
  const r = result.renders!;
  const files = [...r.sheets, ...(r.board ? [r.board] : [])].flatMap((page) => [
    page.before,
    page.after,
    page.diff,
    ...page.insets.flatMap((i) => [i.svg, i.png]),
  ]);
  return files.filter(Boolean).length;
}
