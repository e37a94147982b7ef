import { defineCommand } from "citty";
import { describeProgress } from "../agent/progress.ts";
import { runDemo, type DemoResult } from "../commands/demo.ts";
import { ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { globalArgs } from "./args.ts";
import { renderDoSummary } from "./do.ts";
import { writeData, writeJson } from "./output.ts";

export const demoCommand = defineCommand({
  meta: {
    name: "demo",
    description:
      "Run the gated loop on the built-in board with two recorded sessions: one committed change, one rolled back (no key needed)",
  },
  args: {
    json: globalArgs.json,
    dir: { type: "string", description: "Create the demo repo here instead of a temp folder", valueHint: "DIR" },
    // Every command takes --repo; the demo's repository is one it creates, so it names where.
    repo: { type: "string", description: "The same as --dir", valueHint: "DIR" },
  },
  async run({ args }) {
    const result = await runDemo({
      dir: args.dir ?? args.repo,
      onScenario: (name, request) => log.start(`${name}: copperhead do "${request}" (replaying a recorded session)`),
      onProgress: (event) => {
        if (event.type !== "turn") log.info(`  ${describeProgress(event)}`);
      },
    });
    if (args.json) writeJson(result);
    else writeData(renderDemo(result));
    return result.ok ? ExitCode.ok : ExitCode.gate;
  },
});

export function renderDemo(result: DemoResult): string {
  const parts = result.runs.map((run) => [`── ${run.scenario}: "${run.request}"`, renderDoSummary(run)].join("\n"));
  parts.push(
    [
      result.ok
        ? "The demo ran as recorded: the first change was verified and committed; the second broke a"
        : "The demo did NOT end as recorded; see the summaries above.",
      ...(result.ok
        ? ["requirement, the model abandoned it after the failed verification, and it was rolled back byte for byte."]
        : []),
      "",
      `Demo repo: ${result.repo}`,
      `  cd ${result.repo} && git log --stat          # the committed change, with its trailers`,
      `  cat ${result.repo}/.copperhead/runs/*/summary.md  # what each run did`,
    ].join("\n"),
  );
  return parts.join("\n\n");
}
