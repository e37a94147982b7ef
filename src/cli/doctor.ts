import { defineCommand } from "citty";
import { runDoctor, type DoctorResult } from "../commands/doctor.ts";
import { ExitCode } from "../errors.ts";
import { projectArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Check kicad-cli, git, config, project, libraries and provider variables" },
  args: {
    ...projectArgs,
  },
  async run({ args }) {
    const result = await runDoctor({ repo: args.repo, project: args.project });
    if (args.json) writeJson(result);
    else writeData(renderDoctor(result));
    return result.ok ? ExitCode.ok : ExitCode.cannotRun;
  },
});

const GLYPH = { ok: "✔", warn: "⚠", fail: "✖" } as const;

export function renderDoctor(result: DoctorResult): string {
  const lines = result.items.flatMap((item) => [
    `${GLYPH[item.status]} ${item.id.padEnd(10)} ${item.summary}`,
    // A fix of several lines (table lines to paste) keeps its lines, indented under "fix:".
    ...(item.fix && item.status !== "ok"
      ? item.fix.split("\n").map((line, i) => `  ${" ".repeat(10)} ${i === 0 ? "fix: " : "     "}${line}`)
      : []),
    ...(item.commands ?? []).map((command) => `  ${" ".repeat(10)} ${command}`),
  ]);
  lines.push("", result.ok ? "copperhead is ready." : "copperhead cannot run here yet; see the fixes above.");
  return lines.join("\n");
}
