/**
 * Moving a label that names a net, for when the spot a rename picks is not the one wanted: to
 * another point on a wire of its sheet, or out beyond the free end of the wire it sits on (the
 * wire is lengthened to meet it). Held to the same rules as a renamed label (label-room.ts):
 * it must read clear of every other item, and the netlist must stay exactly as it was.
 */
import { CopperheadError } from "../../../errors.ts";
import { lookupNet, resolveNet } from "../../netlist/net-names.ts";
import { onSegment, samePoint, toIU, type PointIu } from "../geometry.ts";
import type { MmPoint } from "../item-nodes.ts";
import type { Label } from "../model/sheet-items.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { LabelRoom, placeLabel, type LabelSpot } from "./label-room.ts";
import { compareRenamed } from "./net-check.ts";
import { localNetSheet } from "./rename.ts";
import type { EditorState } from "./editor-state.ts";
import { toMm } from "./sheet-tree.ts";

export interface MoveLabelArgs {
  /** Where the label is now, mm: needed when the net has more than one label. */
  from?: MmPoint;
  /** Where it goes, mm. */
  to: MmPoint;
  /** Its new angle (default: as it reads now). */
  rotation?: number;
}

export interface MovedLabel {
  net: string;
  label: string;
  sheet: string;
  from: MmPoint;
  at: MmPoint;
  rotation: number;
  /** The wire end moved out to meet the label, when its wire was lengthened. */
  lengthened?: { from: MmPoint; to: MmPoint };
}

/** Moves a label naming `net` (see the module comment); refused, with nothing changed, when the spot is not on its wiring or not clear. */
export function moveLabel(state: EditorState, net: string, args: MoveLabelArgs): MovedLabel {
  const before = state.netlist();
  // A hierarchical label is named by its sheet path and text (/Regulator/VIN) even where the
  // net it joins takes its name from the parent sheet.
  const names = before.nets.map((n) => n.name);
  const name = net.startsWith("/") && lookupNet(names, net).kind === "missing" ? net : resolveNet(names, net);
  const { file, label, sheet } = pickLabel(state, name, args.from);
  const room = new LabelRoom(file, label);
  const to = { x: toIU(args.to[0]), y: toIU(args.to[1]) };
  const rotation = args.rotation ?? label.rotation;
  const spot = spotFor(room, to, rotation);
  const blockers = room.blockers(to, label.text, rotation);
  if (blockers.length > 0) {
    throw new CopperheadError(
      "edit_conflict",
      `Label ${label.text} at (${args.to.join(", ")}) would run over ${blockers.join("; ")}. Nothing was moved.`,
      {
        fix: "Pick another spot along its wiring, or turn it (rotation).",
        label: label.text,
        blockers,
      },
    );
  }
  state.edit(
    [file],
    () => placeLabel(file, label, spot),
    () => {
      const problems = compareRenamed(before, state.netlist(), new Map());
      if (problems.length > 0) {
        throw new CopperheadError(
          "edit_conflict",
          `Moving label ${label.text} to (${args.to.join(", ")}) would change the nets: ${problems.slice(0, 5).join("; ")}. Nothing was moved.`,
          {
            fix: "Move it to a spot on a wire of its own net.",
            label: label.text,
          },
        );
      }
    },
  );
  const lengthened = spot.lengthen ? { from: toMm(spot.lengthen.end), to: toMm(spot.lengthen.to) } : undefined;
  return {
    net: name,
    label: label.text,
    sheet,
    from: toMm(label.at),
    at: args.to,
    rotation,
    ...(lengthened ? { lengthened } : {}),
  };
}

/** The label of `net` to move: the one at `from`, or the only one. */
function pickLabel(
  state: EditorState,
  net: string,
  from: MmPoint | undefined,
): { file: SchematicFile; label: Label; sheet: string } {
  const found: { file: SchematicFile; label: Label; sheet: string }[] = [];
  if (net.startsWith("/")) {
    const { instance, base } = localNetSheet(state, net);
    for (const label of instance.file.labels)
      if ((label.kind === "local" || label.kind === "hierarchical") && label.text === base)
        found.push({ file: instance.file, label, sheet: instance.humanPath });
  } else {
    for (const instance of state.project.instances) {
      if (found.some((f) => f.file === instance.file)) continue;
      for (const label of instance.file.labels)
        if (label.kind === "global" && label.text === net)
          found.push({ file: instance.file, label, sheet: instance.humanPath });
    }
  }
  const where = (f: { label: Label; sheet: string }) => `(${toMm(f.label.at).join(", ")}) on ${f.sheet}`;
  if (found.length === 0)
    throw new CopperheadError("not_found", `No label names net ${net}.`, {
      fix: "move_label moves labels; a net named by a power symbol or a pin has none.",
      net,
    });
  if (from) {
    const at = { x: toIU(from[0]), y: toIU(from[1]) };
    const match = found.find((f) => samePoint(f.label.at, at));
    if (!match)
      throw new CopperheadError("not_found", `No label of ${net} is at (${from.join(", ")}).`, {
        fix: `Its labels are at ${found.map(where).join(", ")}.`,
        net,
      });
    return match;
  }
  if (found.length > 1)
    throw new CopperheadError("usage", `Net ${net} has ${found.length} labels; say which one with from.`, {
      fix: `Its labels are at ${found.map(where).join(", ")}.`,
      net,
    });
  return found[0]!;
}

/**
 * The spot for a label moved to `to`: on a wire of its sheet as it is (along its own wire,
 * that wire's free end shortened to it, where the label holds that end), or beyond the free end
 * of its own wire along the same line, with the wire lengthened (which must cross nothing).
 */
function spotFor(room: LabelRoom, to: PointIu, rotation: number): LabelSpot {
  const label = room.label;
  if (room.file.wires.some((w) => onSegment(to, w.a, w.b, 0))) {
    const kept = room.shortenedTo(to);
    if (kept) return { at: to, rotation, ...kept };
    const held = room.heldEnd()!;
    throw new CopperheadError(
      "edit_conflict",
      `Label ${label.text} holds its wire's free end at (${toMm(held.end).join(", ")}): moved to (${toMm(to).join(", ")}) it would leave that end dangling. Nothing was moved.`,
      {
        fix: "Move it along its own wire (the end is shortened to it, where nothing else meets the part cut off), or out beyond that end.",
        label: label.text,
      },
    );
  }
  const free = room.freeEnd();
  const nowhere = `(${toMm(to).join(", ")}), which is on no wire of its sheet`;
  if (typeof free === "string") {
    throw new CopperheadError(
      "edit_conflict",
      `Label ${label.text} cannot go to ${nowhere}, and its wire cannot be lengthened to it: ${free}. Nothing was moved.`,
      {
        fix: "Pick a spot on a wire of its net.",
        label: label.text,
      },
    );
  }
  const { wire, end, out } = free;
  const beyond = !samePoint(end, to) && Math.sign(to.x - end.x) === out.x && Math.sign(to.y - end.y) === out.y;
  if (!beyond) {
    throw new CopperheadError(
      "edit_conflict",
      `Label ${label.text} cannot go to ${nowhere}, nor beyond its wire's free end (${toMm(end).join(", ")}) in line with it. Nothing was moved.`,
      {
        fix: `Pick a spot on a wire of its net, or further out past (${toMm(end).join(", ")}) in line with ${wire ? "its wire" : "its pin"}.`,
        label: label.text,
      },
    );
  }
  const blocked = room.extensionBlockers(end, to);
  if (blocked.length > 0) {
    throw new CopperheadError(
      "edit_conflict",
      `Lengthening the wire of label ${label.text} to (${toMm(to).join(", ")}) would run it into ${blocked.join("; ")}. Nothing was moved.`,
      {
        fix: "Lengthen it less, or pick a spot on its wire.",
        label: label.text,
        blockers: blocked,
      },
    );
  }
  return { at: to, rotation, lengthen: { wire, end, to } };
}
