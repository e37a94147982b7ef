/**
 * Finding what an edit names: sheets by human path, parts by reference (every unit in every
 * sheet instance), pins by number or name, and free references for new parts. Each lookup
 * that fails throws a typed `CopperheadError` with close matches in `fix`.
 */
import { CopperheadError } from "../../../errors.ts";
import { hiddenCharacter, shown } from "../../../visible.ts";
import { closeMatches, suggestion } from "../../../util/close-matches.ts";
import { trimEndOf, trimStartOf } from "../../../util/trim.ts";
import { naturalCompare } from "../../../util/natural-compare.ts";
import { placePoint, type PointIu } from "../geometry.ts";
import { pinOutwardLib, placeDirection } from "../space.ts";
import type { SheetInstance } from "../model/hierarchy.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { symbolInstance, unitPins, type LibPin, type PlacedSymbol } from "../model/symbols.ts";
import type { EditorState } from "./editor-state.ts";
import { unique } from "./sheet-tree.ts";

/** One placed unit of a reference in one sheet instance. */
export interface PlacedUnit {
  instance: SheetInstance;
  symbol: PlacedSymbol;
  unit: number;
}

/** A pin `findPin` found: its unit, its library pin, where its tip is and which way it points. */
export interface PinHit extends PlacedUnit {
  ref: string;
  lib: LibPin;
  tip: PointIu;
  /** Unit step (IU) pointing away from the symbol body. */
  outward: PointIu;
}

/** A sheet instance by human path (`/`, `/Regulator/`, `Regulator`), or a typed error naming the sheets. */
export function sheetInstance(state: EditorState, sheet: string): SheetInstance {
  const trimmed = trimEndOf(trimStartOf(sheet.trim(), "/"), "/");
  const wanted = trimmed === "" ? "/" : `/${trimmed}/`;
  const found = state.project.instances.find((i) => i.humanPath === wanted);
  if (!found) {
    throw new CopperheadError("not_found", `No sheet ${wanted} in this design.`, {
      fix: suggestion(
        "sheets",
        wanted,
        state.project.instances.map((i) => i.humanPath),
      ),
      sheet,
    });
  }
  return found;
}

/** Every reference in the design (all instances), power symbols included. */
export function references(state: EditorState): Set<string> {
  const refs = new Set<string>();
  for (const instance of state.project.instances) {
    for (const symbol of instance.file.symbols)
      refs.add(symbolInstance(symbol, instance.path, state.project.projectName).reference);
  }
  return refs;
}

/**
 * References for a new symbol in `file`, one per sheet instance of it: the next free ones
 * for `prefix` in the design's numbering scheme (see `nextFreeReference`), or `own.ref`
 * (checked usable and free) in `own.instance`.
 */
export function newReferences(
  state: EditorState,
  file: SchematicFile,
  prefix: string,
  own?: { instance: SheetInstance; ref: string },
  reserved: Iterable<string> = [],
): Map<SheetInstance, string> {
  const taken = references(state);
  for (const ref of reserved) taken.add(ref);
  if (own) checkNewReference(own.ref, taken);
  const refs = new Map<SheetInstance, string>();
  for (const instance of state.instancesOf(file)) {
    const ref =
      own && instance === own.instance
        ? own.ref
        : nextFreeReference(prefix, taken, sheetBlock(state, instance, prefix));
    taken.add(ref);
    refs.set(instance, ref);
  }
  return refs;
}

/**
 * Fails unless `ref` is a usable reference (a prefix and a number) not in `taken`. A control,
 * bidi or zero-width character is refused by name: `R\u202e1` would read as another part in
 * every record, review and BOM.
 */
export function checkNewReference(ref: string, taken: Set<string>): void {
  checkVisibleName("reference", ref);
  if (!/^[^\s?]*[^\s\d?][0-9]+$/.test(ref)) {
    throw new CopperheadError(
      "usage",
      `"${ref}" is not a usable reference; references are a prefix and a number, e.g. C3.`,
      {
        fix: "Pass a reference such as R12, or leave it out to get the next free one.",
        ref,
      },
    );
  }
  if (taken.has(ref)) {
    throw new CopperheadError("edit_conflict", `Reference ${ref} is already used.`, {
      fix: "Leave the reference out to get the next free one, or pick an unused one.",
      ref,
    });
  }
}

/**
 * The first free `prefix<n>` after `block` (0, or the hundreds or thousands a sheet's references
 * are numbered in, see `sheetBlock`), written as the design writes that prefix's numbers:
 * eeschema's annotation puts a 0 before a power symbol's number (`#PWR01`, `#PWR0101` on a
 * sheet numbered from 100), so a design whose references of the prefix mostly start so gets one
 * too.
 */
function nextFreeReference(prefix: string, taken: Set<string>, block: number): string {
  const used = new Set<number>();
  let zeroLed = 0;
  let plain = 0;
  const pattern = referencePattern(prefix);
  for (const ref of taken) {
    const digits = pattern.exec(ref)?.[1];
    if (digits === undefined) continue;
    used.add(Number(digits));
    if (digits.length > 1 && digits.startsWith("0")) zeroLed++;
    else plain++;
  }
  let n = block + 1;
  while (used.has(n)) n++;
  return `${prefix}${zeroLed > plain ? "0" : ""}${n}`;
}

function referencePattern(prefix: string): RegExp {
  return new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)$`);
}

/** How far apart KiCad's annotation sets sheets' numbers when it numbers by sheet ("sheet number × 100" or "× 1000"). */
const BLOCK_STEPS = [100, 1000];

/**
 * The block a new reference on `instance` is numbered in: when the sheet's references of
 * `prefix` (else all of them) lie in one block of a hundred or a thousand above zero, that
 * block; when the sheet has none and every other sheet's lie in the block of its page number,
 * this sheet's page's; else 0.
 */
function sheetBlock(state: EditorState, instance: SheetInstance, prefix: string): number {
  const numbersOn = (sheet: SheetInstance): number[] => {
    const refs = sheet.file.symbols.map((s) => symbolInstance(s, sheet.path, state.project.projectName).reference);
    const own = refs.flatMap((r) => referencePattern(prefix).exec(r)?.[1] ?? []);
    const numbers = own.length > 0 ? own : refs.flatMap((r) => /(\d+)$/.exec(r)?.[1] ?? []);
    return numbers.map(Number);
  };
  const blockOf = (numbers: number[], step: number): number | undefined => {
    const blocks = new Set(numbers.map((n) => Math.floor(n / step)));
    const [only] = blocks;
    return blocks.size === 1 && only! >= 1 && numbers.every((n) => n % step !== 0) ? only : undefined;
  };
  const here = numbersOn(instance);
  for (const step of BLOCK_STEPS) {
    if (here.length > 0) {
      const block = blockOf(here, step);
      if (block !== undefined) return block * step;
      continue;
    }
    const others = state.project.instances
      .filter((i) => i !== instance)
      .map((i) => ({ page: Number(i.page), numbers: numbersOn(i) }))
      .filter((o) => o.numbers.length > 0);
    const page = Number(instance.page);
    if (
      others.length > 0 &&
      Number.isInteger(page) &&
      page >= 1 &&
      others.every((o) => blockOf(o.numbers, step) === o.page)
    )
      return page * step;
  }
  return 0;
}

/** Every placed unit of `ref`, in every sheet instance; a typed error with close references when there is none. */
export function unitsOf(state: EditorState, ref: string): PlacedUnit[] {
  const units: PlacedUnit[] = [];
  for (const instance of state.project.instances) {
    for (const symbol of instance.file.symbols) {
      const own = symbolInstance(symbol, instance.path, state.project.projectName);
      if (own.reference === ref) units.push({ instance, symbol, unit: own.unit });
    }
  }
  if (units.length === 0) {
    const all = [...references(state)]
      .filter((r) => r !== "" && (ref.startsWith("#") || !r.startsWith("#")))
      .sort(naturalCompare);
    throw new CopperheadError("not_found", `No component ${ref} in this design.`, {
      fix: suggestion("references", ref, all),
      ref,
    });
  }
  return units;
}

/** A pin by number, or by name when the name is unique on the part. */
export function findPin(state: EditorState, ref: string, pin: string): PinHit {
  const units = unitsOf(state, ref);
  const candidates = units.flatMap((u) => unitPins(u.symbol, u.unit).map((lib) => ({ ...u, lib })));
  let matches = candidates.filter((c) => c.lib.number === pin);
  if (matches.length === 0) {
    const named = (exact: boolean) =>
      candidates.filter((c) => (exact ? c.lib.name === pin : c.lib.name.toLowerCase() === pin.toLowerCase()));
    matches = named(true).length > 0 ? named(true) : named(false);
    const numbers = unique(matches.map((m) => m.lib.number));
    if (numbers.length > 1) {
      throw new CopperheadError(
        "not_found",
        `${ref} has ${numbers.length} pins named ${pin} (${numbers.join(", ")}); name one by number.`,
        {
          fix: `Use one of the pin numbers ${numbers.join(", ")}.`,
          ref,
          pin,
          pins: numbers,
        },
      );
    }
  }
  const match = matches[0];
  if (!match) {
    const listed = unique(
      candidates.map((c) =>
        c.lib.name && c.lib.name !== c.lib.number ? `${c.lib.number} (${c.lib.name})` : c.lib.number,
      ),
    );
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

/** The net a pin is on in the netlist of the trees as they are now. */
export function netOfPin(state: EditorState, ref: string, pin: string): string | undefined {
  return state.netlist().nets.find((n) => n.nodes.some((node) => node.ref === ref && node.pin === pin))?.name;
}

/** Fails when `name` (a new reference or net name) holds a control, bidi or invisible character. */
export function checkVisibleName(what: "reference" | "net name", name: string): void {
  const hidden = hiddenCharacter(name);
  if (hidden === undefined) return;
  throw new CopperheadError(
    "usage",
    `The ${what} "${shown(name)}" holds ${hidden}, a control, bidirectional or invisible character.`,
    {
      fix: `Write the ${what} in plain printing characters, e.g. ${what === "reference" ? "R12" : "VBUS"}.`,
      [what === "reference" ? "ref" : "net"]: shown(name),
    },
  );
}
