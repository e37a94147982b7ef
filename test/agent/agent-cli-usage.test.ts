/**
 * The agent CLIs keep their own prompt caches; the usage their event streams report, the cache's
 * part included, is what copperhead records (Claude Code's stream-json `assistant` messages carry
 * the Messages API's usage; Codex's `turn.completed` the Responses API's, flattened).
 */
import { expect, test } from "bun:test";
import { claudeCodeDriver } from "../../src/agent/providers/agent-cli/claude-code.ts";
import { codexDriver } from "../../src/agent/providers/agent-cli/codex.ts";

test("claude-code: cache reads and writes are counted, and in the input as the Messages API leaves them out of input_tokens", () => {
  const usage = {
    input_tokens: 12,
    output_tokens: 80,
    cache_read_input_tokens: 9000,
    cache_creation_input_tokens: 700,
  };
  const events = claudeCodeDriver.readEvent({ type: "assistant", message: { content: [], usage } });
  expect(events).toEqual([
    { type: "usage", inputTokens: 9712, outputTokens: 80, cacheReadTokens: 9000, cacheWriteTokens: 700 },
  ]);
  expect(
    claudeCodeDriver.readEvent({
      type: "assistant",
      message: { content: [], usage: { input_tokens: 5, output_tokens: 1 } },
    }),
  ).toEqual([{ type: "usage", inputTokens: 5, outputTokens: 1 }]);
});

test("codex: cached_input_tokens is the cached part of input_tokens", () => {
  const events = codexDriver.readEvent({
    type: "turn.completed",
    usage: { input_tokens: 24000, cached_input_tokens: 21000, output_tokens: 300 },
  });
  expect(events).toEqual([{ type: "usage", inputTokens: 24000, outputTokens: 300, cacheReadTokens: 21000 }]);
});
