import { describe, expect, test } from "bun:test";
import { codeSpanMentions } from "../../src/spec/mentions.ts";

describe("codeSpanMentions", () => {
  test("a backtick run opens a span the next run of the same length closes", () => {
    const mentions = codeSpanMentions(
      "the nets `VBUS` and ``GND`` and ```` x ` y ```` and `open\n```\n`R1`\n```\nafter `R2`",
    );
    expect(mentions.map((m) => [m.text, m.line, m.column])).toEqual([
      ["VBUS", 1, 10],
      ["GND", 1, 21],
      ["x ` y", 1, 33],
      ["R2", 5, 7],
    ]);
    expect(mentions[0]).toMatchObject({ before: "the nets ", after: " and ``GND`` and ```` x ` y ```` and `open" });
  });

  test("a million backticks, runs of every length and many spans on one line stay linear", () => {
    // A backreference pattern retried every run against every later one: cubic here, far past
    // the timeout.
    expect(codeSpanMentions("`".repeat(1_000_000))).toEqual([]);
    const ladder = Array.from({ length: 1000 }, (_, i) => `x${"`".repeat(i + 1)}`).join(" ");
    expect(codeSpanMentions(ladder)).toEqual([]);
    const many = codeSpanMentions("net `A` ".repeat(100_000));
    expect(many).toHaveLength(100_000);
    // The context around each span is bounded, not the whole line.
    expect(many[99_999]!.before.length).toBeLessThanOrEqual(200);
  }, 20_000);
});
