/**
 * Adding a hierarchical sheet: a new `.kicad_sch` beside the root, placed by a sheet symbol on
 * its parent where there is room, carrying nets through hierarchical labels inside it and sheet
 * pins on the symbol, each pin wired on the parent to its net as `connect` wires a part's pin.
 *
 * The new file is written in the parent's format version, with the parent's paper and title
 * block, and its page comes after the last; its instance data (the sheet symbol's
 * `(instances)`, or the root's `sheet_instances` in a KiCad 6 project) gives parts placed on it
 * the paths KiCad's netlist expects. It joins the project at once, so every later edit, the
 * netlist and the sheet list see it; a failed edit takes it out again and nothing is written.
 */
import { existsSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { has, SCHEMATIC } from "../../format-versions.ts";
import { child, list, parseSexpr, printBare, q, type SList } from "../../sexpr/index.ts";
import { toIU, type PointIu } from "../geometry.ts";
import { atNode, effectsNode, hierLabelNode, labelNode, lineNode, uuidNode } from "../item-nodes.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import { SchematicFile } from "../model/schematic-file.ts";
import { blockersOf, pageArea, pointBox, sheetSymbolItems, translate, union, type Box } from "../space.ts";
import { addLegacySheetInstance } from "../dialect.ts";
import type { EditorState } from "./editor-state.ts";
import { checkVisibleName, sheetInstance } from "./lookup.ts";
import { landingOf, netPoints, netTarget, plannedWiring, type NetTarget } from "./net-target.ts";
import { SheetSpace, type ShapeIu } from "./placement.ts";
import { insertItem, toMm } from "./sheet-tree.ts";
import { wireToNet } from "./connect.ts";

export interface AddSheetArgs {
  /** The sheet's name, shown on its symbol and in its path (`/Name/`). */
  name: string;
  /** The new file's name, beside the root schematic (`eeprom.kicad_sch`). */
  file: string;
  /** Human path of the sheet the symbol goes on (default the root, `/`). */
  parent?: string;
  /** The symbol's top-left corner, mm; by default the free spot nearest the nets it carries. */
  at?: [number, number];
  /** The nets it carries: each a hierarchical label inside and a pin on the symbol, wired to the net on the parent. */
  nets: string[];
}

export interface AddedSheet {
  /** Its human path, for `add_component`'s `sheet`. */
  sheet: string;
  /** The new file, relative to the root schematic's folder. */
  file: string;
  page: string;
  at: [number, number];
  size: [number, number];
  /** Each carried net, with the name of its pin and hierarchical label. */
  pins: { net: string; pin: string }[];
  /** Said when a carried net is new: what it still needs. */
  note?: string;
}

/** A sheet name: printing characters that read well in a path, no `/`. */
const SHEET_NAME = /^[A-Za-z0-9_+-][A-Za-z0-9 _.+-]{0,62}[A-Za-z0-9_.+-]$|^[A-Za-z0-9_+-]$/;
/** A new sheet file: a plain name beside the root. */
const SHEET_FILE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.kicad_sch$/;
const PITCH = toIU(2.54);
/**
 * Sheet pins sit one grid step apart, as KiCad places them: with supplies at the top and
 * grounds at the bottom (`carriedNets`), each power symbol stands or hangs clear of the others.
 */
const PIN_PITCH = PITCH;
/** Sheet pins and hierarchical labels are drawn with this font, as KiCad draws them by default. */
const TEXT_MM = 1.27;

/** Adds the sheet (see the module). */
export function addSheet(state: EditorState, args: AddSheetArgs): AddedSheet {
  const parent = sheetInstance(state, args.parent ?? "/");
  const name = args.name.trim();
  const rootDir = dirname(state.project.rootPath);
  const path = resolve(rootDir, args.file);
  checkNames(state, parent, name, args.file, path);
  if (state.instancesOf(parent.file).length > 1) {
    throw new CopperheadError(
      "usage",
      `Sheet ${parent.humanPath} is used by several sheet symbols; a sheet added on it would appear in every one of them.`,
      { fix: 'Add the sheet on the root (parent "/") or on a sheet used once.', sheet: parent.humanPath },
    );
  }
  const targets = carriedNets(state, parent, name, args.nets);

  const parentFile = parent.file;
  const version = parentFile.version;
  const size = sheetSize(
    name,
    targets.map((t) => t.pin),
  );
  const planned = plannedSheet(name, args.file, size, targets, { x: 0, y: 0 });
  const space = new SheetSpace(parentFile);
  const shape = sheetShape(planned, targets);
  const at = args.at
    ? checkedSpot(space, parent, name, shape, args.at)
    : freeSpot(state, space, parent, name, shape, targets);

  const uuid = parentFile.newUuid();
  const page = String(Math.max(0, ...state.project.instances.map((i) => Number.parseInt(i.page, 10) || 0)) + 1);
  const root = state.project.root;
  const inSheet = has(root.file.version, SCHEMATIC.sheetInstancesInSheets);
  const sheetNode = sheetSymbolNode(
    plannedSheet(name, args.file, size, targets, at),
    uuid,
    () => parentFile.newUuid(),
    version,
  );
  if (inSheet) {
    sheetNode.items.push(
      list(
        "instances",
        list("project", q(state.project.projectName), list("path", q(parent.path), list("page", q(page)))),
      ),
    );
  }
  const file = new SchematicFile(path, parseSexpr(newSheetText(parentFile), { file: path }));
  const labels = labelCarriedNets(file, targets);

  state.edit(
    inSheet || parentFile === root.file ? [parentFile] : [parentFile, root.file],
    () => {
      insertItem(parentFile, sheetNode);
      if (!inSheet) addLegacySheetInstance(root.file.doc.root, root.file.version, root.path, parent.path, uuid, page);
    },
    () => {
      const sheet = parentFile.sheets.find((s) => s.uuid === uuid)!;
      const instance = state.project.addSheet(parent, sheet, file, page);
      state.transactions.created(file, () => state.project.removeSheet(instance));
      const own = sheetSymbolItems(sheet).map((item) => item.box);
      for (const [i, target] of targets.entries()) {
        wireToNet(
          state,
          {
            instance: parent,
            tip: sheet.pins[i]!.at,
            outward: { x: -1, y: 0 },
            what: `sheet pin ${target.pin} of ${name}`,
            own,
            fix: `Place the sheet elsewhere (at) or leave ${target.net} out of its nets; view the sheet around it to see what is in the way.`,
            details: { sheet: name, pin: target.pin },
          },
          target.net,
          target.target,
        );
      }
      // Inside, a power net's label gets the net's power symbol, as its parts will: a label
      // joined to nothing on its sheet is dangling to ERC.
      for (const [i, target] of targets.entries()) {
        if (target.target.kind !== "power") continue;
        wireToNet(
          state,
          {
            instance,
            tip: labels[i]!,
            outward: { x: 1, y: 0 },
            what: `hierarchical label ${target.pin}`,
            own: [],
            fix: "Carry fewer nets on the sheet.",
            details: { sheet: name, pin: target.pin },
          },
          target.net,
          target.target,
        );
      }
    },
  );
  const fresh = targets.filter((t) => t.fresh).map((t) => t.net);
  return {
    sheet: `${parent.humanPath}${name}/`,
    file: relative(rootDir, path),
    page,
    at: toMm(at) as [number, number],
    size: toMm(size) as [number, number],
    pins: targets.map((t) => ({ net: t.net, pin: t.pin })),
    ...(fresh.length > 0
      ? {
          note: `${fresh.join(", ")} ${fresh.length > 1 ? "are new nets" : "is a new net"} of ${parent.humanPath}, labelled at ${fresh.length > 1 ? "their pins" : "its pin"}: connect a part on ${parent.humanPath} to ${fresh.length > 1 ? "each" : "it"} as well as one on this sheet, or KiCad's ERC reports ${fresh.length > 1 ? "their" : "its"} labels as dangling.`,
        }
      : {}),
  };
}

/** A carried net: how it is named on the parent, and the name of its pin and label. */
interface Carried {
  net: string;
  target: NetTarget;
  pin: string;
  /** Not a net of the design yet: the sheet's pin starts it on the parent. */
  fresh: boolean;
}

function checkNames(state: EditorState, parent: SheetInstance, name: string, fileName: string, path: string): void {
  if (!SHEET_NAME.test(name)) {
    throw new CopperheadError(
      "usage",
      `"${name}" is not a usable sheet name: use letters, digits, spaces and _ . + - (no /), at most 64.`,
      { fix: "Name the sheet for what it holds, e.g. EEPROM or Regulator_5V.", sheet: name },
    );
  }
  const taken = parent.file.sheets.map((s) => s.name);
  if (taken.some((t) => t.toLowerCase() === name.toLowerCase())) {
    throw new CopperheadError("edit_conflict", `Sheet ${parent.humanPath} already has a sheet named ${name}.`, {
      fix: `Pick another name (taken: ${taken.join(", ")}), or place the parts on ${parent.humanPath}${name}/ with add_component's sheet.`,
      sheet: name,
    });
  }
  if (!SHEET_FILE.test(fileName)) {
    throw new CopperheadError(
      "usage",
      `"${fileName}" is not a usable sheet file: a plain file name ending .kicad_sch, beside the root schematic (no folders).`,
      { fix: `Use e.g. ${name.toLowerCase().replace(/[^a-z0-9_]+/g, "_")}.kicad_sch.`, file: fileName },
    );
  }
  if (existsSync(path) || state.project.files.has(path)) {
    throw new CopperheadError("edit_conflict", `${fileName} already exists; a new sheet gets a file of its own.`, {
      fix: "Pick another file name; to place parts on an existing sheet, use add_component's sheet.",
      file: fileName,
    });
  }
}

/** How each net is named on `parent`, and the pin name it gets (its short name); refuses repeats. */
function carriedNets(state: EditorState, parent: SheetInstance, sheetName: string, nets: string[]): Carried[] {
  if (nets.length === 0) {
    throw new CopperheadError("usage", "A sheet carries at least one net.", {
      fix: 'Name the nets the subcircuit shares with the rest of the design, e.g. ["+3V3", "GND", "SDA"].',
    });
  }
  const carried: Carried[] = [];
  for (const net of nets) {
    checkVisibleName("net name", net);
    const target = netTarget(state, net, parent, `sheet ${sheetName}`);
    const pin = target.kind === "power" ? target.value : target.text;
    const twin = carried.find((c) => c.pin === pin || c.target.expected === target.expected);
    if (twin) {
      throw new CopperheadError("usage", `${net} and ${twin.net} would both be carried as ${pin}.`, {
        fix: "Name each net once.",
        net,
      });
    }
    const fresh = target.kind === "local" && !state.netlist().nets.some((n) => n.name === target.expected);
    carried.push({ net, target, pin, fresh });
  }
  // Supplies at the top, grounds at the bottom, as a designer draws them: each power symbol
  // then stands or hangs clear of the other pins' wiring.
  return carried.sort((a, b) => powerSide(a.target) - powerSide(b.target));
}

/** -1 for a power symbol drawn above its pin (a supply), 1 below (a ground or negative rail), else 0. */
function powerSide(target: NetTarget): number {
  const landing = landingOf(target);
  if (landing.kind !== "power") return 0;
  const drawn = landing.boxes[0]!;
  return Math.sign(drawn.y0 + drawn.y1);
}

/** Width and height (IU): room for the name above it and the pins' names inside, on the 100 mil grid. */
function sheetSize(name: string, pins: string[]): PointIu {
  const textWidth = (chars: number) => chars * TEXT_MM * 0.9;
  const wide = Math.max(15.24, textWidth(name.length), ...pins.map((p) => textWidth(p.length) + 7.62));
  const up = (mm: number) => Math.ceil(toIU(mm) / PITCH) * PITCH;
  return { x: up(wide), y: Math.max(up(7.62), (pins.length + 1) * PIN_PITCH) };
}

/** The sheet symbol as a designer draws it at `at`: pins down its left edge, name above, file below. */
interface PlannedSheet {
  name: string;
  at: PointIu;
  size: PointIu;
  fields: { name: string; node: SList }[];
  pins: { name: string; at: PointIu }[];
}

function plannedSheet(name: string, fileName: string, size: PointIu, targets: Carried[], at: PointIu): PlannedSheet {
  const [x, y] = toMm(at);
  const field = (key: string, value: string, dy: number, justify: string) =>
    list("property", q(key), q(value), atNode(x, dy, 0), effectsNode(justify));
  return {
    name,
    at,
    size,
    fields: [
      { name: "Sheetname", node: field("Sheetname", name, y - 0.7116, "left bottom") },
      { name: "Sheetfile", node: field("Sheetfile", fileName, y + size.y / 10_000 + 0.5846, "left top") },
    ],
    pins: targets.map((t, i) => ({ name: t.pin, at: { x: at.x, y: at.y + (i + 1) * PIN_PITCH } })),
  };
}

/** What the planned sheet occupies relative to its corner, its pins' wiring to come included. */
function sheetShape(planned: PlannedSheet, targets: Carried[]): ShapeIu {
  const body: Box = { x0: 0, y0: 0, x1: planned.size.x, y1: planned.size.y };
  const wiring = planned.pins.flatMap((pin, i) =>
    plannedWiring(pin.at, { x: -1, y: 0 }, landingOf(targets[i]!.target)),
  );
  return { rotation: 0, penalty: 0, body, boxes: [...sheetSymbolItems(planned).map((d) => d.box), ...wiring] };
}

/** The free spot nearest where the carried nets already are on the parent (else nearest what is drawn). */
function freeSpot(
  state: EditorState,
  space: SheetSpace,
  parent: SheetInstance,
  name: string,
  shape: ShapeIu,
  targets: Carried[],
): PointIu {
  const wiring = state.wiring(parent);
  let anchor: Box | undefined;
  for (const t of targets) for (const p of netPoints(state, t.target, wiring)) anchor = union(anchor, pointBox(p));
  const spot = space.findSpot([shape], anchor ?? space.content ?? space.area);
  if (!spot) {
    const [w, h] = toMm({ x: shape.body.x1, y: shape.body.y1 });
    throw new CopperheadError(
      "edit_conflict",
      `No free room on sheet ${parent.humanPath} for the symbol of sheet ${name} (${w} × ${h} mm, with its pins' wiring). Nothing was added.`,
      {
        fix: "Add it on another sheet (parent), carry fewer nets, or give at where view shows room.",
        sheet: parent.humanPath,
      },
    );
  }
  return spot.at;
}

/** `at` (mm), when the symbol, its fields and its pins' wiring are clear there. */
function checkedSpot(
  space: SheetSpace,
  parent: SheetInstance,
  name: string,
  shape: ShapeIu,
  at: [number, number],
): PointIu {
  const corner = { x: toIU(at[0]), y: toIU(at[1]) };
  const boxes = shape.boxes.map((b) => translate(b, corner));
  if (boxes.every((b) => space.free(b))) return corner;
  const blockers = blockersOf(parent.file, boxes, 0);
  throw new CopperheadError(
    "edit_conflict",
    `The symbol of sheet ${name} does not fit at ${at.join(", ")} on sheet ${parent.humanPath}${blockers.length > 0 ? `: ${blockers.join("; ")} in the way` : ""}. Nothing was added.`,
    {
      fix: "Leave at out for the nearest free spot, or pick a spot view shows free.",
      sheet: parent.humanPath,
      blockers,
    },
  );
}

/**
 * The sheet symbol, in today's syntax and then the parent's: before `SCHEMATIC.sheetAttributes`
 * a sheet has no board and simulation flags, and KiCad 6 names its fields "Sheet name" and
 * "Sheet file", numbered.
 */
function sheetSymbolNode(planned: PlannedSheet, uuid: string, newUuid: () => string, version: number): SList {
  const [x, y] = toMm(planned.at);
  const [w, h] = toMm(planned.size);
  const flags = has(version, SCHEMATIC.sheetAttributes)
    ? [list("exclude_from_sim", "no"), list("in_bom", "yes"), list("on_board", "yes"), list("dnp", "no")]
    : [];
  const fields = planned.fields.map((f, i) => {
    if (has(version, SCHEMATIC.propertyIdsDropped)) return f.node;
    f.node.items[1] = q(f.name === "Sheetname" ? "Sheet name" : "Sheet file");
    f.node.items.splice(3, 0, list("id", i));
    return f.node;
  });
  const pins = planned.pins.map((pin) => {
    const [px, py] = toMm(pin.at);
    return list("pin", q(pin.name), "passive", atNode(px, py, 180), uuidNode(newUuid()), effectsNode("left"));
  });
  return list(
    "sheet",
    atNode(x, y),
    list("size", w, h),
    ...flags,
    list("fields_autoplaced", "yes"),
    list("stroke", list("width", 0.1524), list("type", "solid")),
    list("fill", list("color", 0, 0, 0, "0.0000")),
    uuidNode(uuid),
    ...fields,
    ...pins,
  );
}

/**
 * The new file's text before its labels: the parent's header (version, generator, paper, title
 * block) in the parent's own layout, an empty symbol cache, and what a sheet of that version ends with.
 */
function newSheetText(parent: SchematicFile): string {
  const root = parent.doc.root;
  const copied = ["version", "generator", "generator_version"].flatMap((h) => {
    const node = child(root, h);
    return node ? [printBare(node)] : [];
  });
  const uuid = parent.newUuid();
  const tail = ["paper", "title_block"].flatMap((h) => {
    const node = child(root, h);
    return node ? [printBare(node)] : [];
  });
  if (has(parent.version, SCHEMATIC.v8Syntax)) {
    const lines = [...copied, `(uuid "${uuid}")`, ...tail, "(lib_symbols)"];
    if (has(parent.version, SCHEMATIC.embeddedFiles)) lines.push("(embedded_fonts no)");
    return `(kicad_sch\n${lines.map((l) => `\t${l}`).join("\n")}\n)\n`;
  }
  const blocks = [`(uuid ${uuid})`, ...tail, "(lib_symbols\n  )"];
  return `(kicad_sch ${copied.join(" ")}\n\n${blocks.map((b) => `  ${b}`).join("\n\n")}\n)\n`;
}

/**
 * A hierarchical label per carried net down the left of the new sheet, pointing out of it as
 * its pin does, in the pins' order; returns their connection points. A signal's label gets a
 * short wire to a label of its name, which the sheet's parts join by wire or by name: KiCad's
 * ERC holds a hierarchical label with nothing wired to it dangling, whatever joins its name.
 * (A power net's gets its power symbol once the sheet is in the project.)
 */
function labelCarriedNets(file: SchematicFile, targets: Carried[]): PointIu[] {
  const { area } = pageArea(file);
  const longest = Math.max(...targets.map((t) => t.pin.length));
  const x = Math.ceil((area.x0 + toIU(Math.max(25.4, longest * TEXT_MM + 10.16))) / PITCH) * PITCH;
  const top = Math.ceil((area.y0 + toIU(25.4)) / PITCH) * PITCH;
  const points = targets.map((_, i) => ({ x, y: top + i * 2 * PITCH }));
  targets.forEach((t, i) => {
    const at = points[i]!;
    insertItem(file, hierLabelNode(t.pin, toMm(at), "passive", 180, file.newUuid()));
    if (t.target.kind === "power") return;
    const end = toMm({ x: at.x + 2 * PITCH, y: at.y });
    insertItem(file, lineNode("wire", toMm(at), end, file.newUuid()));
    insertItem(file, labelNode(t.pin, end, 0, file.newUuid()));
  });
  file.changed();
  return points;
}
