/**
 * Whether an edit left the nets as they should be, judged by the netlists before and after it:
 * a rename moves no pin, and removing or disconnecting pins leaves every other pin with the same
 * net-mates. The edit tools run these in the check of their edit, which puts every sheet back
 * when one fails.
 */
import { naturalCompare } from "../../../util/natural-compare.ts";
import type { NetNode, Netlist } from "../../netlist/netlist.ts";

/**
 * Checks a rename against the netlists before and after: every net keeps its pins, and only
 * the expected names change.
 */
export function compareRenamed(before: Netlist, after: Netlist, renamed: Map<string, string>): string[] {
  const afterByName = new Map(after.nets.map((n) => [n.name, new Set(pinKeys(n.nodes))]));
  const problems: string[] = [];
  for (const net of before.nets) {
    const name = renamed.get(net.name) ?? net.name;
    const now = afterByName.get(name);
    if (now === undefined) {
      problems.push(`net ${net.name} would not become ${name}`);
      continue;
    }
    const was = new Set(pinKeys(net.nodes));
    const lost = [...was].filter((p) => !now.has(p));
    const gained = [...now].filter((p) => !was.has(p));
    if (lost.length + gained.length > 0) problems.push(moved(name, lost, gained));
  }
  if (after.nets.length !== before.nets.length)
    problems.push(`${after.nets.length} nets instead of ${before.nets.length}`);
  return problems;
}

/**
 * What an edit that took pins away (`gone`, as `REF.PIN`) did to the nets of the pins that are
 * left: each net whose remaining pins no longer share one net, or share it with new ones.
 */
export function pinsRegrouped(before: Netlist, after: Netlist, gone: ReadonlySet<string>): string[] {
  const pinsOf = (nodes: NetNode[]) => pinKeys(nodes).filter((p) => !gone.has(p));
  const mates = new Map<string, Set<string>>();
  for (const net of after.nets) {
    const pins = new Set(pinsOf(net.nodes));
    for (const pin of pins) mates.set(pin, pins);
  }
  const problems: string[] = [];
  for (const net of before.nets) {
    const was = pinsOf(net.nodes);
    if (was.length === 0) continue;
    const now = mates.get(was[0]!) ?? new Set<string>();
    const lost = was.filter((p) => !now.has(p));
    const gained = [...now].filter((p) => !was.includes(p));
    if (lost.length + gained.length > 0) problems.push(moved(net.name, lost, gained));
  }
  return problems;
}

/** A net's pins as `REF.PIN`. */
function pinKeys(nodes: readonly NetNode[]): string[] {
  return nodes.map((n) => `${n.ref}.${n.pin}`);
}

/** "net X would lose A, B and gain C". */
function moved(net: string, lost: string[], gained: string[]): string {
  const parts = [lost.length > 0 ? `lose ${pinList(lost)}` : "", gained.length > 0 ? `gain ${pinList(gained)}` : ""];
  return `net ${net} would ${parts.filter(Boolean).join(" and ")}`;
}

/** Pins for a message: the first few, naturally sorted, and how many more. */
export function pinList(pins: string[]): string {
  const sorted = [...pins].sort(naturalCompare);
  return sorted.length > 6 ? `${sorted.slice(0, 6).join(", ")} and ${sorted.length - 6} more` : sorted.join(", ");
}
