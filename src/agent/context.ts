/**
 * What the agent's tools work on during one `do` (or `sync --resolve`) run: the repo, the
 * design as it is on disk now, the journal every write goes through, and the run's state.
 */
import { loadDesign, type Design } from "../design/design.ts";
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
  /** Footprints sync_board added but could not place inside the outline: staged for a person to place. */
  layoutPending: Set<string>;
  /** Decisions recorded during the run, appended to DECISIONS.md by the gated run. */
  decisions: { decision: string; why: string }[];
  /** The model's closing summary, set by `finish`. */
  finished?: string;
}

/** The design as the files on disk describe it now (edits are written as they happen). */
export function currentDesign(ctx: RunContext): Design {
  return loadDesign(ctx.project);
}

/** A schematic editor over the current files, for one edit operation. */
export function openEditor(ctx: RunContext): SchematicEditor {
  return SchematicEditor.open(ctx.project.schematic, ctx.libraries, { within: ctx.repoRoot });
}

/** Reads a repo-relative doc (confined, capped, never a FIFO), or undefined when absent. */
export function readRepoText(ctx: RunContext, rel: string): string | undefined {
  return readRepoDoc(ctx.repoRoot, rel);
}
