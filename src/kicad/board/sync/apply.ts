/**
 * Carrying out a board sync plan on the board tree, in place, through the lossless engine:
 * everything the plan does not name — routed copper, zones, graphics, the formatting of
 * untouched footprints — keeps its bytes, and what it writes is in the board's own dialect.
 */
import { CopperheadError } from "../../../errors.ts";
import type { Board, Footprint } from "../model.ts";
import { NetTable } from "../nets.ts";
import { footprintId, type BoardSyncPlan, type FootprintUpdate, type PadNet } from "./plan.ts";
import { keepFootprintSettings } from "../footprint/exchange.ts";
import { setFootprintField, setSheetData, setSymbolPath } from "../footprint/fields.ts";
import { footprintInDialect, insertInDialect, legacyLayout } from "../footprint/dialect.ts";
import { addAttrFlags, instantiateFootprint, type SilkTextMinimum } from "../footprint/instance.ts";
import { boardDialect, type BoardDialect } from "../../format-versions.ts";
import type { Libraries } from "../../library/libraries.ts";
import { afterLast, BOARD_HEADER, FOOTPRINT_HEADER, PAD_BEFORE_NET } from "../../sexpr/node-order.ts";
import { child, children, isList, list, num, q, removeChild, setAtom, text, type SList } from "../../sexpr/index.ts";

/**
 * Carries out a plan made by `planBoardSync` for this same board, in place. Throws
 * `internal_error` when the board is not the one the plan was made for (a footprint moved or
 * vanished), and a library error when a footprint cannot be read, before changing anything.
 * Returns the footprints it added, by reference: the board may hold another footprint bearing
 * the same reference (one only on the board, or one of a part never annotated), so an added
 * footprint is known by the node written, not looked up by its reference.
 */
export function applyBoardSync(
  board: Board,
  plan: BoardSyncPlan,
  libraries: Libraries,
  silkText?: SilkTextMinimum,
): Map<string, SList> {
  const dialect = boardDialect(board.version);
  const footprints = board.footprints();
  const located = (entry: { index: number; uuid: string; ref: string }): Footprint => {
    const fp = footprints[entry.index];
    if (!fp || footprintId(fp) !== entry.uuid) {
      throw new CopperheadError(
        "internal_error",
        `The board sync plan does not match the board (footprint ${entry.ref} is not where the plan says).`,
        {
          fix: "Plan again against the current board.",
        },
      );
    }
    return fp;
  };
  const removals = plan.removed.map(located);
  const updates = plan.updated.map((u) => ({ update: u, fp: located(u) }));
  const newLibraries = new Map<string, SList>();
  for (const id of [
    ...plan.added.map((a) => a.libId),
    ...plan.updated.flatMap((u) => (u.footprint?.kind === "swap" ? [u.footprint.to] : [])),
  ]) {
    newLibraries.set(id, libraries.resolveFootprint(id).doc.root);
  }
  const nets = new NetTable(board, plan.netFormat, dialect);
  const ids = layerIds(board);

  for (const change of plan.renets)
    if (change.from !== undefined && change.to !== undefined) nets.rename(change.from, change.to);
  for (const change of plan.renets)
    if (change.from === undefined && change.to !== undefined) nets.add(change.to, change.code);

  for (const fp of removals) removeChild(board.root, fp.node);

  for (const { update, fp } of updates) {
    if (update.footprint?.kind === "swap") {
      swapFootprint(board, fp, update, newLibraries.get(update.footprint.to)!, nets, ids, dialect, silkText);
      continue;
    }
    if (update.footprint) setAtom(fp.node, 1, q(update.footprint.to));
    applyFieldChanges(fp, update, dialect);
    for (const change of update.pads) {
      const pad = fp.pads[change.index];
      if (!pad || pad.number !== change.pad)
        throw new CopperheadError("internal_error", `Pad ${change.pad} of ${update.ref} is not where the plan says.`, {
          fix: "Plan again against the current board.",
        });
      writePadNet(
        pad.node,
        change.to === undefined
          ? undefined
          : { net: change.to, pinfunction: change.pinfunction, pintype: change.pintype },
        nets,
        dialect,
      );
    }
  }

  const added = new Map<string, SList>();
  for (const add of plan.added) {
    const node = instantiateFootprint(newLibraries.get(add.libId)!, {
      libId: add.libId,
      uuidSeed: add.uuidSeed,
      at: add.at,
      side: add.side,
      reference: add.ref,
      value: add.value,
      fields: add.fields,
      path: add.path,
      sheetname: add.sheetname,
      sheetfile: add.sheetfile,
      flags: add.flags,
      layerIds: ids,
      silkText,
      hideReference: add.hideReference,
    });
    footprintInDialect(node, dialect);
    assignPadNets(node, add.pads, nets, dialect);
    insertFootprint(board.root, node, dialect);
    added.set(add.ref, node);
  }

  for (const change of plan.renets) if (change.from !== undefined && change.to === undefined) nets.remove(change.from);
  return added;
}

function applyFieldChanges(fp: Footprint, update: FootprintUpdate, dialect: BoardDialect): void {
  if (update.reference) setFootprintField(fp, dialect, "Reference", update.reference.to);
  if (update.value) setFootprintField(fp, dialect, "Value", update.value.to);
  for (const field of update.fields) setFootprintField(fp, dialect, field.name, field.to);
  if (update.path) setSymbolPath(fp, dialect, update.path.to);
  if (update.sheetname) setSheetData(fp, dialect, "sheetname", update.sheetname.to);
  if (update.sheetfile) setSheetData(fp, dialect, "sheetfile", update.sheetfile.to);
  if (update.flags) setFootprintFlags(fp, dialect, update.flags);
}

/**
 * Adds and removes `(attr …)` flags of a footprint in place, in KiCad's order and the board's
 * dialect; an `(attr)` left with no flag is removed, as KiCad writes none.
 */
export function setFootprintFlags(
  fp: Footprint,
  dialect: BoardDialect,
  flags: { add: string[]; remove: string[] },
): void {
  const node = fp.node;
  let attr = child(node, "attr");
  if (!attr && flags.add.length > 0) {
    attr = list("attr");
    insertInDialect(
      node,
      attr,
      afterLast(node, [
        ...FOOTPRINT_HEADER,
        "property",
        "path",
        "sheetname",
        "sheetfile",
        "private_layers",
        "net_tie_pad_groups",
        "solder_mask_margin",
        "solder_paste_margin",
        "solder_paste_margin_ratio",
        "clearance",
        "zone_connect",
      ]),
      dialect,
    );
  }
  if (!attr) return;
  addAttrFlags(attr, flags.add);
  attr.items = [
    attr.items[0]!,
    ...attr.items.slice(1).filter((a) => !(a.type === "atom" && flags.remove.includes(a.raw))),
  ];
  if (attr.items.length === 1) removeChild(node, attr);
  else attr.items.slice(1).forEach((a) => (a.pre = " "));
}

/** Replaces a footprint by the new library footprint at the same place, keeping what KiCad keeps. */
function swapFootprint(
  board: Board,
  fp: Footprint,
  update: FootprintUpdate,
  library: SList,
  nets: NetTable,
  ids: Map<string, number>,
  dialect: BoardDialect,
  silkText: SilkTextMinimum | undefined,
): void {
  const fieldsNow = { ...fp.fields };
  for (const f of update.fields) fieldsNow[f.name] = f.to;
  const node = instantiateFootprint(library, {
    libId: update.footprint!.to,
    uuidSeed: `${update.uuid}|${update.footprint!.to}`,
    uuid: update.uuid.startsWith("ref:") ? undefined : update.uuid,
    at: fp.at,
    side: fp.layer.startsWith("B.") ? "back" : "front",
    reference: update.reference?.to ?? fp.ref,
    value: update.value?.to ?? fp.value,
    fields: Object.entries(fieldsNow)
      .filter(([name]) => name !== "Reference" && name !== "Value" && name !== "Footprint")
      .map(([name, value]) => ({ name, value })),
    path: update.path?.to ?? fp.path,
    sheetname: update.sheetname ? update.sheetname.to || undefined : fp.sheetname,
    sheetfile: update.sheetfile ? update.sheetfile.to || undefined : fp.sheetfile,
    flags: [
      ...fp.attributes.filter((a) => !update.flags?.remove.includes(a) && a !== "smd" && a !== "through_hole"),
      ...(update.flags?.add ?? []),
    ],
    locked: fp.locked,
    layerIds: ids,
    silkText,
  });
  footprintInDialect(node, dialect);
  keepFootprintSettings(fp, node);
  assignPadNets(node, update.footprint!.pads, nets, dialect);
  const index = board.root.items.indexOf(fp.node);
  removeChild(board.root, fp.node);
  placeFootprint(board.root, node, index, dialect);
}

/** Inserts a whole footprint at `index`, laid out the way the board's release writes one. */
function placeFootprint(root: SList, node: SList, index: number, dialect: BoardDialect): void {
  insertInDialect(root, node, index, dialect);
  if (dialect.release < 8) legacyLayout(node, 1, dialect);
}

function assignPadNets(node: SList, pads: PadNet[], nets: NetTable, dialect: BoardDialect): void {
  const queue = new Map<string, PadNet[]>();
  for (const p of pads) {
    if (!queue.has(p.pad)) queue.set(p.pad, []);
    queue.get(p.pad)!.push(p);
  }
  for (const pad of children(node, "pad")) {
    const list = queue.get(text(pad, 1) ?? "");
    const target = list && (list.length > 1 ? list.shift() : list[0]);
    if (target)
      writePadNet(pad, { net: target.net, pinfunction: target.pinfunction, pintype: target.pintype }, nets, dialect);
  }
}

/** Sets (or clears) a pad's net, with `pinfunction` and `pintype` as KiCad writes them. */
function writePadNet(
  pad: SList,
  target: { net: string; pinfunction?: string; pintype?: string } | undefined,
  nets: NetTable,
  dialect: BoardDialect,
): void {
  const remove = (name: string) => {
    const existing = child(pad, name);
    if (existing) removeChild(pad, existing);
  };
  if (!target) {
    remove("net");
    remove("pinfunction");
    remove("pintype");
    return;
  }
  const ref = nets.reference(target.net);
  const existing = child(pad, "net");
  if (existing)
    existing.items.splice(1, existing.items.length - 1, ...ref.items.slice(1).map((a) => ({ ...a, pre: " " })));
  else insertInDialect(pad, ref, afterLast(pad, PAD_BEFORE_NET), dialect);
  for (const [name, value] of [
    ["pinfunction", target.pinfunction],
    ["pintype", target.pintype],
  ] as const) {
    const node = child(pad, name);
    if (!value) {
      if (node) removeChild(pad, node);
    } else if (node) setAtom(node, 1, q(value));
    else insertInDialect(pad, list(name, q(value)), afterLast(pad, [...PAD_BEFORE_NET, "net", "pinfunction"]), dialect);
  }
}

/** Layer ids by name from the board's `(layers (0 "F.Cu" signal) …)` table. */
function layerIds(board: Board): Map<string, number> {
  const layers = child(board.root, "layers");
  const ids = new Map<string, number>();
  for (const entry of layers ? layers.items : []) {
    if (entry.type !== "list") continue;
    const id = num(entry, 0);
    const name = text(entry, 1);
    if (id !== undefined && name !== undefined) ids.set(name, id);
  }
  return ids;
}

/**
 * A new footprint goes where the board's release would save it: KiCad 8 and newer keep
 * footprints sorted by uuid, KiCad 6 and 7 in the order they were added (so: last).
 */
function insertFootprint(root: SList, node: SList, dialect: BoardDialect): void {
  const uuid = text(child(node, "uuid") ?? child(node, "tstamp")!, 1) ?? "";
  let lastFootprint = -1;
  for (let i = 0; i < root.items.length; i++) {
    const item = root.items[i]!;
    if (!isList(item, "footprint")) continue;
    lastFootprint = i;
    const other = child(item, "uuid");
    if (dialect.release >= 8 && other && (text(other, 1) ?? "") > uuid) {
      placeFootprint(root, node, i, dialect);
      return;
    }
  }
  placeFootprint(
    root,
    node,
    lastFootprint >= 0 ? lastFootprint + 1 : afterLast(root, [...BOARD_HEADER, "net"]),
    dialect,
  );
}
