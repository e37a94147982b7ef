/**
 * Evaluates requirement rules against the design: the native netlist, the merged components
 * and the board outline. Pure and deterministic; `actual` is a sentence a reviewer reads, in
 * the same shape whether the rule passes or fails (`R3.value is 1k, expected >= 680`).
 *
 * Decisions:
 * - Net names match exactly; a name without a leading `/` also finds the root sheet's local
 *   net of that name, so `net CC1 exists` finds `/CC1` as KiCad names it. An exact match wins.
 * - `<REF>.<PIN>` tries pin numbers first, then pin names. When several pins share the name
 *   (`J1.GND` is A12 and B12), the rule holds only if every one of them is on the net.
 * - Field names match exactly first, then case-insensitively: `value`, `Value` and `VALUE`
 *   are the Value field.
 * - Components are every referenced symbol (power symbols and flags excluded), DNP and
 *   not-in-BOM parts included: `count` and `exists` ask what is drawn, not what is fitted.
 * - Board lengths compare in whole nanometres, KiCad's internal unit, so `40mm` equals a
 *   40 mm outline despite floating-point subtraction.
 */
import type { Design } from "../design/design.ts";
import type { Component } from "../kicad/netlist/components.ts";
import { naturalCompare } from "../util/natural-compare.ts";
import type { Net, NetNode } from "../kicad/netlist/netlist.ts";
import { globMatch } from "../util/glob.ts";
import type { Op, Rule } from "./requirements.ts";
import { compareQuantities, parseQuantity } from "./units.ts";

export interface RuleEvaluation {
  pass: boolean;
  actual: string;
}

interface DesignIndex {
  components: Map<string, Component>;
  nets: Map<string, Net>;
  pins: Map<string, { node: NetNode; net: string }[]>;
}

const indexes = new WeakMap<Design, DesignIndex>();

/** Lookup tables built once per loaded design, however many rules a spec holds. */
function indexOf(design: Design): DesignIndex {
  const cached = indexes.get(design);
  if (cached) return cached;
  const index: DesignIndex = { components: new Map(), nets: new Map(), pins: new Map() };
  for (const c of design.components) index.components.set(c.ref, c);
  for (const net of design.netlist.nets) {
    index.nets.set(net.name, net);
    for (const node of net.nodes) {
      const list = index.pins.get(node.ref) ?? [];
      list.push({ node, net: net.name });
      index.pins.set(node.ref, list);
    }
  }
  indexes.set(design, index);
  return index;
}

function findNet(index: DesignIndex, name: string): Net | undefined {
  return index.nets.get(name) ?? (name.startsWith("/") ? undefined : index.nets.get(`/${name}`));
}

export function evaluateRule(rule: Rule, design: Design): RuleEvaluation {
  const index = indexOf(design);
  switch (rule.kind) {
    case "net": {
      const net = findNet(index, rule.net);
      const shown = net && net.name !== rule.net ? ` (as ${net.name})` : "";
      if (!net) {
        const missing = `net ${rule.net} does not exist${suggestNet(index, rule.net)}`;
        return rule.expect === "exists"
          ? { pass: false, actual: missing }
          : { pass: true, actual: `net ${rule.net} is absent` };
      }
      if (rule.expect === "exists") return { pass: true, actual: `net ${rule.net} exists${shown}` };
      return { pass: false, actual: `net ${rule.net} exists${shown}, expected absent` };
    }
    case "ref": {
      const exists = index.components.has(rule.ref);
      if (rule.expect === "exists")
        return { pass: exists, actual: `${rule.ref} ${exists ? "exists" : "does not exist"}` };
      return { pass: !exists, actual: exists ? `${rule.ref} exists, expected absent` : `${rule.ref} is absent` };
    }
    case "pin":
      return evaluatePin(index, rule.ref, rule.pin, rule.net);
    case "field":
      return evaluateField(index, rule);
    case "count": {
      const matched = design.components
        .filter((c) => globMatch(rule.pattern, rule.by === "libId" ? c.libId : c.ref))
        .map((c) => c.ref);
      const list = matched.length > 0 && matched.length <= 10 ? ` (${matched.join(", ")})` : "";
      return {
        pass: holds(rule.op, order(matched.length, rule.count)),
        actual: `count ${rule.pattern} is ${matched.length}${list}, expected ${rule.op} ${rule.count}`,
      };
    }
    case "net-pins": {
      const net = findNet(index, rule.net);
      if (!net) return { pass: false, actual: `net ${rule.net} does not exist${suggestNet(index, rule.net)}` };
      const n = net.nodes.length;
      return {
        pass: holds(rule.op, order(n, rule.count)),
        actual: `net ${net.name} has ${n} pin${n === 1 ? "" : "s"}, expected ${rule.op} ${rule.count}`,
      };
    }
    case "board": {
      if (!design.board) return { pass: false, actual: "the project has no board (.kicad_pcb)" };
      const box = design.board.edgeCutsBBox();
      if (!box) return { pass: false, actual: "the board has no Edge.Cuts outline" };
      const mm = rule.dimension === "width" ? box.maxX - box.minX : box.maxY - box.minY;
      return {
        pass: holds(rule.op, order(nanometres(mm), nanometres(rule.mm))),
        actual: `board ${rule.dimension} is ${Number(mm.toFixed(4))} mm, expected ${rule.op} ${rule.length}`,
      };
    }
  }
}

function evaluatePin(index: DesignIndex, ref: string, pin: string, netName: string): RuleEvaluation {
  const component = index.components.get(ref);
  if (!component) return { pass: false, actual: `${ref} does not exist` };
  const pins = index.pins.get(ref) ?? [];
  let matched = pins.filter((p) => p.node.pin === pin);
  if (matched.length === 0) matched = pins.filter((p) => p.node.pinfunction === pin);
  if (matched.length === 0) {
    if (!component.onBoard)
      return { pass: false, actual: `${ref} is excluded from the board, so its pins are on no net` };
    const known = pins
      .map((p) => p.node)
      .sort((a, b) => naturalCompare(a.pin, b.pin))
      .map((n) => (n.pinfunction ? `${n.pin} ${n.pinfunction}` : n.pin));
    const shown = known.length > 12 ? `${known.slice(0, 12).join(", ")}, …` : known.join(", ");
    return { pass: false, actual: `${ref} has no pin ${pin} (pins: ${shown || "none"})` };
  }
  const target = findNet(index, netName)?.name ?? netName;
  const label = (p: { node: NetNode }) =>
    p.node.pin === pin
      ? `${ref}.${pin}${p.node.pinfunction ? ` (${p.node.pinfunction})` : ""}`
      : `${ref}.${pin} (pin ${p.node.pin})`;
  const off = matched.filter((p) => p.net !== target);
  const missingNet = index.nets.has(target) ? "" : " (no such net)";
  if (off.length === 0)
    return { pass: true, actual: `${matched.map(label).join(", ")} ${matched.length > 1 ? "are" : "is"} on ${target}` };
  return {
    pass: false,
    actual: `${off.map((p) => `${label(p)} is on ${p.net}`).join(", ")}, expected ${netName}${missingNet}`,
  };
}

function evaluateField(index: DesignIndex, rule: Extract<Rule, { kind: "field" }>): RuleEvaluation {
  const component = index.components.get(rule.ref);
  if (!component) return { pass: false, actual: `${rule.ref} does not exist` };
  const name =
    rule.field in component.fields
      ? rule.field
      : Object.keys(component.fields).find((k) => k.toLowerCase() === rule.field.toLowerCase());
  if (name === undefined) return { pass: false, actual: `${rule.ref} has no field ${rule.field}` };
  const text = component.fields[name]!;
  const subject = `${rule.ref}.${rule.field} is ${text === "" ? '""' : text}`;
  const expected = `expected ${rule.op} ${rule.value}`;
  const actual = rule.quantity ? parseQuantity(text) : undefined;
  if (rule.quantity && actual) {
    const compared = compareQuantities(actual, rule.quantity);
    if ("mismatch" in compared) return { pass: false, actual: `${subject}: ${compared.mismatch}; ${expected}` };
    return { pass: holds(rule.op, compared.order), actual: `${subject}, ${expected}` };
  }
  if (rule.op !== "==" && rule.op !== "!=") return { pass: false, actual: `${subject}, not a number; ${expected}` };
  return { pass: holds(rule.op, text === rule.value ? 0 : 1), actual: `${subject}, ${expected}` };
}

/** Whether `op` holds for an ordering (-1, 0, 1) of actual against expected. */
function holds(op: Op, o: number): boolean {
  switch (op) {
    case "==":
      return o === 0;
    case "!=":
      return o !== 0;
    case "<":
      return o < 0;
    case "<=":
      return o <= 0;
    case ">":
      return o > 0;
    case ">=":
      return o >= 0;
  }
}

function order(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function nanometres(mm: number): number {
  return Math.round(mm * 1e6);
}

/** Points at a net that differs only in case or sheet prefix, the usual slip in a spec. */
function suggestNet(index: DesignIndex, name: string): string {
  const bare = (n: string) => n.slice(n.lastIndexOf("/") + 1).toLowerCase();
  const close = [...index.nets.keys()].filter((n) => bare(n) === bare(name)).sort();
  return close.length > 0 ? `; did you mean ${close.join(" or ")}?` : "";
}
