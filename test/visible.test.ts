import { describe, expect, test } from "bun:test";
import { hiddenCharacter, visible } from "../src/visible.ts";

describe("visible", () => {
  test("spells out controls, bidi and zero-width characters; keeps newlines, tabs and ordinary text", () => {
    expect(visible("\u001b]0;title\u0007\u001b[2J")).toBe("\\u001b]0;title\\u0007\\u001b[2J");
    expect(visible("R\u202e1 (10k\u2066)\u200b")).toBe("R\\u202e1 (10k\\u2066)\\u200b");
    expect(visible("\u009b31m line\rover")).toBe("\\u009b31m line\\u000dover");
    expect(visible("a\tb\nc — 10 µF ±5% 😀")).toBe("a\tb\nc — 10 µF ±5% 😀");
  });

  test("inside JSON the escapes are JSON's own, so the value reads back unchanged", () => {
    const value = { ref: "R\u202e1", note: "\u009b\u200f" };
    expect(JSON.parse(visible(JSON.stringify(value)))).toEqual(value);
  });

  test("hiddenCharacter names the first one", () => {
    expect(hiddenCharacter("R12")).toBeUndefined();
    expect(hiddenCharacter("R\u200b1\u202e")).toBe("\\u200b");
  });
});
