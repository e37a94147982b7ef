/** Comparing netlists in tests, with a failure message a person can act on. */
import type { Netlist, NetNode } from "../../src/kicad/netlist/netlist.ts";

function describeNode(node: NetNode): string {
  return `${node.ref}.${node.pin} [${node.pinfunction ?? "-"} ${node.pintype ?? "-"}]`;
}

/**
 * A readable difference between KiCad's netlist and ours: nets whose names exist on one side
 * only, pins that landed in a different net, and pins whose pinfunction/pintype differ.
 */
export function netlistDiff(expected: Netlist, actual: Netlist): string[] {
  const lines: string[] = [];
  const index = (netlist: Netlist) => {
    const byPin = new Map<string, { net: string; node: NetNode }>();
    for (const net of netlist.nets)
      for (const node of net.nodes) byPin.set(`${node.ref}.${node.pin}`, { net: net.name, node });
    return byPin;
  };
  const expectedNames = new Set(expected.nets.map((n) => n.name));
  const actualNames = new Set(actual.nets.map((n) => n.name));
  for (const net of expected.nets) {
    if (!actualNames.has(net.name))
      lines.push(`missing net ${JSON.stringify(net.name)}: ${net.nodes.map(describeNode).join(", ")}`);
  }
  for (const net of actual.nets) {
    if (!expectedNames.has(net.name))
      lines.push(`unexpected net ${JSON.stringify(net.name)}: ${net.nodes.map(describeNode).join(", ")}`);
  }
  const expectedPins = index(expected);
  const actualPins = index(actual);
  for (const [pin, want] of expectedPins) {
    const got = actualPins.get(pin);
    if (!got) lines.push(`pin ${pin}: in ${JSON.stringify(want.net)} for KiCad, absent here`);
    else if (got.net !== want.net)
      lines.push(`pin ${pin}: in ${JSON.stringify(want.net)} for KiCad, in ${JSON.stringify(got.net)} here`);
    else if (describeNode(got.node) !== describeNode(want.node))
      lines.push(`pin ${describeNode(want.node)} for KiCad, ${describeNode(got.node)} here`);
  }
  for (const pin of actualPins.keys())
    if (!expectedPins.has(pin))
      lines.push(`pin ${pin}: absent for KiCad, in ${JSON.stringify(actualPins.get(pin)!.net)} here`);
  return lines;
}
