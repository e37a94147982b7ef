import { defineCommand } from "citty";
import { runNetlist, type NetlistResult } from "../commands/netlist.ts";
import { projectArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

export const netlistCommand = defineCommand({
  meta: { name: "netlist", description: "Print the design's nets, computed natively from the schematic" },
  args: {
    ...projectArgs,
  },
  async run({ args }) {
    const result = await runNetlist({ repo: args.repo, project: args.project });
    if (args.json) writeJson(result);
    else writeData(renderNetlist(result));
    return 0;
  },
});

/** A readable table: one net per block, its pins indented beneath. */
export function renderNetlist(result: NetlistResult): string {
  const lines: string[] = [];
  for (const net of result.nets) {
    lines.push(`${net.name}  (${net.nodes.length} pin${net.nodes.length === 1 ? "" : "s"})`);
    for (const node of net.nodes) {
      const detail = [node.pinfunction, node.pintype].filter(Boolean).join(", ");
      lines.push(`    ${node.ref}.${node.pin}${detail ? `  ${detail}` : ""}`);
    }
  }
  lines.push(`${result.nets.length} nets`);
  return lines.join("\n");
}
