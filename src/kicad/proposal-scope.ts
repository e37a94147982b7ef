/**
 * What an approved change proposal covers — the one definition both the edit tools (which
 * refuse a call that reaches beyond it) and the board sync inside a run (which applies only
 * what follows from it, kicad/board/sync/sync-scope.ts) use.
 *
 * A proposal names parts and nets, existing and new. A part is named by its reference: a unit
 * (`U1A`) is its part (`U1`). A net is named as a person writes it: its netlist name (`/DATA`,
 * `+3V3`) names exactly that net; a short name (`DATA`) names every sheet-local net of that name,
 * which is what `lookupNet` resolves it to when one sheet uses it (kicad/netlist/net-names.ts). Virtual symbols
 * (`#PWR…`, `#FLG…`) are not parts: they are wiring, like the wires and labels an edit draws, and
 * what they do is judged by the nets they join.
 */
import { lookupNet } from "./netlist/net-names.ts";

/** What the approved proposal names: existing and new refs and nets, as the proposal wrote them. */
export interface ProposalNames {
  refs: string[];
  nets: string[];
}

/** Whether a reference is a virtual symbol (`#PWR01`, `#FLG02`): wiring, not a part. */
export function isVirtual(ref: string): boolean {
  return ref.startsWith("#");
}

/** The part a reference names: `U1A` (unit A of U1) is `U1`. */
export function partOf(ref: string): string {
  return /^(.*\d)[A-Z]{1,2}$/.exec(ref)?.[1] ?? ref;
}

/** Whether the proposal names the part `ref` is (or is a unit of). */
export function namesPart(names: ProposalNames, ref: string): boolean {
  const part = partOf(ref);
  return names.refs.some((named) => partOf(named) === part);
}

/** Whether the proposal covers the netlist net `net` (a name as the netlist spells it). */
export function coversNet(names: ProposalNames, net: string): boolean {
  const leaf = net.startsWith("/") ? net.slice(net.lastIndexOf("/") + 1) : undefined;
  return names.nets.some((named) => named === net || (leaf !== undefined && !named.startsWith("/") && named === leaf));
}

/**
 * The nets a tool argument means, judged against the proposal: `nets` are the design's netlist
 * names now. A name that resolves (exactly, or as the unique short name) is that net; an
 * ambiguous short name is every net it could mean; a name no net has yet is a net the edit
 * creates, covered when the proposal names it (its sheet path aside: the edit decides the sheet).
 * Returns the uncovered ones, each as the design (or the argument) names it.
 */
export function uncoveredNet(names: ProposalNames, name: string, nets: Iterable<string>): string[] {
  const found = lookupNet(nets, name);
  if (found.kind === "found") return coversNet(names, found.name) ? [] : [found.name];
  if (found.kind === "ambiguous") return found.candidates.filter((net) => !coversNet(names, net));
  const leaf = (n: string) => n.slice(n.lastIndexOf("/") + 1);
  return coversNet(names, name) || names.nets.some((named) => leaf(named) === leaf(name)) ? [] : [name];
}

/** `names` with `more` added, each name once. */
export function widen(names: ProposalNames, more: ProposalNames): ProposalNames {
  return { refs: [...new Set([...names.refs, ...more.refs])], nets: [...new Set([...names.nets, ...more.nets])] };
}
