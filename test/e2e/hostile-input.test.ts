/**
 * Input that a repo, a pull request or a command line can carry, through the compiled binary:
 * - mistyped options and malformed booleans (`do --dryrun` once committed, `check --stirct`
 *   once passed where `--strict` fails, `--strict=no` was strict): a usage error before
 *   anything runs;
 * - a SPEC.md built to make pattern matching blow up (a heading followed by a million spaces,
 *   a bullet of a million tabs and a CR, a `count` rule of a dozen `R*` against a 40-character
 *   reference; once quadratic or exponential, minutes to hours): check evaluates it at once;
 * Every run is killed past 60 s or 1 GB, and the test then fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { editFile } from "../support/variants.ts";
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

describe("a SPEC.md built to make pattern matching blow up", () => {
  test("long whitespace runs and a dozen-star count rule: check evaluates the spec within the limits", async () => {
    const repo = await copyRepo(template());
    // A 40-character reference for the glob to chew on.
    const longRef = `R${"R".repeat(38)}1`;
    editFile(join(repo, "usb-led.kicad_sch"), (text) => text.replace('(property "Reference" "R1"', `(property "Reference" "${longRef}"`).replace('(reference "R1")', `(reference "${longRef}")`));
    const whitespace = 1_000_000;
    const hostile = [
      "## Requirements",
      `- REQ-GLOB-1: a dozen stars${"\t".repeat(whitespace)}\r`,
      `  - check: count ${"R*".repeat(12)}x == 0`,
      `  - check: count ${"R*".repeat(12)}1 == 1`,
      `- ${"\t".repeat(whitespace)}\r`,
      `### Notes${" ".repeat(whitespace)}x`,
      `### Notes${" ".repeat(whitespace)}#\r`,
      `Some \`net\`${" ".repeat(whitespace)}and \`${"`".repeat(whitespace)}`,
      `- check:${" ".repeat(whitespace)}x`,
      "",
    ].join("\n");
    editFile(join(repo, "docs/SPEC.md"), (text) => text.replace("## Requirements\n", hostile));
    const result = await run(["check", "--repo", repo, "--json"]);
    const requirements = JSON.parse(result.stdout).checks.find((c: { id: string }) => c.id === "requirements");
    // Every rule evaluated; the stray top-level `check:` line is the one problem.
    expect(requirements).toMatchObject({ status: "fail", summary: "9/9 rules pass, 1 spec problem" });
    expect(requirements.findings.map((f: { message: string }) => f.message)).toEqual([expect.stringContaining("a check must be a nested bullet under a requirement")]);
  }, 120_000);
});
