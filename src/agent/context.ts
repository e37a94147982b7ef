/**
 * What the agent's tools work on during one `do` (or `sync --resolve`) run: the repo, the
 * design as the run has it, the journal every write goes through, and the run's state.
 *
 * The run has one schematic editor and one design model over it: the edit tools change the
 * editor's trees (and write what changed through the journal), and the read tools read the
 * same trees, whose views follow every edit, so nothing is loaded again after an edit.
 */
import type { Design } from "../design/design.ts";
import { Board } from "../kicad/board/view.ts";
import { BoardObstacles } from "../kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../kicad/board/clearance/rules.ts";
import { listComponents } from "../kicad/netlist/components.ts";
import type { CheckReport } from "../checks/types.ts";
import type { ProposalNames } from "../kicad/proposal-scope.ts";
import type { Libraries } from "../kicad/library/libraries.ts";
import { SchematicEditor } from "../kicad/schematic/edit/editor.ts";
import type { RunJournal } from "../repo/journal.ts";
import type { KicadProject } from "../repo/project.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
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
   * do not fail the gate; the records say so (agent/gate.ts).
   */
  layoutPending: Map<string, string>;
  /** Ids of the tracks and vias this run laid for each part it routed: what moving it may lift. */
  routedByRun?: Map<string, Set<string>>;
  /** Decisions recorded during the run, appended to DECISIONS.md by the gated run. */
  decisions: { decision: string; why: string }[];
  /** The model's closing summary, set by `finish`. */
  finished?: string;
  /** The run's design model (see `currentDesign`), opened by the first tool that reads or edits it. */
  design?: RunDesign;
}

/** The run's one editor, and what the design model built over its trees at their last state. */
interface RunDesign {
  editor: SchematicEditor;
  /** The board as the run last read or wrote it; undefined until read. */
  board?: Board;
  built?: { revision: number; board?: Board; design: Design };
  /** The board's placement index, while it matches the board. */
  obstacles?: { board: Board; index: BoardObstacles };
}

/**
 * The design as the run has it now: the editor's project, whose views show every edit so far,
 * its netlist and components (built once per state of the trees), and the board as the run
 * last read or wrote it. It is what the files say: every edit is written as it is made.
 */
export function currentDesign(ctx: RunContext): Design {
  const run = runDesign(ctx);
  const schematic = run.editor.project;
  run.board ??= ctx.project.board ? Board.load(ctx.project.board, { within: ctx.repoRoot }) : undefined;
  const built = run.built;
  if (built?.revision === schematic.revision && built.board === run.board) return built.design;
  const design: Design = {
    project: ctx.project,
    schematic,
    netlist: run.editor.netlist(),
    components: built?.revision === schematic.revision ? built.design.components : listComponents(schematic),
    board: run.board,
  };
  run.built = { revision: schematic.revision, board: run.board, design };
  return design;
}

/** The run's schematic editor: edits through it show in `currentDesign` (see `editSchematic`). */
export function runEditor(ctx: RunContext): SchematicEditor {
  return runDesign(ctx).editor;
}

/**
 * Records the board a tool just wrote, so the design model reads it without parsing it again.
 * `obstacles` is its placement index when the tool kept it current (place_footprint); any
 * other write drops the index, and the next placement builds it again.
 */
export function boardWritten(ctx: RunContext, board: Board, obstacles?: BoardObstacles): void {
  const run = runDesign(ctx);
  run.board = board;
  run.obstacles = obstacles ? { board, index: obstacles } : undefined;
}

/** The board as the run last read or wrote it, parsed on first use. */
export function runBoard(ctx: RunContext): Board | undefined {
  const run = runDesign(ctx);
  run.board ??= ctx.project.board ? Board.load(ctx.project.board, { within: ctx.repoRoot }) : undefined;
  return run.board;
}

/** The placement obstacles of `board` (the run's), indexed once per board state (see `boardWritten`). */
export function boardObstacles(ctx: RunContext, board: Board): BoardObstacles {
  const run = runDesign(ctx);
  if (run.obstacles?.board !== board) run.obstacles = { board, index: new BoardObstacles(board, BoardRules.load(ctx.project.projectFile, ctx.repoRoot)) };
  return run.obstacles.index;
}

/**
 * Drops the run's editor and design model, so the next tool reads the files again: for when a
 * write failed halfway and the trees may no longer be what the files say.
 */
export function forgetDesign(ctx: RunContext): void {
  ctx.design = undefined;
}

function runDesign(ctx: RunContext): RunDesign {
  return (ctx.design ??= { editor: SchematicEditor.open(ctx.project.schematic, ctx.libraries, { within: ctx.repoRoot }) });
}

/** Reads a repo-relative doc (confined, capped, never a FIFO), or undefined when absent. */
export function readRepoText(ctx: RunContext, rel: string): string | undefined {
  return readRepoDoc(ctx.repoRoot, rel);
}
