/**
 * A model that aims its tools where they must not reach, through the compiled binary with a
 * scripted OpenAI-compatible model (real HTTP provider, real kicad-cli and git):
 * - `read_doc` and `edit_doc` on a FIFO (which once blocked the run forever, deaf to signals)
 *   and on a folder named like a doc;
 * - `edit_doc` appending a second `## Requirements` section to SPEC.md, rewording the first
 *   one's heading, and creating a doc that carries one;
 * - `edit_doc` on a git-ignored doc (the commit would leave it changed), on `Changes/…` or
 *   `bom.md` (the protected files in another case, the same files on macOS), and `read_doc`
 *   with a backslashed `..\..\x.md`;
 * - a tool input nested 100,000 levels deep (once a stack overflow: `internal_error`).
 * Each is a tool error the model reads, nothing is written by any of them, and the run goes on
 * to commit the one doc the model then writes properly.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV } from "../support/repos.ts";
import { runBinaryBounded, templateRepo } from "./binary.ts";
import { serveScriptedModel, type SessionTurn } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

const call = (id: string, name: string, input: unknown, raw?: string) => ({
  type: "tool_use" as const,
  id,
  name,
  input,
  ...(raw ? { arguments: raw } : {}),
});

/** The proposal every session opens with: a doc-only change. */
const PROPOSE: SessionTurn = {
  content: [
    call("p1", "propose_change", {
      title: "Document the LED indicator",
      why: "Scripted: aims the tools where they must not reach.",
      changes: ["write a note under docs/"],
      requirements_touched: [],
      verification: "Checks unchanged.",
    }),
  ],
};

/** The proper edit and the finish every session ends with. */
const PROPER_END: SessionTurn[] = [
  { content: [call("ok", "edit_doc", { path: "led.md", new_text: "# LED\n\nD1 shows that VBUS is present.\n" })] },
  { content: [call("end", "finish", { summary: "Documented the LED indicator." })] },
];

/**
 * Runs `do` on a fresh repo (prepared by `setup`) with the proposal, `misuse` and the proper
 * end as the model's turns; expects the run to commit the proposal, the CHANGELOG entry and
 * docs/led.md alone, and returns the tool errors by call id.
 */
async function runMisuse(
  misuse: SessionTurn[],
  setup: (repo: string) => void = () => {},
): Promise<{ repo: string; errors: Record<string, string> }> {
  const repo = await copyRepo(template());
  setup(repo);
  const spec = readFileSync(join(repo, "docs/SPEC.md"), "utf8");
  const model = serveScriptedModel([PROPOSE, ...misuse, ...PROPER_END]);
  try {
    const result = await runBinaryBounded(
      ["do", "Write a note about the LED indicator", "--model", "compat:test", "--repo", repo, "--json"],
      {
        env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: model.baseUrl },
        timeoutMs: 90_000,
        maxRssBytes: 2 * 1024 * 1024 * 1024,
      },
    );
    expect({ timedOut: result.timedOut, outOfMemory: result.outOfMemory, exitCode: result.exitCode }).toEqual({
      timedOut: false,
      outOfMemory: false,
      exitCode: 0,
    });
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("committed");
    expect(readFileSync(join(repo, "docs/SPEC.md"), "utf8")).toBe(spec);
    const committed = (await git(repo, "show", "--name-only", "--format=", "HEAD")).trim().split("\n").sort();
    expect(committed).toEqual([summary.proposal.path, "docs/CHANGELOG.md", "docs/led.md"].sort());
    expect(await git(repo, "status", "--porcelain")).toBe("");
    const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    return {
      repo,
      errors: Object.fromEntries(
        events.filter((e) => e.type === "tool_result" && e.isError).map((e) => [e.id, e.content as string]),
      ),
    };
  } finally {
    await model.stop();
  }
}

describe("a model aiming its tools where they must not reach", () => {
  test("read_doc and edit_doc on a FIFO or a folder named like a doc: refused at once, never blocking", async () => {
    const { errors } = await runMisuse(
      [
        {
          content: [
            call("f1", "read_doc", { path: "pipe.md" }),
            call("f2", "edit_doc", { path: "pipe.md", new_text: "into the pipe" }),
            call("d1", "read_doc", { path: "folder.md" }),
            call("d2", "edit_doc", { path: "folder.md", new_text: "into the folder" }),
          ],
        },
      ],
      (repo) => {
        // Local special files, kept out of git so the tree is clean for the run.
        expect(Bun.spawnSync(["mkfifo", join(repo, "docs/pipe.md")]).exitCode).toBe(0);
        mkdirSync(join(repo, "docs/folder.md/inside"), { recursive: true });
        writeFileSync(join(repo, "docs/folder.md/inside/x.txt"), "x\n");
        appendFileSync(join(repo, ".git/info/exclude"), "docs/pipe.md\ndocs/folder.md/\n");
      },
    );
    expect(Object.keys(errors).sort()).toEqual(["d1", "d2", "f1", "f2"]);
    expect(errors.f1).toContain("docs/pipe.md is not a regular file");
    expect(errors.f2).toContain("docs/pipe.md is not a regular file");
    expect(errors.d1).toContain("docs/folder.md is a folder");
    expect(errors.d2).toContain("docs/folder.md is a folder");
  }, 120_000);

  test("edit_doc on a git-ignored doc, on Changes/ spelled in another case, and a backslashed path: refused before anything is written", async () => {
    const ignored = "# Local notes\n\nkept out of git on purpose\n";
    const { repo, errors } = await runMisuse(
      [
        {
          content: [
            call("i1", "edit_doc", { path: "local-notes.md", new_text: "changed by the model\n" }),
            call("c1", "edit_doc", { path: "Changes/20250101-x.md", new_text: "# A proposal nobody approved\n" }),
            call("c2", "edit_doc", { path: "bom.md", new_text: "| forged |\n" }),
            call("b1", "read_doc", { path: "..\\..\\x.md" }),
          ],
        },
      ],
      (repo) => {
        writeFileSync(join(repo, "docs/local-notes.md"), ignored);
        appendFileSync(join(repo, ".git/info/exclude"), "docs/local-notes.md\n");
      },
    );
    expect(Object.keys(errors).sort()).toEqual(["b1", "c1", "c2", "i1"]);
    expect(errors.i1).toContain("docs/local-notes.md is ignored by git");
    expect(errors.c1).toContain("written by copperhead itself");
    expect(errors.c2).toContain("written by copperhead itself");
    expect(errors.b1).toContain("separate folders with /");
    expect(errors.b1).not.toContain("absolute");
    expect(readFileSync(join(repo, "docs/local-notes.md"), "utf8")).toBe(ignored);
  }, 120_000);

  test("edit_doc never adds, changes or creates a Requirements section", async () => {
    const { errors } = await runMisuse([
      {
        content: [
          call("r1", "edit_doc", {
            path: "SPEC.md",
            new_text: "\n## Requirements\n\n- REQ-EVIL-1: smuggled in\n  - check: net EVIL exists\n",
          }),
          call("r2", "edit_doc", { path: "SPEC.md", old_text: "## Requirements", new_text: "## Requirements (draft)" }),
          call("r3", "edit_doc", {
            path: "notes.md",
            new_text: "# Notes\n\n## Requirements\n\n- REQ-NOTE-1: from a note\n",
          }),
        ],
      },
    ]);
    expect(Object.keys(errors).sort()).toEqual(["r1", "r2", "r3"]);
    expect(errors.r1).toContain("the Requirements section of docs/SPEC.md is maintained by people only");
    expect(errors.r2).toContain("the Requirements section of docs/SPEC.md is maintained by people only");
    expect(errors.r3).toContain("a Requirements section can only be written by people");
  }, 120_000);

  test("a tool input nested 100,000 levels deep is invalid arguments, not an internal error", async () => {
    const deep = 100_000;
    // JSON.stringify cannot write this: the raw arguments are sent as they are.
    const raw = `{"ref":"R1","field":"Note","value":${'{"a":'.repeat(deep)}1${"}".repeat(deep)}}`;
    const { errors } = await runMisuse([{ content: [call("n1", "set_field", {}, raw)] }]);
    expect(errors).toEqual({ n1: "invalid arguments for set_field: they are nested more than 64 levels deep" });
  }, 120_000);
});
