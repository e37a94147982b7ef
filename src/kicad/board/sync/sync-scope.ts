/**
 * Board sync inside a `do` run, confined to the approved proposal.
 *
 * A real board often carries drift nobody asked to fix: footprints placed from a project
 * library the schematic no longer names, field values that were never pushed to the board.
 * A run that adds an LED must not touch any of that. So inside a run a change is applied only
 * when it did not exist before the run — it follows from the run's own edits — and it concerns
 * what the proposal names: a named part (added, removed, re-footprinted, re-valued), a named net
 * (renamed), or the pads a named part now shares a net with. Everything else is reported as
 * `baseline` (drift from before the run) or `out_of_scope` (a change the proposal does not
 * cover), never applied. What "names" means is proposal-scope.ts's, the same rule the edit
 * tools are held to.
 */
import { planBoardSync, type BoardSyncInputs, type ChangeFilter, type SyncChange } from "./plan.ts";
import type { Netlist } from "../../netlist/netlist.ts";
import { coversNet, namesPart, type ProposalNames } from "../../proposal-scope.ts";

/**
 * The keys of every change a sync of this design would make: the drift already there. Planned
 * with every change skipped, so it reads no library and places nothing, and cannot fail on a
 * footprint that is missing since long before the run.
 */
export function driftKeys(inputs: BoardSyncInputs): Set<string> {
  const keys = new Set<string>();
  planBoardSync(inputs, {
    filter: (change) => {
      keys.add(change.key);
      return "baseline";
    },
  });
  return keys;
}

/**
 * The filter of a sync inside a run: `baseline` holds the keys of the drift before the run
 * (`driftKeys` of the design at the run's start), `netlist` is the design's netlist now.
 */
export function proposalFilter(names: ProposalNames, baseline: Set<string>, netlist: Netlist): ChangeFilter {
  const named = (ref: string) => namesPart(names, ref);
  const refsOnNet = new Map(netlist.nets.map((n) => [n.name, n.nodes.map((node) => node.ref)]));
  const touchesNamed = (net: string) => coversNet(names, net) || (refsOnNet.get(net) ?? []).some(named);
  return (change: SyncChange) => {
    if (baseline.has(change.key)) return "baseline";
    if (change.refs.some(named)) return undefined;
    // Net consequences of a named part or net: a pad that joins a named part's net, a net a
    // named edit renamed or emptied.
    if (change.kind === "net_removed") return undefined;
    if ((change.kind === "pad" || change.kind === "rename") && change.nets.some(touchesNamed)) return undefined;
    return "out_of_scope";
  };
}
