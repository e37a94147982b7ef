/**
 * What the agent's tools work on during one `do` (or `sync --resolve`) run: the repo, the
 * design as the run has it, the journal every write goes through, and the run's state.
 *
 * The run has two editors, one for the schematic and one for the board, and one design model
 * over them: the edit tools change the editors' trees (and write what changed through the
 * journal), and the read tools read the same trees, whose views follow every edit, so nothing
 * is loaded again after an edit.
 */
import { existsSync, readFileSync } from "node:fs";
import { ruleFiles, unchangedItems, type Unchanged } from "../checks/baseline.ts";
import { sameBytes } from "../kicad/sexpr/index.ts";
import type { Design } from "../design/design.ts";
import { BoardEditor } from "../kicad/board/editor.ts";
import { Board } from "../kicad/board/model.ts";
import { listComponents } from "../kicad/netlist/components.ts";
import type { CheckReport } from "../checks/types.ts";
import type { ProposalNames } from "../kicad/proposal-scope.ts";
import type { Libraries } from "../kicad/library/libraries.ts";
import { SchematicEditor } from "../kicad/schematic/edit/editor.ts";
import type { RunJournal } from "../repo/journal.ts";
import type { KicadProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";
import type { Amendment, Proposal } from "../spec/proposal.ts";

export interface RunContext {
  repoRoot: string;
  project: KicadProject;
  /** Repo-relative docs folder (the config's `docs`, default "docs"). */
  docs: string;
  runId: string;
  libraries: Libraries;
  /** Runs the full check on the tree as it is now. */
  check(): Promise<CheckReport>;
  /** The check of the design before the run (its baseline), when the run has one. */
  baseline?: () => Promise<CheckReport>;
  /** Set once the proposal passed the spec gate. */
  proposal?: Proposal;
  /**
   * The refs and nets the approved proposal (and its amendments) name: the edit tools refuse
   * what they do not cover, and `sync_board` applies only what they cover. Absent when the run's
   * proposal binds no names (`sync --resolve`).
   */
  scope?: ProposalNames;
  /**
   * Approves and records an amendment that passed validation (`amend_proposal`) — the same
   * approval as the proposal's — and widens `scope`; resolves to the amended proposal, or null
   * when the person said no. Set by the gated run once a proposal with a scope is adopted.
   */
  amendProposal?: (amendment: Amendment) => Promise<Proposal | null>;
  /** Board drift from before the run (keys of `driftKeys`), computed by the first `sync_board`. */
  boardDrift?: Promise<Set<string>>;
  /** Opened by the first edit; every repo write goes through it. */
  journal?: RunJournal;
  /** Opens the journal (first edit) — provided by the gated run so it is written before any edit. */
  beginEdits(): RunJournal;
  /** The part each new part was placed next to (add_component's near), for placing its footprint. */
  placementAnchors?: Map<string, string>;
  /**
   * Parts left for a person, by reference, with the reason: footprints staged beside the outline
   * (no room), and connections no rule-clean route was found for. Their new unconnected items
   * do not fail the gate; the records say so (run/gate.ts).
   */
  layoutPending: Map<string, string>;
  /** Decisions recorded during the run, appended to DECISIONS.md by the gated run. */
  decisions: { decision: string; why: string }[];
  /** The model's closing summary, set by `finish`. */
  finished?: string;
  /** The run's design model (see `currentDesign`), opened by the first tool that reads or edits it. */
  design?: RunDesign;
  /** The run's board editor (see `runBoardEditor`), opened by the first tool that reads or edits the board. */
  boardEditor?: BoardEditor;
}

/** The run's schematic editor, and what the design model built over its trees at their last state. */
interface RunDesign {
  editor: SchematicEditor;
  built?: { revision: number; board?: Board; design: Design };
}

/**
 * The design as the run has it now: the editor's project, whose views show every edit so far,
 * its netlist and components (built once per state of the trees), and the board as the run
 * last read or wrote it. It is what the files say: every edit is written as it is made.
 */
export function currentDesign(ctx: RunContext): Design {
  const run = runDesign(ctx);
  const schematic = run.editor.project;
  const board = runBoardEditor(ctx)?.board;
  const built = run.built;
  if (built?.revision === schematic.revision && built.board === board) return built.design;
  const design: Design = {
    project: ctx.project,
    schematic,
    netlist: run.editor.netlist(),
    components: built?.revision === schematic.revision ? built.design.components : listComponents(schematic),
    board,
  };
  run.built = { revision: schematic.revision, board, design };
  return design;
}

/** The run's schematic editor: edits through it show in `currentDesign` (see `editSchematic`). */
export function runEditor(ctx: RunContext): SchematicEditor {
  return runDesign(ctx).editor;
}

/**
 * The run's board editor, the only way a run changes the board (`kicad/board/editor.ts`);
 * undefined when the project has no board.
 */
export function runBoardEditor(ctx: RunContext): BoardEditor | undefined {
  const file = ctx.project.board;
  if (!file) return undefined;
  return (ctx.boardEditor ??= BoardEditor.open(file, { within: ctx.repoRoot, projectFile: ctx.project.projectFile }));
}

/** The journal every write of the run goes through, opened by the first write. */
export function runJournal(ctx: RunContext): RunJournal {
  return ctx.journal ?? ctx.beginEdits();
}

/** Writes the board through the run's journal when the board editor changed it. */
export function saveBoard(ctx: RunContext): void {
  ctx.boardEditor?.save((file, bytes) => runJournal(ctx).writeFile(repoRelative(ctx.repoRoot, file), bytes));
}

/**
 * Drops the run's editor and design model, so the next tool reads the files again: for when a
 * write failed halfway and the trees may no longer be what the files say.
 */
export function forgetDesign(ctx: RunContext): void {
  ctx.design = undefined;
}

/**
 * Drops both of the run's editors, so the next tool reads the schematic and the board again: for
 * when a tool failed in a way its editor's all-or-nothing cannot vouch for (a fault of
 * copperhead's own). The board's record of the run's own copper goes with it.
 */
export function forgetEditors(ctx: RunContext): void {
  forgetDesign(ctx);
  ctx.boardEditor = undefined;
}

function runDesign(ctx: RunContext): RunDesign {
  return (ctx.design ??= {
    editor: SchematicEditor.open(ctx.project.schematic, ctx.libraries, { within: ctx.repoRoot }),
  });
}

/**
 * The board items the run left as they were, for telling a violation KiCad reports again from a
 * new one (`checks/baseline.ts`): the board as the run started (the journal keeps it) against
 * the board on disk.
 */
export function unchangedByRun(ctx: RunContext): Unchanged {
  return unchangedItems(() => {
    const file = ctx.project.board;
    if (!file) return { sameRules: true };
    const after = Board.load(file, { within: ctx.repoRoot });
    const journal = ctx.journal;
    if (!journal) return { before: after, after, sameRules: true };
    const before = journal.bytesBefore(repoRelative(ctx.repoRoot, file));
    const sameRules = ruleFiles(ctx.project.projectFile).every((rules) =>
      sameBytes(
        journal.bytesBefore(repoRelative(ctx.repoRoot, rules)),
        existsSync(rules) ? readFileSync(rules) : undefined,
      ),
    );
    return { before: before && Board.parse(before, file), after, sameRules };
  });
}

/**
 * The parts the run placed or moved: footprints on the board that were not on it when the run
 * started (the journal keeps that board), or that stand elsewhere, turned or on the other side.
 */
export function placedByRun(ctx: RunContext): Set<string> {
  const file = ctx.project.board;
  const before = file && ctx.journal?.bytesBefore(repoRelative(ctx.repoRoot, file));
  if (!file || !before || !existsSync(file)) return new Set();
  const where = (board: Board) =>
    new Map(board.footprints().map((f) => [f.ref, `${f.at.x} ${f.at.y} ${f.at.rotation} ${f.layer}`]));
  const was = where(Board.parse(before, file));
  return new Set(
    [...where(Board.load(file, { within: ctx.repoRoot }))]
      .filter(([ref, at]) => was.get(ref) !== at)
      .map(([ref]) => ref),
  );
}
