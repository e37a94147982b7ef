/**
 * `kicad/schematic/edit/` owns changing a schematic: the operations, where a new symbol goes,
 * how it is wired, and the transaction that tracks the sheets an edit touched. It sits on the
 * netlist (an edit re-derives nets to prove its claim); the board never imports it.
 *
 * Structured schematic edits (the edit stage of a gated run): the operations the `do` agent's edit tools
 * call. Every operation works on the lossless trees of a loaded project, never on raw text:
 *
 * - it validates everything it needs (refs, pins, sheets, lib ids, free room) before touching a
 *   tree, and throws a typed `CopperheadError` (with close matches in `fix`) otherwise;
 * - it inserts nodes laid out as KiCad 9 writes them, at the place eeschema would save them
 *   (grouped by item type, sorted by uuid), so diffs match what a KiCad save would show;
 * - where the outcome is a connectivity claim ("C3.1 is on +3V3", "the net is now /LED_DRIVE,
 *   same pins"), it re-derives the netlist natively and rolls the whole operation back when the
 *   claim does not hold, so a failed edit never leaves a half-changed tree.
 *
 * Sheets used by several sheet symbols share one file, so an edit in such a sheet shows in every
 * instance: a new part gets one reference per instance (the one asked for in the instance
 * named, the next free ones in the others), a local label names the net in every instance, and
 * deleting a part deletes it (all its references) from every instance.
 */
import { resolve } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { closeMatches, suggestion } from "../../../util/close-matches.ts";
import type { Libraries } from "../../library/libraries.ts";
import { lookupNet, resolveNet } from "../../netlist/net-names.ts";
import { buildNetlist, naturalCompare, type Netlist } from "../../netlist/netlist.ts";
import { placePoint, samePoint, toIU, type Placement, type Point } from "../geometry.ts";
import {
  globalLabelNode,
  hiddenPropertyNode,
  itemRank,
  junctionNode,
  labelNode,
  libraryFields,
  lineNode,
  noConnectNode,
  placedSymbolNode,
  propertyNode,
  type LabelShape,
  type MmPoint,
} from "../items.ts";
import { bestPartOn, SheetSpace, type Shape, type Spot } from "./placement.ts";
import { joinRoutes, needsJunction, routeBoxes, routeUsable, stubRoutes, type Landing, type Route } from "./routing.ts";
import { fieldBox, grow, labelBox, libUnitBox, pageArea, placeBox, pinOutwardLib, placeDirection, pointBox, symbolBodyBox, translate, union, type Box } from "../space.ts";
import { describeVersion, has, RELEASES, SCHEMATIC, type FormatChange } from "../../format.ts";
import { adaptNewField, adaptSyntax, addLegacyInstances, instancesInRoot, layOutInserted, legacyInstancePath, removeLegacyInstances, setLegacyInstanceField } from "../dialect.ts";
import { SchematicTransactions } from "./transaction.ts";
import { SheetWiring, type DetachPlan, type PinAt } from "../wiring.ts";
import {
  loadSchematicProject,
  readLibSymbol,
  symbolInstance,
  unitPins,
  fieldValue,
  type LibPin,
  type LibSymbol,
  type PlacedSymbol,
  type SchematicFile,
  type SchematicProject,
  type SheetInstance,
} from "../view.ts";
import {
  child,
  children,
  childText,
  cloneNode,
  head,
  insertChild,
  list,
  printSexpr,
  printSexprBytes,
  q,
  readDesignText,
  removeChild,
  setAtom,
  text,
  type SList,
} from "../../sexpr/index.ts";

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
}

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

export interface PartAttributes {
  dnp?: boolean;
  excludeFromBom?: boolean;
  excludeFromBoard?: boolean;
  excludeFromSim?: boolean;
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
  /** The part it was placed next to (the `near` part, or the part `near` names a net of), and the gap to it in mm. */
  near?: string;
  distance?: number;
}

/** One placed unit of a reference in one sheet instance. */
interface PlacedUnit {
  instance: SheetInstance;
  symbol: PlacedSymbol;
  unit: number;
}

interface PinHit extends PlacedUnit {
  ref: string;
  lib: LibPin;
  tip: Point;
  /** Unit step (IU) pointing away from the symbol body. */
  outward: Point;
}

/** A pin a move cuts loose, to connect again at the new place: to `net`, or to a no-connect flag. */
interface Rewire {
  pin: string;
  net?: string;
  noConnect: boolean;
  plan: DetachPlan;
}

/** One change `renameNet` makes, and the sheet it changes. */
interface Rename {
  file: SchematicFile;
  apply: () => void;
}

/** What `renameNet` changes (see `renameScope`). */
interface RenameScope {
  newName: string;
  renames: Rename[];
  expected: Map<string, string>;
}

/** How `connect` names the net at the end of its stub. */
type NetTarget =
  | { kind: "power"; libId: string; def: () => SList; value: string; expected: string }
  | { kind: "global"; text: string; shape: LabelShape; expected: string }
  | { kind: "local"; text: string; expected: string };

/** Room kept beyond each unconnected pin of a new symbol for the stub and label a later `connect` adds. */
const PIN_REACH = toIU(7.62);
/** Half the width of that room: a power symbol's value or a short label. */
const PIN_SPREAD = toIU(2.54);
/** An orientation that puts a supply pin down (or a ground pin up) costs this much distance. */
const UPSIDE_DOWN = toIU(40);
/** Turning a part from how its library draws it costs this much distance. */
const TURNED = toIU(2.54);

export class SchematicEditor {
  private readonly transactions: SchematicTransactions;
  private built?: { revision: number; netlist: Netlist };

  private constructor(
    /** The project being edited: its views show every edit made so far (see `SchematicFile`). */
    readonly project: SchematicProject,
    private readonly libraries: Libraries,
  ) {
    this.transactions = new SchematicTransactions(project);
  }

  /**
   * Loads the project rooted at `rootSchematicPath`; `libraries` resolves new symbols. Sheets
   * must resolve inside `within` (the repo root; default the root schematic's folder).
   */
  static open(rootSchematicPath: string, libraries: Libraries, options: { within?: string } = {}): SchematicEditor {
    return new SchematicEditor(loadSchematicProject(rootSchematicPath, options), libraries);
  }

  // --- Operations -------------------------------------------------------------------------

  /**
   * Places a symbol from the libraries where a designer would: on the sheet of, and near, the
   * part or net it belongs with (`near`; by default the part it shares the most `connect`
   * nets with), in free space on the sheet's grid, every unit of a multi-unit symbol in its own
   * spot. With `connect`, the part is turned so supply pins face up and ground pins face down,
   * and its pins are wired right away (see `connect`). The library symbol is embedded in the
   * sheet's `lib_symbols` once per lib id.
   */
  addComponent(args: AddComponentArgs): AddedComponent {
    const like = args.like !== undefined ? this.likeSource(args.like) : undefined;
    const libId = args.libId ?? like?.libId;
    if (!libId) throw new CopperheadError("usage", "add_component needs a lib id or a part to copy (like).", { fix: 'Pass lib_id, e.g. "Device:C", or like, e.g. "C2".' });
    const def = like && like.libId === libId ? like.def : this.resolveLibSymbol(libId);
    const footprint = args.footprint ?? (like && like.libId === libId ? like.values.Footprint : undefined);
    if (footprint) this.libraries.resolveFootprint(footprint);
    const lib = libSymbolView(def);
    const connect = Object.entries(args.connect ?? {}).map(([pin, net]) => ({ pin: this.libPinOf(lib, libId, pin), net }));
    const anchor = this.placementAnchor(args, connect.map((c) => c.net));
    const target = anchor.instance;
    const file = target.file;
    const refs = this.newReferences(file, referencePrefix(def, "U"), args.ref === undefined ? undefined : { instance: target, ref: args.ref });
    const ownRef = refs.get(target)!;
    const values: Record<string, string> = { ...(like && like.libId === libId ? like.values : {}), ...args.fields, Reference: ownRef };
    if (args.value !== undefined) values.Value = args.value;
    if (footprint !== undefined) values.Footprint = footprint;
    const landings = new Map(connect.map((c) => [c.pin.number, this.landingOf(this.netTarget(c.net, target, ownRef))]));
    const units = Array.from({ length: lib.unitCount }, (_, i) => i + 1);
    const space = new SheetSpace(file);
    const spots = units.map((unit) => {
      const spot = space.findSpot(unitShapes(def, lib, unit, values, landings, args.rotation), anchor.box);
      if (!spot) {
        throw new CopperheadError("edit_conflict", `No free room for ${libId}${lib.unitCount > 1 ? ` unit ${unit}` : ""} on sheet ${target.humanPath}.`, {
          fix: "Place it on another sheet, or remove unused parts from this one.",
          sheet: target.humanPath,
        });
      }
      for (const box of spot.shape.boxes) space.occupy(translate(box, spot.at));
      return spot;
    });
    this.edit(
      this.withInstanceRows(file),
      () => this.placeUnits(file, { libId, def, lib, values, refs }, spots),
      () => {
        for (const c of connect) this.connect(ownRef, c.pin.number, c.net);
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
      ...(anchor.near ? { near: anchor.near, distance: Math.round(spots[0]!.distance / 1000) / 10 } : {}),
    };
  }

  /** Places a new symbol's units (unit n at `spots[n - 1]`), its library symbol embedded in the sheet. */
  private placeUnits(file: SchematicFile, part: { libId: string; def: SList; lib: LibSymbol; values: Record<string, string>; refs: Map<SheetInstance, string> }, spots: Spot[]): void {
    const { libId, def, lib, values, refs } = part;
    const { libName } = ensureLibSymbol(file, libId, () => def);
    spots.forEach((spot, i) => {
      const unit = i + 1;
      const placement: Placement = { at: spot.at, rotation: spot.shape.rotation };
      this.placeSymbol(
        file,
        placedSymbolNode({
          libId,
          libName,
          def,
          at: toMm(placement.at),
          rotation: placement.rotation,
          unit,
          uuid: crypto.randomUUID(),
          fields: symbolFields(def, placement, values),
          pins: instancePinNumbers(lib, unit).map((number) => ({ number, uuid: crypto.randomUUID() })),
          project: this.project.projectName,
          instances: [...refs].map(([instance, reference]) => ({ path: instance.path, reference })),
        }),
      );
    });
  }

  /**
   * Moves a placed symbol next to a part or net (`near`: the nearest free spot on its sheet, as
   * `addComponent` finds one) or to `at` (mm, checked free), optionally turned. Wiring that
   * serves only its pins (stubs, labels, power symbols, no-connect flags) moves along; a pin
   * wired into a larger net is cut loose and connected to that net again at the new place
   * (by name, so the net must have one), as is every connected pin when the part turns.
   */
  moveSymbol(ref: string, args: MoveSymbolArgs): MovedSymbol {
    const units = this.unitsOf(ref);
    const unit = units.find((u) => u.unit === (args.unit ?? units[0]!.unit));
    if (!unit) throw new CopperheadError("not_found", `${ref} has no unit ${args.unit}.`, { fix: `Units of ${ref}: ${unique(units.map((u) => u.unit)).join(", ")}.`, ref });
    const { instance, symbol } = unit;
    const file = instance.file;
    const rotation = args.rotation ?? symbol.placement.rotation;
    const wiring = this.wiring(instance);
    const { carried, rewire } = this.planMoveWiring(ref, symbol, wiring, rotation !== symbol.placement.rotation);
    // What the move leaves behind is no obstacle; what it carries goes with the shape.
    const leaving = new Set([...carried, ...rewire.flatMap((r) => [...r.plan.remove])]);
    const exceptBoxes = [...leaving].flatMap((node) => itemBoxes(file, node));
    const space = new SheetSpace(file, { symbols: new Set([symbol, ...file.symbols.filter((s) => leaving.has(s.node))]), boxes: exceptBoxes });
    const origin = symbol.placement.at;
    const placement: Placement = { at: { x: 0, y: 0 }, rotation, mirror: symbol.placement.mirror };
    const drawing = symbol.lib ? libUnitBox(symbol.lib.node, unit.unit, symbol.bodyStyle) : undefined;
    const body = drawing ? placeBox(drawing, placement) : pointBox({ x: 0, y: 0 }, toIU(2.54));
    const fields = symbol.fields.map((f) => turnedField(f.node, origin, symbol.placement.rotation, rotation));
    const boxes = [body, ...fields.flatMap((f) => fieldBox(f, placement) ?? []), ...[...carried].flatMap((node) => itemBoxes(file, node)).map((b) => translate(b, { x: -origin.x, y: -origin.y }))];
    for (const r of rewire) {
      const pin = wiring.pins.find((p) => p.symbol === symbol && p.lib.number === r.pin)!;
      const tip = placePoint(pin.lib.at, placement);
      const out = placeDirection(pinOutwardLib(pin.lib.orientation), placement);
      boxes.push(...(r.net ? plannedWiring(tip, out, this.landingOf(this.netTarget(r.net, instance, ref))) : [pointBox(tip, toIU(1.27))]));
    }
    const shape: Shape = { rotation, mirror: symbol.placement.mirror, penalty: 0, body, boxes };
    const { at, near, distance } = this.moveTarget(ref, args, instance, shape, space);
    const delta = { x: at.x - origin.x, y: at.y - origin.y };
    this.edit(
      [file],
      () => {
        const done = new Set<SList>();
        for (const r of rewire) applyPlan(file, r.plan, done);
        for (const node of carried) shiftNode(node, delta);
        placeMoved(symbol.node, fields, at, rotation);
      },
      () => {
        for (const r of rewire) {
          if (r.noConnect) this.markNoConnect(ref, r.pin);
          else this.connect(ref, r.pin, r.net!);
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
  private planMoveWiring(ref: string, symbol: PlacedSymbol, wiring: SheetWiring, turned: boolean): { carried: Set<SList>; rewire: Rewire[] } {
    const netlist = this.netlist();
    const netOf = (pin: string) => netlist.nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
    const self = (p: PinAt) => p.symbol === symbol;
    const carried = new Set<SList>();
    const rewire: Rewire[] = [];
    for (const pin of wiring.pins.filter(self)) {
      const noConnect = wiring.noConnectsAt(pin.at).length > 0;
      if (!wiring.attached(pin.at, (p) => p.symbol === symbol && p.lib === pin.lib) && !noConnect) continue;
      const plan = wiring.planDetach(pin.at, self, "disconnect");
      if (plan.conflict) {
        throw new CopperheadError("edit_conflict", `Cannot move ${ref}: pin ${pin.lib.number} ${plan.conflict}.`, { fix: "Move it in KiCad, or disconnect that pin first.", ref, pin: pin.lib.number });
      }
      if (!plan.joins && !turned) {
        for (const node of plan.remove) carried.add(node);
        continue;
      }
      const net = noConnect ? undefined : netOf(pin.lib.number);
      if (!noConnect && (!net || /^(Net-\(|unconnected-)/.test(net))) {
        throw new CopperheadError("edit_conflict", `Cannot move ${ref}: pin ${pin.lib.number} is wired into ${net ? `the unnamed net ${net}` : "a net"}, which copperhead could only reconnect by name.`, {
          fix: `Name the net first (connect a pin of it to a label with connect, or rename it), or move ${ref} in KiCad.`,
          ref,
          pin: pin.lib.number,
        });
      }
      rewire.push({ pin: pin.lib.number, net, noConnect, plan });
    }
    return { carried, rewire };
  }

  /** Where a move puts a symbol of `shape`: `args.at` when it is free there, else the nearest free spot next to `args.near`. */
  private moveTarget(ref: string, args: MoveSymbolArgs, instance: SheetInstance, shape: Shape, space: SheetSpace): { at: Point; near?: string; distance?: number } {
    let at: Point;
    let distance: number | undefined;
    let near: string | undefined;
    if (args.at) {
      at = { x: toIU(args.at[0]), y: toIU(args.at[1]) };
      if (!shape.boxes.every((b) => space.free(translate(b, at)))) {
        throw new CopperheadError("edit_conflict", `${ref} does not fit at ${args.at.join(", ")} on sheet ${instance.humanPath}: it would overlap what is drawn there.`, {
          fix: "Pick another spot, or pass near to let copperhead find the nearest free one.",
          ref,
        });
      }
    } else {
      if (args.near === undefined) throw new CopperheadError("usage", "move_symbol needs near (a ref or net) or at (x, y in mm).", { fix: "Pass near, e.g. MK1, or at." });
      if (args.near === ref) throw new CopperheadError("usage", `${ref} cannot be moved next to itself.`, { fix: "Name another part or a net." });
      const anchor = this.placementAnchor({ near: args.near, sheet: instance.humanPath }, []);
      const spot = space.findSpot([shape], anchor.box);
      if (!spot) throw new CopperheadError("edit_conflict", `No free room for ${ref} near ${args.near} on sheet ${instance.humanPath}.`, { fix: "Make room, or give coordinates with at.", ref });
      at = spot.at;
      distance = Math.round(spot.distance / 1000) / 10;
      near = anchor.near;
    }
    return { at, near, distance };
  }

  /**
   * Deletes every unit of `ref`, with the wire stubs, labels, power symbols and no-connect flags
   * that served only its pins; a wire leading into a larger net is cut back to that net.
   */
  removeComponent(ref: string): void {
    const units = this.unitsOf(ref);
    const symbols = new Set(units.map((u) => u.symbol));
    const plans: { file: SchematicFile; plan: DetachPlan }[] = [];
    for (const unit of unique(units.map((u) => u.symbol)).map((s) => units.find((u) => u.symbol === s)!)) {
      const wiring = this.wiring(unit.instance);
      for (const pin of wiring.pins.filter((p) => p.symbol === unit.symbol)) {
        plans.push({ file: unit.instance.file, plan: wiring.planDetach(pin.at, (p) => symbols.has(p.symbol), "remove") });
      }
    }
    const files = [...plans.map((p) => p.file), ...units.flatMap((u) => this.withInstanceRows(u.instance.file))];
    this.edit(files, () => {
      const done = new Set<SList>();
      for (const { file, plan } of plans) applyPlan(file, plan, done);
      for (const symbol of symbols) {
        const file = units.find((u) => u.symbol === symbol)!.instance.file;
        removeChild(file.doc.root, symbol.node);
        pruneLibSymbol(file, symbol.libKey);
      }
      if (this.legacyInstances) removeLegacyInstances(this.project.root.file.doc.root, new Set([...symbols].map((s) => s.uuid)));
    });
  }

  /**
   * Sets a field on every unit of `ref` (Value, Footprint, MPN, any field). A field the symbol
   * lacks is added hidden at the symbol's origin. Setting `Reference` renames the part.
   */
  setField(ref: string, field: string, value: string): void {
    const units = this.unitsOf(ref);
    if (field === "Reference") this.checkNewReference(value, this.references());
    if (field === "Footprint" && value !== "") this.libraries.resolveFootprint(value);
    this.edit(unique(units.map((u) => u.symbol)).flatMap((s) => this.withInstanceRows(this.fileOf(s))), () => {
      for (const symbol of unique(units.map((u) => u.symbol))) {
        const props = children(symbol.node, "property");
        const prop = props.find((p) => text(p, 1) === field) ?? props.find((p) => text(p, 1)?.toLowerCase() === field.toLowerCase());
        if (prop) setAtom(prop, 2, q(value));
        else {
          const last = props[props.length - 1];
          const index = last ? symbol.node.items.indexOf(last) + 1 : symbol.node.items.length;
          const created = hiddenPropertyNode(field, value, toMm(symbol.placement.at));
          const version = this.fileOf(symbol).version;
          insertChild(symbol.node, adaptNewField(symbol.node, created, version), index);
          layOutInserted(symbol.node, created, 2, version);
        }
        if (field === "Reference") {
          for (const path of children(child(child(symbol.node, "instances") ?? symbol.node, "project") ?? symbol.node, "path")) {
            const reference = child(path, "reference");
            if (reference && text(reference, 1) === ref) setAtom(reference, 1, q(value));
          }
        }
        // A KiCad 6 root's instance rows hold the reference, and a value and footprint that
        // KiCad reads over the symbol's own fields.
        if (this.legacyInstances) {
          const root = this.project.root.file.doc.root;
          if (field === "Reference") setLegacyInstanceField(root, symbol.uuid, "reference", value, ref);
          else if (field === "Value") setLegacyInstanceField(root, symbol.uuid, "value", value);
          else if (field === "Footprint") setLegacyInstanceField(root, symbol.uuid, "footprint", value);
        }
      }
    });
  }

  /**
   * Sets a part's placement attributes on every unit: do not populate, exclude from the BOM,
   * exclude from the board (KiCad's `on_board no`, so board sync removes its footprint), exclude
   * from simulation. Attributes left undefined keep their value.
   */
  setAttributes(ref: string, attributes: PartAttributes): void {
    const units = this.unitsOf(ref);
    const flags: [keyof PartAttributes, string, boolean][] = [
      ["excludeFromSim", "exclude_from_sim", false],
      ["excludeFromBom", "in_bom", true],
      ["excludeFromBoard", "on_board", true],
      ["dnp", "dnp", false],
    ];
    // An attribute the sheet's format does not have would upgrade the file; say so instead.
    const since: Partial<Record<keyof PartAttributes, FormatChange>> = { dnp: SCHEMATIC.dnp, excludeFromSim: SCHEMATIC.excludeFromSim };
    for (const symbol of unique(units.map((u) => u.symbol))) {
      const version = this.fileOf(symbol).version;
      for (const [key, change] of Object.entries(since) as [keyof PartAttributes, FormatChange][]) {
        if (attributes[key] === undefined || has(version, change)) continue;
        throw new CopperheadError("edit_conflict", `${ref}'s sheet is in ${describeVersion("schematic", version)} format, which has no ${key === "dnp" ? "do-not-populate" : "exclude-from-simulation"} attribute (it starts at ${change.since}).`, {
          fix: "Open and save the project in a newer KiCad to use it, or leave the attribute out.",
          ref,
        });
      }
    }
    this.edit(units.map((u) => u.instance.file), () => {
      for (const symbol of unique(units.map((u) => u.symbol))) {
        for (const [key, head, inverted] of flags) {
          const value = attributes[key];
          if (value === undefined) continue;
          setFlag(symbol.node, head, value !== inverted, this.fileOf(symbol).version);
        }
      }
    });
  }

  /**
   * Attaches a free pin to `net` in the sheet's style: a short wire to a pin, label or power
   * symbol of the net nearby when the way is free; otherwise a wire stub ending in an upright
   * power symbol (power nets: supply up, ground down, the stub bending when the pin faces
   * elsewhere), a global label (nets named by global labels) or a local label. `/Sheet/NAME`
   * names a local net of that sheet. A pin already on `net` is left alone; a pin wired to
   * anything else must be disconnected first.
   */
  connect(ref: string, pin: string, net: string): void {
    const hit = this.findPin(ref, pin);
    const target = this.netTarget(net, hit.instance, ref);
    const wiring = this.wiring(hit.instance);
    const self = (p: PinAt) => p.symbol === hit.symbol && p.lib === hit.lib;
    if (wiring.attached(hit.tip, self)) {
      const current = this.netOfPin(ref, hit.lib.number);
      if (current === target.expected) return;
      throw new CopperheadError("edit_conflict", `${ref} pin ${hit.lib.number} is already connected (to net ${current ?? "?"}).`, {
        fix: `Call disconnect on ${ref} pin ${hit.lib.number} first, then connect it to ${net}.`,
        ref,
        pin: hit.lib.number,
        net: current,
      });
    }
    // The pin's own drawing reaches past its tip on some symbols (an LED's light arrows), and a
    // wire leaving the pin outward never crosses the symbol it belongs to.
    const space = new SheetSpace(hit.instance.file, { boxes: [symbolBodyBox(hit.symbol)] });
    const landing = this.landingOf(target);
    const stubs = stubRoutes(hit.tip, hit.outward, landing.kind === "power" ? landing.arrive : undefined);
    const landed = (r: Route) => (landing.kind === "power" ? landing : labelLanding(landing, r.points));
    // Best: a short wire to the net; then a stub whose landing is free; last, on a crowded
    // sheet, the shortest stub that touches nothing, even if its label or symbol crowds a text.
    const route =
      joinRoutes(hit.tip, hit.outward, this.netPoints(target, hit, wiring)).find((r) => routeUsable(r, wiring, space, undefined)) ??
      stubs.find((r) => routeUsable(r, wiring, space, landed(r))) ??
      stubs.find((r) => routeUsable(r, wiring, space, undefined));
    if (!route) {
      throw new CopperheadError("edit_conflict", `No room to connect ${ref} pin ${hit.lib.number} to ${net}: something is drawn in the way.`, {
        fix: "Move the part (move_symbol) or what is in front of the pin and retry, or connect another pin.",
        ref,
        pin: hit.lib.number,
      });
    }
    const file = hit.instance.file;
    const end = route.points[route.points.length - 1]!;
    this.edit(
      this.withInstanceRows(file),
      () => {
        for (const node of wiring.noConnectsAt(hit.tip)) removeChild(file.doc.root, node);
        for (let i = 1; i < route.points.length; i++) insertItem(file, lineNode("wire", toMm(route.points[i - 1]!), toMm(route.points[i]!), crypto.randomUUID()));
        if (route.join) {
          if (needsJunction(wiring, end)) insertItem(file, junctionNode(toMm(end), crypto.randomUUID()));
        } else if (target.kind === "power") this.placePowerSymbol(hit.instance, target, end);
        else {
          const angle = labelAngle(lastLeg(route.points));
          if (target.kind === "local") insertItem(file, labelNode(target.text, toMm(end), angle, crypto.randomUUID()));
          else insertItem(file, globalLabelNode(target.text, toMm(end), target.shape, angle, crypto.randomUUID()));
        }
      },
      () => this.expectPinOnNet(ref, hit.lib.number, target.expected, hit.symbol),
    );
  }

  /**
   * Cuts a pin loose: the stub and label `connect` made (or any wires that lead only to labels,
   * power symbols or nothing) go; a wire into a larger net is cut back to where it meets it.
   */
  disconnect(ref: string, pin: string): void {
    const hit = this.findPin(ref, pin);
    const wiring = this.wiring(hit.instance);
    const plan = wiring.planDetach(hit.tip, (p) => p.symbol === hit.symbol && p.lib === hit.lib, "disconnect");
    if (plan.conflict) {
      throw new CopperheadError("edit_conflict", `Cannot disconnect ${ref} pin ${hit.lib.number}: ${plan.conflict}.`, {
        fix: "Redraw that part of the schematic in KiCad, or disconnect the other pins instead.",
        ref,
        pin: hit.lib.number,
      });
    }
    if (plan.remove.size === 0 && plan.moves.length === 0) return;
    this.edit(
      [hit.instance.file],
      () => applyPlan(hit.instance.file, plan, new Set()),
      () => {
        const net = this.netlist().nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === hit.lib.number));
        if (net && net.nodes.length > 1) {
          throw new CopperheadError("edit_conflict", `${ref} pin ${hit.lib.number} would still be on net ${net.name} after removing its wiring.`, {
            fix: "The pin is joined some other way (a wire over its tip, a bus); redraw that part in KiCad.",
            ref,
            pin: hit.lib.number,
          });
        }
      },
    );
  }

  /**
   * Renames a net by renaming what names it: local, hierarchical (with the matching sheet pins)
   * and global labels, or power symbols' Value. `name` is the netlist name (`/LED_A`, `+3V3`) or
   * a unique short name (`LED_A`); `to` is the new netlist name, or for a local net just the new label text. Checked against
   * the netlist: the same pins end up on `to`, and no other net changes.
   */
  renameNet(name: string, to: string): void {
    const before = this.netlist();
    const from = resolveNet(before.nets.map((n) => n.name), name);
    const old = before.nets.find((n) => n.name === from)!;
    const scope = this.renameScope(from, to);
    if (before.nets.some((n) => n.name === scope.newName)) {
      throw new CopperheadError("edit_conflict", `A net named ${scope.newName} already exists; renaming ${from} would merge the two.`, {
        fix: "Pick a name no net uses, or connect the pins explicitly if merging is intended.",
        net: from,
      });
    }
    if (scope.renames.length === 0) {
      throw new CopperheadError("edit_conflict", `Net ${from} is named only by its pins; no label or power symbol names it.`, {
        fix: `Name it first: connect one of its pins (e.g. ${old.nodes[0] ? `${old.nodes[0].ref} pin ${old.nodes[0].pin}` : "one"}) to the new name with connect.`,
        net: from,
      });
    }
    this.edit(
      scope.renames.map((r) => r.file),
      () => {
        for (const rename of scope.renames) rename.apply();
      },
      () => {
        const after = this.netlist();
        const problems = compareRenamed(before, after, scope.expected);
        if (problems.length > 0) {
          throw new CopperheadError("edit_conflict", `Renaming ${from} to ${scope.newName} would change more than that net: ${problems.slice(0, 5).join("; ")}.`, {
            fix: "Some pins join the net another way (hidden power pins, a second label); rename those in KiCad.",
            net: from,
          });
        }
      },
    );
  }

  /** Puts a no-connect flag on a free pin (ERC then knows it is unused on purpose). */
  markNoConnect(ref: string, pin: string): void {
    const hit = this.findPin(ref, pin);
    const wiring = this.wiring(hit.instance);
    if (wiring.noConnectsAt(hit.tip).length > 0) return;
    if (wiring.attached(hit.tip, (p) => p.symbol === hit.symbol && p.lib === hit.lib)) {
      const current = this.netOfPin(ref, hit.lib.number);
      throw new CopperheadError("edit_conflict", `${ref} pin ${hit.lib.number} is connected (to net ${current ?? "?"}); a no-connect flag would contradict that.`, {
        fix: `Call disconnect on ${ref} pin ${hit.lib.number} first.`,
        ref,
        pin: hit.lib.number,
      });
    }
    this.edit([hit.instance.file], () => insertItem(hit.instance.file, noConnectNode(toMm(hit.tip), crypto.randomUUID())));
  }

  // --- Results ----------------------------------------------------------------------------

  /** Absolute paths of the sheets whose text differs from what was loaded (or last saved). */
  changedFiles(): string[] {
    return this.transactions.changed().map((f) => f.path);
  }

  /** The current text of a sheet of the project (a lossless string: for showing and comparing). */
  print(file: string): string {
    return printSexpr(this.file(file).doc);
  }

  /** The current bytes of a sheet of the project, as they are written. */
  bytes(file: string): Uint8Array {
    return printSexprBytes(this.file(file).doc);
  }

  /** Writes the changed sheets back to disk; returns their paths. */
  save(): string[] {
    return this.transactions.save();
  }

  /** The netlist of the edited trees, as kicad-cli would export it (built once per state of the trees). */
  netlist(): Netlist {
    const revision = this.project.revision;
    if (this.built?.revision !== revision) this.built = { revision, netlist: buildNetlist(this.project) };
    return this.built.netlist;
  }

  // --- Transactions -----------------------------------------------------------------------

  /** Runs an edit of `files` (see `SchematicTransactions.run`). */
  private edit(files: Iterable<SchematicFile>, change: () => void, then?: () => void): void {
    this.transactions.run(files, change, then);
  }

  /** A sheet and, in a KiCad 6 project, the root (placing a symbol there writes its instance rows). */
  private withInstanceRows(file: SchematicFile): SchematicFile[] {
    return this.legacyInstances ? [file, this.project.root.file] : [file];
  }

  /** True when the project keeps symbol references in the root's `symbol_instances` (KiCad 6). */
  private get legacyInstances(): boolean {
    return instancesInRoot(this.project.root.file.version);
  }

  /**
   * Inserts a placed symbol built with its `(instances)`. In a KiCad 6 project the instance
   * data goes into the root's `symbol_instances` instead, as KiCad 6 writes it.
   */
  private placeSymbol(file: SchematicFile, node: SList): void {
    if (this.legacyInstances) {
      const instances = child(node, "instances")!;
      removeChild(node, instances);
      const uuid = childText(node, "uuid") ?? "";
      const field = (name: string) => text(children(node, "property").find((p) => text(p, 1) === name) ?? node, 2) ?? "";
      const rootFile = this.project.root.file;
      addLegacyInstances(
        rootFile.doc.root,
        rootFile.version,
        children(child(instances, "project")!, "path").map((path) => ({
          path: legacyInstancePath(text(path, 1) ?? "", this.project.root.path, uuid),
          reference: childText(path, "reference") ?? "",
          unit: Number(childText(path, "unit") ?? 1),
          value: field("Value"),
          footprint: field("Footprint"),
        })),
      );
    }
    insertItem(file, node);
  }

  /** The sheet file a placed symbol is in. */
  private fileOf(symbol: PlacedSymbol): SchematicFile {
    return [...this.project.files.values()].find((f) => f.symbols.includes(symbol))!;
  }

  // --- Lookups ----------------------------------------------------------------------------

  private file(path: string): SchematicFile {
    const file = this.project.files.get(resolve(path));
    if (!file) {
      throw new CopperheadError("not_found", `${path} is not a sheet of this project.`, {
        fix: suggestion("sheets", path, [...this.project.files.keys()]),
        file: path,
      });
    }
    return file;
  }

  private instancesOf(file: SchematicFile): SheetInstance[] {
    return this.project.instancesOf(file);
  }

  private wiring(instance: SheetInstance): SheetWiring {
    return new SheetWiring(instance.file, instance.path, this.project.projectName);
  }

  private sheetInstance(sheet: string): SheetInstance {
    const trimmed = sheet.trim().replace(/^\/+|\/+$/g, "");
    const wanted = trimmed === "" ? "/" : `/${trimmed}/`;
    const found = this.project.instances.find((i) => i.humanPath === wanted);
    if (!found) {
      throw new CopperheadError("not_found", `No sheet ${wanted} in this design.`, {
        fix: suggestion("sheets", wanted, this.project.instances.map((i) => i.humanPath)),
        sheet,
      });
    }
    return found;
  }

  /** Every reference in the design (all instances), power symbols included. */
  private references(): Set<string> {
    const refs = new Set<string>();
    for (const instance of this.project.instances) {
      for (const symbol of instance.file.symbols) refs.add(symbolInstance(symbol, instance.path, this.project.projectName).reference);
    }
    return refs;
  }

  /**
   * References for a new symbol in `file`, one per sheet instance of it: the next free ones
   * for `prefix`, or `own.ref` (checked usable and free) in `own.instance`.
   */
  private newReferences(file: SchematicFile, prefix: string, own?: { instance: SheetInstance; ref: string }): Map<SheetInstance, string> {
    const taken = this.references();
    if (own) this.checkNewReference(own.ref, taken);
    const refs = new Map<SheetInstance, string>();
    for (const instance of this.instancesOf(file)) {
      const ref = own && instance === own.instance ? own.ref : nextFreeReference(prefix, taken);
      taken.add(ref);
      refs.set(instance, ref);
    }
    return refs;
  }

  private checkNewReference(ref: string, taken: Set<string>): void {
    if (!/^[^\s?]*[^\s\d?][0-9]+$/.test(ref)) {
      throw new CopperheadError("usage", `"${ref}" is not a usable reference; references are a prefix and a number, e.g. C3.`, {
        fix: "Pass a reference such as R12, or leave it out to get the next free one.",
        ref,
      });
    }
    if (taken.has(ref)) {
      throw new CopperheadError("edit_conflict", `Reference ${ref} is already used.`, {
        fix: "Leave the reference out to get the next free one, or pick an unused one.",
        ref,
      });
    }
  }

  private unitsOf(ref: string): PlacedUnit[] {
    const units: PlacedUnit[] = [];
    for (const instance of this.project.instances) {
      for (const symbol of instance.file.symbols) {
        const own = symbolInstance(symbol, instance.path, this.project.projectName);
        if (own.reference === ref) units.push({ instance, symbol, unit: own.unit });
      }
    }
    if (units.length === 0) {
      const all = [...this.references()].filter((r) => r !== "" && (ref.startsWith("#") || !r.startsWith("#"))).sort(naturalCompare);
      throw new CopperheadError("not_found", `No component ${ref} in this design.`, { fix: suggestion("references", ref, all), ref });
    }
    return units;
  }

  /** A pin by number, or by name when the name is unique on the part. */
  private findPin(ref: string, pin: string): PinHit {
    const units = this.unitsOf(ref);
    const candidates = units.flatMap((u) => unitPins(u.symbol, u.unit).map((lib) => ({ ...u, lib })));
    let matches = candidates.filter((c) => c.lib.number === pin);
    if (matches.length === 0) {
      const named = (exact: boolean) => candidates.filter((c) => (exact ? c.lib.name === pin : c.lib.name.toLowerCase() === pin.toLowerCase()));
      matches = named(true).length > 0 ? named(true) : named(false);
      const numbers = unique(matches.map((m) => m.lib.number));
      if (numbers.length > 1) {
        throw new CopperheadError("not_found", `${ref} has ${numbers.length} pins named ${pin} (${numbers.join(", ")}); name one by number.`, {
          fix: `Use one of the pin numbers ${numbers.join(", ")}.`,
          ref,
          pin,
          pins: numbers,
        });
      }
    }
    const match = matches[0];
    if (!match) {
      const listed = unique(candidates.map((c) => (c.lib.name && c.lib.name !== c.lib.number ? `${c.lib.number} (${c.lib.name})` : c.lib.number)));
      listed.sort(naturalCompare);
      const close = closeMatches(pin, candidates.flatMap((c) => [c.lib.number, c.lib.name]).filter(Boolean));
      throw new CopperheadError("not_found", `${ref} has no pin ${pin}.`, {
        fix: `${close.length > 0 ? `Did you mean ${close.join(", ")}? ` : ""}Pins of ${ref}: ${listed.join(", ")}.`,
        ref,
        pin,
        pins: listed,
      });
    }
    const placement = match.symbol.placement;
    return {
      ...match,
      ref,
      tip: placePoint(match.lib.at, placement),
      outward: placeDirection(pinOutwardLib(match.lib.orientation), placement),
    };
  }

  private netOfPin(ref: string, pin: string): string | undefined {
    return this.netlist().nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
  }

  private expectPinOnNet(ref: string, pin: string, expected: string, symbol: PlacedSymbol): void {
    // Pins of parts not on the board (and of `#` symbols) never reach the netlist.
    if (!symbol.onBoard || ref.startsWith("#")) return;
    const actual = this.netOfPin(ref, pin);
    if (actual !== expected) {
      throw new CopperheadError("edit_conflict", `Connecting ${ref} pin ${pin} to ${expected} would put it on net ${actual ?? "?"} instead.`, {
        fix: `A stronger name already drives the nets labelled that way; connect ${ref} pin ${pin} to ${actual ?? "that net"} or pick another name.`,
        ref,
        pin,
        net: expected,
      });
    }
  }

  // --- Placement ------------------------------------------------------------------------------

  /** A library pin by number, or by its name when unique. */
  private libPinOf(lib: LibSymbol, libId: string, pin: string): LibPin {
    const byNumber = lib.pins.find((p) => p.number === pin);
    if (byNumber) return byNumber;
    const named = unique(lib.pins.filter((p) => p.name === pin).map((p) => p.number));
    if (named.length === 1) return lib.pins.find((p) => p.number === named[0])!;
    const listed = unique(lib.pins.map((p) => (p.name && p.name !== p.number ? `${p.number} (${p.name})` : p.number))).sort(naturalCompare);
    throw new CopperheadError("not_found", named.length > 1 ? `${libId} has ${named.length} pins named ${pin}; name one by number.` : `${libId} has no pin ${pin}.`, {
      fix: `Pins of ${libId}: ${listed.join(", ")}.`,
      pin,
      pins: listed,
    });
  }

  /**
   * The sheet a new part goes on and the box it should be near: the part or net named by
   * `near`, else the part sharing the most of the nets it will connect to (signal nets count
   * more than power nets), else the middle of what is drawn on the sheet.
   */
  private placementAnchor(args: AddComponentArgs, nets: string[]): { instance: SheetInstance; box: Box; near?: string } {
    const sheet = args.sheet !== undefined ? this.sheetInstance(args.sheet) : undefined;
    const netlist = this.netlist();
    const names = netlist.nets.map((n) => n.name);
    const wanted = nets.map((n) => lookupNet(names, n)).flatMap((l) => (l.kind === "found" ? [l.name] : []));
    let anchorRef = args.near !== undefined && this.references().has(args.near) ? args.near : undefined;
    if (args.near !== undefined && !anchorRef) {
      if (lookupNet(names, args.near).kind === "missing" && !/^[A-Za-z#]+\d+$/.test(args.near)) resolveNet(names, args.near);
      if (lookupNet(names, args.near).kind === "missing") this.unitsOf(args.near);
      const net = resolveNet(names, args.near);
      wanted.unshift(net);
      anchorRef = bestPartOn(netlist, [net], sheet ? (ref) => this.unitsOf(ref).some((u) => u.instance === sheet) : () => true);
      if (!anchorRef) {
        throw new CopperheadError("not_found", `Net ${net} has no part pin${sheet ? ` on sheet ${sheet.humanPath}` : ""} to place next to.`, {
          fix: "Name a part with near instead.",
          net,
        });
      }
    }
    anchorRef ??= wanted.length > 0 ? bestPartOn(netlist, wanted, sheet ? (ref) => this.unitsOf(ref).some((u) => u.instance === sheet) : () => true) : undefined;
    if (!anchorRef) {
      const instance = sheet ?? this.project.root;
      const content = new SheetSpace(instance.file).content;
      const page = pageArea(instance.file).area;
      const box = content ?? page;
      const centre = { x: Math.round((box.x0 + box.x1) / 2), y: Math.round((box.y0 + box.y1) / 2) };
      return { instance, box: pointBox(centre) };
    }
    const units = this.unitsOf(anchorRef).filter((u) => !sheet || u.instance === sheet);
    if (units.length === 0) {
      const on = unique(this.unitsOf(anchorRef).map((u) => u.instance.humanPath)).join(", ");
      throw new CopperheadError("edit_conflict", `${anchorRef} is on sheet ${on}, not ${sheet!.humanPath}; a part can only be placed next to a part on its own sheet.`, {
        fix: `Leave sheet out to place it on ${on}, or name a part on ${sheet!.humanPath} as near.`,
        ref: anchorRef,
      });
    }
    // Near the pins it shares nets with, when there are any; else near the part's drawing.
    const pinNets = new Map(netlist.nets.flatMap((n) => n.nodes.filter((node) => node.ref === anchorRef).map((node): [string, string] => [node.pin, n.name])));
    const tips = units.flatMap((u) => unitPins(u.symbol, u.unit).filter((p) => wanted.includes(pinNets.get(p.number) ?? "")).map((p) => ({ unit: u, tip: placePoint(p.at, u.symbol.placement) })));
    const unit = tips[0]?.unit ?? units[0]!;
    let box: Box | undefined;
    for (const t of tips.filter((t) => t.unit === unit)) box = union(box, pointBox(t.tip));
    box ??= symbolBox(unit.symbol, unit.unit);
    return { instance: unit.instance, box, near: anchorRef };
  }

  /** What a connection to `target` ends in, relative to the stub's end. */
  private landingOf(target: NetTarget): PinLanding {
    if (target.kind !== "power") return { kind: "label", text: target.text, flagged: target.kind === "global" };
    const def = target.def();
    const lib = libSymbolView(def);
    const pin = lib.pins[0]!;
    const upright: Placement = { at: { x: 0, y: 0 }, rotation: 0 };
    const offset = placePoint(pin.at, upright);
    const placement: Placement = { at: { x: -offset.x, y: -offset.y }, rotation: 0 };
    const out = placeDirection(pinOutwardLib(pin.orientation), upright);
    const body = libUnitBox(def, 1, 1);
    const drawn = body ? placeBox(body, placement) : undefined;
    const boxes = [drawn ?? pointBox({ x: 0, y: 0 }, toIU(1.27)), ...symbolFields(def, placement, { Value: target.value }).flatMap((f) => fieldBox(f, placement) ?? [])];
    // The wire arrives from the side away from the drawing: power pins have no length, and
    // older libraries give them any orientation (a pre-KiCad 6 GND points its pin up while its
    // triangle hangs below), so the drawing says which way the symbol stands.
    return { kind: "power", boxes, arrive: (drawn && towards(drawn)) ?? { x: -out.x, y: -out.y } };
  }

  /** Connection points of `target`'s net on the pin's sheet (pins, power symbols, labels), the pin's own part aside. */
  private netPoints(target: NetTarget, hit: PinHit, wiring: SheetWiring): Point[] {
    const net = this.netlist().nets.find((n) => n.name === target.expected);
    const onNet = new Set((net?.nodes ?? []).map((n) => `${n.ref}\u0000${n.pin}`));
    const points: Point[] = [];
    for (const pin of wiring.pins) {
      if (pin.symbol === hit.symbol) continue;
      if (onNet.has(`${pin.reference}\u0000${pin.lib.number}`)) points.push(pin.at);
      else if (pin.power && target.kind === "power" && fieldValue(pin.symbol, "Value") === target.value) points.push(pin.at);
    }
    for (const label of wiring.file.labels) {
      if (target.kind === "local" && label.kind !== "global" && label.text === target.text) points.push(label.at);
      if (target.kind === "global" && label.kind === "global" && label.text === target.text) points.push(label.at);
    }
    return points;
  }

  // --- Net names ----------------------------------------------------------------------------

  private netTarget(net: string, instance: SheetInstance, ref: string): NetTarget {
    if (net.startsWith("/")) {
      const base = net.slice(instance.humanPath.length);
      if (!net.startsWith(instance.humanPath) || base === "" || base.includes("/")) {
        throw new CopperheadError("edit_conflict", `${net} is a local net of another sheet, but ${ref} is on sheet ${instance.humanPath}; local nets do not cross sheets.`, {
          fix: `Use a global name (no leading /) to join across sheets, or a name on this sheet such as ${instance.humanPath}${net.split("/").pop() ?? "NAME"}.`,
          net,
          sheet: instance.humanPath,
        });
      }
      return { kind: "local", text: base, expected: net };
    }
    if (net === "") throw new CopperheadError("usage", "A net name is required.", { fix: "Pass the net name, e.g. GND or /LED_A." });
    for (const file of this.project.files.values()) {
      for (const symbol of file.symbols) {
        if (symbol.lib?.power === "global" && fieldValue(symbol, "Value") === net) {
          const cached = symbol.lib.node;
          return { kind: "power", libId: symbol.libKey, value: net, expected: net, def: () => this.tryResolve(symbol.libKey) ?? cloneNode(cached) };
        }
      }
    }
    for (const file of this.project.files.values()) {
      const label = file.labels.find((l) => l.kind === "global" && l.text === net);
      if (label) return { kind: "global", text: net, shape: (label.shape ?? "passive") as LabelShape, expected: net };
    }
    const libId = `power:${net}`;
    const def = /^[+-]?[\w.]+$/.test(net) ? this.tryResolve(libId) : undefined;
    if (def && child(def, "power")) return { kind: "power", libId, value: net, expected: net, def: () => def };
    // A short name means the one local net it names (see kicad/netlist/net-names.ts), else a new net here.
    const own = instance.humanPath + net;
    const found = lookupNet(this.netlist().nets.map((n) => n.name), net);
    if (found.kind === "found" && found.name.startsWith("/") && found.name !== own) return this.netTarget(found.name, instance, ref);
    if (found.kind === "ambiguous" && !found.candidates.includes(own)) resolveNet(found.candidates, net);
    return { kind: "local", text: net, expected: own };
  }

  private tryResolve(libId: string): SList | undefined {
    try {
      return this.libraries.resolveSymbol(libId);
    } catch (err) {
      if (err instanceof CopperheadError) return undefined;
      throw err;
    }
  }

  /** An upright power symbol whose pin lands on `end`. */
  private placePowerSymbol(instance: SheetInstance, target: Extract<NetTarget, { kind: "power" }>, end: Point): void {
    const file = instance.file;
    const { def, libName } = ensureLibSymbol(file, target.libId, target.def);
    const lib = libSymbolView(def);
    const rotation = 0;
    const offset = placePoint(lib.pins[0]!.at, { at: { x: 0, y: 0 }, rotation });
    const placement: Placement = { at: { x: end.x - offset.x, y: end.y - offset.y }, rotation };
    const refs = this.newReferences(file, referencePrefix(def, "#PWR"));
    const instances = [...refs].map(([i, reference]) => ({ path: i.path, reference }));
    this.placeSymbol(
      file,
      placedSymbolNode({
        libId: target.libId,
        libName,
        def,
        at: toMm(placement.at),
        rotation,
        unit: 1,
        uuid: crypto.randomUUID(),
        fields: symbolFields(def, placement, { Reference: refs.get(instance)!, Value: target.value }),
        pins: instancePinNumbers(lib, 1).map((number) => ({ number, uuid: crypto.randomUUID() })),
        project: this.project.projectName,
        instances,
      }),
    );
  }

  /**
   * What `renameNet` changes: the renames of each label, sheet pin and power symbol naming the
   * net (each with the file it changes), the netlist name it should end up with, and the name changes expected
   * elsewhere (the same local net in other instances of a shared sheet).
   */
  private renameScope(from: string, to: string): RenameScope {
    return from.startsWith("/") ? this.localRenameScope(from, to) : this.globalRenameScope(from, to);
  }

  /** `renameScope` for a global net: its global labels and global power symbols, in every sheet. */
  private globalRenameScope(from: string, to: string): RenameScope {
    const renames: Rename[] = [];
    if (to.startsWith("/") || to === "") {
      throw new CopperheadError("usage", `${from} is a global net; its new name must be global too (no leading /), not ${JSON.stringify(to)}.`, {
        fix: "Pass a name without a sheet path, e.g. +3V3_MCU.",
        net: from,
      });
    }
    const rootVersion = this.project.root.file.version;
    for (const file of this.project.files.values()) {
      for (const label of file.labels) if (label.kind === "global" && label.text === from) renames.push(renameText(file, label.node, to));
      for (const symbol of file.symbols) {
        if (symbol.lib?.power !== "global" || symbol.value !== from) continue;
        const pin = symbol.lib.pins[0];
        if (!has(rootVersion, SCHEMATIC.modernPowerSymbols) && pin?.type === "power_in" && pin.hidden) {
          throw new CopperheadError("edit_conflict", `${from} is named by the hidden pin of power symbol ${symbol.libId}: in this project's format (${describeVersion("schematic", rootVersion)}, before KiCad 7's modern power symbols) KiCad ignores a power symbol's Value, so renaming it would not rename the net.`, {
            fix: "Disconnect the pins from the power symbols and connect them to the new net, or open and save the project in KiCad 7 or newer first.",
            net: from,
          });
        }
        renames.push(renameValue(file, symbol, to));
      }
    }
    return { newName: to, renames, expected: new Map([[from, to]]) };
  }

  /** `renameScope` for a net local to a sheet: its labels, local power symbols, and the sheet pins facing its hierarchical labels. */
  private localRenameScope(from: string, to: string): RenameScope {
    const renames: Rename[] = [];
    const instance = [...this.project.instances].sort((a, b) => b.humanPath.length - a.humanPath.length).find((i) => from.startsWith(i.humanPath) && !from.slice(i.humanPath.length).includes("/"));
    const base = instance ? from.slice(instance.humanPath.length) : "";
    if (!instance || base === "") throw new CopperheadError("not_found", `No sheet holds net ${from}.`, { fix: "Pass the net name as the netlist shows it.", net: from });
    const newBase = to.startsWith("/") ? to.slice(instance.humanPath.length) : to;
    if ((to.startsWith("/") && !to.startsWith(instance.humanPath)) || newBase === "" || newBase.includes("/")) {
      throw new CopperheadError("usage", `${from} is local to sheet ${instance.humanPath}; its new name must stay on that sheet, not ${JSON.stringify(to)}.`, {
        fix: `Pass ${instance.humanPath}NEW_NAME or just NEW_NAME.`,
        net: from,
      });
    }
    const file = instance.file;
    for (const label of file.labels) {
      if ((label.kind === "local" || label.kind === "hierarchical") && label.text === base) renames.push(renameText(file, label.node, newBase));
    }
    for (const symbol of file.symbols) if (symbol.lib?.power === "local" && fieldValue(symbol, "Value") === base) renames.push(renameValue(file, symbol, newBase));
    // A hierarchical label and the sheet pins that face it are one connection: rename both.
    if (file.labels.some((l) => l.kind === "hierarchical" && l.text === base)) {
      for (const other of this.instancesOf(file)) {
        const pin = other.sheet?.pins.find((p) => p.name === base);
        if (pin) renames.push(renameText(other.parent!.file, pin.node, newBase));
      }
    }
    for (const sheet of file.sheets) {
      const pin = sheet.pins.find((p) => p.name === base);
      if (!pin) continue;
      renames.push(renameText(file, pin.node, newBase));
      const childInstance = instance.children.find((c) => c.sheet?.uuid === sheet.uuid);
      for (const label of childInstance?.file.labels ?? []) if (label.kind === "hierarchical" && label.text === base) renames.push(renameText(childInstance!.file, label.node, newBase));
    }
    const expected = new Map(this.instancesOf(file).map((i): [string, string] => [i.humanPath + base, i.humanPath + newBase]));
    return { newName: instance.humanPath + newBase, renames, expected };
  }

  /** What `like` copies from an existing part: its lib id, embedded symbol and every field but the reference. */
  private likeSource(ref: string): { libId: string; def: SList; values: Record<string, string> } {
    const { symbol } = this.unitsOf(ref)[0]!;
    if (!symbol.lib) {
      throw new CopperheadError("not_found", `${ref}'s symbol ${symbol.libKey} is not embedded in its sheet, so it cannot be copied.`, {
        fix: `Open and save the sheet in KiCad, or pass lib_id instead of like.`,
        ref,
      });
    }
    if (symbol.libKey !== symbol.libId) {
      throw new CopperheadError("edit_conflict", `${ref} uses a renamed copy of its library symbol (${symbol.libKey}); copperhead copies only symbols embedded under their lib id.`, {
        fix: `Pass lib_id ${symbol.libId} and the fields to copy instead of like.`,
        ref,
      });
    }
    const values = Object.fromEntries(symbol.fields.filter((f) => f.name !== "Reference").map((f) => [f.name, f.value]));
    return { libId: symbol.libId, def: cloneNode(symbol.lib.node), values };
  }

  /** A symbol embedded in one of the design's sheets under `libId`, copied fresh. */
  private embeddedSymbol(libId: string): SList | undefined {
    for (const file of this.project.files.values()) {
      const found = file.libSymbols.get(libId);
      if (found) return cloneNode(found.node);
    }
    return undefined;
  }

  /**
   * The symbol for `libId` as `lib_symbols` embeds it: the design's own embedded copy when a
   * sheet has one (so a new part matches the ones already placed, and symbols from libraries
   * the design no longer ships still work), else the libraries'; or a typed error with close lib ids.
   */
  private resolveLibSymbol(libId: string): SList {
    const embedded = this.embeddedSymbol(libId);
    if (embedded) return embedded;
    try {
      return this.libraries.resolveSymbol(libId);
    } catch (err) {
      if (!(err instanceof CopperheadError)) throw err;
      const nickname = libId.includes(":") ? libId.slice(0, libId.indexOf(":")) : "";
      let candidates: string[] = [];
      if (err.code === "symbol_not_found" && nickname) {
        try {
          const source = readDesignText(this.libraries.library("symbol", nickname).path, { within: null });
          candidates = [...source.matchAll(/^\t\(symbol "([^"]+)"/gm)].map((m) => `${nickname}:${m[1]}`);
        } catch {
          candidates = [];
        }
      } else if (err.code === "library_not_found") {
        candidates = this.libraries.entries("symbol").map((e) => `${e.nickname}:${libId.slice(libId.indexOf(":") + 1)}`);
      }
      const close = closeMatches(libId, candidates);
      throw new CopperheadError(err.code, err.message, {
        ...err.details,
        fix: close.length > 0 ? `Did you mean ${close.join(", ")}?` : err.fix,
        libId,
      });
    }
  }
}

// --- Tree helpers ----------------------------------------------------------------------------

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function toMm(p: Point): MmPoint {
  return [p.x / 10_000, p.y / 10_000];
}

/** Angle of a label at the end of a stub running along `d`, so it reads away from the wire. */
function labelAngle(d: Point): number {
  if (d.x < 0) return 180;
  if (d.y < 0) return 90;
  if (d.y > 0) return 270;
  return 0;
}

/** Order of a placed symbol's flags as eeschema writes them, after `(unit)` / `(body_style)`. */
const SYMBOL_FLAGS = ["exclude_from_sim", "in_bom", "on_board", "dnp"];

/** Sets `(name yes|no)` on a placed symbol, adding it in eeschema's order when missing. */
function setFlag(symbol: SList, name: string, value: boolean, version: number): void {
  const existing = child(symbol, name);
  if (existing) {
    setAtom(existing, 1, value ? "yes" : "no");
    return;
  }
  const rank = SYMBOL_FLAGS.indexOf(name);
  const before = symbol.items.findIndex((item) => item.type === "list" && (SYMBOL_FLAGS.indexOf(head(item) ?? "") > rank || ["uuid", "property", "pin", "instances"].includes(head(item) ?? "")));
  const flag = list(name, value ? "yes" : "no");
  insertChild(symbol, flag, before >= 0 ? before : symbol.items.length);
  layOutInserted(symbol, flag, 2, version);
}

/**
 * Inserts a top-level item where eeschema would save it (by item type, then by uuid), in the
 * file's own format version.
 */
function insertItem(file: SchematicFile, built: SList): void {
  const root = file.doc.root;
  const node = adaptSyntax(built, file.version);
  insertChild(root, node, itemPosition(root, node));
  layOutInserted(root, node, 1, file.version);
}

/** Where eeschema saves a top-level item: after the items of lower type rank and lower uuid. */
function itemPosition(root: SList, node: SList): number {
  const rank = itemRank(head(node) ?? "")!;
  const uuid = childText(node, "uuid") ?? "";
  let lastRanked = -1;
  for (let i = 0; i < root.items.length; i++) {
    const item = root.items[i]!;
    if (item.type !== "list") continue;
    const r = itemRank(head(item) ?? "");
    if (r === undefined) continue;
    if (r > rank || (r === rank && (childText(item, "uuid") ?? "") > uuid)) return i;
    lastRanked = i;
  }
  if (lastRanked >= 0) return lastRanked + 1;
  const trailer = root.items.findIndex((item) => item.type === "list" && ["sheet_instances", "symbol_instances", "embedded_fonts", "embedded_files"].includes(head(item) ?? ""));
  return trailer >= 0 ? trailer : root.items.length;
}

/**
 * Embeds the library symbol `libId` in the sheet's `lib_symbols` (sorted by name), in the
 * file's syntax, and returns the embedded node with the `lib_name` a new placed symbol needs.
 * A cached copy equal to the library's is reused. One that differs (the library changed since
 * the sheet was saved) is left to the symbols that use it, and the library's version goes in
 * beside it as `<name>_1`, `<name>_2`…, as eeschema does: reusing the stale copy would give the
 * new symbol a lib_symbol_mismatch, and replacing it would change the symbols already placed.
 */
function ensureLibSymbol(file: SchematicFile, libId: string, def: () => SList): { def: SList; libName?: string } {
  let cache = child(file.doc.root, "lib_symbols");
  if (!cache) {
    const after = ["title_block", "paper", "uuid"].map((h) => child(file.doc.root, h)).find(Boolean);
    cache = insertChild(file.doc.root, { type: "list", pre: "", items: [{ type: "atom", pre: "", raw: "lib_symbols" }], post: "", start: -1 }, after ? file.doc.root.items.indexOf(after) + 1 : 1) as SList;
  }
  const entries = children(cache, "symbol");
  const wanted = adaptSyntax(def(), file.version);
  const insert = (node: SList) => {
    const name = text(node, 1) ?? "";
    const next = entries.find((e) => (text(e, 1) ?? "") > name);
    insertChild(cache!, node, next ? cache!.items.indexOf(next) : cache!.items.length);
    layOutInserted(cache!, node, 2, file.version);
    return node;
  };
  const existing = entries.find((e) => text(e, 1) === libId);
  if (!existing) return { def: insert(wanted) };
  if (sameSymbolBody(existing, wanted)) return { def: existing };
  const itemName = libId.slice(libId.indexOf(":") + 1);
  for (let n = 1; ; n++) {
    const libName = `${itemName}_${n}`;
    const alternative = entries.find((e) => text(e, 1) === libName);
    if (!alternative) return { def: insert(renamedLibSymbol(wanted, libName)), libName };
    if (sameSymbolBody(alternative, wanted)) return { def: alternative, libName };
  }
}

/** A library symbol under another cache name; its unit sub-symbols (`<name>_<unit>_<style>`) follow. */
function renamedLibSymbol(def: SList, name: string): SList {
  const old = (text(def, 1) ?? "").slice((text(def, 1) ?? "").indexOf(":") + 1);
  setAtom(def, 1, q(name));
  for (const sub of children(def, "symbol")) setAtom(sub, 1, q(name + (text(sub, 1) ?? "").slice(old.length)));
  return def;
}

/** True when two cached library symbols hold the same content, whatever their names and layout. */
function sameSymbolBody(a: SList, b: SList): boolean {
  const tokens = (node: SList): string[] => {
    const out: string[] = [];
    const name = text(node, 1) ?? "";
    const base = name.slice(name.indexOf(":") + 1);
    const visit = (list: SList, top: boolean) => {
      list.items.forEach((item, i) => {
        if (item.type === "list") visit(item, false);
        else if (i === 1 && top) out.push("<name>");
        else if (i === 1 && head(list) === "symbol" && item.raw.startsWith(`"${base}_`)) out.push(item.raw.slice(base.length + 1));
        else out.push(item.raw);
      });
      out.push(")");
    };
    visit(node, true);
    return out;
  };
  const ta = tokens(a);
  const tb = tokens(b);
  return ta.length === tb.length && ta.every((t, i) => t === tb[i]);
}

/** Drops a `lib_symbols` entry no placed symbol of the sheet uses any more, as eeschema does on save. */
function pruneLibSymbol(file: SchematicFile, libKey: string): void {
  const cache = child(file.doc.root, "lib_symbols");
  if (!cache) return;
  const stillUsed = children(file.doc.root, "symbol").some((s) => (childText(s, "lib_name") ?? childText(s, "lib_id")) === libKey);
  if (stillUsed) return;
  const entry = children(cache, "symbol").find((e) => text(e, 1) === libKey);
  if (entry) removeChild(cache, entry);
}

/** Applies a detach plan; `done` keeps a node shared by several plans from being removed twice. */
function applyPlan(file: SchematicFile, plan: DetachPlan, done: Set<SList>): void {
  const root = file.doc.root;
  for (const node of plan.remove) {
    if (done.has(node) || !root.items.includes(node)) continue;
    done.add(node);
    removeChild(root, node);
    if (head(node) === "symbol") pruneLibSymbol(file, childText(node, "lib_name") ?? childText(node, "lib_id") ?? "");
  }
  for (const move of plan.moves) {
    if (done.has(move.node)) continue;
    done.add(move.node);
    const dx = (move.to.x - move.from.x) / 10_000;
    const dy = (move.to.y - move.from.y) / 10_000;
    const ats = [child(move.node, "at"), ...children(move.node, "property").map((p) => child(p, "at"))];
    for (const at of ats) {
      if (!at) continue;
      setAtom(at, 1, Math.round((Number(text(at, 1)) + dx) * 10_000) / 10_000);
      setAtom(at, 2, Math.round((Number(text(at, 2)) + dy) * 10_000) / 10_000);
    }
  }
}

/** The reference prefix a library symbol gives new parts (`R` for `R?`), `fallback` when it has none. */
function referencePrefix(def: SList, fallback: string): string {
  return (libraryFields(def).find((f) => f.name === "Reference")?.value ?? fallback).replace(/\?+$/, "");
}

/** The first `prefix<n>` (n ≥ 1) not in `taken`. */
function nextFreeReference(prefix: string, taken: Set<string>): string {
  const used = new Set<number>();
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)$`);
  for (const ref of taken) {
    const m = pattern.exec(ref);
    if (m) used.add(Number(m[1]));
  }
  let n = 1;
  while (used.has(n)) n++;
  return `${prefix}${n}`;
}

/** A view (pins, units) of a library symbol not yet in any sheet, read by the schematic reader itself. */
function libSymbolView(def: SList): LibSymbol {
  return readLibSymbol(def, RELEASES.schematic.at(-1)!.version)!;
}

/**
 * Pin numbers a placed unit lists, in eeschema's order: the unit's own pins (shared ones
 * included) first, then the other units' pins in unit order, each number once.
 */
function instancePinNumbers(lib: LibSymbol, unit: number): string[] {
  const ofUnit = (u: number) => lib.pins.filter((p) => (p.unit === 0 || p.unit === u) && (p.bodyStyle === 0 || p.bodyStyle === 1)).map((p) => p.number);
  const out = ofUnit(unit);
  for (let u = 1; u <= lib.unitCount; u++) if (u !== unit) out.push(...ofUnit(u));
  return unique(out);
}

/**
 * The fields of a freshly placed symbol: the library's, where the library puts them
 * (transformed like the symbol), with `values` overriding; `values` the library lacks follow,
 * hidden at the origin.
 */
function symbolFields(def: SList, placement: Placement, values: Record<string, string>): SList[] {
  const fields: SList[] = [];
  const lib = libraryFields(def);
  for (const f of lib) {
    const at = placePoint({ x: toIU(f.at[0]), y: toIU(f.at[1]) }, placement);
    fields.push(propertyNode(f.name, values[f.name] ?? f.value, toMm(at), f.angle, f.rest));
  }
  for (const [name, value] of Object.entries(values)) {
    if (!lib.some((f) => f.name === name)) fields.push(hiddenPropertyNode(name, value, toMm(placement.at)));
  }
  return fields;
}

/** What a new pin's connection ends in: an upright power symbol (boxes relative to its pin) or a label. */
type PinLanding = { kind: "power"; boxes: Box[]; arrive: Point } | { kind: "label"; text: string; flagged: boolean };

/** A label at the end of `points`, reading away from the last leg. */
function labelLanding(landing: Extract<PinLanding, { kind: "label" }>, points: Point[]): Landing {
  return { boxes: [labelBox({ x: 0, y: 0 }, landing.text.length, labelAngle(lastLeg(points)), landing.flagged)] };
}

/** Unit direction of a polyline's last segment. */
function lastLeg(points: Point[]): Point {
  const a = points[points.length - 2]!;
  const b = points[points.length - 1]!;
  return { x: Math.sign(b.x - a.x), y: Math.sign(b.y - a.y) };
}

/** The boxes `occupiedBoxes` gives one top-level item (so a space can leave exactly those out). */
function itemBoxes(file: SchematicFile, node: SList): Box[] {
  const symbol = file.symbols.find((s) => s.node === node);
  if (symbol) return [symbolBox(symbol, symbol.unit), ...symbol.fields.flatMap((f) => fieldBox(f.node, symbol.placement) ?? [])];
  const line = [...file.wires, ...file.buses].find((l) => l.node === node);
  if (line) return [union(pointBox(line.a), pointBox(line.b))];
  const label = file.labels.find((l) => l.node === node);
  if (label) return [labelBox(label.at, label.text.length, label.rotation, label.kind !== "local")];
  const marker = [...file.junctions, ...file.noConnects].find((m) => m.node === node);
  if (marker) return [pointBox(marker.at, toIU(1.27))];
  return [];
}

/** Renames a label or sheet pin. */
function renameText(file: SchematicFile, node: SList, value: string): Rename {
  return { file, apply: () => setAtom(node, 1, q(value)) };
}

/** Sets a power symbol's Value, which names its net. */
function renameValue(file: SchematicFile, symbol: PlacedSymbol, value: string): Rename {
  return {
    file,
    apply: () => {
      const prop = children(symbol.node, "property").find((p) => text(p, 1) === "Value");
      if (prop) setAtom(prop, 2, q(value));
    },
  };
}

/** Puts a moved symbol's origin at `at`, turned to `rotation`, with its `fields` (turned copies relative to the origin, see `turnedField`). */
function placeMoved(node: SList, fields: SList[], at: Point, rotation: number): void {
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

/** Shifts every position inside an item (its `at`s and polyline points) by `d` (IU). */
function shiftNode(node: SList, d: Point): void {
  const shift = (n: SList) => {
    setAtom(n, 1, Math.round((Number(text(n, 1)) + d.x / 10_000) * 10_000) / 10_000);
    setAtom(n, 2, Math.round((Number(text(n, 2)) + d.y / 10_000) * 10_000) / 10_000);
  };
  const visit = (n: SList) => {
    for (const item of n.items) {
      if (item.type !== "list") continue;
      const h = head(item);
      if (h === "at" || h === "xy") shift(item);
      else if (h !== "lib_symbols") visit(item);
    }
  };
  visit(node);
}

/**
 * A copy of a field turned with its symbol from `from` to `to` degrees about `origin`, the way
 * eeschema rotates one: the position turns, and each quarter turn swaps the stored angle
 * between horizontal and vertical (eeschema draws a field of a symbol turned by a quarter at
 * the other angle, so the text keeps reading the same way on screen). The copy is relative to
 * the symbol's origin.
 */
function turnedField(prop: SList, origin: Point, from: number, to: number): SList {
  const copy = cloneNode(prop);
  const at = child(copy, "at")!;
  let x = toIU(Number(text(at, 1))) - origin.x;
  let y = toIU(Number(text(at, 2))) - origin.y;
  const turns = ((Math.round((to - from) / 90) % 4) + 4) % 4;
  let angle = Number(text(at, 3) ?? 0);
  for (let i = 0; i < turns; i++) {
    [x, y] = [y, -x];
    angle = angle % 180 === 0 ? 90 : 0;
  }
  setAtom(at, 1, x / 10_000);
  setAtom(at, 2, y / 10_000);
  if (text(at, 3) !== undefined) setAtom(at, 3, angle);
  return copy;
}

/** Room for the stub and power symbol or label a pin at `tip` will get (its preferred route). */
function plannedWiring(tip: Point, outward: Point, landing: PinLanding): Box[] {
  const route = stubRoutes(tip, outward, landing.kind === "power" ? landing.arrive : undefined)[0]!;
  const end = route.points[route.points.length - 1]!;
  const landed = landing.kind === "power" ? landing : labelLanding(landing, route.points);
  return [...routeBoxes(route.points).slice(1), ...landed.boxes.map((b) => translate(b, end))];
}

/** The axis direction from the origin to the middle of `box`; undefined when it is centred there. */
function towards(box: Box): Point | undefined {
  const x = (box.x0 + box.x1) / 2;
  const y = (box.y0 + box.y1) / 2;
  if (x === 0 && y === 0) return undefined;
  return Math.abs(y) >= Math.abs(x) ? { x: 0, y: Math.sign(y) } : { x: Math.sign(x), y: 0 };
}

/** The drawing of a placed unit on the sheet. */
function symbolBox(symbol: PlacedSymbol, unit: number): Box {
  const body = symbol.lib ? libUnitBox(symbol.lib.node, unit, symbol.bodyStyle) : undefined;
  return body ? placeBox(body, symbol.placement) : pointBox(symbol.placement.at, toIU(2.54));
}

/**
 * The orientations a new unit may take, each with everything it will occupy relative to its
 * origin: drawing, visible fields, and per pin the stub and power symbol or label it will get
 * (or room for one). Orientations that put a supply pin down or a ground pin up cost extra.
 */
function unitShapes(def: SList, lib: LibSymbol, unit: number, values: Record<string, string>, landings: Map<string, PinLanding>, rotation?: number): Shape[] {
  // Turning a part only pays when it puts its power pins the right way up.
  const rotations = rotation !== undefined ? [rotation] : [...landings.values()].some((l) => l.kind === "power") ? [0, 180, 90, 270] : [0];
  const pins = lib.pins.filter((p) => (p.unit === 0 || p.unit === unit) && (p.bodyStyle === 0 || p.bodyStyle === 1) && !p.hidden);
  return rotations.map((r) => {
    const placement: Placement = { at: { x: 0, y: 0 }, rotation: r };
    const drawing = libUnitBox(def, unit, 1);
    const body = drawing ? placeBox(drawing, placement) : pointBox({ x: 0, y: 0 }, toIU(2.54));
    const boxes = [body, ...symbolFields(def, placement, values).flatMap((f) => fieldBox(f, placement) ?? [])];
    let penalty = r % 180 === 0 ? (r === 0 ? 0 : TURNED / 2) : TURNED;
    for (const pin of pins) {
      const tip = placePoint(pin.at, placement);
      const outward = placeDirection(pinOutwardLib(pin.orientation), placement);
      const landing = landings.get(pin.number);
      if (!landing) {
        boxes.push(grow(union(pointBox(tip), pointBox({ x: tip.x + outward.x * PIN_REACH, y: tip.y + outward.y * PIN_REACH })), PIN_SPREAD));
        continue;
      }
      if (landing.kind === "power" && !samePoint(landing.arrive, outward)) penalty += UPSIDE_DOWN;
      boxes.push(...plannedWiring(tip, outward, landing));
    }
    return { rotation: r, penalty, body, boxes };
  });
}

/**
 * Checks a rename against the netlists before and after: every net keeps its pins, and only
 * the expected names change.
 */
function compareRenamed(before: Netlist, after: Netlist, renamed: Map<string, string>): string[] {
  const key = (nodes: { ref: string; pin: string }[]) => nodes.map((n) => `${n.ref}.${n.pin}`).sort().join(" ");
  const afterByName = new Map(after.nets.map((n) => [n.name, key(n.nodes)]));
  const problems: string[] = [];
  for (const net of before.nets) {
    const name = renamed.get(net.name) ?? net.name;
    const pins = afterByName.get(name);
    if (pins === undefined) problems.push(`net ${net.name} would not become ${name}`);
    else if (pins !== key(net.nodes)) problems.push(`net ${name} would have pins ${pins || "none"} instead of ${key(net.nodes)}`);
  }
  if (after.nets.length !== before.nets.length) problems.push(`${after.nets.length} nets instead of ${before.nets.length}`);
  return problems;
}
