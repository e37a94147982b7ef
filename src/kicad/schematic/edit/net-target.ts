/**
 * How a connection names its net: a power symbol, a global label or a local label, chosen from
 * how the design already names that net, and what that landing occupies at the end of a stub
 * (the room `addComponent` and `moveSymbol` keep for it, and what `connect` draws).
 */
import { CopperheadError } from "../../../errors.ts";
import { lookupNet, resolveNet } from "../../netlist/net-names.ts";
import { sheetPinKey } from "../../netlist/netlist.ts";
import { placePoint, toIU, type PlacementIu, type PointIu } from "../geometry.ts";
import type { LabelShape } from "../item-nodes.ts";
import { routeBoxes, stubRoutes, type Landing } from "./routing.ts";
import {
  freshFieldBoxes,
  labelBox,
  libUnitBox,
  placeBox,
  pinOutwardLib,
  placeDirection,
  pointBox,
  translate,
  type Box,
} from "../space.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import { fieldValue, hiddenPowerNet, type PlacedSymbol } from "../model/symbols.ts";
import type { SheetWiring } from "../wiring.ts";
import type { Line } from "../model/sheet-items.ts";
import { child, cloneNode, type SList } from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { libSymbolView, symbolFields, tryResolve } from "./lib-symbols.ts";
import { copyFieldLook } from "./field-layout.ts";

/** KiCad's names for nets no label, power symbol or sheet pin names (kicad/netlist/netlist.ts). */
const UNNAMED = /^(Net|unconnected)-\(/;

/** How `connect` names the net at the end of its stub. */
export type NamedTarget =
  | {
      kind: "power";
      libId: string;
      def: () => SList;
      value: string;
      expected: string;
      /** How the symbol stands: as its library draws it, a negative rail's hanging below its pin (see `standing`). */
      rotation: number;
      /** One of the design's symbols of this name, whose field look a new one takes. */
      example?: PlacedSymbol;
    }
  | { kind: "global"; text: string; shape: LabelShape; expected: string }
  | { kind: "local"; text: string; expected: string };

/**
 * How `connect` reaches its net: by name (`NamedTarget`), or, for a net nothing names (KiCad
 * makes up `Net-(D1-K)` after one of its pins), by a wire alone: no label joins such a net, only
 * a wire to its pins or wiring on the sheet. `member` is one of its pins, by which the net is
 * known again after the wire joins it (its made-up name may then follow the new pin).
 */
export type NetTarget = NamedTarget | { kind: "wire"; expected: string; member: { ref: string; pin: string } };

/**
 * How a connection to `net` from a pin on `instance` names it: the power symbol the design
 * (or the `power` library) has for it, a global label when global labels name it, else a
 * local label (`/Sheet/NAME` or a short name: a local net of the pin's own sheet).
 */
export function netTarget(state: EditorState, net: string, instance: SheetInstance, ref: string): NamedTarget;
export function netTarget(
  state: EditorState,
  net: string,
  instance: SheetInstance,
  ref: string,
  options: { byWire: true },
): NetTarget;
export function netTarget(
  state: EditorState,
  net: string,
  instance: SheetInstance,
  ref: string,
  options: { byWire?: boolean } = {},
): NetTarget {
  if (net.startsWith("/")) {
    const base = net.slice(instance.humanPath.length);
    if (!net.startsWith(instance.humanPath) || base === "" || base.includes("/")) {
      const carried = carriedName(instance, net) ?? portFor(state, instance, net) ?? nameHere(state, instance, net);
      if (carried) return { kind: "local", text: carried, expected: net };
      throw new CopperheadError(
        "edit_conflict",
        `${net} is a local net of sheet ${net.slice(0, net.lastIndexOf("/") + 1)}, and no name on sheet ${instance.humanPath}, where ${ref} is, joins it: local nets cross sheets only through sheet pins.`,
        {
          fix: `Put the part on sheet ${net.slice(0, net.lastIndexOf("/") + 1)} (add_component with sheet, or near a part there) and connect it there, or use a global name (no leading /) for a net meant to cross sheets.`,
          net,
          sheet: instance.humanPath,
        },
      );
    }
    return { kind: "local", text: base, expected: net };
  }
  if (net === "")
    throw new CopperheadError("usage", "A net name is required.", { fix: "Pass the net name, e.g. GND or /LED_A." });
  const designs = designPowerSymbols(state, net, instance);
  if (designs.length > 0) {
    const example = designs[0]!;
    const own = (instance.file.libSymbols.get(example.libKey) ?? example.lib!).node;
    return {
      kind: "power",
      libId: example.libKey,
      value: net,
      expected: net,
      def: () => cloneNode(own),
      rotation: standing(own, net),
      example,
    };
  }
  for (const file of state.project.files.values()) {
    const label = file.labels.find((l) => l.kind === "global" && l.text === net);
    if (label) return { kind: "global", text: net, shape: (label.shape ?? "passive") as LabelShape, expected: net };
  }
  const libId = `power:${net}`;
  const def = /^[+-]?[\w.]+$/.test(net) ? tryResolve(state, libId) : undefined;
  if (def && child(def, "power"))
    return { kind: "power", libId, value: net, expected: net, def: () => def, rotation: standing(def, net) };
  // A short name means the one local net it names (see kicad/netlist/net-names.ts), else a new net here.
  const own = instance.humanPath + net;
  const found = lookupNet(
    state.netlist().nets.map((n) => n.name),
    net,
  );
  if (found.kind === "found" && UNNAMED.test(found.name)) {
    const nodes = state.netlist().nets.find((n) => n.name === found.name)!.nodes;
    const pin = nodes[0];
    // A pin of type no-connect, or flagged so, is never joined (KiCad writes its type `…+no_connect`).
    const open = nodes.find((n) => !/(^|\+)no_connect$/.test(n.pintype ?? ""));
    if (options.byWire && open) return { kind: "wire", expected: found.name, member: { ref: open.ref, pin: open.pin } };
    throw new CopperheadError(
      "edit_conflict",
      `${found.name} is the name KiCad makes up for a net that nothing names${pin ? ` (after ${pin.ref} pin ${pin.pin})` : ""}: ${options.byWire ? "its pins are marked not to be connected" : "a label of that text would start a new net instead of joining it, and the name changes as parts join the net"}. Nothing was written.`,
      {
        fix: "Connect to a named net instead (list_nets lists them), or refuse and say that the net needs a name.",
        net: found.name,
      },
    );
  }
  if (found.kind === "found" && found.name.startsWith("/") && found.name !== own)
    return netTarget(state, found.name, instance, ref);
  if (found.kind === "ambiguous" && !found.candidates.includes(own)) resolveNet(found.candidates, net);
  // A net new to the design that this sheet carries from its parent has no pins to be found by yet.
  const fromParent = instance.parent && instance.parent.humanPath + net;
  if (fromParent && found.kind !== "found" && carriedName(instance, fromParent))
    return { kind: "local", text: net, expected: fromParent };
  return { kind: "local", text: net, expected: own };
}

/**
 * The name under which `instance` carries `net`, a local net of a sheet above it: a
 * hierarchical label of its sheet and a pin of its sheet symbol of the name its parent knows the
 * net by (its short name there, or the name the parent itself carries it under), as `add_sheet`
 * carries a net. A label of that name on the sheet joins it; what the label then joins is
 * proven against the netlist by the edit that places it.
 */
function carriedName(instance: SheetInstance, net: string): string | undefined {
  const parent = instance.parent;
  if (!parent) return undefined;
  const local = net.startsWith(parent.humanPath) ? net.slice(parent.humanPath.length) : "";
  const name = local !== "" && !local.includes("/") ? local : carriedName(parent, net);
  if (name === undefined) return undefined;
  const labelled = instance.file.labels.some((l) => l.kind === "hierarchical" && l.text === name);
  return labelled && instance.sheet?.pins.some((p) => p.name === name) ? name : undefined;
}

/**
 * The hierarchical label by which `instance` takes `net`, a net of the sheets above, through a
 * pin of its sheet symbol, whatever names it there (the parent's `out1` wired to the sheet's
 * port `out`): the pin's net on the parent's side is `net` (the netlist's `sheetPinNets`).
 */
function portFor(state: EditorState, instance: SheetInstance, net: string): string | undefined {
  const { parent, sheet } = instance;
  if (!parent || !sheet) return undefined;
  const nets = state.netlist().sheetPinNets;
  const pin = sheet.pins.find((p) => nets.get(sheetPinKey(parent, sheet.uuid, p.name)) === net);
  return pin && instance.file.labels.some((l) => l.kind === "hierarchical" && l.text === pin.name)
    ? pin.name
    : undefined;
}

/**
 * The label text that names `net`, a local net of another sheet, on `instance`'s sheet too:
 * a label there of the same name whose net a stronger name drives (a bus member carried down
 * under its member name, `DIG.D11` on both sheets, is one net named after the other sheet). A
 * label of that name that is a net of this sheet's own is another net. The connection's check
 * against the netlist proves the outcome either way.
 */
function nameHere(state: EditorState, instance: SheetInstance, net: string): string | undefined {
  const name = net.slice(net.lastIndexOf("/") + 1);
  const labelled = instance.file.labels.some((l) => l.kind !== "global" && l.text === name);
  const own = state.netlist().nets.some((n) => n.name === instance.humanPath + name);
  return labelled && !own ? name : undefined;
}

/** A negative supply: its pin faces down, its symbol hangs below the part. */
const NEGATIVE_RAIL = /^(-|VEE)/i;

/**
 * How a power symbol for `net` stands: as its library draws it, but a negative rail's turned
 * over when drawn above its pin (KiCad's own `-12V` points up like `+12V`), so it hangs below
 * the part's pin, which then faces down.
 */
function standing(def: SList, net: string): number {
  if (!NEGATIVE_RAIL.test(net)) return 0;
  const pin = libSymbolView(def).pins[0];
  const body = libUnitBox(def, 1, 1);
  if (!pin || !body) return 0;
  const upright: PlacementIu = { at: { x: 0, y: 0 }, rotation: 0 };
  const drawn = placeBox(body, upright);
  return (drawn.y0 + drawn.y1) / 2 < placePoint(pin.at, upright).y ? 180 : 0;
}

/**
 * The design's global power symbols of `net` (a vendor's without the power flag, which names
 * the net by its hidden power pin, included: see `hiddenPowerNet`), embedded under their lib
 * id, those on `instance`'s sheet first: a new one reuses their embedded library symbol and
 * shows its text as they do. Where the library changed since the sheet was saved, eeschema would embed the
 * library's beside it as a renamed copy (`+12V_1`), a second symbol for one rail; the new
 * symbol instead differs from the library exactly as the design's others do, which the
 * baseline knows is no new finding (checks/baseline.ts, `sameLibraryDifference`).
 */
function designPowerSymbols(state: EditorState, net: string, instance: SheetInstance): PlacedSymbol[] {
  const found: PlacedSymbol[] = [];
  for (const file of [instance.file, ...[...state.project.files.values()].filter((f) => f !== instance.file)]) {
    for (const symbol of file.symbols) {
      const names =
        symbol.lib?.power === "global" ? fieldValue(symbol, "Value") === net : hiddenPowerNet(symbol) === net;
      if (names && symbol.libKey === symbol.libId) found.push(symbol);
    }
  }
  return found;
}

/** Connection points of `target`'s net on a sheet (pins, power symbols, labels), the pins of `except` (the part being wired) aside. */
export function netPoints(
  state: EditorState,
  target: NetTarget,
  wiring: SheetWiring,
  except?: PlacedSymbol,
): PointIu[] {
  const net = state.netlist().nets.find((n) => n.name === target.expected);
  const onNet = new Set((net?.nodes ?? []).map((n) => `${n.ref}\u0000${n.pin}`));
  const points: PointIu[] = [];
  for (const pin of wiring.pins) {
    if (pin.symbol === except) continue;
    if (onNet.has(`${pin.reference}\u0000${pin.lib.number}`)) points.push(pin.at);
    else if (pin.power && target.kind === "power" && fieldValue(pin.symbol, "Value") === target.value)
      points.push(pin.at);
  }
  for (const label of wiring.file.labels) {
    if (target.kind === "local" && label.kind !== "global" && label.text === target.text) points.push(label.at);
    if (target.kind === "global" && label.kind === "global" && label.text === target.text) points.push(label.at);
  }
  // A pin flagged no-connect is unused on purpose: a wire to it would contradict the flag.
  return points.filter((p) => wiring.noConnectsAt(p).length === 0);
}

/**
 * Where a wire from a pin at `tip` pointing `outward` may join the net's wires (those reached
 * from `points`): their ends, and the points on them straight ahead of the pin, met square (a
 * T, marked by a junction). An EEPROM's three address pins tied to one rail join the first
 * one's wire, as a designer draws them, where a stub and power symbol each had no room.
 */
export function wireJoins(wiring: SheetWiring, points: PointIu[], tip: PointIu, outward: PointIu): PointIu[] {
  const reached = netWires(wiring, points);
  const ahead: PointIu[] = [...reached].flatMap((w) => [w.a, w.b]);
  for (const { a, b } of reached) {
    const across = outward.x !== 0 ? a.x === b.x : a.y === b.y;
    if (!across) continue;
    const meet = outward.x !== 0 ? { x: a.x, y: tip.y } : { x: tip.x, y: a.y };
    const [lo, hi] =
      outward.x !== 0 ? [Math.min(a.y, b.y), Math.max(a.y, b.y)] : [Math.min(a.x, b.x), Math.max(a.x, b.x)];
    const along = outward.x !== 0 ? meet.y : meet.x;
    if (along < lo || along > hi) continue;
    if ((meet.x - tip.x) * outward.x + (meet.y - tip.y) * outward.y > 0) ahead.push(meet);
  }
  return ahead;
}

/** The wires joined to `points` (through their ends, or passing through them). */
function netWires(wiring: SheetWiring, points: PointIu[]): Set<Line> {
  const reached = new Set<Line>();
  const queue = [...points];
  while (queue.length > 0) {
    const p = queue.pop()!;
    for (const wire of [...wiring.wiresEndingAt(p), ...wiring.linesThrough(p)]) {
      if (reached.has(wire) || !wiring.file.wires.includes(wire)) continue;
      reached.add(wire);
      queue.push(wire.a, wire.b);
    }
  }
  return reached;
}

/**
 * Every point on the grid `step` along the net's wires (those reached from `points`), where a
 * new wire may meet them in a T: what a net nothing names offers a new part besides its pins,
 * since no label can join it. Only wires across or down the sheet; their ends included.
 */
export function wireGridPoints(wiring: SheetWiring, points: PointIu[], step: number): PointIu[] {
  const out: PointIu[] = [];
  for (const { a, b } of netWires(wiring, points)) {
    if (a.x !== b.x && a.y !== b.y) continue;
    const length = Math.abs(b.x - a.x) + Math.abs(b.y - a.y);
    const d = { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
    for (let k = 0; k * step <= length; k++) out.push({ x: a.x + d.x * k * step, y: a.y + d.y * k * step });
    out.push(b);
  }
  return out;
}

/** What a new pin's connection ends in: a power symbol standing as `NetTarget` says (boxes relative to its pin), a label, or only the wire that joins an unnamed net. */
export type PinLanding =
  | { kind: "power"; boxes: Box[]; arrive: PointIu }
  | { kind: "label"; text: string; flagged: boolean }
  | { kind: "wire" };

/** What a connection to `target` ends in, relative to the stub's end. */
export function landingOf(target: NetTarget): PinLanding {
  if (target.kind === "wire") return { kind: "wire" };
  if (target.kind !== "power") return { kind: "label", text: target.text, flagged: target.kind === "global" };
  const def = target.def();
  const lib = libSymbolView(def);
  const pin = lib.pins[0]!;
  const standing: PlacementIu = { at: { x: 0, y: 0 }, rotation: target.rotation };
  const offset = placePoint(pin.at, standing);
  const placement: PlacementIu = { at: { x: -offset.x, y: -offset.y }, rotation: target.rotation };
  const out = placeDirection(pinOutwardLib(pin.orientation), standing);
  const body = libUnitBox(def, 1, 1);
  const drawn = body ? placeBox(body, placement) : undefined;
  const boxes = [
    drawn ?? pointBox({ x: 0, y: 0 }, toIU(1.27)),
    ...freshFieldBoxes(powerSymbolFields(def, placement, { Value: target.value }, target.example), placement),
  ];
  // The wire arrives from the side away from the drawing: power pins have no length, and
  // older libraries give them any orientation (a pre-KiCad 6 GND points its pin up while its
  // triangle hangs below), so the drawing says which way the symbol stands.
  return { kind: "power", boxes, arrive: (drawn && towards(drawn)) ?? { x: -out.x, y: -out.y } };
}

/** The fields of a new power symbol: the library's, with the look of the design's others of its name (`example`). */
export function powerSymbolFields(
  def: SList,
  placement: PlacementIu,
  values: Record<string, string>,
  example: PlacedSymbol | undefined,
): SList[] {
  const fields = symbolFields(def, placement, values);
  if (example) copyFieldLook(fields, example);
  return fields;
}

/** Room for the stub and power symbol or label a pin at `tip` will get (its preferred route). */
export function plannedWiring(tip: PointIu, outward: PointIu, landing: PinLanding): Box[] {
  const route = stubRoutes(tip, outward, landing.kind === "power" ? landing.arrive : undefined)[0]!;
  const end = route.points[route.points.length - 1]!;
  const landed =
    landing.kind === "label"
      ? labelLanding(landing, route.points).boxes
      : landing.kind === "power"
        ? landing.boxes
        : [];
  return [...routeBoxes(route.points), ...landed.map((b) => translate(b, end))];
}

/** A label at the end of `points`, reading away from the last leg. */
export function labelLanding(landing: Extract<PinLanding, { kind: "label" }>, points: PointIu[]): Landing {
  return { boxes: [labelBox({ x: 0, y: 0 }, landing.text, labelAngle(lastLeg(points)), landing.flagged)] };
}

/** Unit direction of a polyline's last segment. */
export function lastLeg(points: PointIu[]): PointIu {
  const a = points[points.length - 2]!;
  const b = points[points.length - 1]!;
  return { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
}

/** Angle of a label at the end of a stub running along `d`, so it reads away from the wire. */
export function labelAngle(d: PointIu): number {
  if (d.x < 0) return 180;
  if (d.y < 0) return 90;
  if (d.y > 0) return 270;
  return 0;
}

/** The axis direction from the origin to the middle of `box`; undefined when it is centred there. */
function towards(box: Box): PointIu | undefined {
  const x = (box.x0 + box.x1) / 2;
  const y = (box.y0 + box.y1) / 2;
  if (x === 0 && y === 0) return undefined;
  return Math.abs(y) >= Math.abs(x) ? { x: 0, y: Math.sign(y) } : { x: Math.sign(x), y: 0 };
}
