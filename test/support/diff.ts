/** Asserting on a diff: exactly the expected sections, every other one empty. */
import { expect } from "bun:test";
import type { DiffResult } from "../../src/commands/diff.ts";
import type { DesignDiff } from "../../src/diff/diff.ts";

export type Sections = Omit<DesignDiff, "schema" | "empty">;

const NOTHING: Sections = { sheets: [], components: [], nets: [], pins: [], board: null, requirements: [], bom: [], problems: [] };

/**
 * The diff of `project` holds `expected` and nothing else; it is `empty` exactly when nothing
 * is expected.
 */
export function expectOnly(result: DiffResult, project: string, expected: Partial<Sections>): void {
  const { schema, project: compared, base: _base, head: _head, empty, renders: _renders, ...sections } = result;
  expect(schema).toBe("copperhead.diff/1");
  expect(compared).toBe(project);
  expect(sections).toEqual({ ...NOTHING, ...expected });
  expect(empty).toBe(Object.values(expected).every((v) => v === null || (Array.isArray(v) && v.length === 0)));
}
