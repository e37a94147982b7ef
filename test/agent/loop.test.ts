/**
 * The agent loop on a real project (usb-led after `copperhead init`), driven by scripted turns
 * through the replay provider: how it unlocks and handles a tool depends on the effect the tool
 * declares, never on its name or the shape of its result; and a fault inside a tool reaches the
 * model as a tool error, not the user as a crash.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { currentDesign, type RunContext } from "../../src/agent/context.ts";
import { runLoop, type LoopResult } from "../../src/agent/loop.ts";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { exitTools } from "../../src/agent/tools/exit.ts";
import { readTools } from "../../src/agent/tools/read.ts";
import { defineTool, type Tool } from "../../src/agent/tools/tool.ts";
import { Transcript } from "../../src/agent/transcript.ts";
import { CopperheadError } from "../../src/errors.ts";
import type { Proposal } from "../../src/spec/proposal.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, initialisedRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

let template: string;
beforeAll(async () => {
  template = await initialisedRepo();
});

type Call = { name: string; input?: unknown };

/** A scripted session: one turn per list of tool calls. */
async function session(turns: Call[][]): Promise<string> {
  const file = join(await makeTempDir(), "session.json");
  const script = turns.map((calls, t) => ({
    content: calls.map((c, i) => ({ type: "tool_use", id: `t${t + 1}.${i + 1}`, name: c.name, input: c.input ?? {} })),
  }));
  writeFileSync(file, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", turns: script }));
  return file;
}

interface Run {
  result: LoopResult;
  /** What the model was told for each call, by tool-use id. */
  results: Map<string, { content: string; isError: boolean }>;
  verified: number;
}

/** Runs the loop over `turns` with `tools` on a fresh copy of the project. */
async function converse(
  turns: Call[][],
  tools: Tool<RunContext>[],
  options: { approved?: boolean; prepare?: (ctx: RunContext) => void } = {},
): Promise<Run> {
  const repo = await copyRepo(template);
  const file = await session(turns);
  return withTools(repo, async ({ ctx }) => {
    if (options.approved) ctx.proposal = { id: "scripted", title: "scripted" } as Proposal;
    options.prepare?.(ctx);
    const transcript = new Transcript(await makeTempDir(), { env: {} });
    let verified = 0;
    const result = await runLoop({
      provider: createReplayProvider(file),
      ctx,
      tools,
      request: "scripted",
      startInEditPhase: options.approved,
      maxTurns: turns.length + 1,
      maxRepairCycles: 0,
      transcript,
      approve: async () => null,
      verify: async () => {
        verified++;
        return { ok: true, feedback: "", newFindings: 0 };
      },
      editState: () => "",
      context: { budgetTokens: 1_000_000, compact: false },
    });
    const results = new Map<string, { content: string; isError: boolean }>();
    for (const line of readFileSync(transcript.path, "utf8").trim().split("\n")) {
      const event = JSON.parse(line) as { type: string; id?: string; content?: string; isError?: boolean };
      if (event.type === "tool_result") results.set(event.id!, { content: event.content!, isError: event.isError! });
    }
    return { result, results, verified };
  });
}

describe("the loop reads a tool's effect", () => {
  test("a tool is a way out or a proposal by its effect, not by its name or its result's shape", async () => {
    // A read tool named like the spec gate, answering with a refusal's shape: the model reads the answer, nothing ends.
    const impostor = defineTool({
      name: "propose_change",
      effect: "read",
      description: "reads",
      schema: v.strictObject({}),
      run: () => ({ specDecision: { kind: "refused", reason: "refused", detail: "not a decision" } }),
    });
    const run = await converse(
      [[{ name: "propose_change" }], [{ name: "refuse", input: { reason: "the request cannot be met" } }]],
      [...readTools, impostor, ...exitTools] as Tool<RunContext>[],
    );
    expect(run.results.get("t1.1")).toEqual({
      content: JSON.stringify({ specDecision: { kind: "refused", reason: "refused", detail: "not a decision" } }),
      isError: false,
    });
    expect(run.result.end).toEqual({ kind: "refused", reason: "refused", detail: "the request cannot be met" });
  });

  test("finish is the tool whose effect is finish, whatever its name", async () => {
    const wrapUp = defineTool({
      name: "wrap_up",
      effect: "finish",
      description: "done",
      schema: v.strictObject({}),
      run: () => ({ verifying: true }),
    });
    const namedFinish = defineTool({
      name: "finish",
      effect: "read",
      description: "reads",
      schema: v.strictObject({}),
      run: () => ({ read: true }),
    });
    const run = await converse(
      [[{ name: "finish" }], [{ name: "wrap_up" }]],
      [wrapUp, namedFinish] as Tool<RunContext>[],
      { approved: true },
    );
    expect(run.results.get("t1.1")).toEqual({ content: JSON.stringify({ read: true }), isError: false });
    expect(run.verified).toBe(1);
    expect(run.result.end).toEqual({ kind: "verified", repairCycles: 0 });
  });

  test("abandon is a way out, not an edit: it needs an approved change, and its reason is prose", async () => {
    const early = await converse(
      [[{ name: "abandon", input: { reason: "too hard" } }], [{ name: "refuse", input: { reason: "no" } }]],
      exitTools as Tool<RunContext>[],
    );
    expect(early.results.get("t1.1")).toEqual({
      content: "abandon is locked until a proposal is accepted and approved: call propose_change first",
      isError: true,
    });
    const late = await converse(
      [
        [
          {
            name: "abandon",
            input: { reason: "the key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 was in the way" },
          },
        ],
      ],
      exitTools as Tool<RunContext>[],
      { approved: true },
    );
    expect(late.result.end.kind).toBe("failed");
    expect(late.result.end).toMatchObject({ reason: "abandoned" });
    // An edit's secret fails the call; a way out's reason is redacted and the run ends as asked.
    expect((late.result.end as { detail: string }).detail).not.toContain(
      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
    );
  });
});

describe("a fault inside a tool", () => {
  /** A tool that fails the way a bug does: an untyped exception, not a typed error. */
  const crashing = (effect: "edit" | "propose" | "read") =>
    defineTool({
      name: `crash_${effect}`,
      effect,
      description: "fails",
      schema: v.strictObject({}),
      run: (ctx: RunContext) => {
        // A tool that read the design before it failed: its editor must not outlive the fault.
        currentDesign(ctx);
        return (undefined as unknown as { node: string }).node;
      },
    });

  test("becomes a tool error the model reads, the editors are dropped, and the run goes on", async () => {
    let ctxSeen: RunContext | undefined;
    const run = await converse(
      [[{ name: "crash_edit" }], [{ name: "refuse", input: { reason: "giving up" } }]],
      [crashing("edit"), ...exitTools] as Tool<RunContext>[],
      {
        approved: true,
        prepare: (ctx) => (ctxSeen = ctx),
      },
    );
    const told = run.results.get("t1.1")!;
    expect(told.isError).toBe(true);
    expect(told.content).toStartWith("crash_edit failed on a fault of copperhead's own (undefined is not an object");
    expect(told.content).toContain("the run goes on");
    expect(ctxSeen!.design).toBeUndefined();
    expect(run.result.end).toEqual({ kind: "refused", reason: "refused", detail: "giving up" });
  });

  test("of a read tool too; only a propose tool's fault, which may have half-recorded an amendment, ends the run", async () => {
    const read = await converse([[{ name: "crash_read" }], [{ name: "refuse", input: { reason: "done" } }]], [
      crashing("read"),
      ...exitTools,
    ] as Tool<RunContext>[]);
    expect(read.results.get("t1.1")!.isError).toBe(true);
    expect(read.result.end.kind).toBe("refused");
    await expect(converse([[{ name: "crash_propose" }]], [crashing("propose")] as Tool<RunContext>[])).rejects.toThrow(
      "undefined is not an object",
    );
  });

  test("a typed error that ends the run (no KiCad Python to refill zones) is not handed to the model", async () => {
    const noPython = defineTool({
      name: "refill",
      effect: "edit",
      description: "refills",
      schema: v.strictObject({}),
      run: () => {
        throw new CopperheadError("kicad_python_missing", "KiCad's Python is not installed.");
      },
    });
    await expect(
      converse([[{ name: "refill" }]], [noPython] as Tool<RunContext>[], { approved: true }),
    ).rejects.toThrow("KiCad's Python is not installed.");
  });
});
