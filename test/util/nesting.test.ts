import { describe, expect, test } from "bun:test";
import { exceedsNesting, MAX_NESTING } from "../../src/util/nesting.ts";

describe("exceedsNesting", () => {
  const nested = (depth: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };

  test("accepts data up to the bound, and any scalar", () => {
    expect(exceedsNesting(nested(MAX_NESTING))).toBe(false);
    for (const v of [null, 1, "x", true, undefined]) expect(exceedsNesting(v)).toBe(false);
  });

  test("refuses one level more, and 100,000 levels without overflowing the stack", () => {
    expect(exceedsNesting(nested(MAX_NESTING + 1))).toBe(true);
    expect(exceedsNesting(JSON.parse(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`))).toBe(true);
  });
});
