/**
 * Adding and removing parts: a new symbol from the libraries (or a copy of an existing part)
 * placed next to what it belongs with, every unit in its own free spot, its pins wired right
 * away; and removing a part with the wiring that served only its pins.
 */
import { CopperheadError } from "../../../errors.ts";
import { naturalCompare } from "../../../util/natural-compare.ts";
import { placePoint, samePoint, toIU, type PlacementIu } from "../geometry.ts";
import { placedSymbolNode, type MmPoint } from "../item-nodes.ts";
import { CLEARANCE, SheetSpace, type ShapeIu, type Spot } from "./placement.ts";
import {
  blockersOf,
  freshFieldBoxes,
  grow,
  libUnitBox,
  placeBox,
  pinOutwardLib,
  placeDirection,
  pointBox,
  translate,
  union,
} from "../space.ts";
import { removeLegacyInstances } from "../dialect.ts";
import type { DetachPlan } from "../wiring.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { LibPin, LibSymbol, PlacedSymbol } from "../model/symbols.ts";
import { cloneNode, removeChild, type SList } from "../../sexpr/index.ts";
import type { EditorState } from "./editor-state.ts";
import { newReferences, unitsOf } from "./lookup.ts";
import {
  ensureLibSymbol,
  instancePinNumbers,
  libSymbolView,
  referencePrefix,
  resolveLibSymbol,
  symbolFields,
} from "./lib-symbols.ts";
import { applyPlan, placeSymbol, pruneLibSymbol, toMm, unique } from "./sheet-tree.ts";
import { landingOf, netPoints, netTarget, plannedWiring, wireGridPoints, type PinLanding } from "./net-target.ts";
import { joinSpot, partnerRoom, type JoinTarget, type PlannedPin, type UnitShape } from "./join-placement.ts";
import { placementAnchor } from "./move.ts";
import { connect } from "./connect.ts";
import { pinsRegrouped } from "./net-check.ts";
import type { FieldExample } from "./field-layout.ts";
import { sheetResolver, type Resolver } from "../text-vars.ts";

export interface AddComponentArgs {
  /** `Library:Symbol`; optional with `like`. */
  libId?: string;
  /**
   * An existing part to copy: its symbol (as the design embeds it), footprint and fields
   * (MPN, manufacturer, …), so the same part never lands in the BOM twice with two footprints.
   * Explicit arguments win.
   */
  like?: string;
  value?: string;
  footprint?: string;
  /** More fields by name; a field the library symbol lacks is added hidden. */
  fields?: Record<string, string>;
  /** Human sheet path, `/` (default) or `/Regulator/` (`Regulator` and `/Regulator` work too). */
  sheet?: string;
  /**
   * References the new part may not take though no symbol bears them: those of the board's
   * footprints (one only on the board, one whose part was never annotated here, "C?"), which a
   * board sync would otherwise hand to the new part by its reference.
   */
  reserved?: Iterable<string>;
  /** Default: the next free number for the symbol's prefix, e.g. `C3`. */
  ref?: string;
  /**
   * A reference or net the part belongs with: it goes on that sheet (unless `sheet` says
   * otherwise), next to it. Default: the part it shares the most `connect` nets with.
   */
  near?: string;
  /** Pins (number or name) to wire to nets right away, e.g. `{ "1": "+3V3", "2": "GND" }`. */
  connect?: Record<string, string>;
  /** Fixed rotation (0, 90, 180, 270); by default the one that puts supply pins up and ground pins down. */
  rotation?: number;
  /**
   * The (first) unit's origin, mm, instead of a spot found next to `near`: checked as
   * `move_symbol` checks one, its drawing, fields and wiring clear of everything drawn.
   */
  at?: MmPoint;
}

export interface AddedComponent {
  ref: string;
  /** Every reference the part got: `ref`, then one per other instance of a sheet used more than once. */
  refs: string[];
  sheet: string;
  pins: { number: string; name: string }[];
  /** Origin of the (first) unit on the sheet, mm, and its rotation. */
  at: MmPoint;
  rotation: number;
  /**
   * The part it was placed next to (the `near` part, or the part `near` names a net of), and the
   * gap to it in mm; a `near` part on another sheet than the `sheet` asked for is its neighbour
   * on the board only, with no gap.
   */
  near?: string;
  distance?: number;
  /**
   * The block drawn around what it was placed near (corners in mm), and whether it went inside;
   * `note` says why not when it did not.
   */
  block?: { from: MmPoint; to: MmPoint; inside: boolean };
  note?: string;
}

/** Room kept beyond each unconnected pin of a new symbol for the stub and label a later `connect` adds. */
const PIN_REACH = toIU(7.62);
/** The least of that room, on a sheet too full for more: a wire stub's length. */
const COMPACT_REACH = toIU(2.54);
/** Half the width of that room: a power symbol's value or a short label. */
const PIN_SPREAD = toIU(2.54);
/** An orientation that puts a supply pin down (or a ground pin up) costs this much distance. */
const UPSIDE_DOWN = toIU(40);
/**
 * How much more a power pin (power in or out) facing the wrong way costs than a signal pin
 * strapped to a rail: an EEPROM with its three address pins tied to +3V3 keeps VCC up and GND
 * down, its address pins to the side, as drawn in its library (it was turned on its side).
 */
const POWER_PIN_WEIGHT = 10;
/** Turning a part from how its library draws it costs this much distance. */
const TURNED = toIU(2.54);

/**
 * Places a symbol from the libraries where a designer would: on the sheet of, and near, the
 * part or net it belongs with (`near`; by default the part it shares the most `connect`
 * nets with), in free space on the sheet's grid, every unit of a multi-unit symbol in its own
 * spot. With `connect`, the part is turned so supply pins face up and ground pins face down,
 * and its pins are wired right away (see `connect`). The library symbol is embedded in the
 * sheet's `lib_symbols` once per lib id.
 */
export function addComponent(state: EditorState, args: AddComponentArgs): AddedComponent {
  const like = args.like !== undefined ? likeSource(state, args.like) : undefined;
  const libId = args.libId ?? like?.libId;
  if (!libId)
    throw new CopperheadError("usage", "add_component needs a lib id or a part to copy (like).", {
      fix: 'Pass lib_id, e.g. "Device:C", or like, e.g. "C2".',
    });
  const def = like && like.libId === libId ? like.def : resolveLibSymbol(state, libId);
  // The example's field layout is copied only onto the same symbol.
  const example: FieldExample | undefined =
    like && like.libId === libId ? { symbol: like.symbol, sheet: sheetResolver(state.fileOf(like.symbol)) } : undefined;
  const footprint = args.footprint ?? (like && like.libId === libId ? like.values.Footprint : undefined);
  if (footprint) state.libraries.resolveFootprint(footprint);
  const lib = libSymbolView(def);
  const connections = Object.entries(args.connect ?? {}).map(([pin, net]) => ({ pin: libPinOf(lib, libId, pin), net }));
  const anchor = placementAnchor(
    state,
    { ...args, acrossSheets: args.sheet !== undefined },
    connections.map((c) => c.net),
  );
  const target = anchor.instance;
  const file = target.file;
  const sheet = sheetResolver(file);
  const refs = newReferences(
    state,
    file,
    referencePrefix(def, "U"),
    args.ref === undefined ? undefined : { instance: target, ref: args.ref },
    args.reserved,
  );
  const ownRef = refs.get(target)!;
  const values: Record<string, string> = {
    ...(like && like.libId === libId ? like.values : {}),
    ...args.fields,
    Reference: ownRef,
  };
  if (args.value !== undefined) values.Value = args.value;
  if (footprint !== undefined) values.Footprint = footprint;
  const nets = new Map(
    connections.map((c) => [c.pin.number, netTarget(state, c.net, target, ownRef, { byWire: true })]),
  );
  const landings = new Map([...nets].map(([pin, net]) => [pin, landingOf(net)]));
  const units = Array.from({ length: lib.unitCount }, (_, i) => i + 1);
  const space = new SheetSpace(file);
  // A pin that would end in a label meets its net by a short wire instead when a point of the
  // net is near (the partner added just before); a pin that starts a net on this sheet keeps
  // room for the partner still to come (see join-placement.ts).
  const wiring = state.wiring(target);
  const joins: JoinTarget[] =
    lib.unitCount === 1
      ? [...nets]
          .filter(([, net]) => net.kind !== "power")
          .map(([pin, net]) => {
            const points = netPoints(state, net, wiring);
            // A net nothing names is met by a wire alone: along its wiring too, not only at its pins.
            return {
              pin,
              points: net.kind === "wire" ? [...points, ...wireGridPoints(wiring, points, space.grid)] : points,
            };
          })
      : [];
  const starts = new Set(joins.filter((j) => j.points.length === 0).map((j) => j.pin));
  const spots = units.map((unit) => {
    const shapes = (partnerRoom: Set<string>, turn = false, pinReach = PIN_REACH) =>
      unitShapes(def, lib, unit, values, {
        landings,
        partnerRoom,
        turn,
        rotation: args.rotation,
        example,
        sheet,
        pinReach,
      });
    // On a full sheet, a spot that keeps only a stub's length in front of the pins not wired
    // yet is better than none: a later connect checks its own room.
    const spot =
      (args.at && unit === 1
        ? spotAt(space, target, libId, [...shapes(new Set()), ...shapes(new Set(), false, COMPACT_REACH)], args.at)
        : undefined) ??
      (joins.some((j) => j.points.length > 0)
        ? joinSpot(space, wiring, shapes(new Set(), true), joins, anchor.box)
        : undefined) ??
      (starts.size > 0 ? space.findSpot(shapes(starts), anchor.box) : undefined) ??
      space.findSpot(shapes(new Set()), anchor.box) ??
      space.findSpot(shapes(new Set(), false, COMPACT_REACH), anchor.box);
    if (!spot) {
      throw new CopperheadError(
        "edit_conflict",
        `No free room for ${libId}${lib.unitCount > 1 ? ` unit ${unit}` : ""} on sheet ${target.humanPath}: no free spot for its drawing, fields and wiring anywhere on the page. Nothing was added.`,
        {
          fix: "Place it on another sheet (add_sheet makes one for a subcircuit, carrying its nets), or make room on this one (find_space with this lib_id says where it would fit, if anywhere; view shows what is drawn).",
          sheet: target.humanPath,
        },
      );
    }
    for (const box of spot.shape.boxes) space.occupy(translate(box, spot.at));
    return spot;
  });
  state.edit(
    state.withInstanceRows(file),
    () => placeUnits(state, file, { libId, def, lib, values, refs, example, sheet }, spots),
    () => {
      for (const c of connections) connect(state, ownRef, c.pin.number, c.net);
    },
  );
  const pins = new Map<string, string>();
  for (const pin of lib.pins) if (!pins.has(pin.number)) pins.set(pin.number, pin.name);
  return {
    ref: ownRef,
    refs: [ownRef, ...[...refs.values()].filter((ref) => ref !== ownRef)],
    sheet: target.humanPath,
    pins: [...pins].map(([number, name]) => ({ number, name })).sort((a, b) => naturalCompare(a.number, b.number)),
    at: toMm(spots[0]!.at),
    rotation: spots[0]!.shape.rotation,
    ...(anchor.near && !anchor.across
      ? { near: anchor.near, distance: Math.round(spots[0]!.distance / 1000) / 10 }
      : {}),
    ...blockReport(spots[0]!, (!anchor.across && anchor.near) || "the middle of the sheet"),
    ...(anchor.across
      ? {
          near: anchor.near,
          note: `${anchor.near} is on another sheet: ${ownRef} went in free space on ${target.humanPath}, and goes beside ${anchor.near} on the board.`,
        }
      : {}),
  };
}

/** What `AddedComponent` says of the block around the anchor: where it is, and whether the part fitted in it. */
function blockReport(spot: Spot, near: string): Pick<AddedComponent, "block" | "note"> {
  if (!spot.block) return {};
  const { box, inside } = spot.block;
  const from = toMm({ x: box.x0, y: box.y0 });
  const to = toMm({ x: box.x1, y: box.y1 });
  const block = { from, to, inside };
  if (inside) return { block };
  return {
    block,
    note: `No free spot inside the block drawn around ${near} (${from.join(", ")} to ${to.join(", ")} mm) holds the part with its fields and wiring, so it went outside the block; make room inside it (move_symbol) and move the part in if it belongs there.`,
  };
}

/**
 * The spot at `at` (mm) for a new unit: the first of `shapes` (its orientations with full room
 * for wiring, then with a stub's room) whose drawing, fields and wiring are clear there. Throws, naming what is in the way, when none is.
 */
function spotAt(space: SheetSpace, target: SheetInstance, libId: string, shapes: ShapeIu[], at: MmPoint): Spot {
  const origin = { x: toIU(at[0]), y: toIU(at[1]) };
  const ordered = shapes;
  const shape = ordered.find((s) => s.boxes.every((b) => space.free(translate(b, origin))));
  if (shape) return { at: origin, shape, distance: 0 };
  const blockers = blockersOf(
    target.file,
    ordered[0]!.boxes.map((b) => translate(b, origin)),
    CLEARANCE,
  );
  throw new CopperheadError(
    "edit_conflict",
    `${libId} does not fit at ${at.join(", ")} on sheet ${target.humanPath}: its drawing, fields and wiring would overlap ${blockers.length > 0 ? blockers.join("; ") : "what is drawn there"}. Nothing was added.`,
    {
      fix: "Pick another spot (find_space with this lib_id gives one that fits), or leave at out to let copperhead find the nearest free one.",
      sheet: target.humanPath,
      blockers,
    },
  );
}

/** Places a new symbol's units (unit n at `spots[n - 1]`), its library symbol embedded in the sheet. */
function placeUnits(
  state: EditorState,
  file: SchematicFile,
  part: {
    libId: string;
    def: SList;
    lib: LibSymbol;
    values: Record<string, string>;
    refs: Map<SheetInstance, string>;
    example?: FieldExample;
    sheet: Resolver;
  },
  spots: Spot[],
): void {
  const { libId, def, lib, values, refs, example, sheet } = part;
  const { libName } = ensureLibSymbol(file, libId, () => def);
  spots.forEach((spot, i) => {
    const unit = i + 1;
    const placement: PlacementIu = { at: spot.at, rotation: spot.shape.rotation };
    placeSymbol(
      state,
      file,
      placedSymbolNode({
        libId,
        libName,
        def,
        at: toMm(placement.at),
        rotation: placement.rotation,
        unit,
        uuid: file.newUuid(),
        fields: symbolFields(def, placement, values, example, sheet),
        pins: instancePinNumbers(lib, unit).map((number) => ({ number, uuid: file.newUuid() })),
        project: state.project.projectName,
        instances: [...refs].map(([instance, reference]) => ({ path: instance.path, reference })),
      }),
    );
  });
}

/**
 * Deletes every unit of `ref`, with the wire stubs, labels, power symbols and no-connect flags
 * that served only its pins; a wire leading into a larger net is cut back to that net.
 */
export function removeComponent(state: EditorState, ref: string): void {
  const units = unitsOf(state, ref);
  const symbols = new Set(units.map((u) => u.symbol));
  const plans: { file: SchematicFile; plan: DetachPlan }[] = [];
  for (const unit of unique(units.map((u) => u.symbol)).map((s) => units.find((u) => u.symbol === s)!)) {
    const wiring = state.wiring(unit.instance);
    for (const pin of wiring.pins.filter((p) => p.symbol === unit.symbol)) {
      plans.push({ file: unit.instance.file, plan: wiring.planDetach(pin.at, (p) => symbols.has(p.symbol), "remove") });
    }
  }
  const files = [...plans.map((p) => p.file), ...units.flatMap((u) => state.withInstanceRows(u.instance.file))];
  const before = state.netlist();
  state.edit(
    files,
    () => {
      const done = new Set<SList>();
      for (const { file, plan } of plans) applyPlan(file, plan, done);
      for (const symbol of symbols) {
        const file = units.find((u) => u.symbol === symbol)!.instance.file;
        removeChild(file.doc.root, symbol.node);
        pruneLibSymbol(file, symbol.libKey);
      }
      if (state.legacyInstances)
        removeLegacyInstances(state.project.root.file.doc.root, new Set([...symbols].map((s) => s.uuid)));
    },
    () => {
      // The part's pins go (a sheet used twice takes its twin with it); every other pin keeps its net-mates.
      const left = new Set(state.netlist().pinNets.keys());
      const gone = new Set([...before.pinNets.keys()].filter((pin) => !left.has(pin)));
      const problems = pinsRegrouped(before, state.netlist(), gone);
      if (problems.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `Removing ${ref} with its wiring would change other nets: ${problems.slice(0, 5).join("; ")}. Nothing was removed.`,
          {
            fix: "Its wiring joins other parts in a way removing it would cut: remove the part in KiCad, or refuse and say which nets it would split.",
            ref,
          },
        );
      }
    },
  );
}

/** What `like` copies from an existing part: its lib id, embedded symbol and every field but the reference. */
function likeSource(
  state: EditorState,
  ref: string,
): { libId: string; def: SList; values: Record<string, string>; symbol: PlacedSymbol } {
  const { symbol } = unitsOf(state, ref)[0]!;
  if (!symbol.lib) {
    throw new CopperheadError(
      "not_found",
      `${ref}'s symbol ${symbol.libKey} is not embedded in its sheet, so it cannot be copied.`,
      {
        fix: "Pass lib_id instead of like (search_library finds it, get_library_symbol shows its pins).",
        ref,
      },
    );
  }
  if (symbol.libKey !== symbol.libId) {
    throw new CopperheadError(
      "edit_conflict",
      `${ref} uses a renamed copy of its library symbol (${symbol.libKey}); copperhead copies only symbols embedded under their lib id.`,
      {
        fix: `Pass lib_id ${symbol.libId} and the fields to copy instead of like.`,
        ref,
      },
    );
  }
  const values = Object.fromEntries(symbol.fields.filter((f) => f.name !== "Reference").map((f) => [f.name, f.value]));
  return { libId: symbol.libId, def: cloneNode(symbol.lib.node), values, symbol };
}

/** A library pin by number, or by its name when unique. */
function libPinOf(lib: LibSymbol, libId: string, pin: string): LibPin {
  const byNumber = lib.pins.find((p) => p.number === pin);
  if (byNumber) return byNumber;
  const named = unique(lib.pins.filter((p) => p.name === pin).map((p) => p.number));
  if (named.length === 1) return lib.pins.find((p) => p.number === named[0])!;
  const listed = unique(
    lib.pins.map((p) => (p.name && p.name !== p.number ? `${p.number} (${p.name})` : p.number)),
  ).sort(naturalCompare);
  throw new CopperheadError(
    "not_found",
    named.length > 1
      ? `${libId} has ${named.length} pins named ${pin}; name one by number.`
      : `${libId} has no pin ${pin}.`,
    {
      fix: `Pins of ${libId}: ${listed.join(", ")}.`,
      pin,
      pins: listed,
    },
  );
}

/** How a new unit's candidate shapes are drawn up. */
interface ShapePlan {
  /** What each pin to be wired ends in. */
  landings: Map<string, PinLanding>;
  /** Pins that start a net on the sheet, which keep room for their partner (see `partnerRoom`). */
  partnerRoom: Set<string>;
  /** Try every rotation (to put a pin in front of its partner's), not only those that turn power pins right. */
  turn: boolean;
  /** A fixed rotation. */
  rotation?: number;
  /** The `like` example, whose field layout is copied. */
  example?: FieldExample;
  /** The new symbol's sheet's text variables, which its fields may show. */
  sheet: Resolver;
  /** Room kept in front of each pin not wired yet (default `PIN_REACH`). */
  pinReach?: number;
}

/**
 * The orientations a new unit may take, each with everything it will occupy relative to its
 * origin: drawing, visible fields, and per pin the stub and power symbol or label it will get
 * (or room for one). Orientations that put a supply pin down or a ground pin up cost extra.
 */
function unitShapes(
  def: SList,
  lib: LibSymbol,
  unit: number,
  values: Record<string, string>,
  plan: ShapePlan,
): UnitShape[] {
  const { landings, partnerRoom: room, turn, rotation, example, sheet, pinReach = PIN_REACH } = plan;
  // Turning a part only pays when it puts its power pins the right way up, or a pin in front of its partner's (`turn`).
  const rotations =
    rotation !== undefined
      ? [rotation]
      : turn || [...landings.values()].some((l) => l.kind === "power")
        ? [0, 180, 90, 270]
        : [0];
  const pins = lib.pins.filter(
    (p) => (p.unit === 0 || p.unit === unit) && (p.bodyStyle === 0 || p.bodyStyle === 1) && !p.hidden,
  );
  return rotations.map((r) => {
    const placement: PlacementIu = { at: { x: 0, y: 0 }, rotation: r };
    const drawing = libUnitBox(def, unit, 1);
    const body = drawing ? placeBox(drawing, placement) : pointBox({ x: 0, y: 0 }, toIU(2.54));
    const fixed = [body, ...freshFieldBoxes(symbolFields(def, placement, values, example, sheet), placement, sheet)];
    const wired: PlannedPin[] = [];
    let penalty = r % 180 === 0 ? (r === 0 ? 0 : TURNED / 2) : TURNED;
    for (const pin of pins) {
      const tip = placePoint(pin.at, placement);
      const outward = placeDirection(pinOutwardLib(pin.orientation), placement);
      const landing = landings.get(pin.number);
      if (!landing) {
        fixed.push(
          grow(
            union(pointBox(tip), pointBox({ x: tip.x + outward.x * pinReach, y: tip.y + outward.y * pinReach })),
            PIN_SPREAD,
          ),
        );
        continue;
      }
      if (landing.kind === "power" && !samePoint(landing.arrive, outward))
        penalty += UPSIDE_DOWN * (pin.type.startsWith("power") ? POWER_PIN_WEIGHT : 1);
      wired.push({
        number: pin.number,
        tip,
        outward,
        wiring: [...plannedWiring(tip, outward, landing), ...(room.has(pin.number) ? [partnerRoom(tip, outward)] : [])],
      });
    }
    return { rotation: r, penalty, body, fixed, pins: wired, boxes: [...fixed, ...wired.flatMap((p) => p.wiring)] };
  });
}
