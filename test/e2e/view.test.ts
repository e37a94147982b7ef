/**
 * The model's eyes through the compiled binary: a recorded session views a region of a corpus
 * sheet and of its board and asks for free space, then declines. The binary rasterises with the
 * WebAssembly build it embeds (no node_modules beside it); the transcript shows each view
 * answered with one image and a legend. Against loopback model servers: the Anthropic provider
 * sends the render as an image block after the legend; an OpenAI-compatible server not known
 * to take images gets the legend alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loopback } from "../agent/loopback.ts";
import { anthropicFrames, chatCompletionFrames, sseResponse } from "../support/model-streams.ts";
import { pngInfo } from "../support/png.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { ISOLATED_ENV, initialisedCorpusRepo } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

let repo = "";
beforeAll(async () => {
  requireBinary();
  repo = await initialisedCorpusRepo(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!);
}, 120_000);

test("view and find_space answer through the binary, with an image each view", async () => {
  const session = `replay:${join(SESSIONS_DIR, "view-sheet-and-board.json")}`;
  const { exitCode, stderr } = await runBinary(["do", "show me R1", "--model", session, "--json", "--repo", repo], {
    env: ISOLATED_ENV,
  });
  expect(exitCode, stderr).toBe(2);
  const runs = join(repo, ".copperhead/runs");
  const transcript = readFileSync(join(runs, readdirSync(runs)[0]!, "transcript.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as { type: string; name?: string; isError?: boolean; images?: number; content?: string },
    );
  const results = transcript.filter((e) => e.type === "tool_result");
  const views = results.filter((e) => e.name === "view");
  expect(views).toHaveLength(2);
  for (const view of views) expect(view, view.content).toMatchObject({ isError: false, images: 1 });
  expect(JSON.parse(views[0]!.content!).parts.map((p: { ref: string }) => p.ref)).toContain("R1");
  expect(JSON.parse(views[1]!.content!).footprints.map((p: { ref: string }) => p.ref)).toContain("R1");
  const space = results.find((e) => e.name === "find_space")!;
  expect(space.isError).toBe(false);
  expect(JSON.parse(space.content!)).toMatchObject({ document: "schematic", width: 15, height: 10 });
}, 600_000);

/** Runs `do` against a loopback model that calls view on R1, then refuses; returns the second request's body. */
async function viewThrough(model: string, env: Record<string, string>, reply: (turn: number) => Response) {
  const server = loopback((_req, i) => reply(i));
  try {
    const urlVars = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace("{url}", server.url)]));
    const { exitCode, stderr } = await runBinary(["do", "show me R1", "--model", model, "--json", "--repo", repo], {
      env: { ...ISOLATED_ENV, ...urlVars },
    });
    expect(exitCode, stderr).toBe(2);
    expect(server.requests).toHaveLength(2);
    return server.requests[1]!.body;
  } finally {
    server.stop();
  }
}

test("the Anthropic provider sends the view's PNG as an image block after the legend", async () => {
  const body = await viewThrough(
    "anthropic:claude-test",
    { ANTHROPIC_API_KEY: "sk-ant-test-0000", ANTHROPIC_BASE_URL: "{url}" },
    (turn) =>
      sseResponse(
        anthropicFrames({
          content: [
            turn === 0
              ? { type: "tool_use", id: "v1", name: "view", input: { ref: "R1" } }
              : { type: "tool_use", id: "r1", name: "refuse", input: { reason: "Only looking." } },
          ],
          stop_reason: "tool_use",
          usage: { input_tokens: 100, output_tokens: 20 },
        }),
      ),
  );
  const results = body.messages.at(-1).content.filter((b: { type: string }) => b.type === "tool_result");
  expect(results).toHaveLength(1);
  const [legend, image] = results[0].content;
  expect(legend.type).toBe("text");
  expect(JSON.parse(legend.text).parts.map((p: { ref: string }) => p.ref)).toContain("R1");
  expect(image.type).toBe("image");
  expect(image.source.media_type).toBe("image/png");
  const png = pngInfo(Buffer.from(image.source.data, "base64"));
  expect(png.width).toBeGreaterThanOrEqual(480);
  expect(png.inked).toBeGreaterThan(0.01);
}, 600_000);

test("an OpenAI-compatible server not known to take images gets the legend alone", async () => {
  const body = await viewThrough("compat:local", { COPPERHEAD_BASE_URL: "{url}/v1" }, (turn) =>
    sseResponse(
      chatCompletionFrames({
        message: {
          content: null,
          tool_calls: [
            turn === 0
              ? { id: "v1", function: { name: "view", arguments: JSON.stringify({ ref: "R1" }) } }
              : { id: "r1", function: { name: "refuse", arguments: JSON.stringify({ reason: "Only looking." }) } },
          ],
        },
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      }),
    ),
  );
  const sent = JSON.stringify(body.messages);
  expect(sent).not.toContain("image_url");
  expect(sent).not.toContain("data:image/png");
  const tool = body.messages.find((m: { role: string }) => m.role === "tool");
  expect(JSON.parse(tool.content).parts.map((p: { ref: string }) => p.ref)).toContain("R1");
}, 600_000);
