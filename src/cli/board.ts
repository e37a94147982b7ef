import { defineCommand } from "citty";
import { runBoardSync, type BoardSyncResult } from "../commands/board-sync.ts";
import { log } from "../log.ts";
import { globalArgs, projectArgs } from "./args.ts";
import { writeData, writeJson } from "./output.ts";

const syncCommand = defineCommand({
  meta: {
    name: "sync",
    description: "Update the PCB from the schematic (footprints, fields and nets), like KiCad's GUI does",
  },
  args: {
    ...projectArgs,
    "dry-run": { type: "boolean", description: "Show what would change; write nothing", default: false },
    fields: {
      type: "boolean",
      description: 'Also update footprint fields and sheet names (KiCad\'s "Update footprint fields")',
      default: false,
    },
  },
  async run({ args }) {
    const result = await runBoardSync({
      repo: args.repo,
      project: args.project,
      dryRun: args["dry-run"],
      fields: args.fields,
    });
    if (args.json) writeJson(result);
    else {
      for (const w of result.warnings) log.warn(w.message);
      writeData(renderBoardSync(result));
    }
    return 0;
  },
});

export const boardCommand = defineCommand({
  meta: { name: "board", description: "Work on the project's PCB" },
  args: globalArgs,
  subCommands: { sync: syncCommand },
});

/** One line per change, then a summary line. */
export function renderBoardSync(result: BoardSyncResult): string {
  const lines: string[] = [];
  for (const a of result.added) lines.push(`+ ${a.ref}  ${a.libId}  (${a.value}) at ${a.at.x}, ${a.at.y}`);
  for (const u of result.updated) {
    const parts: string[] = [];
    if (u.reference) parts.push(`reference ${u.reference.from} → ${u.reference.to}`);
    if (u.value) parts.push(`value ${u.value.from ?? ""} → ${u.value.to}`);
    if (u.footprint)
      parts.push(
        `footprint ${u.footprint.from} → ${u.footprint.to}${u.footprint.kind === "relink" ? " (re-linked, same footprint)" : ""}`,
      );
    for (const f of u.fields) parts.push(`${f.name} ${f.from ?? "(new)"} → ${f.to}`);
    if (u.path || u.sheetname || u.sheetfile) parts.push(`sheet → ${u.sheetname || "/"}`);
    if (u.flags)
      parts.push(`attributes ${[...u.flags.add.map((f) => `+${f}`), ...u.flags.remove.map((f) => `-${f}`)].join(" ")}`);
    for (const p of u.pads) parts.push(`pad ${p.pad} ${p.from ?? "(no net)"} → ${p.to ?? "(no net)"}`);
    lines.push(`~ ${u.ref}  ${parts.join("; ")}`);
  }
  for (const r of result.removed)
    lines.push(`- ${r.ref}  ${r.libId}  (${r.reason === "not_on_board" ? "not on board" : "symbol deleted"})`);
  for (const n of result.renets) {
    if (n.from !== undefined && n.to !== undefined) lines.push(`~ net ${n.from} → ${n.to}`);
    else if (n.to !== undefined) lines.push(`+ net ${n.to}`);
    else lines.push(`- net ${n.from}`);
  }
  const fieldDrift = new Set(result.skipped.filter((s) => s.reason === "fields").map((s) => s.ref));
  if (fieldDrift.size > 0)
    lines.push(
      `${fieldDrift.size} footprint(s) have fields or sheet names that differ from the schematic; --fields updates them`,
    );
  const total = result.added.length + result.updated.length + result.removed.length + result.renets.length;
  const verb = result.dryRun ? "would change" : "changed";
  lines.push(
    total === 0
      ? `${result.board} is up to date with the schematic`
      : `${result.board}: ${verb} ${result.added.length} added, ${result.updated.length} updated, ${result.removed.length} removed, ${result.renets.length} net change(s)${result.dryRun ? " (dry run, nothing written)" : ""}`,
  );
  return lines.join("\n");
}
