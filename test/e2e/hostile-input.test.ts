/**
 * Input that a repo, a pull request or a command line can carry, through the compiled binary:
 * - mistyped options and malformed booleans (`do --dryrun` once committed, `check --stirct`
 *   once passed where `--strict` fails, `--strict=no` was strict): a usage error before
 *   anything runs;
 * Every run is killed past 60 s or 1 GB, and the test then fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { runBinaryBounded, templateRepo, type BoundedResult } from "./binary.ts";
import { serveScriptedModel, type SessionTurn } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const LIMITS = { timeoutMs: 60_000, maxRssBytes: 1024 * 1024 * 1024 };

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

async function run(args: string[], env: Record<string, string | undefined> = {}): Promise<BoundedResult> {
  const result = await runBinaryBounded(args, { env: { ...ISOLATED_ENV, ...env }, ...LIMITS });
  expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory }).toEqual({ timedOut: false, outOfMemory: false });
  return result;
}

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input });

/** A doc-only change the model would carry through to a commit. */
const DOC_CHANGE: SessionTurn[] = [
  {
    content: [
      call("p1", "propose_change", {
        title: "Document the LED indicator",
        why: "Scripted.",
        changes: ["write a note under docs/"],
        requirements_touched: [],
        verification: "Checks unchanged.",
      }),
    ],
  },
  { content: [call("e1", "edit_doc", { path: "led.md", new_text: "# LED\n\nD1 shows that VBUS is present.\n" })] },
  { content: [call("f1", "finish", { summary: "Documented the LED indicator." })] },
];

describe("mistyped options", () => {
  test("do --dryrun is a usage error naming --dry-run: the model is never asked and nothing is committed", async () => {
    const repo = await copyRepo(template());
    const head = await git(repo, "rev-parse", "HEAD");
    const before = fingerprint(repo);
    const model = serveScriptedModel(DOC_CHANGE);
    try {
      const result = await run(["do", "Write a note about the LED indicator", "--dryrun", "--yes", "--model", "compat:test", "--repo", repo, "--json"], {
        COPPERHEAD_BASE_URL: model.baseUrl,
      });
      expect(result.exitCode).toBe(3);
      expect(JSON.parse(result.stdout).error).toMatchObject({ code: "usage", option: "--dryrun", fix: expect.stringContaining("--dry-run") });
      expect(model.requests).toBe(0);
    } finally {
      await model.stop();
    }
    expect(await git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(fingerprint(repo)).toEqual(before);
  });

  test("check --stirct and --strict=no are usage errors, not a lenient check", async () => {
    const repo = await copyRepo(template());
    const typo = await run(["check", "--stirct", "--repo", repo]);
    expect(typo.exitCode).toBe(3);
    expect(typo.stderr).toContain("Did you mean --strict?");
    const malformed = await run(["check", "--strict=no", "--repo", repo, "--json"]);
    expect(malformed.exitCode).toBe(3);
    expect(JSON.parse(malformed.stdout).error).toMatchObject({ code: "usage", option: "--strict" });
    const board = readFileSync(join(repo, "usb-led.kicad_pcb"));
    const sync = await run(["board", "sync", "--dryrun", "--repo", repo]);
    expect(sync.exitCode).toBe(3);
    expect(sync.stderr).toContain("Did you mean --dry-run?");
    expect(readFileSync(join(repo, "usb-led.kicad_pcb"))).toEqual(board);
  });
});
