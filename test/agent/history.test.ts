import { describe, expect, test } from "bun:test";
import {
  contextOptions,
  estimateTokens,
  FULL_CONTEXT_VARIABLE,
  History,
  KEEP_PICTURES,
  LONG_RESULT_CHARS,
  TOKENS_PER_PICTURE,
} from "../../src/agent/history.ts";
import type { ContentBlock, Message, ToolSpec } from "../../src/agent/conversation.ts";

const PREFIX = { system: "You are copperhead.", tools: [] as ToolSpec[] };
const PICTURE = { mediaType: "image/png" as const, data: "iVBORw0KGgo".repeat(50) };

/** One model turn: a call, then its result, the way the loop records them. */
function turn(
  history: History,
  n: number,
  name: string,
  input: unknown,
  result: string,
  images = 0,
): { call: ContentBlock; result: ContentBlock } {
  const call: ContentBlock = { type: "tool_use", id: `t${n}`, name, input };
  const answer: ContentBlock = {
    type: "tool_result",
    toolUseId: `t${n}`,
    content: result,
    ...(images ? { images: Array.from({ length: images }, () => PICTURE) } : {}),
  };
  history.push({ role: "assistant", content: [{ type: "text", text: `turn ${n}` }, call] });
  history.push({ role: "user", content: [answer] });
  return { call, result: answer };
}

function started(budgetTokens = 60_000): History {
  const history = new History({ budgetTokens, compact: true });
  history.push({ role: "user", content: [{ type: "text", text: "add a 100 nF capacitor next to U1" }] });
  return history;
}

/** Every call has its result in the next message, every result its call, and the roles alternate from the user. */
function expectValidPairing(messages: Message[]): void {
  expect(messages[0]!.role).toBe("user");
  for (const [i, message] of messages.entries()) {
    expect(message.role).toBe(i % 2 === 0 ? "user" : "assistant");
    if (message.role !== "assistant") continue;
    const calls = message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    const results = (messages[i + 1]?.content ?? []).flatMap((b) => (b.type === "tool_result" ? [b.toolUseId] : []));
    expect(results).toEqual(calls);
  }
}

const pictures = (messages: Message[]) =>
  messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? (b.images ?? []) : [])));
const text = (block: ContentBlock | undefined) =>
  block?.type === "tool_result" ? block.content : block?.type === "text" ? block.text : JSON.stringify(block);

describe("history", () => {
  test("only the last two pictures are sent; an older one becomes a line saying what it showed", () => {
    const history = started();
    turn(history, 1, "view", { document: "board", ref: "C1" }, "legend of C1", 1);
    turn(history, 2, "view", { ref: "U1" }, "legend of U1", 1);
    turn(history, 3, "view", { document: "board", x: 10, y: 20 }, "legend at 10, 20", 1);
    turn(history, 4, "view", { document: "board", ref: "R5" }, "legend of R5", 1);
    const report = history.fit(PREFIX);
    expect(pictures(history.messages)).toHaveLength(KEEP_PICTURES);
    expect(report.pictures).toBe(2);
    expect(text(history.messages[2]!.content[0])).toBe(
      "legend of C1\n(board view of C1 at turn 1, superseded by later views)",
    );
    expect(text(history.messages[4]!.content[0])).toBe(
      "legend of U1\n(schematic view of U1 at turn 2, superseded by later views)",
    );
    expect(text(history.messages[6]!.content[0])).toBe("legend at 10, 20");
    expect(report.estimatedTokens).toBe(estimateTokens({ ...PREFIX, messages: history.messages }));
    expect(report.estimatedTokens).toBeGreaterThan(2 * TOKENS_PER_PICTURE);
  });

  test("an older long result keeps its beginning and says how to read it again; the latest stays whole", () => {
    const history = started();
    const long = Array.from({ length: 400 }, (_, i) => `finding ${i}: clearance violation between two pads`).join("\n");
    turn(history, 1, "run_check", { check: "drc" }, long);
    turn(history, 2, "run_check", { check: "erc" }, long);
    const report = history.fit(PREFIX);
    expect(report.results).toBe(1);
    const older = text(history.messages[2]!.content[0]);
    expect(older.length).toBeLessThan(LONG_RESULT_CHARS);
    expect(older.startsWith("finding 0: clearance violation between two pads\nfinding 1:")).toBe(true);
    expect(older).toMatch(
      /more characters left out to keep the conversation small; call run_check again with \{"check":"drc"\} \(offset and limit page through its findings\) to read them\)$/,
    );
    expect(text(history.messages[4]!.content[0])).toBe(long);
  });

  test("a long run stays within the budget; the proposal, its approval and the latest findings stay whole", () => {
    const history = started(20_000);
    const big = "x".repeat(3_900);
    let proposal!: { call: ContentBlock; result: ContentBlock };
    const approval: ContentBlock = { type: "text", text: "Proposal add-c900 accepted and approved (auto)." };
    const oldFindings: ContentBlock = {
      type: "text",
      text: `Verification failed (repair cycle 1 of 3).\n${"- [drc/clearance] too close\n".repeat(40)}`,
    };
    const latestFindings: ContentBlock = {
      type: "text",
      text: `Verification failed (repair cycle 2 of 3).\n${"- [erc/pin] unconnected\n".repeat(40)}`,
    };
    for (let n = 1; n <= 40; n++) {
      if (n === 5) {
        proposal = turn(
          history,
          n,
          "propose_change",
          { title: "Add C900", why: "w".repeat(600), changes: ["add C900"] },
          '{"accepted":true}',
        );
        history.keep(proposal.call);
        history.keep(proposal.result);
        history.keep(approval);
        history.messages.at(-1)!.content.push(approval);
      } else if (n === 20 || n === 30) {
        turn(history, n, "finish", { summary: "done" }, '{"ok":true}');
        const findings = n === 20 ? oldFindings : latestFindings;
        history.keepLatest("findings", findings);
        history.messages.at(-1)!.content.push(findings);
      } else
        turn(
          history,
          n,
          n % 3 === 0 ? "view" : "get_net",
          { ref: `C${n}`, document: "board" },
          big,
          n % 3 === 0 ? 1 : 0,
        );
      const report = history.fit(PREFIX);
      expect(report.estimatedTokens).toBeLessThanOrEqual(20_000);
      expectValidPairing(history.messages);
    }
    const all = history.messages.flatMap((m) => m.content);
    expect(all).toContain(proposal.call);
    expect(all).toContain(proposal.result);
    expect(all).toContain(approval);
    expect(all).toContain(latestFindings);
    expect(all).not.toContain(oldFindings);
    expect(history.messages[0]!.content[0]).toEqual({ type: "text", text: "add a 100 nF capacitor next to U1" });
  });

  test("compaction goes below the budget, so the next turns resend the same front (what a prompt cache reuses)", () => {
    const history = started(20_000);
    for (let n = 1; n <= 20; n++) turn(history, n, "get_component", { ref: `U${n}` }, "y".repeat(3_900));
    const first = history.fit(PREFIX);
    expect(first.compactedTurns).toBeGreaterThan(0);
    const front = JSON.stringify(history.messages.slice(0, -2));
    turn(history, 21, "get_component", { ref: "U21" }, "z".repeat(3_000));
    const second = history.fit(PREFIX);
    expect(second.compactedTurns + second.droppedTurns).toBe(0);
    expect(JSON.stringify(history.messages).startsWith(front.slice(0, -1))).toBe(true);
  });

  test("when compacting is not enough, the oldest turns are left out whole, and the request says so", () => {
    const history = started(16_000);
    // So many turns that even one line per result is too much.
    for (let n = 1; n <= 300; n++) turn(history, n, "get_net", { name: `NET_${n}` }, "n".repeat(600));
    const report = history.fit(PREFIX);
    expect(report.droppedTurns).toBeGreaterThan(0);
    expect(report.estimatedTokens).toBeLessThanOrEqual(16_000);
    expectValidPairing(history.messages);
    expect(text(history.messages[0]!.content.at(-1))).toMatch(
      /^\(\d+ earlier turns were left out to fit the context budget/,
    );
    expect(history.messages[0]!.content).toHaveLength(2);
  });

  test("a latest result larger than the whole budget is cut: a run never fails on context length", () => {
    const history = started(16_000);
    turn(history, 1, "read_doc", { path: "docs/SPEC.md" }, "s".repeat(200_000), 3);
    const report = history.fit(PREFIX);
    expect(report.estimatedTokens).toBeLessThanOrEqual(16_000);
    expect(text(history.messages[2]!.content[0])).toMatch(
      /more characters left out to fit the context budget; call read_doc again with \{"path":"docs\/SPEC.md"\} with a narrower question\)$/,
    );
  });

  test("with compaction off, the history is sent as it is", () => {
    const history = new History({ budgetTokens: 16_000, compact: false });
    history.push({ role: "user", content: [{ type: "text", text: "go" }] });
    for (let n = 1; n <= 6; n++) turn(history, n, "view", { ref: "U1" }, "v".repeat(20_000), 1);
    const before = JSON.stringify(history.messages);
    const report = history.fit(PREFIX);
    expect(JSON.stringify(history.messages)).toBe(before);
    expect(report.estimatedTokens).toBeGreaterThan(16_000);
  });

  test("the budget: a number, or per provider:model, provider and default; the full-context switch turns compaction off", () => {
    const anthropic = { provider: "anthropic", model: "claude-x" };
    expect(contextOptions(undefined, anthropic, {})).toEqual({ budgetTokens: 60_000, compact: true });
    expect(contextOptions(90_000, anthropic, {})).toEqual({ budgetTokens: 90_000, compact: true });
    const table = { default: 30_000, anthropic: 100_000, "anthropic:claude-x": 150_000 };
    expect(contextOptions(table, anthropic, {}).budgetTokens).toBe(150_000);
    expect(contextOptions(table, { provider: "anthropic", model: "claude-y" }, {}).budgetTokens).toBe(100_000);
    expect(contextOptions(table, { provider: "openai", model: "gpt" }, {}).budgetTokens).toBe(30_000);
    expect(contextOptions(undefined, anthropic, { [FULL_CONTEXT_VARIABLE]: "1" }).compact).toBe(false);
  });
});
