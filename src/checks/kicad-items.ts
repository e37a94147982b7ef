/**
 * Naming the objects kicad-cli's reports point at. ERC and DRC items carry only a uuid (their
 * positions are unreliable and their descriptions translated), so findings are keyed by what
 * the uuid names in the design — `U1.5`, `label:VBUS`, `track:GND` — which survives moves and
 * re-routing and lets `do` tell a new finding from a baseline one.
 */
import { child, childText, children, head, text, type SList } from "../kicad/sexpr.ts";
import { fieldValue, symbolInstance } from "../kicad/schematic.ts";
import type { Board } from "../kicad/board.ts";
import type { Design } from "../design/design.ts";

export interface ItemIdentity {
  /** Stable name used in keys, e.g. `U1.5`, `R3`, `label:VBUS`, `track:GND`. */
  id: string;
  ref?: string;
  pin?: string;
  net?: string;
  /** Absolute path of the file holding the object. */
  file: string;
}

/** uuid → identity, per sheet instance path (one sheet file may be placed several times). */
export type SchematicIndex = Map<string, Map<string, ItemIdentity>>;

export function indexSchematic(design: Design): SchematicIndex {
  const index: SchematicIndex = new Map();
  const { projectName } = design.schematic;
  for (const instance of design.schematic.instances) {
    const items = new Map<string, ItemIdentity>();
    const file = instance.file.path;
    for (const symbol of instance.file.symbols) {
      const { reference } = symbolInstance(symbol, instance.path, projectName);
      const ref = reference || (fieldValue(symbol, "Reference") ?? "?");
      items.set(symbol.uuid, { id: ref, ref, file });
      for (const pin of children(symbol.node, "pin")) {
        const uuid = childText(pin, "uuid");
        const number = text(pin, 1);
        if (uuid && number !== undefined) items.set(uuid, { id: `${ref}.${number}`, ref, pin: number, file });
      }
    }
    for (const label of instance.file.labels) {
      const uuid = childText(label.node, "uuid");
      if (uuid) items.set(uuid, { id: `${label.kind === "local" ? "label" : `${label.kind}_label`}:${label.text}`, file });
    }
    for (const sheet of instance.file.sheets) {
      items.set(sheet.uuid, { id: `sheet:${sheet.name}`, file });
      for (const pin of sheet.pins) {
        const uuid = childText(pin.node, "uuid");
        if (uuid) items.set(uuid, { id: `sheet:${sheet.name}:${pin.name}`, file });
      }
    }
    index.set(instance.path, items);
  }
  return index;
}

/** uuid → identity for footprints, pads, tracks, vias and zones. */
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
    for (const pad of fp.pads) {
      const padUuid = childText(pad.node, "uuid");
      if (padUuid) items.set(padUuid, { id: `${fp.ref}.${pad.number}`, ref: fp.ref, pin: pad.number, net: pad.net?.name, file });
    }
  }
  for (const item of board.root.items) {
    if (item.type !== "list") continue;
    const kind = head(item);
    const uuid = childText(item, "uuid");
    if (!uuid) continue;
    if (kind === "segment" || kind === "arc") items.set(uuid, trackIdentity("track", netOf(item), file));
    else if (kind === "via") items.set(uuid, trackIdentity("via", netOf(item), file));
    else if (kind === "zone") items.set(uuid, trackIdentity("zone", childText(item, "net_name") ?? netOf(item), file));
    else if (kind?.startsWith("gr_")) items.set(uuid, { id: `${kind.slice(3)}:${childText(item, "layer") ?? "?"}`, file });
  }
  return items;
}

function trackIdentity(kind: string, net: string | undefined, file: string): ItemIdentity {
  return { id: `${kind}:${net || "no-net"}`, net: net || undefined, file };
}
