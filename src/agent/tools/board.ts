/**
 * The board tools: `sync_board` (the board follows the schematic's edits) and `route`; the
 * board edits themselves are `kicad/board/`'s, through the run's `BoardEditor`.
 *
 * `sync_board`: the board follows the schematic's edits. Inside a `do` run it applies only what
 * the approved proposal covers (kicad/board/sync/sync-scope.ts): drift that was on the board before
 * the run is reported, never applied. The result is a short summary by kind — what changed,
 * what needs a person, what was left alone and why — not the whole plan.
 */
import { relative } from "node:path";
import * as v from "valibot";
import { loadDesign } from "../../design/design.ts";
import type { BoardEditor } from "../../kicad/board/editor.ts";
import { reportLayout } from "../../kicad/board/route/layout-report.ts";
import { setFootprintFlags } from "../../kicad/board/sync/apply.ts";
import { driftKeys, proposalFilter } from "../../kicad/board/sync/sync-scope.ts";
import { isEmptyPlan, type BoardSyncPlan, type SkipReason } from "../../kicad/board/sync/sync-board.ts";
import { updateBoardFromSchematic } from "../../kicad/board/sync/update.ts";
import { assertCanRefill } from "../../kicad/board/zones/refill.ts";
import { boardDialect } from "../../kicad/format-versions.ts";
import { namesPart } from "../../kicad/proposal-scope.ts";
import { discoverProject } from "../../repo/project.ts";
import { withSnapshot } from "../../repo/snapshot.ts";
import { currentDesign, runBoardEditor, saveBoard, type RunContext } from "../context.ts";
import { enforceScope } from "./scope.ts";
import { defineTool, toolCall, ToolError } from "./tool.ts";

/** The run's board editor, or a tool error when the project has no board. */
export function boardEditorOf(ctx: RunContext): BoardEditor {
  const editor = toolCall(() => runBoardEditor(ctx));
  if (!editor) throw new ToolError("the project has no board");
  return editor;
}

/**
 * The drift a sync of the design as committed would find — the board as it was before the run.
 * The run started from a clean tree, so HEAD is that design; computed once per run.
 */
async function driftBeforeRun(ctx: RunContext): Promise<Set<string>> {
  ctx.boardDrift ??= withSnapshot(ctx.repoRoot, "HEAD", async (snapshot) => {
    const project = discoverProject(snapshot.root, relative(ctx.repoRoot, ctx.project.projectFile));
    const design = loadDesign(project);
    if (!design.board) return new Set<string>();
    return driftKeys({
      board: design.board,
      schematic: design.schematic,
      components: design.components,
      netlist: design.netlist,
      libraries: ctx.libraries,
    });
  });
  return ctx.boardDrift;
}

export const syncBoardTool = defineTool({
  name: "sync_board",
  effect: "edit",
  description:
    "Update the board from the schematic for what the approved proposal names: add, remove and re-footprint its parts, update values and pad nets. Drift elsewhere on the board is reported, not changed. attributes lists the DNP, exclude-from-BOM and exclude-from-board changes it pushed to the footprints, and those it left. New footprints go where their ratsnest is shortest near the footprint of the part they were placed beside (inside the outline, clear of courtyards, other nets' copper, holes, rule areas and the edge by the board's rules, and where their pads cut no pour of another net in two; a surface-mount passive may go on the back, and any surface-mount part on a board with such parts on the back already), or are staged below the outline with what blocked them when there is no room. Placed footprints are routed to the existing copper of their nets with tracks and vias that keep the board's rules, and the zones their copper touches are refilled by KiCad; a removed footprint takes along the tracks and vias that served only its pads (this run's, and older ones that would be left dangling, as KiCad's track cleanup would take them), and the pours are refilled where it was; a connection with no rule-clean path is left for layout with its reason (layoutPending).",
  schema: v.strictObject({}),
  async run(ctx: RunContext) {
    const scope = ctx.scope;
    // A part the proposal names is one the user asked to change: its lock does not stop it.
    const options = scope
      ? {
          filter: proposalFilter(scope, await driftBeforeRun(ctx), currentDesign(ctx).netlist),
          overrideLock: (ref: string) => namesPart(scope, ref),
        }
      : {};
    const editor = runBoardEditor(ctx);
    if (!editor) throw new ToolError("the project has no board to sync");
    const { schematic, components, netlist } = currentDesign(ctx);
    const plan = await updateBoardFromSchematic(
      editor,
      { schematic, components, netlist, libraries: ctx.libraries },
      { ...options, anchors: ctx.placementAnchors, pending: ctx.layoutPending },
    );
    saveBoard(ctx);
    return {
      ...summarizeSync(plan, [...ctx.layoutPending].map(([ref, reason]) => `${ref}: ${reason}`).sort(), scope?.refs),
      routing: plan.routing,
    };
  },
});

/**
 * Sets or clears one `(attr …)` flag of a part's board footprint, for the flags a symbol does not
 * carry (`exclude_from_pos_files`). Finds the footprint now and returns the write, so a caller
 * can refuse a part without one before it edits anything else.
 */
export function setBoardFlag(ctx: RunContext, ref: string, flag: string, on: boolean): () => void {
  if (!ctx.project.board) throw new ToolError(`the project has no board, so ${ref} has no footprint to mark ${flag}`);
  const component = currentDesign(ctx).components.find((c) => c.ref === ref);
  if (!component) throw new ToolError(`no component ${ref}`);
  const editor = boardEditorOf(ctx);
  const fp = editor.board.footprints().find((f) => f.path === component.symbolPath) ?? editor.board.footprint(ref);
  if (!fp) throw new ToolError(`${ref} has no footprint on the board yet; call sync_board first, then set ${flag}`);
  return () => {
    editor.change((board) =>
      setFootprintFlags(
        fp,
        boardDialect(board.version),
        on ? { add: [flag], remove: [] } : { add: [], remove: [flag] },
      ),
    );
    saveBoard(ctx);
  };
}

export const routeTool = defineTool({
  name: "route",
  effect: "edit",
  description:
    "Route a footprint's pads that are not connected yet to the existing copper of their nets: tracks and vias that keep the board's rules (net class width and clearance, custom rules, via size), never moving or cutting existing copper; a pad inside a pour of its net connects through it. The zones the new copper touches are refilled by KiCad. A connection with no rule-clean path within 15 mm to the board's copper is left for layout with its reason; a net made only of new parts is routed pad to pad across the board. sync_board and place_footprint already route what they place.",
  schema: v.strictObject({ ref: v.pipe(v.string(), v.minLength(1)) }),
  async run(ctx: RunContext, { ref }) {
    const editor = boardEditorOf(ctx);
    enforceScope(ctx, "route", { refs: [ref] }, () => []);
    if (!editor.board.footprint(ref)) throw new ToolError(`there is no footprint ${ref} on the board`);
    await assertCanRefill(editor.board);
    const routing = await editor.attempt(async () =>
      reportLayout(ctx.layoutPending, await editor.connect([ref]), [ref]),
    );
    saveBoard(ctx);
    return { routing, layoutPending: ctx.layoutPending.get(ref) ?? null };
  },
});

/** Entries listed in full; beyond this a kind is counted with the first few as examples. */
const LISTED = 12;

/**
 * What the model needs from a sync, by kind: the plan itself runs to tens of kilobytes. With
 * `named` (a run's proposal), warnings are those about the parts the sync touched or the
 * proposal names; warnings about the rest of the board are not the run's business.
 */
export function summarizeSync(plan: BoardSyncPlan, layoutPending: string[], named?: string[]) {
  const touched = new Set([
    ...plan.added.map((a) => a.ref),
    ...plan.updated.map((u) => u.ref),
    ...plan.removed.map((r) => r.ref),
    ...(named ?? []),
  ]);
  const warnings = named ? plan.warnings.filter((w) => w.ref === undefined || touched.has(w.ref)) : plan.warnings;
  const updated = plan.updated.map((u) => {
    const parts: string[] = [];
    if (u.reference) parts.push(`reference ${u.reference.from} → ${u.reference.to}`);
    if (u.value) parts.push(`value ${u.value.from ?? ""} → ${u.value.to}`);
    if (u.footprint)
      parts.push(
        u.footprint.kind === "swap"
          ? `footprint swapped ${u.footprint.from} → ${u.footprint.to}`
          : `footprint re-linked to ${u.footprint.to}`,
      );
    if (u.flags)
      parts.push(`flags ${[...u.flags.add.map((f) => `+${f}`), ...u.flags.remove.map((f) => `-${f}`)].join(" ")}`);
    if (u.fields.length) parts.push(`fields ${u.fields.map((f) => f.name).join(", ")}`);
    if (u.path) parts.push("symbol link");
    if (u.pads.length) parts.push(`${u.pads.length} pad net(s)`);
    return `${u.ref}: ${parts.join("; ")}`;
  });
  return {
    changed: !isEmptyPlan(plan),
    added: plan.added.map(
      (a) =>
        `${a.ref} ${a.libId} ${a.staged ? `(staged below the outline: ${a.stagedReason ?? "no room"})` : `at ${a.at.x}, ${a.at.y}${a.side === "back" ? " on the back" : ""}${a.far ? ` (${a.far})` : ""}`}${a.hideReference ? ", its reference hidden as the board hides those of its like footprints" : ""}`,
    ),
    removed: plan.removed.map((r) => `${r.ref} ${r.libId}`),
    updated: capped(updated),
    nets: capped(
      plan.renets.map((n) =>
        n.from !== undefined && n.to !== undefined
          ? `renamed ${n.from} → ${n.to}`
          : n.to !== undefined
            ? `added ${n.to}`
            : `removed ${n.from}`,
      ),
    ),
    attributes: attributeChanges(plan),
    layoutPending,
    warnings: grouped(warnings.map((w) => ({ kind: w.code, detail: w.message }))),
    notApplied: notApplied(plan),
  };
}

const FLAG_WORDS: Record<string, [set: string, cleared: string]> = {
  dnp: ["DNP set", "DNP cleared"],
  exclude_from_bom: ["excluded from the BOM", "back in the BOM"],
};

/**
 * What the sync did to the parts' fabrication attributes — DNP, exclude from BOM, exclude from
 * board (the footprint removed) — and the attribute changes it left, with why.
 */
function attributeChanges(plan: BoardSyncPlan): { pushed: string[]; left: string[] } {
  const word = (flag: string, on: boolean) => FLAG_WORDS[flag]?.[on ? 0 : 1] ?? `${on ? "+" : "-"}${flag}`;
  const pushed = [
    ...plan.added
      .filter((a) => a.flags.length > 0)
      .map((a) => `${a.ref}: added, ${a.flags.map((f) => word(f, true)).join(", ")}`),
    ...plan.updated.flatMap((u) =>
      u.flags
        ? [
            `${u.ref}: ${[...u.flags.add.map((f) => word(f, true)), ...u.flags.remove.map((f) => word(f, false))].join(", ")}`,
          ]
        : [],
    ),
    ...plan.removed
      .filter((r) => r.reason === "not_on_board")
      .map((r) => `${r.ref}: excluded from the board, footprint removed`),
  ];
  const left = plan.skipped
    .filter((s) => s.kind === "flags" || (s.kind === "remove" && s.detail.includes("not on board")))
    .map(
      (s) =>
        `${s.detail} (left: ${s.reason === "out_of_scope" ? "the proposal does not name it" : s.reason === "baseline" ? "drift from before this run" : s.reason})`,
    );
  return { pushed: capped(pushed), left: capped(left) };
}

/** Skipped changes by reason: what the proposal does not cover in full, drift before the run counted. */
function notApplied(plan: BoardSyncPlan): Partial<Record<SkipReason, unknown>> {
  const out: Partial<Record<SkipReason, unknown>> = {};
  for (const reason of ["out_of_scope", "baseline", "fields"] as const) {
    const entries = plan.skipped.filter((s) => s.reason === reason);
    if (entries.length === 0) continue;
    out[reason] = {
      note:
        reason === "out_of_scope"
          ? "follows from edits to parts or nets the proposal does not name; amend the proposal or undo those edits"
          : reason === "baseline"
            ? "drift that was on the board before this run; left alone"
            : "fields differ from the schematic; left alone",
      ...grouped(
        entries.map((s) => ({ kind: s.kind, detail: s.detail })),
        reason === "out_of_scope" ? LISTED : 3,
      ),
    };
  }
  return out;
}

function capped(lines: string[]): string[] {
  return lines.length <= LISTED ? lines : [...lines.slice(0, LISTED), `… and ${lines.length - LISTED} more`];
}

/** Counts by kind, with the first `examples` details of each. */
function grouped(
  entries: { kind: string; detail: string }[],
  examples = 3,
): { count: number; byKind: Record<string, { count: number; examples: string[] }> } {
  const byKind: Record<string, { count: number; examples: string[] }> = {};
  for (const { kind, detail } of entries) {
    const group = (byKind[kind] ??= { count: 0, examples: [] });
    group.count++;
    if (group.examples.length < examples) group.examples.push(detail);
  }
  return { count: entries.length, byKind };
}
