/**
 * Connecting a pin to a net in the sheet's own style (a short wire to the net nearby, else a
 * stub ending in a power symbol or label), disconnecting it again, and marking it no-connect.
 * Each checks its outcome against the netlist and rolls back when the claim does not hold.
 */
import { CopperheadError } from "../../../errors.ts";
import { placePoint, type PlacementIu, type PointIu } from "../geometry.ts";
import { globalLabelNode, junctionNode, labelNode, lineNode, noConnectNode, placedSymbolNode } from "../item-nodes.ts";
import { SheetSpace } from "./placement.ts";
import { joinRoutes, needsJunction, routeBoxes, routeUsable, stubRoutes, type Route } from "./routing.ts";
import { blockersOf, symbolBodyBox, translate, type Box } from "../space.ts";
import { clearOwnFields, fieldBoxes } from "./field-layout.ts";
import { sheetResolver } from "../text-vars.ts";
import type { PinAt } from "../wiring.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import { symbolInstance, type PlacedSymbol } from "../model/symbols.ts";
import { removeChild, type SList } from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { findPin, netOfPin, newReferences } from "./lookup.ts";
import { ensureLibSymbol, instancePinNumbers, libSymbolView, referencePrefix } from "./lib-symbols.ts";
import { applyPlan, insertItem, placeSymbol, splitWiresAt, toMm } from "./sheet-tree.ts";
import { pinsRegrouped } from "./net-check.ts";
import {
  labelAngle,
  labelLanding,
  landingOf,
  lastLeg,
  netPoints,
  netTarget,
  wireJoins,
  wireGridPoints,
  powerSymbolFields,
  type NetTarget,
} from "./net-target.ts";

/**
 * Attaches a free pin to `net` in the sheet's style: a short wire to a pin, label or power
 * symbol of the net nearby when the way is free; otherwise a wire stub ending in an upright
 * power symbol (power nets: supply up, ground down, the stub bending when the pin faces
 * elsewhere), a global label (nets named by global labels) or a local label. `/Sheet/NAME`
 * names a local net of that sheet. A pin already on `net` is left alone; a pin wired to
 * anything else must be disconnected first.
 */
export function connect(state: EditorState, ref: string, pin: string, net: string): void {
  const hit = findPin(state, ref, pin);
  const target = netTarget(state, net, hit.instance, ref, { byWire: true });
  const wiring = state.wiring(hit.instance);
  const self = (p: PinAt) => p.symbol === hit.symbol && p.lib === hit.lib;
  if (wiring.attached(hit.tip, self)) {
    const current = netOfPin(state, ref, hit.lib.number);
    if (current === target.expected) return;
    throw new CopperheadError(
      "edit_conflict",
      `${ref} pin ${hit.lib.number} is already connected (to net ${current ?? "?"}).`,
      {
        fix: `Call disconnect on ${ref} pin ${hit.lib.number} first, then connect it to ${net}.`,
        ref,
        pin: hit.lib.number,
        net: current,
      },
    );
  }
  // The pin's own drawing reaches past its tip on some symbols (an LED's light arrows), and a
  // wire leaving the pin outward never crosses the symbol it belongs to. Nor do the part's own
  // fields block it: a field in the way is moved clear afterwards (`clearOwnFields`).
  const ownFields = fieldBoxes(hit.symbol, sheetResolver(hit.instance.file));
  wireToNet(
    state,
    {
      instance: hit.instance,
      tip: hit.tip,
      outward: hit.outward,
      what: `${ref} pin ${hit.lib.number}`,
      own: [symbolBodyBox(hit.symbol), ...ownFields.map((f) => f.box)],
      symbol: hit.symbol,
      fields: ownFields,
      fix: "Move the part (move_symbol) or one of those items and retry, or connect another pin; view the sheet around the part to see it.",
      details: { ref, pin: hit.lib.number },
    },
    net,
    target,
    () =>
      expectPinOnNet(
        state,
        ref,
        hit.lib.number,
        // An unnamed net is the one its member pin is on now: its made-up name may follow the new pin.
        target.kind === "wire"
          ? (netOfPin(state, target.member.ref, target.member.pin) ?? target.expected)
          : target.expected,
        hit.symbol,
      ),
  );
}

/** A free connection point to wire to a net: a part's pin, or a sheet symbol's pin. */
export interface WireEnd {
  instance: SheetInstance;
  tip: PointIu;
  /** Unit step (IU) pointing away from what it belongs to. */
  outward: PointIu;
  /** How an error names it ("R1 pin 2", "sheet pin SDA of EEPROM"). */
  what: string;
  /** What it belongs to as drawn (its part's body and fields, its sheet symbol): the wire leaving it may cross those. */
  own: Box[];
  /** The part it is a pin of: its other pins are no target and it no blocker. */
  symbol?: PlacedSymbol;
  /** The fields of that part, moved clear of the wiring afterwards. */
  fields?: { node: SList; box: Box }[];
  /** What a refusal suggests. */
  fix: string;
  /** Said in a refusal's details. */
  details: Record<string, string>;
}

/**
 * Wires `end` to `target` (the net `net`), in the sheet's style: a short wire to the net
 * nearby when the way is free, else a stub ending in a power symbol or label; `check` then
 * proves the outcome against the netlist (the edit is rolled back when it throws).
 */
export function wireToNet(state: EditorState, end: WireEnd, net: string, target: NetTarget, check?: () => void): void {
  const space = new SheetSpace(end.instance.file, { boxes: end.own });
  const wiring = state.wiring(end.instance);
  const landing = landingOf(target);
  // An unnamed net has no name to put at a stub's end: only a wire to it joins it.
  const stubs =
    landing.kind === "wire"
      ? []
      : stubRoutes(end.tip, end.outward, landing.kind === "power" ? landing.arrive : undefined);
  const landed = (r: Route) =>
    landing.kind === "power" ? landing : landing.kind === "label" ? labelLanding(landing, r.points) : undefined;
  // Best: a short wire to the net; then a stub whose landing is free; last, on a crowded
  // sheet, the shortest stub that touches nothing, even if its label or symbol crowds a text.
  const points = netPoints(state, target, wiring, end.symbol);
  // A net nothing names is met anywhere along its wiring (as add_component's placement plans it).
  const along = target.kind === "wire" ? wireGridPoints(wiring, points, space.grid) : [];
  const route =
    joinRoutes(end.tip, end.outward, [...points, ...wireJoins(wiring, points, end.tip, end.outward), ...along]).find(
      (r) => routeUsable(r, wiring, space, undefined),
    ) ??
    stubs.find((r) => routeUsable(r, wiring, space, landed(r))) ??
    stubs.find((r) => routeUsable(r, wiring, space, undefined));
  if (!route && target.kind === "wire") {
    throw new CopperheadError(
      "edit_conflict",
      `No wire reaches ${target.expected} from ${end.what} on sheet ${end.instance.humanPath}: nothing names that net, so no label or power symbol can join it, and ${points.length === 0 ? "none of its pins or wires is on this sheet" : "no short way to its pins or wires here is free"}. Nothing was written.`,
      {
        fix: `Place the part next to a pin of that net (add_component or move_symbol near ${target.member.ref}) and connect again, or refuse and say that the net needs a name.`,
        ...end.details,
        net: target.expected,
      },
    );
  }
  if (!route) {
    const probes = stubs.flatMap((r) => [
      ...routeBoxes(r.points),
      ...(landed(r)?.boxes ?? []).map((b) => translate(b, r.points[r.points.length - 1]!)),
    ]);
    const blockers = blockersOf(end.instance.file, probes, 0, end.symbol && new Set([end.symbol]));
    throw new CopperheadError(
      "edit_conflict",
      `No room to connect ${end.what} to ${net} on sheet ${end.instance.humanPath}: every way out of it at (${toMm(end.tip).join(", ")}) is blocked${blockers.length > 0 ? ` by ${blockers.join("; ")}` : ""}. Nothing was written.`,
      { fix: end.fix, ...end.details, blockers },
    );
  }
  const file = end.instance.file;
  const last = route.points[route.points.length - 1]!;
  state.edit(
    state.withInstanceRows(file),
    () => {
      for (const node of wiring.noConnectsAt(end.tip)) removeChild(file.doc.root, node);
      for (let i = 1; i < route.points.length; i++)
        insertItem(file, lineNode("wire", toMm(route.points[i - 1]!), toMm(route.points[i]!), file.newUuid()));
      if (route.join) {
        if (needsJunction(wiring, last)) {
          splitWiresAt(file, wiring, last);
          insertItem(file, junctionNode(toMm(last), file.newUuid()));
        }
      } else if (target.kind === "power") placePowerSymbol(state, end.instance, target, last);
      else if (target.kind !== "wire") {
        const angle = labelAngle(lastLeg(route.points));
        if (target.kind === "local") insertItem(file, labelNode(target.text, toMm(last), angle, file.newUuid()));
        else insertItem(file, globalLabelNode(target.text, toMm(last), target.shape, angle, file.newUuid()));
      }
      if (end.symbol && end.fields)
        clearOwnFields(
          end.fields,
          [
            ...routeBoxes(route.points),
            ...(route.join ? [] : (landed(route)?.boxes ?? []).map((b) => translate(b, last))),
          ],
          space,
          symbolBodyBox(end.symbol),
        );
    },
    check,
  );
}

/**
 * Cuts a pin loose: the stub and label `connect` made (or any wires that lead only to labels,
 * power symbols or nothing) go; a wire into a larger net is cut back to where it meets it.
 */
export function disconnect(state: EditorState, ref: string, pin: string): void {
  const hit = findPin(state, ref, pin);
  const wiring = state.wiring(hit.instance);
  const plan = wiring.planDetach(hit.tip, (p) => p.symbol === hit.symbol && p.lib === hit.lib, "disconnect");
  if (plan.conflict) {
    throw new CopperheadError("edit_conflict", `Cannot disconnect ${ref} pin ${hit.lib.number}: ${plan.conflict}.`, {
      fix: "Disconnect the other pins of that wiring instead, or refuse and say which wiring is in the way.",
      ref,
      pin: hit.lib.number,
    });
  }
  if (plan.remove.size === 0 && plan.moves.length === 0 && plan.trims.length === 0) return;
  const before = state.netlist();
  state.edit(
    [hit.instance.file],
    () => applyPlan(hit.instance.file, plan, new Set()),
    () => {
      // The pin leaves its net in every instance of its sheet; every other pin keeps its net-mates.
      const cut = state
        .instancesOf(hit.instance.file)
        .map((i) => `${symbolInstance(hit.symbol, i.path, state.project.projectName).reference}.${hit.lib.number}`);
      const problems = pinsRegrouped(before, state.netlist(), new Set(cut));
      if (problems.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `Disconnecting ${ref} pin ${hit.lib.number} would change other nets: ${problems.slice(0, 5).join("; ")}. Nothing was disconnected.`,
          {
            fix: "Its wiring carries other pins' connections: leave it, or refuse and say which nets it would split.",
            ref,
            pin: hit.lib.number,
          },
        );
      }
      const net = state
        .netlist()
        .nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === hit.lib.number));
      if (net && net.nodes.length > 1) {
        throw new CopperheadError(
          "edit_conflict",
          `${ref} pin ${hit.lib.number} would still be on net ${net.name} after removing its wiring.`,
          {
            fix: "The pin is joined some other way (a wire over its tip, a bus) that no edit tool cuts: leave it on its net, or refuse and say so.",
            ref,
            pin: hit.lib.number,
          },
        );
      }
    },
  );
}

/** Puts a no-connect flag on a free pin (ERC then knows it is unused on purpose). */
export function markNoConnect(state: EditorState, ref: string, pin: string): void {
  const hit = findPin(state, ref, pin);
  const wiring = state.wiring(hit.instance);
  if (wiring.noConnectsAt(hit.tip).length > 0) return;
  if (wiring.attached(hit.tip, (p) => p.symbol === hit.symbol && p.lib === hit.lib)) {
    const current = netOfPin(state, ref, hit.lib.number);
    throw new CopperheadError(
      "edit_conflict",
      `${ref} pin ${hit.lib.number} is connected (to net ${current ?? "?"}); a no-connect flag would contradict that.`,
      {
        fix: `Call disconnect on ${ref} pin ${hit.lib.number} first.`,
        ref,
        pin: hit.lib.number,
      },
    );
  }
  state.edit([hit.instance.file], () =>
    insertItem(hit.instance.file, noConnectNode(toMm(hit.tip), hit.instance.file.newUuid())),
  );
}

/** A power symbol whose pin lands on `end`, standing and showing its text as the design's others of its name (see `NetTarget`). */
function placePowerSymbol(
  state: EditorState,
  instance: SheetInstance,
  target: Extract<NetTarget, { kind: "power" }>,
  end: PointIu,
): void {
  const file = instance.file;
  const { def, libName } = ensureLibSymbol(file, target.libId, target.def);
  const lib = libSymbolView(def);
  const rotation = target.rotation;
  const offset = placePoint(lib.pins[0]!.at, { at: { x: 0, y: 0 }, rotation });
  const placement: PlacementIu = { at: { x: end.x - offset.x, y: end.y - offset.y }, rotation };
  const refs = newReferences(state, file, referencePrefix(def, "#PWR"));
  const instances = [...refs].map(([i, reference]) => ({ path: i.path, reference }));
  placeSymbol(
    state,
    file,
    placedSymbolNode({
      libId: target.libId,
      libName,
      def,
      at: toMm(placement.at),
      rotation,
      unit: 1,
      uuid: file.newUuid(),
      fields: powerSymbolFields(
        def,
        placement,
        { Reference: refs.get(instance)!, Value: target.value },
        target.example,
      ),
      pins: instancePinNumbers(lib, 1).map((number) => ({ number, uuid: file.newUuid() })),
      project: state.project.projectName,
      instances,
    }),
  );
}

/** Fails the edit unless `ref` pin `pin` ended up on `expected` (parts off the board never reach the netlist). */
function expectPinOnNet(state: EditorState, ref: string, pin: string, expected: string, symbol: PlacedSymbol): void {
  // Pins of parts not on the board (and of `#` symbols) never reach the netlist.
  if (!symbol.onBoard || ref.startsWith("#")) return;
  const actual = netOfPin(state, ref, pin);
  if (actual !== expected) {
    throw new CopperheadError(
      "edit_conflict",
      `Connecting ${ref} pin ${pin} to ${expected} would put it on net ${actual ?? "?"} instead.`,
      {
        fix: `A stronger name already drives the nets labelled that way; connect ${ref} pin ${pin} to ${actual ?? "that net"} or pick another name.`,
        ref,
        pin,
        net: expected,
      },
    );
  }
}
