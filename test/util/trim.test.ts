import { describe, expect, test } from "bun:test";
import { oneLine, trimEndOf, trimStartOf } from "../../src/util/trim.ts";

describe("text trimming", () => {
  test("oneLine joins trimmed lines and drops blank ones", () => {
    expect(oneLine("  a \n\n  b\r\n c  ")).toBe("a b c");
    expect(oneLine("one")).toBe("one");
  });

  test("trimEndOf and trimStartOf strip a run of the given characters", () => {
    expect(trimEndOf("/a/b//", "/")).toBe("/a/b");
    expect(trimEndOf("docs\\/", "\\/")).toBe("docs");
    expect(trimStartOf("//a/", "/")).toBe("a/");
    expect(trimEndOf("///", "/")).toBe("");
  });

  test("a million spaces or slashes without a newline or an end take one pass", () => {
    // A backtracking pattern retried every position of the run: minutes here.
    expect(oneLine(`a${" ".repeat(1_000_000)}b`)).toBe(`a${" ".repeat(1_000_000)}b`);
    expect(trimEndOf(`${"/".repeat(1_000_000)}x`, "/")).toHaveLength(1_000_001);
  }, 20_000);
});
