/**
 * The connectivity half of a diff, shared by the schematic (nets of `REF.PIN`s) and the board
 * (nets of `REF.PAD`s): which named groups were added, removed or renamed, and which members
 * moved from one group to another.
 *
 * A rename is a group whose members stayed together under a new name. Members that exist in
 * only one state (the pins of an added or removed part) do not count against a rename: when
 * R5 is removed and its net `Net-(R5-Pad2)` is now named after the LED it still feeds, that is
 * a rename, not a removed and an added net. Since each member belongs to one group per state,
 * a group can be renamed to at most one other.
 */
import * as v from "valibot";
import { naturalCompare } from "../util/natural-compare.ts";

/** Group name → its members, in one state. */
export type Groups = ReadonlyMap<string, readonly string[]>;

export const GroupChangeSchema = v.object({
  status: v.picklist(["added", "removed", "renamed"]),
  /** The name in the state that has it: after for added and renamed, before for removed. */
  name: v.string(),
  /** The old name of a renamed group. */
  before: v.optional(v.string()),
  /** Members of an added or removed group; the count of a renamed one's (in the after state). */
  members: v.array(v.string()),
});
export type GroupChange = v.InferOutput<typeof GroupChangeSchema>;

export const MemberMoveSchema = v.object({ member: v.string(), before: v.string(), after: v.string() });
export type MemberMove = v.InferOutput<typeof MemberMoveSchema>;

export interface GroupDiff {
  groups: GroupChange[];
  moves: MemberMove[];
}

export function diffGroups(before: Groups, after: Groups): GroupDiff {
  const groupOf = (groups: Groups) => {
    const of = new Map<string, string>();
    for (const [name, members] of groups) for (const m of members) of.set(m, name);
    return of;
  };
  const beforeOf = groupOf(before);
  const afterOf = groupOf(after);
  const sharedKey = (members: readonly string[], other: Map<string, string>) =>
    [...new Set(members.filter((m) => other.has(m)))].sort(naturalCompare).join("\u0000");

  const renamedTo = new Map<string, string>();
  const onlyAfter = new Map<string, string>();
  for (const [name, members] of after) {
    if (before.has(name)) continue;
    const key = sharedKey(members, beforeOf);
    if (key) onlyAfter.set(key, name);
  }
  const changes: GroupChange[] = [];
  for (const [name, members] of before) {
    if (after.has(name)) continue;
    const key = sharedKey(members, afterOf);
    const target = key ? onlyAfter.get(key) : undefined;
    if (target !== undefined) {
      renamedTo.set(name, target);
      changes.push({ status: "renamed", name: target, before: name, members: sorted(after.get(target)!) });
    } else changes.push({ status: "removed", name, members: sorted(members) });
  }
  const renamedTargets = new Set(renamedTo.values());
  for (const [name, members] of after) {
    if (!before.has(name) && !renamedTargets.has(name))
      changes.push({ status: "added", name, members: sorted(members) });
  }

  const moves: MemberMove[] = [];
  for (const [member, was] of beforeOf) {
    const now = afterOf.get(member);
    if (now === undefined) continue;
    const expected = renamedTo.get(was) ?? was;
    if (now !== expected) moves.push({ member, before: was, after: now });
  }
  changes.sort((a, b) => naturalCompare(a.name, b.name) || naturalCompare(a.status, b.status));
  moves.sort((a, b) => naturalCompare(a.member, b.member));
  return { groups: changes, moves };
}

function sorted(members: readonly string[]): string[] {
  return [...new Set(members)].sort(naturalCompare);
}
