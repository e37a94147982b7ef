/**
 * Which net each pad of a footprint should carry, as KiCad's `updateComponentPadConnections`
 * decides it: a pad takes the net of the symbol pin with its number when it has a number, is on
 * copper and is not a bare hole. Pins marked no-connect give every pad its own net, because
 * joining them would short pins the designer left open: the first pad (in pad-uuid order, as
 * KiCad walks them) keeps the name, the next get `_1`, `_2`, … (see `padTargets` for the two
 * cases where a board that is in sync keeps what it has).
 */
import type { Netlist } from "../netlist/netlist.ts";
import { child, text, type SList } from "../sexpr/index.ts";

/** The net a symbol pin is on, with the pin data KiCad copies onto the pad. */
export interface PinNet {
  net: string;
  pinfunction?: string;
  pintype?: string;
}

/** Pin nets of every component: ref → pin number → net. */
export type PinIndex = Map<string, Map<string, PinNet>>;

export function indexPins(netlist: Netlist): PinIndex {
  const pins: PinIndex = new Map();
  for (const net of netlist.nets) {
    for (const node of net.nodes) {
      if (!pins.has(node.ref)) pins.set(node.ref, new Map());
      pins.get(node.ref)!.set(node.pin, { net: net.name, pinfunction: node.pinfunction, pintype: node.pintype });
    }
  }
  return pins;
}

/** What a pad is, as far as net assignment cares. */
export interface PadShape {
  number: string;
  /** The pad's `(uuid …)` (or `(tstamp …)`), the order KiCad assigns no-connect names in. */
  id: string;
  onCopper: boolean;
  npth: boolean;
}

export function padShape(node: SList): PadShape {
  const layers = child(node, "layers");
  const names = layers ? layers.items.slice(1).map((_, i) => text(layers, i + 1) ?? "") : [];
  const id = child(node, "uuid") ?? child(node, "tstamp");
  return {
    number: text(node, 1) ?? "",
    id: (id && text(id, 1)) ?? "",
    onCopper: names.some((l) => l.endsWith(".Cu")),
    npth: text(node, 2) === "np_thru_hole",
  };
}

function isNoConnect(pin: PinNet): boolean {
  return pin.pintype?.includes("no_connect") === true;
}

/**
 * The net each pad should carry, index for index (undefined: no net). `current` are the pads'
 * nets now, which shape the no-connect names in two ways KiCad's parity check accepts (any
 * `unconnected-(…)` name that starts with the pin's net name matches it):
 * - pads the board already joins on one net stay joined under one name — splitting them would
 *   short them through the copper that joins them;
 * - when the names KiCad would hand out are already there in another order (a board synced by
 *   an older KiCad), they are kept: renumbering would rewrite a board that is in sync.
 */
export function padTargets(
  pads: PadShape[],
  pins: Map<string, PinNet> | undefined,
  current: (string | undefined)[] = [],
): (PinNet | undefined)[] {
  const targets: (PinNet | undefined)[] = pads.map((pad) => {
    if (!pad.number || !pad.onCopper || pad.npth) return undefined;
    return pins?.get(pad.number);
  });
  // No-connect pads by their pin's net, then by the net that joins them on the board now.
  const groups = new Map<string, Map<string, number[]>>();
  targets.forEach((pin, i) => {
    if (!pin || !isNoConnect(pin)) return;
    if (!groups.has(pin.net)) groups.set(pin.net, new Map());
    const clusters = groups.get(pin.net)!;
    const key = current[i] || `#${i}`;
    if (!clusters.has(key)) clusters.set(key, []);
    clusters.get(key)!.push(i);
  });
  const taken = new Set<string>();
  for (const [base, byNet] of groups) {
    const clusters = [...byNet.values()];
    const names = clusters.map((_, n) => uniqueName(base, n, taken));
    const now = clusters.map((members) => current[members[0]!]);
    const inOrder =
      now.every((name) => name !== undefined && names.includes(name)) && new Set(now).size === names.length;
    const order = inOrder ? now.map((name) => names.indexOf(name!)) : rankByUuid(clusters, pads);
    clusters.forEach((members, n) => {
      for (const i of members) targets[i] = { ...targets[i]!, net: names[order[n]!]! };
    });
  }
  return targets;
}

/** The n-th name handed out for `base` (`base`, `base_1`, …), skipping names already taken. */
function uniqueName(base: string, n: number, taken: Set<string>): string {
  let name = n === 0 && !taken.has(base) ? base : "";
  for (let k = 1; name === "" || taken.has(name); k++) name = `${base}_${k}`;
  taken.add(name);
  return name;
}

/** Each cluster's rank when the clusters are sorted by their first pad uuid (KiCad's walk order). */
function rankByUuid(clusters: number[][], pads: PadShape[]): number[] {
  const first = clusters.map((members) => members.map((i) => pads[i]!.id).sort()[0] ?? "");
  const sorted = clusters
    .map((_, n) => n)
    .sort((a, b) => (first[a]! < first[b]! ? -1 : first[a]! > first[b]! ? 1 : a - b));
  return clusters.map((_, n) => sorted.indexOf(n));
}

/** Pads paired with their nets, for a footprint that is added or swapped in. */
export interface PadNet {
  pad: string;
  net: string;
  pinfunction?: string;
  pintype?: string;
}

export function padNets(pads: PadShape[], targets: (PinNet | undefined)[]): PadNet[] {
  return pads.flatMap((pad, i) => {
    const t = targets[i];
    return t ? [{ pad: pad.number, net: t.net, pinfunction: t.pinfunction, pintype: t.pintype }] : [];
  });
}

/** Mismatches between a symbol's pins and a footprint's pads, for the sync's warnings. */
export function padMismatches(
  pads: PadShape[],
  pins: Map<string, PinNet> | undefined,
): { pinsWithoutPad: string[]; padsWithoutPin: string[] } {
  const numbers = new Set(pads.map((p) => p.number));
  const pinsWithoutPad = [...(pins?.keys() ?? [])].filter((pin) => !numbers.has(pin));
  const padsWithoutPin = [
    ...new Set(pads.filter((p) => p.number && p.onCopper && !p.npth && !pins?.has(p.number)).map((p) => p.number)),
  ];
  return { pinsWithoutPad, padsWithoutPin };
}
