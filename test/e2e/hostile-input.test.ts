/**
 * Input that a repo, a pull request or a command line can carry, through the compiled binary:
 * - mistyped options and malformed booleans (`do --dryrun` once committed, `check --stirct`
 *   once passed where `--strict` fails, `--strict=no` was strict): a usage error before
 *   anything runs;
 * - a SPEC.md built to make pattern matching blow up (a heading followed by a million spaces,
 *   a bullet of a million tabs and a CR, a `count` rule of a dozen `R*` against a 40-character
 *   reference; once quadratic or exponential, minutes to hours): check evaluates it at once;
 * - terminal escapes in label and value text (a window title, a screen clear, an OSC 52
 *   clipboard write): netlist, diff and sync show them spelled out, like check always did;
 * - bidi and invisible characters: a reference holding one is refused; a value, a title or a
 *   summary holding one is committed with it spelled out in every record;
 * Every run is killed past 60 s or 1 GB, and the test then fails.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
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

/**
 * Runs the binary within `LIMITS`. A gated run's process group holds kicad-cli's ERC and DRC
 * as well, whose own footprint is not the attack's: those runs get `maxRssBytes` of 2 GB, as in
 * hostile-model.test.ts.
 */
async function run(
  args: string[],
  env: Record<string, string | undefined> = {},
  maxRssBytes = LIMITS.maxRssBytes,
): Promise<BoundedResult> {
  const result = await runBinaryBounded(args, { env: { ...ISOLATED_ENV, ...env }, ...LIMITS, maxRssBytes });
  expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory }).toEqual({
    timedOut: false,
    outOfMemory: false,
  });
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
      const result = await run(
        [
          "do",
          "Write a note about the LED indicator",
          "--dryrun",
          "--yes",
          "--model",
          "compat:test",
          "--repo",
          repo,
          "--json",
        ],
        {
          COPPERHEAD_BASE_URL: model.baseUrl,
        },
      );
      expect(result.exitCode).toBe(3);
      expect(JSON.parse(result.stdout).error).toMatchObject({
        code: "usage",
        option: "--dryrun",
        fix: expect.stringContaining("--dry-run"),
      });
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
    editFile(join(repo, "usb-led.kicad_sch"), (text) =>
      text
        .replace('(property "Reference" "R1"', `(property "Reference" "${longRef}"`)
        .replace('(reference "R1")', `(reference "${longRef}")`),
    );
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
    expect(requirements.findings.map((f: { message: string }) => f.message)).toEqual([
      expect.stringContaining("a check must be a nested bullet under a requirement"),
    ]);
  }, 120_000);
});

/** What a terminal would act on: ESC and BEL (C0), CSI and OSC (C1), bidi and zero-width. */
const ACTIVE = /[\u0007\u001b\u009b\u009d\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

describe("terminal escapes from repo content", () => {
  test("netlist, diff and sync spell out ESC, OSC and CSI from a value and a label", async () => {
    const repo = await copyRepo(template());
    const hostile = "\u001b]0;pwned\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31m";
    editFile(join(repo, "usb-led.kicad_sch"), (text) =>
      text
        .replace('(property "Value" "5.1k"', `(property "Value" "5.1k${hostile}"`)
        .replace('(label "LED_A"', `(label "LED_A${hostile}"`),
    );
    for (const args of [["netlist"], ["diff"], ["sync"]]) {
      const result = await run([...args, "--repo", repo]);
      const output = result.stdout + result.stderr;
      expect({ args, active: ACTIVE.exec(output)?.[0] }).toEqual({ args, active: undefined });
      expect({ args, spelled: output.includes("\\u001b]0;pwned\\u0007") }).toEqual({ args, spelled: true });
    }
  });
});

describe("bidi and invisible characters from the model", () => {
  test("a reference holding U+202E is refused; a field, title and summary holding one are committed spelled out", async () => {
    const repo = await copyRepo(template());
    const model = serveScriptedModel([
      {
        content: [
          call("p1", "propose_change", {
            title: "Note R1\u202e's tolerance",
            why: "Scripted: bidi characters in names and values.",
            changes: ["add a Note field to R1"],
            requirements_touched: [],
            verification: "Checks unchanged.",
            refs: ["R1"],
          }),
        ],
      },
      {
        content: [
          call("r1", "set_field", { ref: "R1", field: "Reference", value: "R\u202e1" }),
          call("r2", "set_field", { ref: "R1", field: "Reference", value: "R\u200b2" }),
        ],
      },
      { content: [call("n1", "set_field", { ref: "R1", field: "Note", value: "1% \u202e(10k)\u001b[2J" })] },
      { content: [call("f1", "finish", { summary: "Noted R1\u2066's tolerance." })] },
    ]);
    let result: BoundedResult;
    try {
      result = await run(
        ["do", "Note R1's tolerance", "--yes", "--model", "compat:test", "--repo", repo, "--json"],
        { COPPERHEAD_BASE_URL: model.baseUrl },
        2 * LIMITS.maxRssBytes,
      );
    } finally {
      await model.stop();
    }
    expect(result.exitCode).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("committed");
    const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const errors = Object.fromEntries(
      events.filter((e) => e.type === "tool_result" && e.isError).map((e) => [e.id, e.content as string]),
    );
    expect(Object.keys(errors).sort()).toEqual(["r1", "r2"]);
    expect(errors.r1).toContain("\\u202e");
    expect(errors.r2).toContain("\\u200b");
    expect(readFileSync(join(repo, "usb-led.kicad_sch"), "utf8")).toContain('(property "Reference" "R1"');
    // Every record shows the hidden characters spelled out, none raw.
    const runDir = join(repo, ".copperhead/runs", readdirSync(join(repo, ".copperhead/runs"))[0]!);
    const records = {
      commit: await git(repo, "log", "-1", "--format=%B"),
      changelog: readFileSync(join(repo, "docs/CHANGELOG.md"), "utf8"),
      summary: readFileSync(join(runDir, "summary.md"), "utf8"),
      stdout: result.stdout,
    };
    for (const [name, text] of Object.entries(records))
      expect({ name, active: ACTIVE.exec(text)?.[0] }).toEqual({ name, active: undefined });
    expect(records.commit).toContain("Noted R1\\u2066's tolerance.");
    expect(records.changelog).toContain("Note R1\\u202e's tolerance");
    expect(records.summary).toContain("\\u202e(10k)\\u001b[2J");
  }, 120_000);
});
