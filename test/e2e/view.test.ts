/**
 * The model's eyes through the compiled binary: a recorded session views a region of a corpus
 * sheet and of its board and asks for free space, then declines. The binary rasterises with the
 * WebAssembly build it embeds (no node_modules beside it); the transcript shows each view
 * answered with one image and a legend.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

let repo = "";
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  repo = (await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!)).root;
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "config", "user.name", "Test User");
  await git(repo, "config", "user.email", "test@example.com");
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "design");
  const init = await runBinary(["init", "--no-hooks", "--repo", repo], { env: ISOLATED_ENV });
  expect(init.exitCode, init.stderr).toBe(0);
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "copperhead init");
}, 120_000);

test("view and find_space answer through the binary, with an image each view", async () => {
  const session = `replay:${join(SESSIONS_DIR, "view-sheet-and-board.json")}`;
  const { exitCode, stderr } = await runBinary(["do", "show me R1", "--model", session, "--json", "--repo", repo], { env: ISOLATED_ENV });
  expect(exitCode, stderr).toBe(2);
  const runs = join(repo, ".copperhead/runs");
  const transcript = readFileSync(join(runs, readdirSync(runs)[0]!, "transcript.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; name?: string; isError?: boolean; images?: number; content?: string });
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
