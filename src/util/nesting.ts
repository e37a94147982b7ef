/**
 * A bound on how deeply nested the JSON-like data that comes from outside may be: a model's
 * tool arguments, an MCP request's arguments. Serialising, validating and redacting all walk
 * such data by recursion, so an input nested 100,000 levels deep would otherwise surface as a
 * stack overflow (an `internal_error`) wherever it first met a recursive walk. Checked up front,
 * without recursion, it is plain bad input instead.
 */

/** Far deeper than any tool's arguments need, far shallower than any stack. */
export const MAX_NESTING = 64;

/** Whether `value` has arrays or objects nested more than `max` levels deep. */
export function exceedsNesting(value: unknown, max: number = MAX_NESTING): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= max) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: item, depth: depth + 1 });
  }
  return false;
}
