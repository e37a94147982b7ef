/**
 * The `sync --resolve` strategy: code first — sync the board, regenerate the BOM and pinout,
 * restore missing records — then, for what only prose can fix, a model limited to doc edits and
 * board sync. copperhead writes the proposal itself, so the model starts with the edit tools
 * unlocked.
 * Requirement violations are never resolved: they are left for a person.
 */
import { currentDesign, runBoardEditor, saveBoard, type RunContext } from "../agent/context.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
import { docEditTool } from "../agent/tools/docs.ts";
import { editTools } from "../agent/tools/edit.ts";
import { exitTools } from "../agent/tools/exit.ts";
import { readTools } from "../agent/tools/read.ts";
import { viewTools } from "../agent/tools/view.ts";
import type { Tool } from "../agent/tools/tool.ts";
import { updateBoardFromSchematic } from "../kicad/board/sync/update.ts";
import { resolvable, verifySync, type SyncItem, type SyncReport } from "../checks/sync-report.ts";
import { insertChangelogEntries } from "../spec/changelog.ts";
import { parseProposal } from "../spec/proposal.ts";
import { changelogTemplate, decisionsTemplate } from "../spec/templates.ts";
import { regenerateDerivedDocs } from "./derived-docs.ts";
import type { PreparedRun, RunStrategy } from "./run-state.ts";

/** The model's tools for prose drift: read, edit docs, sync the board, record, finish, give up. */
const SYNC_TOOLS = [
  ...readTools,
  ...viewTools,
  docEditTool,
  ...editTools.filter((t) => ["sync_board", "record_decision", "finish"].includes(t.name)),
  ...exitTools,
] as Tool<RunContext>[];

/** Resolves the drift in `report` (from `verifySync`) that copperhead may resolve. */
export function syncStrategy(report: SyncReport, docs: string): RunStrategy {
  return {
    request: `Resolve drift between the design and its docs and board: ${report.drift
      .filter(resolvable)
      .map((d) => d.key)
      .join(", ")}`,
    tools: SYNC_TOOLS,
    prepare: (ctx) => resolveByCode(ctx, report),
    // The run's own proposal gets its CHANGELOG entry when it commits, so it is not drift yet;
    // drift only a person may fix stays, and is reported after the run, not held against it.
    extraGate: (ctx) =>
      verifySync({ project: ctx.project, docs })
        .drift.filter((d) => resolvable(d) && d.key !== `sync:changelog:${docs}/changes/${ctx.proposal?.id}.md`)
        .map((d) => `drift remains: ${d.key} — ${d.actual}`),
  };
}

/**
 * Everything code can fix without a model: board sync, the BOM, missing DECISIONS/CHANGELOG,
 * and CHANGELOG entries for committed proposals. What remains (prose naming parts that are
 * gone) becomes the model's task.
 */
async function resolveByCode(ctx: RunContext, report: SyncReport): Promise<PreparedRun> {
  const resolving = report.drift.filter(resolvable);
  const kinds = new Set(resolving.map((d) => d.kind));
  const done: string[] = [];
  const board = kinds.has("board") ? runBoardEditor(ctx) : undefined;
  if (board) {
    // Every change the sync plans is applied: the run's proposal is copperhead's own, and names none.
    const { schematic, components, netlist } = currentDesign(ctx);
    await updateBoardFromSchematic(
      board,
      { schematic, components, netlist, libraries: ctx.libraries },
      { anchors: ctx.placementAnchors, pending: ctx.layoutPending },
    );
    saveBoard(ctx);
    done.push("sync the board with the schematic");
  }
  regenerateDerivedDocs(ctx);
  if (kinds.has("bom")) done.push("regenerate the BOM table from the design");
  if (kinds.has("pinout")) done.push("regenerate the connector pinout from the design");
  for (const item of resolving.filter((d) => d.kind === "coverage")) {
    const file = item.doc!;
    (ctx.journal ?? ctx.beginEdits()).writeFile(
      file,
      file.endsWith("DECISIONS.md") ? decisionsTemplate() : changelogTemplate(ctx.docs),
    );
    done.push(`create ${file}`);
  }
  const missingEntries = resolving.filter((d) => d.kind === "changelog");
  if (missingEntries.length > 0) {
    appendChangelogEntries(ctx, missingEntries);
    done.push(`add CHANGELOG entries for ${missingEntries.length} committed proposal(s)`);
  }
  const remaining = verifySync({ project: ctx.project, docs: ctx.docs }).drift;
  // (prepare runs before the run's proposal exists, so nothing here is the run's own.)
  const prose = remaining.filter((d) => d.resolution === "model");
  const changes = [
    ...done,
    ...(prose.length ? [`update the prose that names what no longer exists (${prose.length} mention(s))`] : []),
  ];
  return {
    proposal: {
      title: "Resolve drift between the design and its docs",
      why: `copperhead sync found ${resolving.length} drift item(s) it may resolve: ${resolving.map((d) => d.key).join(", ")}.`,
      changes: changes.length ? changes : ["re-verify the design and docs"],
      requirements: [],
      verification: "copperhead sync finds no drift left, and the check finds no new findings.",
    },
    modelTask:
      prose.length === 0
        ? undefined
        : [
            "copperhead sync resolved what code can. These doc mentions still name references or nets that do not exist in the design:",
            ...prose.map((d) => `- ${d.doc}${d.line ? `:${d.line}` : ""}: ${d.claim} — ${d.actual}`),
            "Fix the prose with edit_doc so it describes the design as it is (read_doc first), then call finish.",
            ...humanNotice(report),
          ].join("\n"),
  };
}

/**
 * The model must not "resolve" a violation by rewriting the rule or the value it governs; the
 * tools refuse either way, but telling it up front saves it the turns (and names what to leave).
 */
function humanNotice(report: SyncReport): string[] {
  const forPeople = [...report.violations, ...report.drift.filter((d) => !resolvable(d))];
  if (forPeople.length === 0) return ["The Requirements section of SPEC.md belongs to people: do not change it."];
  return [
    "These need a person: you may not change them, the Requirements section of SPEC.md, or the values its rules govern — leave them as they are:",
    ...forPeople.map((v) => `- ${v.doc ? `${v.doc}${v.line ? `:${v.line}` : ""}: ` : ""}${v.claim} — ${v.actual}`),
  ];
}

/** One CHANGELOG entry per proposal that has none, newest first below the entries marker. */
function appendChangelogEntries(ctx: RunContext, items: SyncItem[]): void {
  const file = `${ctx.docs}/CHANGELOG.md`;
  const existing = readRepoDoc(ctx.repoRoot, file) ?? changelogTemplate(ctx.docs);
  const entries = items.map((item) => {
    const rel = item.key.replace(/^sync:changelog:/, "");
    const title = parseProposal(readRepoDoc(ctx.repoRoot, rel) ?? "").proposal?.title ?? rel;
    return [
      `### ${title}`,
      "",
      `Change: \`${rel}\` · entry restored by \`copperhead sync\` (run \`${ctx.runId}\`)`,
      "",
    ].join("\n");
  });
  const updated = insertChangelogEntries(existing, entries);
  (ctx.journal ?? ctx.beginEdits()).writeFile(file, updated);
}
