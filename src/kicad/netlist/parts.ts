/**
 * What the netlist says about parts as neighbours: the nets a part is on, and the part a new
 * one belongs beside (in the schematic, and on the board when its footprint is placed).
 */
import { naturalCompare } from "../../util/natural-compare.ts";
import type { Netlist } from "./netlist.ts";

/** The nets a part's pins are on. */
export function netsOf(netlist: Netlist, ref: string): string[] {
  return netlist.nets.filter((n) => n.nodes.some((node) => node.ref === ref)).map((n) => n.name);
}

/** The part with the most pins on `nets` (signal nets weigh more than power nets), then the biggest. */
export function bestPartOn(netlist: Netlist, nets: string[], allowed: (ref: string) => boolean): string | undefined {
  const score = new Map<string, { shared: number; pins: number }>();
  const pinCount = new Map<string, number>();
  for (const net of netlist.nets)
    for (const node of net.nodes) pinCount.set(node.ref, (pinCount.get(node.ref) ?? 0) + 1);
  for (const name of nets) {
    const net = netlist.nets.find((n) => n.name === name);
    if (!net) continue;
    const weight = name.startsWith("/") ? 3 : 1;
    for (const ref of new Set(net.nodes.map((n) => n.ref))) {
      if (!allowed(ref)) continue;
      const s = score.get(ref) ?? { shared: 0, pins: pinCount.get(ref) ?? 0 };
      s.shared += weight;
      score.set(ref, s);
    }
  }
  return [...score].sort(([a, x], [b, y]) => y.shared - x.shared || y.pins - x.pins || naturalCompare(a, b))[0]?.[0];
}
