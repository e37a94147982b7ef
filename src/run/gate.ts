/**
 * The verification gate (ARCHITECTURE.md, "Invariants"): a run may commit only when it made nothing
 * worse. Judged by finding keys, which survive moves, against the check that ran before any
 * edit: no error finding may be new, so no requirement rule that passed may now fail; with
 * `strict`, the result must be spotless. A violation between board items the run left as they
 * were, which KiCad reported before with another partner, is not new (`unchangedByRun`, agent/context.ts).
 *
 * A new unconnected item (the `routing` family) is new copper left unrouted. It warns in a
 * `check`, but a run that adds one commits only when the part is in the run's layout-pending
 * list with the reason it was left for a person, and then every record says so in words.
 *
 * A new DRC warning about a part the run placed or moved (silkscreen clipped by mask or over
 * copper, a courtyard overlap), or new copper its refill left (an isolated island, a neck of
 * pour under the minimum connection width, which KiCad reports by the zone alone), is the run's
 * to repair as an error is: it fails the gate until a recorded decision answers it, naming its
 * rule and the part if it names one (`isOwnWarning`), and the record lists it among the new
 * findings either way.
 *
 * A part the run added or re-footprinted that the board does not carry as the schematic asks
 * (a new parity finding: no footprint, or another footprint) fails too, though parity only
 * warns in a `check`: the schematic half of a change is not committed without the board half,
 * which a board sync that failed (a zone refill cut off) or was never called leaves out.
 */
import { compareWithBaseline, type Unchanged } from "../checks/baseline.ts";
import type { CheckReport, Finding } from "../checks/types.ts";
import type { Design } from "../design/design.ts";
import { lookupNet } from "../kicad/netlist/net-names.ts";
import { partOf } from "../kicad/proposal-scope.ts";
import type { Proposal } from "../spec/proposal.ts";

export interface GateResult {
  ok: boolean;
  /**
   * What fails the gate: error findings absent from the baseline, new unconnected items of
   * parts not left for layout, new parts the board does not carry as asked, and new warnings
   * about the run's own parts that no decision answers (when strict, any finding at all).
   */
  blocking: Finding[];
  /**
   * Every new finding the run's record lists: the blocking ones, and each one the Verification
   * line counts as new (`countedNew`), warnings and unconnected items left for layout included.
   */
  newFindings: Finding[];
}

/** Parts left for a person to place or route, by reference, with the reason. */
export type LayoutPending = ReadonlyMap<string, string>;

/** The parts a run placed or moved on the board, and the decisions it recorded. */
export interface RunParts {
  placed: ReadonlySet<string>;
  decisions: readonly { decision: string; why: string }[];
}

export function evaluateGate(
  baseline: CheckReport,
  after: CheckReport,
  strict: boolean,
  pending: LayoutPending = new Map(),
  unchanged?: Unchanged,
  own?: RunParts,
): GateResult {
  if (strict) {
    const all = after.checks.flatMap((c) => c.findings).filter((f) => f.severity !== "info");
    return { ok: all.length === 0, blocking: all, newFindings: all };
  }
  const { current, failing } = compareWithBaseline(baseline, after, false, unchanged);
  const unrouted = current.filter(
    (f) => isNewUnconnected(f) && f.severity !== "error" && pendingRef(f, pending) === undefined,
  );
  const unsynced = current.filter((f) => f.baselineState === "new" && f.severity !== "error" && notOnBoardAsAsked(f));
  const unanswered = own
    ? current.filter((f) => f.baselineState === "new" && isOwnWarning(f, own.placed) && !answered(f, own.decisions))
    : [];
  const blocking = [...failing, ...unrouted, ...unsynced, ...unanswered];
  const listed = new Set(blocking);
  const newFindings = [...blocking, ...countedNew(current).filter((f) => !listed.has(f))];
  return { ok: blocking.length === 0, blocking, newFindings };
}

/** The families the Verification line counts findings of (routing as connections left for layout). */
const LINE_FAMILIES = new Set<Finding["check"]>(["erc", "drc", "parity", "routing"]);

/**
 * The findings of `marked` (a report against the baseline) that the Verification line counts
 * as new: ERC, DRC and parity errors and warnings, and unconnected items. The line and the
 * record's `newFindings` both read this, so the two never disagree.
 */
function countedNew(marked: Finding[]): Finding[] {
  return marked.filter((f) => f.baselineState === "new" && f.severity !== "info" && LINE_FAMILIES.has(f.check));
}

/**
 * DRC warnings about the shape of a zone's fill. The board's saved fill is kept outside the
 * run's refill window, so once the run has placed anything a new one is its refill's.
 */
const FILL_SHAPE_RULES = new Set(["isolated_copper", "connection_width"]);

/** A DRC warning about a part the run placed or moved, by the parts KiCad names in it, or about the fill its refill left. */
function isOwnWarning(f: Finding, placed: ReadonlySet<string>): boolean {
  if (f.check !== "drc" || f.severity !== "warning" || placed.size === 0) return false;
  return (
    FILL_SHAPE_RULES.has(f.rule) ||
    [...(f.refs ?? []), ...(f.location?.ref ? [f.location.ref] : [])].some((ref) => placed.has(ref))
  );
}

/** Whether a recorded decision answers `f`: it names the finding's rule and, for one about parts, one of them. */
function answered(f: Finding, decisions: RunParts["decisions"]): boolean {
  const refs = f.refs ?? (f.location?.ref ? [f.location.ref] : []);
  return decisions.some(({ decision, why }) => {
    const said = `${decision} ${why}`;
    return (
      said.includes(f.rule) &&
      (refs.length === 0 || refs.some((ref) => new RegExp(`(^|[^\\w])${escape(ref)}($|[^\\w])`).test(said)))
    );
  });
}

function isNewUnconnected(f: Finding): boolean {
  return f.check === "routing" && f.baselineState === "new";
}

/** A parity finding that the board lacks a part's footprint, or carries another than the schematic names (`checks/parity.ts`'s keys). */
function notOnBoardAsAsked(f: Finding): boolean {
  return (
    f.check === "parity" &&
    (f.rule === "missing_footprint" || (f.rule === "footprint_symbol_mismatch" && f.key.endsWith(":footprint")))
  );
}

/**
 * The layout-pending part a finding is about, if any: named by its location, by an item of its
 * key (`C4.1+U1.5`; a zone's id may hold any character, so the key is searched, not split), or
 * by kicad-cli's description of one of its items ("Pad 1 [GND] of C4 on F.Cu").
 */
function pendingRef(f: Finding, pending: LayoutPending): string | undefined {
  for (const ref of pending.keys()) {
    const escaped = ref.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (
      f.location?.ref === ref ||
      new RegExp(`(^|[:+])${escaped}(\\.[^:+]*)?([:+]|$)`).test(f.key) ||
      f.message.includes(` of ${ref} `)
    )
      return ref;
  }
  return undefined;
}

/**
 * "routing: 2 connections left for layout (C4: no rule-clean path within 10 mm)": the new
 * unconnected items the run left among `counted` (`countedNew` of the report against the
 * baseline, with gaps KiCad names again by other unchanged items not new, as the gate judges them), counted, with
 * each part's reason; undefined when there are none.
 */
function routingLine(counted: Finding[], pending: LayoutPending): string | undefined {
  const left = counted.filter(isNewUnconnected);
  if (left.length === 0) return undefined;
  const reasons = new Map<string, string>();
  for (const f of left) {
    const ref = pendingRef(f, pending);
    if (ref) reasons.set(ref, pending.get(ref)!);
  }
  const why = [...reasons]
    .sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(([ref, reason]) => `${ref}: ${reason}`);
  return `routing: ${plural(left.length, "connection")} left for layout${why.length ? ` (${why.join("; ")})` : ""}`;
}

/**
 * What the approved proposal (with its amendments) planned and the result does not hold: a
 * change that verified clean because it did nothing is not the change that was approved. Every
 * new part and net must exist; every named part must still resolve unless a planned change
 * removes it; and a plan that names parts or nets must have changed a design file.
 */
export function unmetPlan(proposal: Proposal, design: Design, designChanged: boolean): string[] {
  const scopes = [proposal.scope, ...(proposal.amendments ?? []).map((a) => a.scope)].filter((s) => s !== undefined);
  if (scopes.length === 0) return [];
  const all = (pick: (s: (typeof scopes)[number]) => string[]) => [...new Set(scopes.flatMap(pick))];
  const changes = [...proposal.changes, ...(proposal.amendments ?? []).flatMap((a) => a.changes)];
  const refs = new Set(design.components.map((c) => c.ref));
  const nets = design.netlist.nets.map((n) => n.name);
  const exists = (ref: string) => refs.has(ref) || refs.has(partOf(ref));
  const removes = (ref: string) =>
    changes.some((line) =>
      new RegExp(
        `\\b(remov|delet|drop|replac)\\w*\\b.*\\b${escape(ref)}\\b|\\b${escape(ref)}\\b.*\\b(remov|delet|drop|replac)`,
        "i",
      ).test(line),
    );
  const unmet: string[] = [];
  for (const ref of all((s) => s.newRefs))
    if (!exists(ref)) unmet.push(`the proposal adds ${ref}, but the design has no ${ref}`);
  for (const net of all((s) => s.newNets))
    if (lookupNet(nets, net).kind === "missing")
      unmet.push(`the proposal creates net ${net}, but the design has no such net`);
  for (const ref of all((s) => s.refs))
    if (!exists(ref) && !removes(ref))
      unmet.push(`the proposal changes ${ref}, but ${ref} is no longer in the design and no planned change removes it`);
  const named = all((s) => [...s.refs, ...s.nets, ...s.newRefs, ...s.newNets]);
  if (!designChanged && named.length > 0)
    unmet.push(`the proposal plans design changes (${named.join(", ")}), but no schematic or board file changed`);
  return unmet;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The commit's Verification line, e.g. "ERC clean (44 warnings, none new), DRC clean, parity
 * clean, requirements 6/6": every family's errors and warnings, and against the run's baseline
 * how many of them the change added, so a record never calls a design with warnings clean
 * without saying so.
 */
export function verificationLine(
  report: CheckReport,
  baseline?: CheckReport,
  pending: LayoutPending = new Map(),
  unchanged?: Unchanged,
): string {
  const marked = baseline ? compareWithBaseline(baseline, report, false, unchanged).current : undefined;
  const counted = marked && countedNew(marked);
  const word = (id: string, label: string) => {
    const c = report.checks.find((check) => check.id === id);
    if (!c || c.status === "skipped") return `${label} skipped`;
    const count = (severity: Finding["severity"]) => c.findings.filter((f) => f.severity === severity).length;
    const [errors, warnings] = [count("error"), count("warning")];
    if (errors + warnings === 0) return `${label} clean`;
    const added = counted?.filter((f) => f.check === id).length;
    const news = added === undefined ? "" : `, ${added === 0 ? "none" : added} new`;
    const warned = warnings > 0 ? `${plural(warnings, "warning")}` : "";
    if (errors === 0) return `${label} clean (${warned}${news})`;
    return `${label} ${plural(errors, "error")}${warned ? `, ${warned}` : ""} (baseline${news})`;
  };
  const req = report.checks.find((c) => c.id === "requirements");
  const ratio = req && /^\d+\/\d+/.exec(req.summary)?.[0];
  const reqPart = !req || req.status === "skipped" ? "requirements skipped" : `requirements ${ratio ?? "none"}`;
  // Raw kicad-cli DRC counts unconnected items as errors: a board with new ones is not "DRC clean".
  const routing = counted && routingLine(counted, pending);
  const drc = routing
    ? [word("drc", "DRC").replace(/^DRC clean/, "DRC no new violations"), routing]
    : [word("drc", "DRC")];
  return [word("erc", "ERC"), ...drc, word("parity", "parity"), reqPart].join(", ");
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
