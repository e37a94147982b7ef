/**
 * Requirements `init` suggests for a fresh `docs/SPEC.md`, read off the design as it is.
 *
 * They are a starting point a person keeps, edits or deletes, so each one must pass on the
 * design that produced it — a spec that fails the moment it is written teaches people to
 * ignore the gate. That is why they are built only from facts the evaluator sees the same way
 * (net names from the native netlist, pins with unique numbers, every drawn component) and
 * why counts and sizes use `>=` / `<=` bounds rather than equalities.
 */
import type { Design } from "../design/design.ts";
import { naturalCompare } from "../util/natural-compare.ts";

export interface SuggestedRequirement {
  id: string;
  text: string;
  /** Rule texts in the §3 grammar, without the `check:` prefix. */
  checks: string[];
}

export function suggestRequirements(design: Design): SuggestedRequirement[] {
  const out: SuggestedRequirement[] = [];
  const powerNets = powerNetNames(design);
  if (powerNets.length > 0) {
    out.push({
      id: "REQ-PWR-1",
      text: `The power nets ${listWords(powerNets)} exist.`,
      checks: powerNets.map((net) => `net ${net} exists`),
    });
  }
  const pin = connectorPowerPin(design, new Set(powerNets));
  if (pin) {
    out.push({
      id: "REQ-CON-1",
      text: `Connector ${pin.ref} keeps pin ${pin.pin} on ${pin.net}.`,
      checks: [`${pin.ref}.${pin.pin} on ${pin.net}`],
    });
  }
  const family = largestRefFamily(design);
  if (family) {
    out.push({
      id: "REQ-BOM-1",
      text: `The design keeps at least ${family.count} \`${family.prefix}*\` parts.`,
      checks: [`count ${family.prefix}* >= ${family.count}`],
    });
  }
  const box = design.board?.edgeCutsBBox();
  if (box) {
    const width = roundUpMm(box.maxX - box.minX);
    const height = roundUpMm(box.maxY - box.minY);
    out.push({
      id: "REQ-MECH-1",
      text: `The board outline fits within ${width} x ${height} mm.`,
      checks: [`board width <= ${width}mm`, `board height <= ${height}mm`],
    });
  }
  return out;
}

/** Nets named by global power symbols (GND, +3V3, VBUS, …) that the netlist really has. */
function powerNetNames(design: Design): string[] {
  const netNames = new Set(design.netlist.nets.map((n) => n.name));
  const names = new Set<string>();
  for (const instance of design.schematic.instances) {
    for (const symbol of instance.file.symbols) {
      if (symbol.lib?.power !== "global") continue;
      const value = symbol.fields.find((f) => f.name === "Value")?.value;
      if (value && netNames.has(value)) names.add(value);
    }
  }
  return [...names].sort(naturalCompare);
}

/**
 * A connector pin on a power net: the kind of interface fact a spec should pin down. A supply
 * rail is preferred to ground, and only pin numbers that occur once on the part are used, so
 * `J1.A9` can mean one pin only.
 */
function connectorPowerPin(
  design: Design,
  powerNets: Set<string>,
): { ref: string; pin: string; net: string } | undefined {
  const connectors = design.components.filter(
    (c) => c.onBoard && (/^(J|P|CN)\d/.test(c.ref) || c.libId.startsWith("Connector")),
  );
  let ground: { ref: string; pin: string; net: string } | undefined;
  for (const c of connectors) {
    const pins = design.netlist.nets.flatMap((net) =>
      net.nodes.filter((n) => n.ref === c.ref).map((n) => ({ pin: n.pin, net: net.name })),
    );
    const counts = new Map<string, number>();
    for (const p of pins) counts.set(p.pin, (counts.get(p.pin) ?? 0) + 1);
    const usable = pins.filter((p) => powerNets.has(p.net) && counts.get(p.pin) === 1 && /^[A-Za-z0-9_]+$/.test(p.pin));
    usable.sort((a, b) => naturalCompare(a.pin, b.pin));
    const rail = usable.find((p) => !/GND/i.test(p.net));
    if (rail) return { ref: c.ref, ...rail };
    if (!ground && usable[0]) ground = { ref: c.ref, ...usable[0] };
  }
  return ground;
}

/** The designator prefix with the most components (ties: the first in natural order). */
function largestRefFamily(design: Design): { prefix: string; count: number } | undefined {
  const counts = new Map<string, number>();
  for (const c of design.components) {
    const prefix = /^([A-Z]+)\d+$/.exec(c.ref)?.[1];
    if (prefix) counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
  }
  let best: { prefix: string; count: number } | undefined;
  for (const [prefix, count] of [...counts].sort((a, b) => naturalCompare(a[0], b[0]))) {
    if (!best || count > best.count) best = { prefix, count };
  }
  return best;
}

/** Millimetres rounded up to 0.1 mm, so the bound always holds for the outline measured. */
function roundUpMm(mm: number): number {
  return Math.ceil(Math.round(mm * 1e6) / 1e5) / 10;
}

function listWords(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}
