import { describe, expect, test } from "bun:test";
import { globMatch, type GlobSteps } from "../../src/util/glob.ts";

describe("globMatch", () => {
  test("* is any run, ? one character, the rest literal, the whole text", () => {
    const cases: [string, string, boolean][] = [
      ["R*", "R1", true],
      ["R*", "R", true],
      ["R*", "C1", false],
      ["R?", "R12", false],
      ["R??", "R12", true],
      ["*", "", true],
      ["", "", true],
      ["", "x", false],
      ["C*0", "C10", true],
      ["C*0", "C101", false],
      ["*:R_*", "Device:R_Small", true],
      ["a*b*c", "aXbYbZc", true],
      ["a*b*c", "aXbYbZ", false],
      ["R.1", "Rx1", false],
      ["R(1)", "R(1)", true],
      ["D?", "D😀", true],
      ["**x**", "x", true],
    ];
    for (const [pattern, text, want] of cases)
      expect({ pattern, text, match: globMatch(pattern, text) }).toEqual({ pattern, text, match: want });
  });

  test("a dozen stars against a long name takes at most (pattern + 1) × (text + 1) steps", () => {
    // A backtracking regex takes exponential time on exactly this.
    const pattern = "R*".repeat(12) + "x";
    const text = "R".repeat(40);
    const counter: GlobSteps = { steps: 0 };
    expect(globMatch(pattern, text, counter)).toBe(false);
    expect(counter.steps).toBeLessThanOrEqual((pattern.length + 1) * (text.length + 1));
    const long = { steps: 0 };
    expect(globMatch("*a*a*a*a*a*b", "a".repeat(100_000), long)).toBe(false);
    expect(long.steps).toBeLessThanOrEqual(13 * 100_001);
  });
});
