/**
 * A check report against a baseline: the one comparison behind `do`'s verification gate,
 * `check --baseline <ref>` (and the CI formats it feeds), the model's `run_check` and the
 * pre-commit hook.
 *
 * A finding is `new` (only in the current report), `unchanged` (in both) or `absent` (only in
 * the baseline: fixed, or gone with what it was about). New means a violation whose kind,
 * objects and place the baseline does not have (`matchFindings`); never its rank among
 * violations of one kind, which shifts whenever one is added or removed. Only new findings can
 * fail: new errors always, new warnings with `strict`. A requirement rule that passed at the
 * baseline and fails now is a new error, because a failing rule is a finding keyed by the rule.
 * One more finding is not new: a violation between board items the change left as they were,
 * which KiCad reported before with another partner (see `reportedAgain`), and a new symbol
 * placed from a sheet's embedded library symbol that ERC already finds differing from its
 * library (see `sameLibraryDifference`).
 */
import type { Board } from "../kicad/board/model.ts";
import { childText, printBare, type SList } from "../kicad/sexpr/index.ts";
import { withoutOccurrence } from "./result.ts";
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

/** Without `unchanged` (nothing says which board items the change left alone), findings match as `matchFindings` pairs them. */
export function compareWithBaseline(
  baseline: CheckReport,
  current: CheckReport,
  strict: boolean,
  unchanged?: Unchanged,
): BaselineComparison {
  const was = findingsOf(baseline);
  const is = findingsOf(current);
  const match = matchFindings(was, is);
  const matched = new Set(match.values());
  const old = (f: Finding) =>
    match.has(f) || (unchanged !== undefined && reportedAgain(f, was, unchanged)) || sameLibraryDifference(f, was);
  const marked = is.map((f) => withState(f, old(f) ? "unchanged" : "new"));
  const absent = was
    .filter((f) => !matched.has(f))
    .map((f) => withState(f, "absent"))
    .sort(compareFindings);
  const failing = marked.filter(
    (f) => f.baselineState === "new" && (f.severity === "error" || (strict && f.severity === "warning")),
  );
  return { current: marked, absent, failing };
}

/** Two reports' positions of one object agree within this: kicad-cli writes them to the micrometre. */
export const SAME_PLACE_MM = 0.01;

/**
 * Pairs each current finding with the baseline finding it is, if any (current → baseline).
 * Candidates share their kind and the names of their objects (the key without its occurrence
 * index); among them, in this order:
 *  1. the same objects (item uuids): one on each side is the same violation, wherever its
 *     objects moved; several violations between the same objects (slivers between two zones,
 *     a zone's narrow connections) are paired by equal description, then at the same place
 *     by the same description but for its measurements (`unmeasured`), and the rest are new
 *     or gone: a family of them that grows by one has one new finding;
 *  2. an object in common, the same message and the same place: KiCad names one of the objects
 *     by a uuid it makes up on each load (a bus split where an entry meets it: Glasgow's
 *     "net not a bus member" warnings name another bus uuid on every run);
 *  3. a finding KiCad makes once per net, naming whichever of its objects it meets first
 *     (`ONE_PER_NET`): the same violation text (the message without the objects it names),
 *     wherever it is reported;
 *  4. when a side does not name its objects by uuid (KiCad makes one up afresh on each load for
 *     an object it cannot name), the same place;
 *  5. findings that name no objects by uuid (net-wide ones, and every finding copperhead makes
 *     itself, such as drift or requirements): by equal message, then one for one.
 * So a reshuffle of a family matches all of it, and a family that loses one violation and
 * gains another has exactly one new finding.
 */
export function matchFindings(baseline: Finding[], current: Finding[]): Map<Finding, Finding> {
  const match = new Map<Finding, Finding>();
  const groups = new Map<string, { was: Finding[]; is: Finding[] }>();
  const group = (f: Finding) => {
    const id = `${f.check}\u0000${withoutOccurrence(f.key)}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { was: [], is: [] }));
    return g;
  };
  for (const f of baseline) group(f).was.push(f);
  for (const f of current) group(f).is.push(f);
  for (const { was, is } of groups.values()) {
    const taken = new Set<Finding>();
    const pair = (eligible: (a: Finding, b: Finding) => boolean) => {
      for (const f of is) {
        if (match.has(f)) continue;
        const partner = was.find((b) => !taken.has(b) && eligible(f, b));
        if (!partner) continue;
        match.set(f, partner);
        taken.add(partner);
      }
    };
    const bySameItems = new Map<string, { was: number; is: number }>();
    for (const [side, list] of [
      ["was", was],
      ["is", is],
    ] as const) {
      for (const f of list) {
        if (!f.items) continue;
        const counts = bySameItems.get(itemsOf(f)) ?? { was: 0, is: 0 };
        counts[side]++;
        bySameItems.set(itemsOf(f), counts);
      }
    }
    const alone = (f: Finding) => {
      const counts = bySameItems.get(itemsOf(f))!;
      return counts.was === 1 && counts.is === 1;
    };
    const sameItems = (a: Finding, b: Finding) =>
      a.items !== undefined && b.items !== undefined && itemsOf(a) === itemsOf(b);
    pair((a, b) => sameItems(a, b) && (alone(a) || a.message === b.message));
    pair((a, b) => sameItems(a, b) && samePlace(a, b) && unmeasured(a) === unmeasured(b));
    const shareOne = (a: Finding, b: Finding) =>
      a.items !== undefined && b.items !== undefined && a.items.some((i) => b.items!.includes(i));
    pair((a, b) => shareOne(a, b) && a.message === b.message && samePlace(a, b));
    pair((a, b) => ONE_PER_NET.has(a.rule) && violationText(a) === violationText(b));
    const placed = (a: Finding, b: Finding) => (a.items === undefined || b.items === undefined) && samePlace(a, b);
    pair((a, b) => placed(a, b) && a.message === b.message);
    pair(placed);
    const unnamed = (a: Finding, b: Finding) => a.items === undefined && b.items === undefined;
    pair((a, b) => unnamed(a, b) && a.message === b.message);
    pair(unnamed);
  }
  return match;
}

/**
 * Findings about a net as a whole that KiCad reports at one of its objects, whichever it meets
 * first: Glasgow's /OE reaches one unnamed bus through two entries, and its "not a member of
 * that bus" warning is reported at either from one ERC run to the next.
 */
const ONE_PER_NET = new Set(["net_not_bus_member"]);

/** A finding's message without the objects it names ("…: Bus to Wire Entry; Vertical Bus, length 25.4 mm"). */
function violationText(f: Finding): string {
  const end = f.message.indexOf(": ");
  return end < 0 ? f.message : f.message.slice(0, end);
}

/**
 * A finding's message with its measurements left out. KiCad measures a zone's violations on its
 * fill, and reports them at the zone's own position: when a refill moves a neck's edge by 10 µm
 * ("actual 0.2490 mm" then "0.2590 mm", multichannel's four narrow GND connections), the
 * measurement is all that changed, and the violation is the one it was.
 */
function unmeasured(f: Finding): string {
  return f.message.replace(/\d+(?:\.\d+)?/g, "#");
}

function itemsOf(f: Finding): string {
  return f.items!.join("+");
}

function samePlace(a: Finding, b: Finding): boolean {
  const [p, q] = [a.location, b.location];
  if (p?.x === undefined || p.y === undefined || q?.x === undefined || q.y === undefined) return false;
  return p.sheet === q.sheet && p.layer === q.layer && Math.hypot(p.x - q.x, p.y - q.y) <= SAME_PLACE_MM;
}

/**
 * Findings between two board items that KiCad reports once per item, naming whichever partner
 * it meets first: an item too close to two others is reported against one of them, and which
 * one can change when anything is added to the board, near the items or not. An unconnected
 * pair is one per two islands of a net, named by whichever of their items lie nearest: on
 * tinytapeout-demo an old gap at J15's shield pad comes back against another track of the net.
 * A net's length, skew or via count out of its rule's range is about the whole net, and KiCad
 * names a pad and whichever track of it: on vme-wren, /DDR4-PS.A3's length came back against
 * another of its tracks after a capacitor was added beside IC14.
 */
const ONE_PARTNER = new Set([
  "clearance",
  "shorting_items",
  "tracks_crossing",
  "hole_clearance",
  "copper_edge_clearance",
  "hole_to_hole",
  "holes_co_located",
  "unconnected",
  "length_out_of_range",
  "skew_out_of_range",
  "via_count_out_of_range",
  "diff_pair_uncoupled_length_too_long",
]);

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
  const named = baseline.some(
    (b) => b.check === finding.check && b.rule === finding.rule && b.items?.some((uuid) => items.includes(uuid)),
  );
  return named && items.every(unchanged);
}

/**
 * ERC's library findings are about a library, not the placed symbol they name, and are reported
 * once for every placed symbol that uses it:
 * - `lib_symbol_mismatch`, a library symbol a sheet embeds ("Symbol '+3V3' doesn't match copy in
 *   library 'power'"). A symbol placed from that same embedded copy (a power symbol on a rail the
 *   design already draws, which takes the design's own symbol rather than a renamed copy of the
 *   library's beside it) brings no difference the baseline did not have, and updating the
 *   sheet's symbols from the library clears them all at once.
 * - `lib_symbol_issues` and `footprint_link_issues`, a library the tables lack ("The current
 *   configuration does not include the symbol library 'OLIMEX_Power'") or a symbol or footprint
 *   it lacks. Adding the library clears them all. KiCad's report of them also shifts between
 *   two states of a sheet: on the ESP32-P4 dev board one edit made it name BOOT1, which it had
 *   not named before, and the next named pUEXT1 again instead.
 * A finding the baseline has with the same description, about another symbol, is the same one.
 */
export function sameLibraryDifference(finding: Finding, baseline: Finding[]): boolean {
  if (finding.check !== "erc" || !LIBRARY_RULES.has(finding.rule)) return false;
  const symbol = librarySymbolOf(finding);
  return baseline.some((b) => b.check === "erc" && b.rule === finding.rule && librarySymbolOf(b) === symbol);
}

const LIBRARY_RULES = new Set(["lib_symbol_mismatch", "lib_symbol_issues", "footprint_link_issues"]);

/** What a library finding is about: KiCad's description before the placed symbol it names. */
function librarySymbolOf(finding: Finding): string {
  const end = finding.message.indexOf(": ");
  return end < 0 ? finding.message : finding.message.slice(0, end);
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
export function reportAgainstBaseline(
  current: CheckReport,
  baseline: CheckReport,
  source: BaselineSource,
  unchanged?: Unchanged,
): CheckReport {
  const comparison = compareWithBaseline(baseline, current, current.strict, unchanged);
  const states = new Map(comparison.current.map((f) => [f.key, f.baselineState!]));
  const checks = current.checks.map((c) => ({
    ...c,
    findings: c.findings.map((f) => withState(f, states.get(f.key)!)),
  }));
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
