/**
 * `sync_board`: the board follows the schematic's edits. Inside a `do` run it applies only what
 * the approved proposal covers (kicad/board/sync/scope.ts): drift that was on the board before
 * the run is reported, never applied. The result is a short summary by kind — what changed,
 * what needs a person, what was left alone and why — not the whole plan.
 */
import { relative } from "node:path";
import * as v from "valibot";
import { loadDesign } from "../../design/design.ts";
import { CopperheadError } from "../../errors.ts";
import { Board } from "../../kicad/board/view.ts";
import { placeAdditions } from "../../kicad/board/placement.ts";
import { BoardRules } from "../../kicad/board/clearance/rules.ts";
import { setFootprintFlags } from "../../kicad/board/sync/apply.ts";
import { applyBoardSync, isEmptyPlan, planBoardSync, type BoardSyncOptions, type BoardSyncPlan, type SkipReason } from "../../kicad/board/sync/sync.ts";
import { driftKeys, proposalFilter } from "../../kicad/board/sync/scope.ts";
import { namesPart } from "../../kicad/proposal-scope.ts";
import type { Netlist } from "../../kicad/netlist/netlist.ts";
import { bestPartOn } from "../../kicad/schematic/edit/placement.ts";
import { boardDialect } from "../../kicad/format.ts";
import { printSexprBytes } from "../../kicad/sexpr/index.ts";
import { discoverProject } from "../../repo/project.ts";
import { repoRelative } from "../../repo/repo-path.ts";
import { withSnapshot } from "../../repo/snapshot.ts";
import { boardWritten, currentDesign, type RunContext } from "../context.ts";
import { defineTool, ToolError } from "./tool.ts";

/**
 * Updates the board from the schematic through the journal; new footprints are remembered as
 * layout work for a person. Without a filter every change is applied (`sync --resolve`).
 */
export function syncBoardFromSchematic(ctx: RunContext, options: Pick<BoardSyncOptions, "filter" | "overrideLock"> = {}): BoardSyncPlan {
  const boardFile = ctx.project.board;
  if (!boardFile) throw new ToolError("the project has no board to sync");
  const journal = ctx.journal ?? ctx.beginEdits();
  const design = currentDesign(ctx);
  const board = Board.load(boardFile, { within: ctx.repoRoot });
  const plan = planBoardSync({ board, schematic: design.schematic, components: design.components, netlist: design.netlist, libraries: ctx.libraries }, options);
  // A new footprint goes next to the part it was placed beside in the schematic (or shares the
  // most nets with); where nothing fits, it stays staged beside the outline.
  const anchorOf = (ref: string) => ctx.placementAnchors?.get(ref) ?? bestPartOn(design.netlist, nets(design.netlist, ref), (other) => other !== ref && !plan.added.some((a) => a.ref === other));
  const staged = new Map(placeAdditions(board, plan, ctx.libraries, anchorOf, BoardRules.load(ctx.project.projectFile, ctx.repoRoot)).map((s) => [s.ref, s.reason]));
  for (const add of plan.added) {
    add.staged = staged.has(add.ref);
    add.stagedReason = staged.get(add.ref);
  }
  if (!isEmptyPlan(plan)) {
    applyBoardSync(board, plan, ctx.libraries);
    journal.writeFile(repoRelative(ctx.repoRoot, boardFile), printSexprBytes(board.doc));
    boardWritten(ctx, board);
  }
  for (const added of plan.added) if (added.staged) ctx.layoutPending.add(added.ref);
  return plan;
}

/** The nets a part's pins are on. */
function nets(netlist: Netlist, ref: string): string[] {
  return netlist.nets.filter((n) => n.nodes.some((node) => node.ref === ref)).map((n) => n.name);
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
    return driftKeys({ board: design.board, schematic: design.schematic, components: design.components, netlist: design.netlist, libraries: ctx.libraries });
  });
  return ctx.boardDrift;
}

export const syncBoardTool = defineTool({
  name: "sync_board",
  family: "edit",
  description:
    "Update the board from the schematic for what the approved proposal names: add, remove and re-footprint its parts, update values and pad nets. Drift elsewhere on the board is reported, not changed. attributes lists the DNP, exclude-from-BOM and exclude-from-board changes it pushed to the footprints, and those it left. New footprints go where their ratsnest is shortest near the footprint of the part they were placed beside (inside the outline, clear of courtyards, other nets' copper, holes, rule areas and the edge by the board's rules; a surface-mount passive may go on the back), or are staged below the outline with what blocked them when there is no room.",
  schema: v.strictObject({}),
  async run(ctx: RunContext) {
    try {
      const scope = ctx.scope;
      // A part the proposal names is one the user asked to change: its lock does not stop it.
      const options = scope ? { filter: proposalFilter(scope, await driftBeforeRun(ctx), currentDesign(ctx).netlist), overrideLock: (ref: string) => namesPart(scope, ref) } : {};
      const plan = syncBoardFromSchematic(ctx, options);
      return summarizeSync(plan, [...ctx.layoutPending].sort(), scope?.refs);
    } catch (err) {
      if (err instanceof CopperheadError) throw new ToolError(err.fix ? `${err.message} (${err.fix})` : err.message);
      throw err;
    }
  },
});

/**
 * Sets or clears one `(attr …)` flag of a part's board footprint, for the flags a symbol does not
 * carry (`exclude_from_pos_files`). Finds the footprint now and returns the write, so a caller
 * can refuse a part without one before it edits anything else.
 */
export function setBoardFlag(ctx: RunContext, ref: string, flag: string, on: boolean): () => void {
  const boardFile = ctx.project.board;
  if (!boardFile) throw new ToolError(`the project has no board, so ${ref} has no footprint to mark ${flag}`);
  const component = currentDesign(ctx).components.find((c) => c.ref === ref);
  if (!component) throw new ToolError(`no component ${ref}`);
  const board = Board.load(boardFile, { within: ctx.repoRoot });
  const fp = board.footprints().find((f) => f.path === component.symbolPath) ?? board.footprints().find((f) => f.ref === ref);
  if (!fp) throw new ToolError(`${ref} has no footprint on the board yet; call sync_board first, then set ${flag}`);
  return () => {
    setFootprintFlags(fp, boardDialect(board.version), on ? { add: [flag], remove: [] } : { add: [], remove: [flag] });
    (ctx.journal ?? ctx.beginEdits()).writeFile(repoRelative(ctx.repoRoot, boardFile), printSexprBytes(board.doc));
    boardWritten(ctx, board);
  };
}

/** Entries listed in full; beyond this a kind is counted with the first few as examples. */
const LISTED = 12;

/**
 * What the model needs from a sync, by kind: the plan itself runs to tens of kilobytes. With
 * `named` (a run's proposal), warnings are those about the parts the sync touched or the
 * proposal names; warnings about the rest of the board are not the run's business.
 */
export function summarizeSync(plan: BoardSyncPlan, layoutPending: string[], named?: string[]) {
  const touched = new Set([...plan.added.map((a) => a.ref), ...plan.updated.map((u) => u.ref), ...plan.removed.map((r) => r.ref), ...(named ?? [])]);
  const warnings = named ? plan.warnings.filter((w) => w.ref === undefined || touched.has(w.ref)) : plan.warnings;
  const updated = plan.updated.map((u) => {
    const parts: string[] = [];
    if (u.reference) parts.push(`reference ${u.reference.from} → ${u.reference.to}`);
    if (u.value) parts.push(`value ${u.value.from ?? ""} → ${u.value.to}`);
    if (u.footprint) parts.push(u.footprint.kind === "swap" ? `footprint swapped ${u.footprint.from} → ${u.footprint.to}` : `footprint re-linked to ${u.footprint.to}`);
    if (u.flags) parts.push(`flags ${[...u.flags.add.map((f) => `+${f}`), ...u.flags.remove.map((f) => `-${f}`)].join(" ")}`);
    if (u.fields.length) parts.push(`fields ${u.fields.map((f) => f.name).join(", ")}`);
    if (u.path) parts.push("symbol link");
    if (u.pads.length) parts.push(`${u.pads.length} pad net(s)`);
    return `${u.ref}: ${parts.join("; ")}`;
  });
  return {
    changed: !isEmptyPlan(plan),
    added: plan.added.map((a) => `${a.ref} ${a.libId} ${a.staged ? `(staged below the outline: ${a.stagedReason ?? "no room"})` : `at ${a.at.x}, ${a.at.y}${a.side === "back" ? " on the back" : ""}`}`),
    removed: plan.removed.map((r) => `${r.ref} ${r.libId}`),
    updated: capped(updated),
    nets: capped(
      plan.renets.map((n) => (n.from !== undefined && n.to !== undefined ? `renamed ${n.from} → ${n.to}` : n.to !== undefined ? `added ${n.to}` : `removed ${n.from}`)),
    ),
    attributes: attributeChanges(plan),
    layoutPending,
    warnings: grouped(warnings.map((w) => ({ kind: w.code, detail: w.message }))),
    notApplied: notApplied(plan),
  };
}

const FLAG_WORDS: Record<string, [set: string, cleared: string]> = { dnp: ["DNP set", "DNP cleared"], exclude_from_bom: ["excluded from the BOM", "back in the BOM"] };

/**
 * What the sync did to the parts' fabrication attributes — DNP, exclude from BOM, exclude from
 * board (the footprint removed) — and the attribute changes it left, with why.
 */
function attributeChanges(plan: BoardSyncPlan): { pushed: string[]; left: string[] } {
  const word = (flag: string, on: boolean) => FLAG_WORDS[flag]?.[on ? 0 : 1] ?? `${on ? "+" : "-"}${flag}`;
  const pushed = [
    ...plan.added.filter((a) => a.flags.length > 0).map((a) => `${a.ref}: added, ${a.flags.map((f) => word(f, true)).join(", ")}`),
    ...plan.updated.flatMap((u) => (u.flags ? [`${u.ref}: ${[...u.flags.add.map((f) => word(f, true)), ...u.flags.remove.map((f) => word(f, false))].join(", ")}`] : [])),
    ...plan.removed.filter((r) => r.reason === "not_on_board").map((r) => `${r.ref}: excluded from the board, footprint removed`),
  ];
  const left = plan.skipped
    .filter((s) => s.kind === "flags" || (s.kind === "remove" && s.detail.includes("not on board")))
    .map((s) => `${s.detail} (left: ${s.reason === "out_of_scope" ? "the proposal does not name it" : s.reason === "baseline" ? "drift from before this run" : s.reason})`);
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
      ...grouped(entries.map((s) => ({ kind: s.kind, detail: s.detail })), reason === "out_of_scope" ? LISTED : 3),
    };
  }
  return out;
}

function capped(lines: string[]): string[] {
  return lines.length <= LISTED ? lines : [...lines.slice(0, LISTED), `… and ${lines.length - LISTED} more`];
}

/** Counts by kind, with the first `examples` details of each. */
function grouped(entries: { kind: string; detail: string }[], examples = 3): { count: number; byKind: Record<string, { count: number; examples: string[] }> } {
  const byKind: Record<string, { count: number; examples: string[] }> = {};
  for (const { kind, detail } of entries) {
    const group = (byKind[kind] ??= { count: 0, examples: [] });
    group.count++;
    if (group.examples.length < examples) group.examples.push(detail);
  }
  return { count: entries.length, byKind };
}
