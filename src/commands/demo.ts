/**
 * `copperhead demo`: the whole gated loop on the built-in board, with no key. It lays the
 * usb-led project out in a fresh git repo, runs `init`, then plays two recorded sessions
 * through `replay:` — one change that verifies and is committed, one that breaks a requirement,
 * is abandoned by the model once verification says so, and is rolled back byte for byte. Everything it does is real: kicad-cli checks, the journal,
 * git commits; only the model is a recording.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ProgressListener } from "../agent/progress.ts";
import { createReplayProvider } from "../agent/providers/replay.ts";
import { DEMO_BOARD, DEMO_PROJECT, DEMO_SCENARIOS } from "./demo-assets.ts";
import { CopperheadError } from "../errors.ts";
import { commitAll, runGit } from "../repo/git.ts";
import { runDo, type DoSummary } from "./do.ts";
import { runInit } from "./init.ts";

export interface DemoOptions {
  /** Where to create the demo repo (default: a new temp folder). Must not exist or be empty. */
  dir?: string;
  onProgress?: ProgressListener;
  /** Announces each scenario before it runs. */
  onScenario?: (name: string, request: string) => void;
}

export interface DemoResult {
  schema: "copperhead.demo/1";
  /** True when every scenario ended as recorded (committed, then rolled back). */
  ok: boolean;
  repo: string;
  runs: (DoSummary & { scenario: string; expected: string })[];
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const base = options.dir ? resolve(options.dir) : mkdtempSync(join(tmpdir(), "copperhead-demo-"));
  const repo = join(base, DEMO_PROJECT);
  mkdirSync(repo, { recursive: true });
  for (const [name, text] of Object.entries(DEMO_BOARD)) writeFileSync(join(repo, name), text);
  await git(repo, ["init", "-q", "-b", "main"]);
  await commit(repo, Object.keys(DEMO_BOARD), "usb-led: USB-C powered 3.3 V LED board");
  const init = await runInit({ repo, hooks: false });
  await commit(
    repo,
    init.files.filter((f) => f.action === "created").map((f) => f.path),
    "copperhead init",
  );

  const sessions = join(base, "sessions");
  mkdirSync(sessions, { recursive: true });
  const runs: DemoResult["runs"] = [];
  for (const scenario of DEMO_SCENARIOS) {
    const file = join(sessions, `${scenario.name}.json`);
    writeFileSync(file, JSON.stringify(scenario.session, null, 2));
    options.onScenario?.(scenario.name, scenario.request);
    const summary = await runDo({
      request: scenario.request,
      repo,
      provider: createReplayProvider(file),
      onProgress: options.onProgress,
    });
    runs.push({ ...summary, scenario: scenario.name, expected: scenario.expect });
  }
  return { schema: "copperhead.demo/1", ok: runs.every((r) => r.status === r.expected), repo, runs };
}

async function git(repo: string, args: string[]): Promise<void> {
  const result = await runGit(repo, args);
  if (result.code !== 0)
    throw new CopperheadError("git_failed", `git ${args.join(" ")} failed: ${result.stderr.trim()}`, {
      fix: "Check that git works: `git --version`.",
    });
}

async function commit(repo: string, paths: string[], message: string): Promise<void> {
  const result = await commitAll(repo, { message, paths, env: {} });
  if (!result.ok)
    throw new CopperheadError("git_failed", `git commit failed: ${result.output.trim()}`, {
      fix: "Check that git works: `git --version`.",
    });
}
