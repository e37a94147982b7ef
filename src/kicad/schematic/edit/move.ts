/**
 * Moving and placing: where a part goes next to the part or net it belongs with (shared with
 * `addComponent`), and moving a placed symbol there or to a given point with the wiring that
 * serves only its pins, reconnecting by name the pins wired into larger nets.
 */
import { CopperheadError } from "../../../errors.ts";
import { lookupNet, resolveNet } from "../../netlist/net-names.ts";
import { placePoint, toIU, type PlacementIu, type PointIu } from "../geometry.ts";
import type { MmPoint } from "../item-nodes.ts";
import { bestPartOn } from "../../netlist/parts.ts";
import { CLEARANCE, netAnchorPart, SheetSpace, type ShapeIu } from "./placement.ts";
import {
  blockersOf,
  fieldBox,
  libUnitBox,
  noConnectBox,
  pageArea,
  placeBox,
  pinOutwardLib,
  placeDirection,
  pointBox,
  translate,
  union,
  type Box,
} from "../space.ts";
import { SheetWiring, type DetachPlan, type PinAt } from "../wiring.ts";
import { pinsRegrouped } from "./net-check.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import { unitPins, type PlacedSymbol } from "../model/symbols.ts";
import { child, children, setAtom, text, type SList } from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { references, sheetInstance, unitsOf } from "./lookup.ts";
import { applyPlan, itemBoxes, shiftNode, symbolBox, toMm, unique } from "./sheet-tree.ts";
import { landingOf, netTarget, plannedWiring } from "./net-target.ts";
import { connect, markNoConnect } from "./connect.ts";
import { turnedField } from "./field-layout.ts";
import { sheetResolver, symbolResolver } from "../text-vars.ts";

export interface MoveSymbolArgs {
  /** A reference or net to move it next to, on its own sheet. */
  near?: string;
  /** Or the new origin, mm. */
  at?: MmPoint;
  rotation?: number;
  /** Which unit of a multi-unit part (default: the first placed). */
  unit?: number;
}

export interface MovedSymbol {
  ref: string;
  sheet: string;
  at: MmPoint;
  rotation: number;
  near?: string;
  distance?: number;
}

/** A pin a move cuts loose, to connect again at the new place: to `net`, or to a no-connect flag. */
interface Rewire {
  pin: string;
  net?: string;
  noConnect: boolean;
  plan: DetachPlan;
}

/**
 * Moves a placed symbol next to a part or net (`near`: the nearest free spot on its sheet, as
 * `addComponent` finds one) or to `at` (mm, checked free), optionally turned. Wiring that
 * serves only its pins (stubs, labels, power symbols, no-connect flags) moves along; a pin
 * wired into a larger net is cut loose and connected to that net again at the new place
 * (by name, so the net must have one), as is every connected pin when the part turns.
 */
export function moveSymbol(state: EditorState, ref: string, args: MoveSymbolArgs): MovedSymbol {
  const units = unitsOf(state, ref);
  const unit = units.find((u) => u.unit === (args.unit ?? units[0]!.unit));
  if (!unit)
    throw new CopperheadError("not_found", `${ref} has no unit ${args.unit}.`, {
      fix: `Units of ${ref}: ${unique(units.map((u) => u.unit)).join(", ")}.`,
      ref,
    });
  const { instance, symbol } = unit;
  const file = instance.file;
  const rotation = args.rotation ?? symbol.placement.rotation;
  const wiring = state.wiring(instance);
  const { carried, rewire } = planMoveWiring(state, ref, symbol, wiring, rotation !== symbol.placement.rotation);
  // What the move leaves behind is no obstacle; what it carries goes with the shape.
  const leaving = new Set([...carried, ...rewire.flatMap((r) => [...r.plan.remove])]);
  const exceptBoxes = [...leaving].flatMap((node) => itemBoxes(file, node));
  const space = new SheetSpace(file, {
    symbols: new Set([symbol, ...file.symbols.filter((s) => leaving.has(s.node))]),
    boxes: exceptBoxes,
  });
  const origin = symbol.placement.at;
  const placement: PlacementIu = { at: { x: 0, y: 0 }, rotation, mirror: symbol.placement.mirror };
  const drawing = symbol.lib ? libUnitBox(symbol.lib.node, unit.unit, symbol.bodyStyle) : undefined;
  const body = drawing ? placeBox(drawing, placement) : pointBox({ x: 0, y: 0 }, toIU(2.54));
  const fields = symbol.fields.map((f) => turnedField(f.node, origin, symbol.placement.rotation, rotation));
  const own = symbolResolver(symbol, sheetResolver(file));
  const boxes = [
    body,
    ...fields.flatMap((f) => fieldBox(f, placement, own) ?? []),
    ...[...carried].flatMap((node) => itemBoxes(file, node)).map((b) => translate(b, { x: -origin.x, y: -origin.y })),
  ];
  for (const r of rewire) {
    const pin = wiring.pins.find((p) => p.symbol === symbol && p.lib.number === r.pin)!;
    const tip = placePoint(pin.lib.at, placement);
    const out = placeDirection(pinOutwardLib(pin.lib.orientation), placement);
    boxes.push(
      ...(r.net ? plannedWiring(tip, out, landingOf(netTarget(state, r.net, instance, ref))) : [noConnectBox(tip)]),
    );
  }
  const shape: ShapeIu = { rotation, mirror: symbol.placement.mirror, penalty: 0, body, boxes };
  const { at, near, distance } = moveTarget(state, ref, args, instance, shape, space);
  const delta = { x: at.x - origin.x, y: at.y - origin.y };
  const before = state.netlist();
  state.edit(
    [file],
    () => {
      const done = new Set<SList>();
      for (const r of rewire) applyPlan(file, r.plan, done);
      for (const node of carried) shiftNode(node, delta);
      placeMoved(symbol.node, fields, at, rotation);
    },
    () => {
      for (const r of rewire) {
        if (r.noConnect) markNoConnect(state, ref, r.pin);
        else connect(state, ref, r.pin, r.net!);
      }
      // Moved and reconnected by name, every pin keeps its net-mates.
      const problems = pinsRegrouped(before, state.netlist(), new Set());
      if (problems.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `Moving ${ref} would change the nets: ${problems.slice(0, 5).join("; ")}. Nothing was moved.`,
          {
            fix: "Its wiring carries other pins' connections that moving it would cut: leave it where it is, or move it in KiCad.",
            ref,
          },
        );
      }
    },
  );
  return { ref, sheet: instance.humanPath, at: toMm(at), rotation, ...(near ? { near, distance } : {}) };
}

/**
 * What happens to the wiring of a symbol's pins when it moves: what serves only its pins is
 * carried along (stubs, labels, power symbols, no-connect flags), and a pin wired into a
 * larger net (every connected pin, when the part turns) is cut loose and reconnected by name.
 */
function planMoveWiring(
  state: EditorState,
  ref: string,
  symbol: PlacedSymbol,
  wiring: SheetWiring,
  turned: boolean,
): { carried: Set<SList>; rewire: Rewire[] } {
  const netlist = state.netlist();
  const netOf = (pin: string) =>
    netlist.nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
  const self = (p: PinAt) => p.symbol === symbol;
  const carried = new Set<SList>();
  const rewire: Rewire[] = [];
  for (const pin of wiring.pins.filter(self)) {
    const noConnect = wiring.noConnectsAt(pin.at).length > 0;
    if (!wiring.attached(pin.at, (p) => p.symbol === symbol && p.lib === pin.lib) && !noConnect) continue;
    const plan = wiring.planDetach(pin.at, self, "move");
    if (plan.conflict) {
      throw new CopperheadError("edit_conflict", `Cannot move ${ref}: pin ${pin.lib.number} ${plan.conflict}.`, {
        fix: "Disconnect that pin first, move it, then connect it again; or leave it where it is.",
        ref,
        pin: pin.lib.number,
      });
    }
    if (!plan.joins && !turned) {
      for (const node of plan.remove) carried.add(node);
      continue;
    }
    const net = noConnect ? undefined : netOf(pin.lib.number);
    if (!noConnect && (!net || /^(Net-\(|unconnected-)/.test(net))) {
      throw new CopperheadError(
        "edit_conflict",
        `Cannot move ${ref}: pin ${pin.lib.number} is wired into ${net ? `the unnamed net ${net}` : "a net"}, which copperhead could only reconnect by name.`,
        {
          fix: `Name the net first (connect a pin of it to a label with connect, or rename it), or move ${ref} in KiCad.`,
          ref,
          pin: pin.lib.number,
        },
      );
    }
    rewire.push({ pin: pin.lib.number, net, noConnect, plan });
  }
  return { carried, rewire };
}

/** Where a move puts a symbol of `shape`: `args.at` when it is free there, else the nearest free spot next to `args.near`. */
function moveTarget(
  state: EditorState,
  ref: string,
  args: MoveSymbolArgs,
  instance: SheetInstance,
  shape: ShapeIu,
  space: SheetSpace,
): { at: PointIu; near?: string; distance?: number } {
  let at: PointIu;
  let distance: number | undefined;
  let near: string | undefined;
  if (args.at) {
    at = { x: toIU(args.at[0]), y: toIU(args.at[1]) };
    if (!shape.boxes.every((b) => space.free(translate(b, at)))) {
      const blockers = blockersOf(
        instance.file,
        shape.boxes.map((b) => translate(b, at)),
        CLEARANCE,
        space.leftOut,
      );
      throw new CopperheadError(
        "edit_conflict",
        `${ref} does not fit at ${args.at.join(", ")} on sheet ${instance.humanPath}: it would overlap ${blockers.length > 0 ? blockers.join("; ") : "what is drawn there"}. Nothing was moved.`,
        {
          fix: "Pick another spot (find_space gives a free one), or pass near to let copperhead find the nearest free one.",
          ref,
          blockers,
        },
      );
    }
  } else {
    if (args.near === undefined)
      throw new CopperheadError("usage", "move_symbol needs near (a ref or net) or at (x, y in mm).", {
        fix: "Pass near, e.g. MK1, or at.",
      });
    if (args.near === ref)
      throw new CopperheadError("usage", `${ref} cannot be moved next to itself.`, {
        fix: "Name another part or a net.",
      });
    const anchor = placementAnchor(state, { near: args.near, sheet: instance.humanPath }, []);
    const spot = space.findSpot([shape], anchor.box);
    if (!spot)
      throw new CopperheadError(
        "edit_conflict",
        `No free room for ${ref} near ${args.near} on sheet ${instance.humanPath}: no spot on the page fits its drawing, fields and wiring. Nothing was moved.`,
        { fix: "Make room, or give coordinates with at (find_space gives a free area).", ref },
      );
    at = spot.at;
    distance = Math.round(spot.distance / 1000) / 10;
    near = anchor.near;
  }
  return { at, near, distance };
}

/**
 * The sheet a new part goes on and the box it should be near: the part or net named by
 * `near`, else the part sharing the most of the nets it will connect to (signal nets count
 * more than power nets), else the middle of what is drawn on the sheet.
 */
export function placementAnchor(
  state: EditorState,
  args: { near?: string; sheet?: string; acrossSheets?: boolean },
  nets: string[],
): { instance: SheetInstance; box: Box; near?: string; across?: boolean } {
  const sheet = args.sheet !== undefined ? sheetInstance(state, args.sheet) : undefined;
  const netlist = state.netlist();
  const names = netlist.nets.map((n) => n.name);
  const wanted = nets.map((n) => lookupNet(names, n)).flatMap((l) => (l.kind === "found" ? [l.name] : []));
  let anchorRef = args.near !== undefined && references(state).has(args.near) ? args.near : undefined;
  if (args.near !== undefined && !anchorRef) {
    if (lookupNet(names, args.near).kind === "missing" && !/^[A-Za-z#]+\d+$/.test(args.near))
      resolveNet(names, args.near);
    if (lookupNet(names, args.near).kind === "missing") unitsOf(state, args.near);
    const net = resolveNet(names, args.near);
    anchorRef = netAnchorPart(
      netlist,
      net,
      wanted,
      sheet ? (ref) => unitsOf(state, ref).some((u) => u.instance === sheet) : () => true,
    );
    wanted.unshift(net);
    if (!anchorRef) {
      throw new CopperheadError(
        "not_found",
        `Net ${net} has no part pin${sheet ? ` on sheet ${sheet.humanPath}` : ""} to place next to.`,
        {
          fix: "Name a part with near instead.",
          net,
        },
      );
    }
  }
  anchorRef ??=
    wanted.length > 0
      ? bestPartOn(netlist, wanted, sheet ? (ref) => unitsOf(state, ref).some((u) => u.instance === sheet) : () => true)
      : undefined;
  if (!anchorRef) return { instance: sheet ?? state.project.root, box: middleOf(sheet ?? state.project.root) };
  const units = unitsOf(state, anchorRef).filter((u) => !sheet || u.instance === sheet);
  // A part named on another sheet than the one asked for is its neighbour on the board only
  // (an EEPROM on a sheet of its own, beside the bus's other EEPROMs): the sheet's free middle.
  if (units.length === 0 && args.acrossSheets && args.near === anchorRef)
    return { instance: sheet!, box: middleOf(sheet!), near: anchorRef, across: true };
  if (units.length === 0) {
    const on = unique(unitsOf(state, anchorRef).map((u) => u.instance.humanPath)).join(", ");
    throw new CopperheadError(
      "edit_conflict",
      `${anchorRef} is on sheet ${on}, not ${sheet!.humanPath}; a part can only be placed next to a part on its own sheet.`,
      {
        fix: `Leave sheet out to place it on ${on}, or name a part on ${sheet!.humanPath} as near.`,
        ref: anchorRef,
      },
    );
  }
  // Near the pins it shares nets with, when there are any; else near the part's drawing.
  const pinNets = new Map(
    netlist.nets.flatMap((n) =>
      n.nodes.filter((node) => node.ref === anchorRef).map((node): [string, string] => [node.pin, n.name]),
    ),
  );
  const tips = units.flatMap((u) =>
    unitPins(u.symbol, u.unit)
      .filter((p) => wanted.includes(pinNets.get(p.number) ?? ""))
      .map((p) => ({ unit: u, tip: placePoint(p.at, u.symbol.placement) })),
  );
  const unit = tips[0]?.unit ?? units[0]!;
  let box: Box | undefined;
  for (const t of tips.filter((t) => t.unit === unit)) box = union(box, pointBox(t.tip));
  box ??= symbolBox(unit.symbol, unit.unit);
  return { instance: unit.instance, box, near: anchorRef };
}

/** A point in the middle of what is drawn on `instance`'s sheet, or of its page when nothing is. */
function middleOf(instance: SheetInstance): Box {
  const box = new SheetSpace(instance.file).content ?? pageArea(instance.file).area;
  return pointBox({ x: Math.round((box.x0 + box.x1) / 2), y: Math.round((box.y0 + box.y1) / 2) });
}

/** Puts a moved symbol's origin at `at`, turned to `rotation`, with its `fields` (turned copies relative to the origin, see `turnedField`). */
function placeMoved(node: SList, fields: SList[], at: PointIu, rotation: number): void {
  const atNode = child(node, "at")!;
  setAtom(atNode, 1, toMm(at)[0]);
  setAtom(atNode, 2, toMm(at)[1]);
  setAtom(atNode, 3, rotation);
  const props = children(node, "property");
  fields.forEach((f, i) => {
    const target = child(props[i]!, "at")!;
    const moved = child(f, "at")!;
    setAtom(target, 1, Math.round((Number(text(moved, 1)) + at.x / 10_000) * 10_000) / 10_000);
    setAtom(target, 2, Math.round((Number(text(moved, 2)) + at.y / 10_000) * 10_000) / 10_000);
    if (text(target, 3) !== undefined) setAtom(target, 3, Number(text(moved, 3) ?? 0));
  });
}
