import { describe, expect, test } from "bun:test";
import { closeMatches, suggestion } from "../../src/util/close-matches.ts";

describe("closeMatches", () => {
  test("a reference finds the names that hold its word and number, however they are dressed", () => {
    const refs = ["C1", "D1", "LED_ACT1", "PWR_LED1", "USER_LED1", "LED_ACT2", "R1", "U1"];
    expect(closeMatches("LED1", refs)).toEqual(["LED_ACT1", "PWR_LED1", "USER_LED1", "D1"]);
  });

  test("typos and substrings still come first by distance", () => {
    expect(closeMatches("R12", ["R1", "R2", "R120", "C12", "U7"])).toEqual(["R1", "R120", "C12", "R2"]);
    expect(closeMatches("xyz", ["R1", "C2"])).toEqual([]);
  });

  test("suggestion lists some of what exists when nothing is close", () => {
    expect(suggestion("references", "Q9", ["R1", "C2"])).toBe("Did you mean C2, R1?");
    expect(suggestion("references", "ZZZZZZ", ["R1", "C2"])).toBe("Available references: R1, C2.");
  });
});
