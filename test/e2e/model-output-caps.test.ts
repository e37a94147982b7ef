/**
 * A model server that sends without bound, through the compiled binary: an endless streamed
 * body, a tool call whose arguments hold tens of megabytes, and a turn of 10,000 tool calls.
 * Each once took gigabytes or held the repo for minutes; each now ends at its cap with a typed
 * error naming it, within 60 s and 1 GB (peak RSS measured), and the tree byte-identical.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { MAX_RESPONSE_BYTES } from "../../src/agent/providers/http.ts";
import { MAX_TOOL_ARGUMENT_BYTES, MAX_TOOL_CALLS_PER_TURN } from "../../src/agent/loop.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { runBinaryBounded, templateRepo, type BoundedResult } from "./binary.ts";
import { serveScriptedModel, type SessionTurn } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const template = templateRepo();
const GB = 1024 * 1024 * 1024;

/** Runs `do` against the model at `baseUrl` with a one-minute deadline and a 1 GB ceiling. */
async function runAgainst(repo: string, baseUrl: string): Promise<BoundedResult> {
  return runBinaryBounded(["do", "Add a note", "--model", "compat:test", "--repo", repo, "--json"], {
    env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: baseUrl },
    timeoutMs: 60_000,
    maxRssBytes: GB,
  });
}

function expectBounded(result: BoundedResult): void {
  expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory }).toEqual({
    timedOut: false,
    outOfMemory: false,
  });
  expect(result.peakRssBytes).toBeLessThan(GB);
}

describe("caps on what a model server sends", () => {
  test("an endless streamed answer: provider_error naming the response cap, rolled back byte-identical", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    let sent = 0;
    const chunk = new TextEncoder().encode(
      `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "x".repeat(64 * 1024) } }] })}\n\n`,
    );
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      fetch: () =>
        new Response(
          new ReadableStream({
            // Bounded on this side too: far past the cap, never endless if the cap failed.
            pull(controller) {
              if (sent > 8 * MAX_RESPONSE_BYTES) return controller.close();
              sent += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        ),
    });
    try {
      const result = await runAgainst(repo, `http://127.0.0.1:${server.port}/v1`);
      expectBounded(result);
      const summary = JSON.parse(result.stdout);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("provider_error");
      expect(summary.detail).toContain("the cap on one model response");
      expect(sent).toBeLessThan(2 * MAX_RESPONSE_BYTES);
      expect(fingerprint(repo)).toEqual(before);
    } finally {
      server.stop(true);
    }
  }, 90_000);

  test("tool arguments of 20 MB: a tool error naming the cap, and the transcript stays small", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const huge: SessionTurn = {
      content: [{ type: "tool_use", id: "big", name: "read_doc", input: { path: "x".repeat(20 * 1024 * 1024) } }],
    };
    const idle: SessionTurn = { content: [{ type: "text", text: "Nothing more to do." }] };
    const model = serveScriptedModel([huge, idle, idle, idle]);
    try {
      const result = await runAgainst(repo, model.baseUrl);
      expectBounded(result);
      const summary = JSON.parse(result.stdout);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("stalled");
      const transcript = join(repo, summary.transcriptPath);
      expect(statSync(transcript).size).toBeLessThan(1024 * 1024);
      const events = readFileSync(transcript, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const error = events.find((e) => e.type === "tool_result" && e.id === "big");
      expect(error.isError).toBe(true);
      expect(error.content).toContain(`at most ${MAX_TOOL_ARGUMENT_BYTES} (the tool-argument cap)`);
      expect(fingerprint(repo)).toEqual(before);
    } finally {
      await model.stop();
    }
  }, 90_000);

  test("a turn of 10,000 tool calls: provider_error naming the per-turn cap, none of them run", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const flood: SessionTurn = {
      content: Array.from({ length: 10_000 }, (_, i) => ({
        type: "tool_use" as const,
        id: `c${i}`,
        name: "read_doc",
        input: { path: "SPEC.md" },
      })),
    };
    const model = serveScriptedModel([flood]);
    try {
      const result = await runAgainst(repo, model.baseUrl);
      expectBounded(result);
      const summary = JSON.parse(result.stdout);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("provider_error");
      expect(summary.detail).toContain(
        `made 10000 tool calls in one turn; at most ${MAX_TOOL_CALLS_PER_TURN} are allowed (the tool-calls-per-turn cap)`,
      );
      const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events.filter((e) => e.type === "tool_call")).toEqual([]);
      expect(fingerprint(repo)).toEqual(before);
    } finally {
      await model.stop();
    }
  }, 90_000);
});
