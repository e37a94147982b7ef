/**
 * The docs half of a diff: the requirements of SPEC.md (the section a reviewer must watch,
 * since its rules gate every change) by id, and the rows of the BOM table by reference.
 */
import * as v from "valibot";
import { naturalCompare } from "../util/natural-compare.ts";
import type { BomRow, BomTable } from "../spec/bom.ts";
import type { ParsedSpec } from "../spec/requirements.ts";
import { FieldChangeSchema, type FieldChange } from "./component-diff.ts";

export const RequirementChangeSchema = v.object({
  id: v.string(),
  status: v.picklist(["added", "removed", "changed"]),
  /** The requirement's prose in the state that has it (after, for a change). */
  text: v.string(),
  /** A changed requirement's prose before, when it changed. */
  textBefore: v.optional(v.string()),
  /** `check:` rules (canonical text) only after, only before; all of them for added/removed. */
  checksAdded: v.array(v.string()),
  checksRemoved: v.array(v.string()),
});
export type RequirementChange = v.InferOutput<typeof RequirementChangeSchema>;

export const BomRowChangeSchema = v.object({
  ref: v.string(),
  status: v.picklist(["added", "removed", "changed"]),
  /** Cells by column (`Value`, `Footprint`, `MPN`, and the human columns) that differ. */
  changes: v.array(FieldChangeSchema),
});
export type BomRowChange = v.InferOutput<typeof BomRowChangeSchema>;

export function diffRequirements(before: ParsedSpec | undefined, after: ParsedSpec | undefined): RequirementChange[] {
  const byId = (spec: ParsedSpec | undefined) => new Map((spec?.requirements ?? []).map((r) => [r.id, r]));
  const was = byId(before);
  const now = byId(after);
  const out: RequirementChange[] = [];
  for (const id of new Set([...was.keys(), ...now.keys()])) {
    const a = was.get(id);
    const b = now.get(id);
    const rulesA = (a?.checks ?? []).map((c) => c.text);
    const rulesB = (b?.checks ?? []).map((c) => c.text);
    const checksAdded = rulesB.filter((r) => !rulesA.includes(r));
    const checksRemoved = rulesA.filter((r) => !rulesB.includes(r));
    if (!a) out.push({ id, status: "added", text: b!.text, checksAdded, checksRemoved });
    else if (!b) out.push({ id, status: "removed", text: a.text, checksAdded, checksRemoved });
    else if (a.text !== b.text || checksAdded.length > 0 || checksRemoved.length > 0) {
      out.push({
        id,
        status: "changed",
        text: b.text,
        ...(a.text !== b.text ? { textBefore: a.text } : {}),
        checksAdded,
        checksRemoved,
      });
    }
  }
  return out.sort((x, y) => naturalCompare(x.id, y.id));
}

export function diffBom(before: BomTable | undefined, after: BomTable | undefined): BomRowChange[] {
  const byRef = (table: BomTable | undefined) => new Map((table?.rows ?? []).map((r) => [r.ref, r]));
  const was = byRef(before);
  const now = byRef(after);
  const out: BomRowChange[] = [];
  for (const ref of new Set([...was.keys(), ...now.keys()])) {
    const a = was.get(ref);
    const b = now.get(ref);
    const changes = cellChanges(a, b);
    if (!a) out.push({ ref, status: "added", changes });
    else if (!b) out.push({ ref, status: "removed", changes });
    else if (changes.length > 0) out.push({ ref, status: "changed", changes });
  }
  return out.sort((x, y) => naturalCompare(x.ref, y.ref));
}

/** Generated columns first, then the human ones by name; an added row lists its filled cells. */
function cellChanges(a: BomRow | undefined, b: BomRow | undefined): FieldChange[] {
  const cells = (row: BomRow | undefined): Map<string, string> => {
    const out = new Map<string, string>();
    if (!row) return out;
    out.set("Value", row.value);
    out.set("Footprint", row.footprint);
    out.set("MPN", row.mpn);
    out.set("DNP", row.dnp);
    for (const [column, value] of Object.entries(row.human).sort(([x], [y]) => naturalCompare(x, y)))
      out.set(column, value);
    return out;
  };
  const ca = cells(a);
  const cb = cells(b);
  const out: FieldChange[] = [];
  for (const column of new Set([...ca.keys(), ...cb.keys()])) {
    const before = ca.get(column) ?? null;
    const after = cb.get(column) ?? null;
    if (before === after || ((before ?? "") === "" && (after ?? "") === "")) continue;
    out.push({ field: column, before, after });
  }
  return out;
}
