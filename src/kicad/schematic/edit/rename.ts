/**
 * Renaming a net by renaming what names it (labels, the sheet pins facing hierarchical labels,
 * power symbols' Value) on every sheet it runs through, checked against the netlist: the same
 * pins end up on the new name and no other net changes.
 */
import { basename } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { resolveNet } from "../../netlist/net-names.ts";
import { sheetPinKey } from "../../netlist/netlist.ts";
import { expandBus } from "../../netlist/bus.ts";
import { describeVersion, has, kicadMajor, SCHEMATIC } from "../../format-versions.ts";
import { fieldValue, symbolInstance, unitPins, type PlacedSymbol } from "../model/symbols.ts";
import type { Label } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import { children, q, setAtom, text, type SList } from "../../sexpr/index.ts";
import { checkVisibleName } from "./lookup.ts";
import { placeLabel } from "./label-room.ts";
import { compareRenamed, pinList } from "./net-check.ts";
import { renamedLabelAt } from "./label-ways.ts";
import type { EditorState } from "./editor-state.ts";

/** One change `renameNet` makes and the sheet it changes; applied, it says what else it moved there to make room. */
interface Rename {
  file: SchematicFile;
  apply: () => string | undefined;
}

/** A rename done: the net's old and new netlist names, and what was moved on each sheet to make the new name's room (besides its labels). */
export interface RenamedNet {
  from: string;
  to: string;
  madeRoom: string[];
}

/** What `renameNet` changes (see `renameScope`). */
interface RenameScope {
  newName: string;
  renames: Rename[];
  expected: Map<string, string>;
}

/**
 * Renames a net by renaming what names it: local, hierarchical (with the matching sheet pins)
 * and global labels, or power symbols' Value. `name` is the netlist name (`/LED_A`, `+3V3`) or
 * a unique short name (`LED_A`); `to` is the new netlist name, or for a local net just the new label text. Checked against
 * the netlist: the same pins end up on `to`, and no other net changes.
 */
export function renameNet(state: EditorState, name: string, to: string): RenamedNet {
  checkVisibleName("net name", to);
  const before = state.netlist();
  const from = resolveNet(
    before.nets.map((n) => n.name),
    name,
  );
  const old = before.nets.find((n) => n.name === from)!;
  const scope = renameScope(state, from, to);
  if (before.nets.some((n) => n.name === scope.newName)) {
    throw new CopperheadError(
      "edit_conflict",
      `A net named ${scope.newName} already exists; renaming ${from} would merge the two.`,
      {
        fix: "Pick a name no net uses, or connect the pins explicitly if merging is intended.",
        net: from,
      },
    );
  }
  if (scope.renames.length === 0) {
    throw new CopperheadError(
      "edit_conflict",
      `Net ${from} is named only by its pins; no label or power symbol names it.`,
      {
        fix: `Name it first: connect one of its pins (e.g. ${old.nodes[0] ? `${old.nodes[0].ref} pin ${old.nodes[0].pin}` : "one"}) to the new name with connect.`,
        net: from,
      },
    );
  }
  const madeRoom: string[] = [];
  state.edit(
    scope.renames.map((r) => r.file),
    () => {
      for (const rename of scope.renames) {
        const moved = rename.apply();
        if (moved) madeRoom.push(`${basename(rename.file.path)}: ${moved}`);
      }
    },
    () => {
      const after = state.netlist();
      const problems = compareRenamed(before, after, scope.expected);
      const hidden = problems.length > 0 ? hiddenPowerPins(state, from) : [];
      if (hidden.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `${from} is also joined by hidden power pins named ${from} (${pinList(hidden)}): a hidden power-input pin joins the net of its name wherever it is, and a library pin is not renamed by renaming the net, so they would stay on ${from}. Nothing was renamed.`,
          {
            fix: "Keep the name, or refuse and say which parts' hidden power pins hold it (in KiCad, their symbols' pins made visible and wired to the new name).",
            net: from,
          },
        );
      }
      const bus = problems.length > 0 ? busHolding(state, from) : undefined;
      if (bus) {
        throw new CopperheadError(
          "edit_conflict",
          `${from} is a member of bus ${bus}: its pins reach the rest of the net through the bus under that member name, so renaming its labels alone would cut them off (${problems[0]}). Nothing was renamed.`,
          {
            fix: "rename_net does not rename a bus and its members together: keep the member's name, or refuse and say the bus must be renamed in KiCad.",
            net: from,
          },
        );
      }
      if (problems.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `Renaming ${from} to ${scope.newName} would change more than that net: ${problems.slice(0, 5).join("; ")}.`,
          {
            fix: "Some pins join the net another way (hidden power pins, a second label), which rename_net does not change: disconnect them and connect them to the new name, or refuse and say which pins they are.",
            net: from,
          },
        );
      }
    },
  );
  return { from, to: scope.newName, madeRoom };
}

/**
 * What `renameNet` changes: the renames of each label, sheet pin and power symbol naming the
 * net (each with the file it changes), the netlist name it should end up with, and the name changes expected
 * elsewhere (the same local net in other instances of a shared sheet).
 */
function renameScope(state: EditorState, from: string, to: string): RenameScope {
  return from.startsWith("/") ? localRenameScope(state, from, to) : globalRenameScope(state, from, to);
}

/**
 * `renameScope` for a global net: its global labels and global power symbols, in every sheet,
 * and the local labels of its name on the sheets where those name it.
 */
function globalRenameScope(state: EditorState, from: string, to: string): RenameScope {
  const renames: Rename[] = [];
  if (to.startsWith("/") || to === "") {
    throw new CopperheadError(
      "usage",
      `${from} is a global net; its new name must be global too (no leading /), not ${JSON.stringify(to)}.`,
      {
        fix: "Pass a name without a sheet path, e.g. +3V3_MCU.",
        net: from,
      },
    );
  }
  const rootVersion = state.project.root.file.version;
  for (const file of state.project.files.values()) {
    for (const label of file.labels)
      if (label.kind === "global" && label.text === from) renames.push(renameLabel(file, label, to));
    for (const symbol of file.symbols) {
      if (symbol.lib?.power !== "global" || symbol.value !== from) continue;
      const pin = symbol.lib.pins[0];
      if (!has(rootVersion, SCHEMATIC.modernPowerSymbols) && pin?.type === "power_in" && pin.hidden) {
        throw new CopperheadError(
          "edit_conflict",
          `${from} is named by the hidden pin of power symbol ${symbol.libId}: in this project's format (${describeVersion("schematic", rootVersion)}, before KiCad ${kicadMajor("schematic", SCHEMATIC.modernPowerSymbols.since)}'s modern power symbols) KiCad ignores a power symbol's Value, so renaming it would not rename the net.`,
          {
            fix: "Disconnect the pins from the power symbols and connect them to the new net (disconnect, then connect).",
            net: from,
          },
        );
      }
      renames.push(renameValue(file, symbol, to));
    }
    // A local label named like the global net joins it on a sheet where the net is named, by
    // name alone (eeschema merges labels of one name on a sheet): it must follow.
    if (renames.some((r) => r.file === file))
      for (const label of file.labels)
        if (label.kind === "local" && label.text === from) renames.push(renameLabel(file, label, to));
  }
  return { newName: to, renames, expected: new Map([[from, to]]) };
}

/**
 * `renameScope` for a net local to a sheet: its labels and local power symbols, the sheet pins
 * facing its hierarchical labels, and (`renameWithin`) the sheets below its own sheet pins.
 */
function localRenameScope(state: EditorState, from: string, to: string): RenameScope {
  const renames: Rename[] = [];
  const { instance, base } = localNetSheet(state, from);
  const newBase = to.startsWith("/") ? to.slice(instance.humanPath.length) : to;
  if ((to.startsWith("/") && !to.startsWith(instance.humanPath)) || newBase === "" || newBase.includes("/")) {
    throw new CopperheadError(
      "usage",
      `${from} is local to sheet ${instance.humanPath}; its new name must stay on that sheet, not ${JSON.stringify(to)}.`,
      {
        fix: `Pass ${instance.humanPath}NEW_NAME or just NEW_NAME.`,
        net: from,
      },
    );
  }
  const file = instance.file;
  // A hierarchical label and the sheet pins that face it are one connection: rename both.
  if (file.labels.some((l) => l.kind === "hierarchical" && l.text === base)) {
    for (const other of state.instancesOf(file)) {
      const pin = other.sheet?.pins.find((p) => p.name === base);
      if (pin) renames.push(renameText(other.parent!.file, pin.node, newBase));
    }
  }
  // Into a sheet below through its pin of this name when the pin carries this net (another net
  // may reach a pin of the same name) and the sheet is drawn once: a sheet placed several times
  // is a reused block, whose port names are its interface, not the names of the nets at it.
  const follows = (parent: SheetInstance, below: SheetInstance) =>
    state.instancesOf(below.file).length === 1 &&
    state.netlist().sheetPinNets.get(sheetPinKey(parent, below.sheet!.uuid, base)) === from;
  renameWithin(instance, base, newBase, follows, renames, new Set());
  const expected = new Map(
    state.instancesOf(file).map((i): [string, string] => [i.humanPath + base, i.humanPath + newBase]),
  );
  return { newName: instance.humanPath + newBase, renames, expected };
}

/**
 * Renames what names local net `base` on the sheet of `instance` (its local and hierarchical
 * labels, local power symbols) and, through each sheet pin of that name it `follows`, the pin
 * and the same in the sheet below: there the hierarchical label joins the sheet's own labels of
 * its name by name alone, so they are renamed with it, and so on down. Each file once (`seen`).
 */
function renameWithin(
  instance: SheetInstance,
  base: string,
  newBase: string,
  follows: (parent: SheetInstance, below: SheetInstance) => boolean,
  renames: Rename[],
  seen: Set<SchematicFile>,
): void {
  const file = instance.file;
  if (seen.has(file)) return;
  seen.add(file);
  for (const label of file.labels)
    if ((label.kind === "local" || label.kind === "hierarchical") && label.text === base)
      renames.push(renameLabel(file, label, newBase));
  for (const symbol of file.symbols)
    if (symbol.lib?.power === "local" && fieldValue(symbol, "Value") === base)
      renames.push(renameValue(file, symbol, newBase));
  for (const sheet of file.sheets) {
    const pin = sheet.pins.find((p) => p.name === base);
    const below = instance.children.find((c) => c.sheet?.uuid === sheet.uuid);
    if (!pin || !below || !follows(instance, below)) continue;
    renames.push(renameText(file, pin.node, newBase));
    if (below.file.labels.some((l) => l.kind === "hierarchical" && l.text === base))
      renameWithin(below, base, newBase, follows, renames, seen);
  }
}

/**
 * Renames a label, moved or its wire lengthened when its longer name would run over another
 * item (see label-ways.ts; a label with no clear spot refuses the whole rename, and the edit's
 * transaction puts back what was already changed). Its spot is found when it is applied, after
 * the net's labels before it on the sheet: it must keep clear of where they went and of what
 * they moved to make room, and it may itself have been moved with that.
 */
function renameLabel(file: SchematicFile, label: Label, value: string): Rename {
  return {
    file,
    apply: () => {
      file.changed();
      const now = file.labels.find((l) => l.node === label.node) ?? label;
      const spot = renamedLabelAt(file, now, value);
      setAtom(label.node, 1, q(value));
      placeLabel(file, now, spot);
      return spot.rearranged?.note;
    },
  };
}

/** Renames a sheet pin. */
function renameText(file: SchematicFile, node: SList, value: string): Rename {
  return {
    file,
    apply: () => {
      setAtom(node, 1, q(value));
      return undefined;
    },
  };
}

/** Sets a power symbol's Value, which names its net. */
function renameValue(file: SchematicFile, symbol: PlacedSymbol, value: string): Rename {
  return {
    file,
    apply: () => {
      const prop = children(symbol.node, "property").find((p) => text(p, 1) === "Value");
      if (prop) setAtom(prop, 2, q(value));
      return undefined;
    },
  };
}

/** The sheet instance a local net (`/Sheet/NAME`) belongs to, and its name on that sheet. */
export function localNetSheet(state: EditorState, net: string): { instance: SheetInstance; base: string } {
  const instance = [...state.project.instances]
    .sort((a, b) => b.humanPath.length - a.humanPath.length)
    .find((i) => net.startsWith(i.humanPath) && !net.slice(i.humanPath.length).includes("/"));
  const base = instance ? net.slice(instance.humanPath.length) : "";
  if (!instance || base === "")
    throw new CopperheadError("not_found", `No sheet holds net ${net}.`, {
      fix: "Pass the net name as the netlist shows it.",
      net,
    });
  return { instance, base };
}

/**
 * The hidden power-input pins named `net` ("U1.7"), on parts that are not power symbols: each
 * joins the global net of its name by itself, as eeschema keeps doing for symbols drawn that way.
 */
function hiddenPowerPins(state: EditorState, net: string): string[] {
  const pins = new Set<string>();
  for (const instance of state.project.instances)
    for (const symbol of instance.file.symbols) {
      if (!symbol.lib || symbol.lib.power) continue;
      const { reference, unit } = symbolInstance(symbol, instance.path, state.project.projectName);
      for (const pin of unitPins(symbol, unit))
        if (pin.hidden && pin.type === "power_in" && pin.name === net) pins.add(`${reference}.${pin.number}`);
    }
  return [...pins];
}

/**
 * The bus label (as written) one of whose members net `net` is, by its name on its sheet
 * (`/Sheet/ANALOG.A0` is member `ANALOG.A0` of `ANALOG{A0 A1}`), if any.
 */
function busHolding(state: EditorState, net: string): string | undefined {
  const member = net.startsWith("/") ? net.slice(net.lastIndexOf("/") + 1) : net;
  const aliases = state.project.busAliases;
  for (const file of state.project.files.values())
    for (const { text: written } of file.labels)
      if (expandBus(written, aliases)?.some((m) => m.name === member)) return written;
  return undefined;
}
