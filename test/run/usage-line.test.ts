import { expect, test } from "bun:test";
import { describeUsage } from "../../src/run/summary.ts";

test("summary.md's usage line says what the prompt cache served and took, when it did", () => {
  expect(
    describeUsage({ turns: 6, inputTokens: 22000, outputTokens: 820, cacheReadTokens: 15800, cacheWriteTokens: 4100 }),
  ).toBe("6 turns, 22000 input (15800 read from the prompt cache, 4100 written to it) and 820 output tokens");
  expect(describeUsage({ turns: 2, inputTokens: 900, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBe(
    "2 turns, 900 input and 40 output tokens",
  );
});
