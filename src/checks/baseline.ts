/**
 * A check report against a baseline: the one comparison behind `do`'s verification gate,
 * `check --baseline <ref>` (and the CI formats it feeds) and the pre-commit hook.
 *
 * Findings are matched by key, which names the objects a finding is about and is unique per
 * violation, so a finding is `new` (only in the current report), `unchanged` (in both) or
 * `absent` (only in the baseline: fixed, or gone with what it was about). Only new findings can
 * fail: new errors always, new warnings with `strict`. A requirement rule that passed at the
 * baseline and fails now is a new error, because a failing rule is a finding keyed by the rule.
 * One more finding is not new: a violation between board items the change left as they were,
 * which KiCad reported before with another partner (see `reportedAgain`).
 */
import type { Board } from "../kicad/board/view.ts";
import { childText, printBare, type SList } from "../kicad/sexpr/index.ts";
import { compareFindings, type BaselineReport, type BaselineState, type CheckReport, type Finding } from "./types.ts";

export interface BaselineComparison {
  /** Every finding of the current report, marked `new` or `unchanged`, in report order. */
  current: Finding[];
  /** Baseline findings the current report no longer has, marked `absent`. */
  absent: Finding[];
  /** The new findings that fail: errors, and warnings when strict. */
  failing: Finding[];
}

/** Whether the change left a board item, named by its uuid, as it was in the baseline (see `unchangedItems`). */
export type Unchanged = (uuid: string) => boolean;

/** Without `unchanged` (nothing says which board items the change left alone), findings match by key alone. */
export function compareWithBaseline(baseline: CheckReport, current: CheckReport, strict: boolean, unchanged?: Unchanged): BaselineComparison {
  const was = findingsOf(baseline);
  const before = new Set(was.map((f) => f.key));
  const old = (f: Finding) => before.has(f.key) || (unchanged !== undefined && reportedAgain(f, was, unchanged));
  const marked = findingsOf(current).map((f) => withState(f, old(f) ? "unchanged" : "new"));
  const after = new Set(marked.map((f) => f.key));
  const absent = was
    .filter((f) => !after.has(f.key))
    .map((f) => withState(f, "absent"))
    .sort(compareFindings);
  const failing = marked.filter((f) => f.baselineState === "new" && (f.severity === "error" || (strict && f.severity === "warning")));
  return { current: marked, absent, failing };
}

/**
 * Findings between two board items that KiCad reports once per item, naming whichever partner
 * it meets first: an item too close to two others is reported against one of them, and which
 * one can change when anything is added to the board, near the items or not. An unconnected
 * pair is one per two islands of a net, named by whichever of their items lie nearest: on
 * tinytapeout-demo an old gap at J15's shield pad comes back against another track of the net.
 */
const ONE_PARTNER = new Set(["clearance", "shorting_items", "tracks_crossing", "hole_clearance", "copper_edge_clearance", "hole_to_hole", "holes_co_located", "unconnected"]);

/** What `reportedAgain` reads of a finding. */
export type ReportedItems = Pick<Finding, "check" | "rule" | "items">;

/**
 * A violation KiCad reports again with another partner: its items are all ones the change left
 * as they were, so the change cannot have caused it, and the baseline had a violation of the
 * same kind naming one of them (the same track, against another pad). Anything new on the
 * board, a refilled zone included, is a changed item, so a violation involving it stays new;
 * so does one between unchanged items of which the baseline named none.
 */
export function reportedAgain(finding: ReportedItems, baseline: ReportedItems[], unchanged: Unchanged): boolean {
  const items = finding.items;
  if (!items || !ONE_PARTNER.has(finding.rule)) return false;
  const named = baseline.some((b) => b.check === finding.check && b.rule === finding.rule && b.items?.some((uuid) => items.includes(uuid)));
  return named && items.every(unchanged);
}

/** The two states of a board, and whether the design rules (`.kicad_pro`, `.kicad_dru`) are the same in both. */
export interface BoardStates {
  before?: Board;
  after?: Board;
  sameRules: boolean;
}

/**
 * The board items two states share unchanged: the same uuid, and the same bytes in both boards
 * (a pad's are its footprint's, which places it), whitespace before them aside. New, moved and
 * refilled items are changed. The boards are loaded at the first question, which only a
 * finding that may be `reportedAgain` asks; a state without a board has no item unchanged, and
 * neither has one whose rules changed (a tighter clearance makes a new violation of old items).
 */
export function unchangedItems(load: () => BoardStates): Unchanged {
  let same: Unchanged | undefined;
  return (uuid) => {
    if (!same) {
      const { before, after, sameRules } = load();
      const [was, is] = sameRules ? [itemsByUuid(before), itemsByUuid(after)] : [new Map(), new Map()];
      same = (id) => {
        const [a, b] = [was.get(id), is.get(id)];
        return a !== undefined && b !== undefined && printBare(a) === printBare(b);
      };
    }
    return same(uuid);
  };
}

/** The files that hold a project's design rules: the project file and its custom rules. */
export function ruleFiles(projectFile: string): string[] {
  return [projectFile, projectFile.replace(/\.kicad_pro$/, ".kicad_dru")];
}

/** Whether two states of a file hold the same bytes (absent in both counts as the same). */
export function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

/** A board's items by uuid: its top-level items, and each footprint and pad as its footprint. */
function itemsByUuid(board: Board | undefined): Map<string, SList> {
  const items = new Map<string, SList>();
  if (!board) return items;
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const uuid = childText(item, "uuid");
    if (uuid) items.set(uuid, item);
  }
  for (const fp of board.footprints()) {
    for (const pad of fp.pads) {
      const uuid = childText(pad.node, "uuid");
      if (uuid) items.set(uuid, fp.node);
    }
  }
  return items;
}

/** Where the baseline came from, as the report names it. */
export type BaselineSource = Pick<BaselineReport, "ref" | "commit">;

/**
 * The current report judged against the baseline: each finding carries its `baselineState`,
 * the findings that went away are listed under `baseline.absent`, and `ok` means that no new
 * finding fails. Family statuses still describe the design as it is.
 */
export function reportAgainstBaseline(current: CheckReport, baseline: CheckReport, source: BaselineSource, unchanged?: Unchanged): CheckReport {
  const comparison = compareWithBaseline(baseline, current, current.strict, unchanged);
  const states = new Map(comparison.current.map((f) => [f.key, f.baselineState!]));
  const checks = current.checks.map((c) => ({ ...c, findings: c.findings.map((f) => withState(f, states.get(f.key)!)) }));
  const count = (state: BaselineState) => comparison.current.filter((f) => f.baselineState === state).length;
  return {
    ...current,
    ok: comparison.failing.length === 0,
    checks,
    baseline: {
      ref: source.ref,
      commit: source.commit,
      counts: { new: count("new"), unchanged: count("unchanged"), absent: comparison.absent.length },
      absent: comparison.absent,
    },
  };
}

function findingsOf(report: CheckReport): Finding[] {
  return report.checks.flatMap((c) => c.findings);
}

function withState(finding: Finding, baselineState: BaselineState): Finding {
  return { ...finding, baselineState };
}
