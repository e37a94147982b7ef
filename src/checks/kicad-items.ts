/**
 * Naming the objects kicad-cli's reports point at. ERC and DRC items carry a uuid, a position
 * (an item's own, which moves with it) and a translated description, so findings are keyed by what
 * the uuid names in the design — `U1.5`, `U2B`, `label:VBUS`, `track:GND@F.Cu` — which survives moves and
 * re-routing and lets `do` tell a new finding from a baseline one.
 */
import { atomText, child, childText, children, head, text, type SList } from "../kicad/sexpr/index.ts";
import { fieldValue, symbolInstance, unitLetter } from "../kicad/schematic/model/symbols.ts";
import type { Board } from "../kicad/board/model.ts";
import type { Design } from "../design/design.ts";

export interface ItemIdentity {
  /**
   * Stable name used in keys, e.g. `U1.5`, `R3`, `U2B`, `label:VBUS`, `track:GND@F.Cu`; empty for
   * a footprint's text or drawing, which its description names (`Reference field of C3`).
   */
  id: string;
  ref?: string;
  pin?: string;
  net?: string;
  /** Absolute path of the file holding the object. */
  file: string;
  /** Human path of the sheet instance holding a schematic object, e.g. `/` or `/Power/`. */
  sheet?: string;
}

/** uuid → identity, per sheet instance path (one sheet file may be placed several times). */
export type SchematicIndex = Map<string, Map<string, ItemIdentity>>;

export function indexSchematic(design: Design): SchematicIndex {
  const index: SchematicIndex = new Map();
  const { projectName } = design.schematic;
  for (const instance of design.schematic.instances) {
    const items = new Map<string, ItemIdentity>();
    const file = instance.file.path;
    const sheet = instance.humanPath;
    const add = (uuid: string | undefined, identity: Omit<ItemIdentity, "file" | "sheet">) => {
      if (uuid) items.set(uuid, { ...identity, file, sheet });
    };
    for (const symbol of instance.file.symbols) {
      const { reference, unit } = symbolInstance(symbol, instance.path, projectName);
      const ref = reference || (fieldValue(symbol, "Reference") ?? "?");
      // A unit of a multi-unit part is named as KiCad shows it (U1A, U1B): each is its own object.
      add(symbol.uuid, { id: (symbol.lib?.unitCount ?? 1) > 1 ? `${ref}${unitLetter(unit)}` : ref, ref });
      for (const pin of children(symbol.node, "pin")) {
        const number = text(pin, 1);
        if (number !== undefined)
          add(childText(pin, "uuid"), {
            id: `${ref}.${number}`,
            ref,
            pin: number,
            net: design.netlist.pinNets.get(`${ref}.${number}`),
          });
      }
    }
    for (const label of instance.file.labels) {
      add(childText(label.node, "uuid"), {
        id: `${label.kind === "local" ? "label" : `${label.kind}_label`}:${label.text}`,
      });
    }
    for (const sheetSymbol of instance.file.sheets) {
      add(sheetSymbol.uuid, { id: `sheet:${sheetSymbol.name}` });
      for (const pin of sheetSymbol.pins)
        add(childText(pin.node, "uuid"), { id: `sheet:${sheetSymbol.name}:${pin.name}` });
    }
    // Wiring has no name of its own; its kind is what stays when it is moved or stretched.
    const wiring = [
      ["wire", instance.file.wires],
      ["bus", instance.file.buses],
      ["bus_entry", instance.file.busEntries],
      ["junction", instance.file.junctions],
      ["no_connect", instance.file.noConnects],
    ] as const;
    for (const [kind, list] of wiring) for (const item of list) add(childText(item.node, "uuid"), { id: kind });
    index.set(instance.path, items);
  }
  return index;
}

/**
 * Resolves an ERC item: first in the sheet instance that reported the violation, then anywhere
 * in the design (a global label's violation names labels on other sheets).
 */
export function schematicLookup(
  index: SchematicIndex,
  instancePath: string | undefined,
): (uuid: string) => ItemIdentity | undefined {
  const here = (instancePath && index.get(instancePath)) || new Map<string, ItemIdentity>();
  return (uuid) => {
    const found = here.get(uuid);
    if (found) return found;
    for (const items of index.values()) {
      const elsewhere = items.get(uuid);
      if (elsewhere) return elsewhere;
    }
    return undefined;
  };
}

/** A footprint's fields, texts and drawings. */
const FOOTPRINT_DRAWINGS = /^(property|fp_text|fp_text_box|fp_line|fp_rect|fp_circle|fp_arc|fp_poly|fp_curve)$/;

/** uuid → identity for footprints, their texts and drawings, pads, tracks, vias and zones. */
export function indexBoard(board: Board, file: string): Map<string, ItemIdentity> {
  const items = new Map<string, ItemIdentity>();
  const netNames = new Map(board.nets().flatMap((n) => (n.code === undefined ? [] : [[n.code, n.name] as const])));
  const netOf = (node: SList): string | undefined => {
    const net = child(node, "net");
    if (!net) return undefined;
    const first = text(net, 1);
    const named = text(net, 2);
    if (named !== undefined) return named;
    return first !== undefined && /^\d+$/.test(first) ? netNames.get(Number(first)) : first;
  };
  for (const fp of board.footprints()) {
    const uuid = childText(fp.node, "uuid");
    if (uuid) items.set(uuid, { id: fp.ref, ref: fp.ref, file });
    // Its texts and drawings (silkscreen findings name them): KiCad 6 and 7 write `tstamp`.
    for (const item of fp.node.items) {
      if (item.type !== "list" || !FOOTPRINT_DRAWINGS.test(head(item) ?? "")) continue;
      const id = childText(item, "uuid") ?? childText(item, "tstamp");
      if (id) items.set(id, { id: "", ref: fp.ref, file });
    }
    for (const pad of fp.pads) {
      const padUuid = childText(pad.node, "uuid");
      if (padUuid)
        items.set(padUuid, { id: `${fp.ref}.${pad.number}`, ref: fp.ref, pin: pad.number, net: pad.net?.name, file });
    }
  }
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const kind = head(item);
    const uuid = childText(item, "uuid");
    if (!uuid) continue;
    if (kind === "segment" || kind === "arc")
      items.set(uuid, copperIdentity("track", netOf(item), layersOf(item), file));
    else if (kind === "via") items.set(uuid, copperIdentity("via", netOf(item), [], file));
    else if (kind === "zone") {
      const teardrop = child(child(item, "attr") ?? item, "teardrop") !== undefined;
      items.set(
        uuid,
        copperIdentity(
          teardrop ? "teardrop" : "zone",
          childText(item, "net_name") ?? netOf(item),
          layersOf(item),
          file,
        ),
      );
    } else if (kind?.startsWith("gr_"))
      items.set(uuid, { id: `${kind.slice(3)}:${childText(item, "layer") ?? "?"}`, file });
  }
  return items;
}

/**
 * `track:GND@F.Cu`, `zone:GND@F.Cu,B.Cu`, `via:GND`: the net and the layers tell apart copper
 * that a designer sees as different things, and neither changes when the copper moves.
 */
function copperIdentity(kind: string, net: string | undefined, layers: string[], file: string): ItemIdentity {
  return {
    id: `${kind}:${net || "no-net"}${layers.length ? `@${layers.join(",")}` : ""}`,
    net: net || undefined,
    file,
  };
}

function layersOf(node: SList): string[] {
  const one = childText(node, "layer");
  if (one !== undefined) return [one];
  const many = child(node, "layers");
  if (!many) return [];
  return many.items.slice(1).flatMap((item) => (item.type === "atom" ? [atomText(item)] : []));
}
