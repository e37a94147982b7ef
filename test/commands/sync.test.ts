/**
 * `copperhead sync` in process: a real git repo holding the usb-led board after
 * `copperhead init`, the real kicad-cli behind the resolve's checks, and a scripted model
 * (`fixtures/sessions/sync-*.json` through the replay provider, wrapped to count its calls).
 * Each scenario asserts the report's exact keys, the git state and the bytes on disk.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ModelProvider, ModelRequest } from "../../src/agent/conversation.ts";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { loadDesign } from "../../src/design/design.ts";
import { syncExitCode } from "../../src/cli/sync.ts";
import { runSync, type SyncResult } from "../../src/commands/sync.ts";
import { CopperheadError } from "../../src/errors.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { renderProposal } from "../../src/spec/proposal.ts";
import { requirementsSectionRange } from "../../src/spec/requirements.ts";
import { cleanupTempDirs, FIXTURES_DIR } from "../support/kicad.ts";
import { editFile, removeFootprint } from "../support/variants.ts";
import { git, treeFingerprint } from "../repo/git-repo.ts";
import { fingerprint, initialisedRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const SESSIONS = join(FIXTURES_DIR, "sessions");
/** copperhead's own bookkeeping, which a resolve adds to (gitignored; not part of the tree). */
const OLD_PROPOSAL = "docs/changes/20250101-add-a-status-led.md";
/** A requirement the design fails: R3 is 1k. */
const LED_RULE = "- REQ-LED-1: The LED series resistor is at least 2k.\n  - check: R3.value >= 2k\n";
const NOTE = "# Notes\n\nThe status LED current is set by `R9`.\n";

async function commit(repo: string, message: string): Promise<void> {
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", message);
}

/** The drift a person leaves behind by editing outside copperhead, one change per kind. */
const drift = {
  bom: (repo: string) => editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |")),
  staleRef: (repo: string) => writeFileSync(join(repo, "docs/NOTES.md"), NOTE),
  board: (repo: string) => removeFootprint(join(repo, "usb-led.kicad_pcb"), "D1"),
  /** A change proposal committed by hand, with no CHANGELOG entry. */
  changelog: (repo: string) => {
    mkdirSync(join(repo, "docs/changes"), { recursive: true });
    const proposal = {
      id: "20250101-add-a-status-led",
      title: "Add a status LED",
      approval: "interactive" as const,
      requirements: [],
      why: "People want to see power.",
      changes: ["add D1 and R3"],
      verification: "ERC and DRC clean.",
    };
    writeFileSync(join(repo, OLD_PROPOSAL), renderProposal(proposal));
  },
  coverage: (repo: string) => rmSync(join(repo, "docs/DECISIONS.md")),
  violation: (repo: string) => editFile(join(repo, "docs/SPEC.md"), (t) => `${t.replace(/\n*$/, "\n")}${LED_RULE}`),
};

/** A provider that counts (and keeps) the requests it was asked to answer. */
function counting(inner: ModelProvider): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    provider: inner.provider,
    model: inner.model,
    label: inner.label,
    requests,
    complete(request, signal) {
      requests.push(request);
      return inner.complete(request, signal);
    },
  };
}

/** A model that must never be called. */
function noModel(): ModelProvider & { requests: ModelRequest[] } {
  return counting({
    provider: "replay",
    model: "none",
    label: "no model (must not be called)",
    complete: () => Promise.reject(new Error("sync made a model call it did not need")),
  });
}

const replay = (session: string) => counting(createReplayProvider(join(SESSIONS, `${session}.json`)));

/** The first user message of the first model request: the task the model was given. */
function firstTask(provider: { requests: ModelRequest[] }): string {
  const block = provider.requests[0]!.messages[0]!.content[0]!;
  if (block.type !== "text") throw new Error("the first message is not text");
  return block.text;
}

const head = async (repo: string) => (await git(repo, "rev-parse", "HEAD")).trim();
const status = (repo: string) => git(repo, "status", "--porcelain", "--untracked-files=all");
const read = (repo: string, rel: string) => readFileSync(join(repo, rel), "utf8");
const keys = (items: { key: string }[]) => items.map((i) => i.key);
const committedFiles = async (repo: string) =>
  (await git(repo, "show", "--name-only", "--format=", "HEAD")).trim().split("\n").sort();

interface Event {
  type: string;
  [field: string]: unknown;
}

function transcript(repo: string, result: SyncResult): Event[] {
  return read(repo, result.resolution!.transcriptPath)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Event);
}

/** Runs `fn` with no model key, model choice or compat server in the environment. */
async function withoutModelEnv<T>(fn: () => Promise<T>): Promise<T> {
  const names = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "COPPERHEAD_BASE_URL",
    "COPPERHEAD_API_KEY",
    "COPPERHEAD_MODEL",
  ];
  const saved = names.map((name) => [name, process.env[name]] as const);
  for (const name of names) delete process.env[name];
  try {
    return await fn();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

/** Runs `fn` with `fetch` replaced by a trap, and returns what it tried to fetch. */
async function withFetchTrap<T>(fn: () => Promise<T>): Promise<{ value: T; fetched: string[] }> {
  const original = globalThis.fetch;
  const fetched: string[] = [];
  globalThis.fetch = Object.assign(
    (input: string | URL | Request) => {
      fetched.push(String(input instanceof Request ? input.url : input));
      return Promise.reject(new Error("sync's verify phase must not use the network"));
    },
    { preconnect: () => {} },
  ) as typeof fetch;
  try {
    return { value: await fn(), fetched };
  } finally {
    globalThis.fetch = original;
  }
}

/** The Requirements section of SPEC.md, exactly as written. */
function requirementsSection(repo: string): string {
  const text = read(repo, "docs/SPEC.md");
  const range = requirementsSectionRange(text)!;
  return text
    .split("\n")
    .slice(range.start - 1, range.end)
    .join("\n");
}

describe("copperhead sync: verify (the default)", () => {
  test("a clean fixture gives an empty report and exit 0", async () => {
    const repo = await initialisedRepo();
    const report = await runSync({ repo });
    expect(report).toEqual({ schema: "copperhead.sync/1", ok: true, drift: [], violations: [], needsHuman: false });
    expect(syncExitCode(report)).toBe(0);
  }, 60_000);

  test("every drift kind is detected with its exact key, kind and resolution; drift alone exits 1", async () => {
    const repo = await initialisedRepo();
    for (const make of [drift.bom, drift.staleRef, drift.board, drift.changelog, drift.coverage]) make(repo);
    await commit(repo, "edits made outside copperhead");

    const report = await runSync({ repo });
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([]);
    expect(report.needsHuman).toBe(false);
    expect(report.drift.map((d) => ({ kind: d.kind, doc: d.doc, key: d.key, resolution: d.resolution }))).toEqual([
      { kind: "bom", doc: "docs/BOM.md", key: "drift:bom:R3:value", resolution: "regenerate" },
      { kind: "stale-ref", doc: "docs/NOTES.md", key: "drift:stale-ref:docs/NOTES.md:R9", resolution: "model" },
      { kind: "board", doc: "usb-led.kicad_pcb", key: "parity:missing_footprint:D1", resolution: "board_sync" },
      { kind: "changelog", doc: "docs/CHANGELOG.md", key: `sync:changelog:${OLD_PROPOSAL}`, resolution: "append" },
      { kind: "coverage", doc: "docs/DECISIONS.md", key: "sync:coverage:docs/DECISIONS.md", resolution: "create" },
    ]);
    // What each item claims against what the design says.
    const byKey = Object.fromEntries(report.drift.map((d) => [d.key, d]));
    expect(byKey["drift:bom:R3:value"]).toMatchObject({ claim: "2k2", actual: "1k" });
    expect(byKey["drift:stale-ref:docs/NOTES.md:R9"]).toMatchObject({ line: 3, claim: "R9" });
    expect(byKey["parity:missing_footprint:D1"]!.actual).toContain("D1");
    expect(byKey["sync:coverage:docs/DECISIONS.md"]!.actual).toBe("missing");
    expect(syncExitCode(report)).toBe(1);
  }, 60_000);

  test("a missing CHANGELOG is coverage drift, and every committed proposal lacks its entry", async () => {
    const repo = await initialisedRepo();
    drift.changelog(repo);
    rmSync(join(repo, "docs/CHANGELOG.md"));
    const report = await runSync({ repo });
    expect(keys(report.drift)).toEqual([`sync:changelog:${OLD_PROPOSAL}`, "sync:coverage:docs/CHANGELOG.md"]);
  }, 60_000);

  test("a failing requirement rule is a violation with its REQ id and rule text: a human is needed, exit 2", async () => {
    const repo = await initialisedRepo();
    drift.violation(repo);
    const report = await runSync({ repo });
    expect(report.drift).toEqual([]);
    expect(report.violations).toEqual([
      {
        kind: "requirement",
        doc: "docs/SPEC.md",
        line: read(repo, "docs/SPEC.md").split("\n").indexOf("  - check: R3.value >= 2k") + 1,
        claim: "REQ-LED-1: R3.value >= 2k",
        actual: "R3.value is 1k, expected >= 2k",
        key: "requirements:REQ-LED-1:R3.value >= 2k",
        resolution: "human",
      },
    ]);
    expect(report.ok).toBe(false);
    expect(report.needsHuman).toBe(true);
    expect(syncExitCode(report)).toBe(2);
  }, 60_000);

  test("verify makes no network calls, needs no key, writes nothing and leaves the tree byte-identical", async () => {
    const repo = await initialisedRepo();
    for (const make of [drift.bom, drift.staleRef, drift.board, drift.changelog, drift.coverage, drift.violation])
      make(repo);
    await commit(repo, "edits made outside copperhead");
    const before = { tree: treeFingerprint(repo), head: await head(repo), status: await status(repo) };

    const { value: report, fetched } = await withoutModelEnv(() => withFetchTrap(() => runSync({ repo })));
    expect(fetched).toEqual([]);
    expect(report.drift.length).toBe(5);
    expect(report.violations.length).toBe(1);
    // Not even copperhead's own bookkeeping: no run directory, cache or lock.
    expect(treeFingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
    expect(await status(repo)).toBe(before.status);
    // The same state gives the same report.
    expect(await runSync({ repo })).toEqual(report);
  }, 60_000);
});

describe("copperhead sync --resolve", () => {
  test("BOM and board drift are resolved by code and committed, with no model call", async () => {
    const repo = await initialisedRepo();
    drift.bom(repo);
    drift.board(repo);
    await commit(repo, "edits made outside copperhead");
    const parent = await head(repo);
    const model = noModel();

    const result = await runSync({ repo, resolve: true, provider: model });
    expect(model.requests).toEqual([]);
    expect(result).toMatchObject({
      schema: "copperhead.sync/1",
      ok: true,
      drift: [],
      violations: [],
      needsHuman: false,
    });
    expect(syncExitCode(result)).toBe(0);

    const run = result.resolution!;
    expect(run.status).toBe("committed");
    expect(run.approval).toBe("auto");
    expect(run.usage).toEqual({ turns: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(run.verification.ok).toBe(true);
    expect(run.verification.newFindings).toEqual([]);
    // D1's footprint goes back onto the board beside the part it shares the most nets with.
    expect(run.layoutPending).toEqual([]);
    expect(run.commit).toBe(await head(repo));
    expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
    expect(await status(repo)).toBe("");

    const proposal = run.proposal!;
    expect(proposal.path).toBe(`docs/changes/${proposal.id}.md`);
    expect(await committedFiles(repo)).toEqual(
      [proposal.path, "docs/BOM.md", "docs/CHANGELOG.md", "usb-led.kicad_pcb"].sort(),
    );
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 1k |");
    expect(read(repo, "usb-led.kicad_pcb")).toContain('"D1"');
    const proposalText = read(repo, proposal.path);
    expect(proposalText).toContain("- Approval: auto");
    expect(proposalText).toContain("drift:bom:R3:value");
    expect(proposalText).toContain("parity:missing_footprint:D1");
    expect(read(repo, "docs/CHANGELOG.md")).toContain(`Change: \`${proposal.path}\``);
    expect((await git(repo, "log", "-1", "--format=%s")).trim()).toBe(
      "copperhead: Resolve drift between the design and its docs",
    );
    expect(transcript(repo, result).some((e) => e.type === "model_request")).toBe(false);

    // Nothing left: a fresh verify agrees, and a second resolve has nothing to do.
    expect(await runSync({ repo })).toEqual({
      schema: "copperhead.sync/1",
      ok: true,
      drift: [],
      violations: [],
      needsHuman: false,
    });
    expect((await runSync({ repo, resolve: true, provider: model })).resolution).toBeUndefined();
  }, 120_000);

  test("a missing DECISIONS file and a proposal without its CHANGELOG entry are restored by code, with no model call", async () => {
    const repo = await initialisedRepo();
    drift.changelog(repo);
    drift.coverage(repo);
    await commit(repo, "edits made outside copperhead");
    const model = noModel();

    const result = await runSync({ repo, resolve: true, provider: model });
    expect(model.requests).toEqual([]);
    expect(result.resolution!.status).toBe("committed");
    expect(result.drift).toEqual([]);
    expect(await committedFiles(repo)).toEqual(
      [result.resolution!.proposal!.path, "docs/CHANGELOG.md", "docs/DECISIONS.md"].sort(),
    );
    expect(read(repo, "docs/DECISIONS.md")).toStartWith("# Decisions\n");
    const changelog = read(repo, "docs/CHANGELOG.md");
    expect(changelog).toContain(
      `### Add a status LED\n\nChange: \`${OLD_PROPOSAL}\` · entry restored by \`copperhead sync\` (run \`${result.resolution!.runId}\`)`,
    );
    expect(changelog).toContain(`Change: \`${result.resolution!.proposal!.path}\``);
  }, 120_000);

  test("prose naming a removed part is fixed by the scripted model after code resolved the rest, then committed", async () => {
    const repo = await initialisedRepo();
    for (const make of [drift.bom, drift.staleRef, drift.board, drift.changelog, drift.coverage]) make(repo);
    await commit(repo, "edits made outside copperhead");
    const model = replay("sync-fix-stale-note");

    const result = await runSync({ repo, resolve: true, provider: model });
    expect(result.resolution!.status).toBe("committed");
    expect(result.resolution!.reason).toBeUndefined();
    expect(result).toMatchObject({ ok: true, drift: [], violations: [], needsHuman: false });
    expect(syncExitCode(result)).toBe(0);
    expect(model.requests.length).toBe(3);
    expect(result.resolution!.usage).toEqual({
      turns: 3,
      inputTokens: 5000,
      outputTokens: 180,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });

    // The model was given only what code could not fix: the stale mention, not the BOM or board.
    const task = firstTask(model);
    expect(task).toContain("docs/NOTES.md:3: R9");
    expect(task).not.toContain("drift:bom");
    expect(task).not.toContain("parity:");
    // Its tools: docs edits and board sync, no schematic edits, no spec tools.
    const tools = model.requests[0]!.tools.map((t) => t.name);
    expect(tools).toContain("edit_doc");
    expect(tools).toContain("sync_board");
    for (const name of ["set_field", "add_component", "remove_component", "connect", "rename_net", "propose_change"])
      expect(tools).not.toContain(name);

    expect(read(repo, "docs/NOTES.md")).toBe(NOTE.replace("`R9`", "`R3`"));
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 1k |");
    expect(read(repo, "docs/CHANGELOG.md")).toContain(`Change: \`${OLD_PROPOSAL}\``);
    expect(existsSync(join(repo, "docs/DECISIONS.md"))).toBe(true);
    const proposal = result.resolution!.proposal!.path;
    expect(await committedFiles(repo)).toEqual(
      [proposal, "docs/BOM.md", "docs/CHANGELOG.md", "docs/DECISIONS.md", "docs/NOTES.md", "usb-led.kicad_pcb"].sort(),
    );
    expect(await status(repo)).toBe("");
    expect(await git(repo, "log", "-1", "--format=%B")).toContain("docs/NOTES.md now names R3");
  }, 120_000);

  test("requirement violation plus drift: the drift is resolved, the violation reported (exit 2), the rule and R3's value untouched", async () => {
    const repo = await initialisedRepo();
    drift.violation(repo);
    drift.staleRef(repo);
    await commit(repo, "a stricter LED rule, and a note");
    const spec = read(repo, "docs/SPEC.md");
    const section = requirementsSection(repo);
    const sheets = { root: read(repo, "usb-led.kicad_sch"), regulator: read(repo, "regulator.kicad_sch") };
    const model = replay("sync-respects-requirements");

    const result = await runSync({ repo, resolve: true, provider: model });
    expect(result.resolution!.status).toBe("committed");
    expect(result.drift).toEqual([]);
    expect(keys(result.violations)).toEqual(["requirements:REQ-LED-1:R3.value >= 2k"]);
    expect(result.violations[0]!.resolution).toBe("human");
    expect(result.needsHuman).toBe(true);
    expect(result.ok).toBe(false);
    expect(syncExitCode(result)).toBe(2);

    // The model was told the violation is not its to change.
    const task = firstTask(model);
    expect(task).toContain("REQ-LED-1: R3.value >= 2k");
    expect(task).toContain("may not change them");
    // Both attempts to make the violation go away were refused.
    const errors = Object.fromEntries(
      transcript(repo, result)
        .filter((e) => e.type === "tool_result" && e.isError === true)
        .map((e) => [e.id, e.content]),
    );
    expect(Object.keys(errors).sort()).toEqual(["r1", "r2"]);
    expect(errors.r1).toContain("Requirements section");
    expect(errors.r2).toContain("no tool called set_field");

    // Byte-identical: the Requirements section (all of SPEC.md, in fact) and the governed field.
    expect(requirementsSection(repo)).toBe(section);
    expect(read(repo, "docs/SPEC.md")).toBe(spec);
    expect(read(repo, "usb-led.kicad_sch")).toBe(sheets.root);
    expect(read(repo, "regulator.kicad_sch")).toBe(sheets.regulator);
    const project = discoverProject(repo);
    expect(loadDesign(project).components.find((c) => c.ref === "R3")!.value).toBe("1k");

    expect(read(repo, "docs/NOTES.md")).toBe(NOTE.replace("`R9`", "`R3`"));
    expect(await committedFiles(repo)).toEqual(
      [result.resolution!.proposal!.path, "docs/CHANGELOG.md", "docs/NOTES.md"].sort(),
    );
  }, 120_000);

  test("violations alone: nothing to resolve, the model is never asked, exit 2", async () => {
    const repo = await initialisedRepo();
    drift.violation(repo);
    await commit(repo, "a stricter LED rule");
    const before = fingerprint(repo);
    const model = noModel();
    const result = await runSync({ repo, resolve: true, provider: model });
    expect(model.requests).toEqual([]);
    expect(result.resolution).toBeUndefined();
    expect(keys(result.violations)).toEqual(["requirements:REQ-LED-1:R3.value >= 2k"]);
    expect(syncExitCode(result)).toBe(2);
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("a stale mention inside the Requirements section is a person's: the rest is resolved without it, exit 2", async () => {
    const repo = await initialisedRepo();
    // The requirement's rule passes; only its sentence names a resistor that is gone.
    editFile(
      join(repo, "docs/SPEC.md"),
      (t) => `${t.replace(/\n*$/, "\n")}- REQ-LED-2: The LED is driven through \`R9\`.\n  - check: D1 exists\n`,
    );
    drift.bom(repo);
    await commit(repo, "a requirement naming R9, and a stale BOM row");
    const spec = read(repo, "docs/SPEC.md");
    const line = spec.split("\n").indexOf("- REQ-LED-2: The LED is driven through `R9`.") + 1;

    const report = await runSync({ repo });
    expect(report.drift.map((d) => [d.key, d.resolution, d.line])).toEqual([
      ["drift:bom:R3:value", "regenerate", expect.any(Number)],
      ["drift:stale-ref:docs/SPEC.md:R9", "human", line],
    ]);
    expect(report.violations).toEqual([]);
    expect(report.needsHuman).toBe(true);
    expect(syncExitCode(report)).toBe(2);

    // Code resolves the BOM; the model, which may not touch the section, is never asked.
    const model = noModel();
    const result = await runSync({ repo, resolve: true, provider: model });
    expect(model.requests).toEqual([]);
    expect(result.resolution!.status).toBe("committed");
    expect(result.resolution!.detail).toBeUndefined();
    expect(keys(result.drift)).toEqual(["drift:stale-ref:docs/SPEC.md:R9"]);
    expect(result.needsHuman).toBe(true);
    expect(syncExitCode(result)).toBe(2);
    expect(read(repo, "docs/SPEC.md")).toBe(spec);
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 1k |");
    expect(await status(repo)).toBe("");

    // With only the person's drift left, a resolve with a model starts nothing...
    const again = await runSync({ repo, resolve: true, provider: noModel() });
    expect(again.resolution).toBeUndefined();
    expect(syncExitCode(again)).toBe(2);
    // ...and neither does one without a model: nothing is left that code or a model may fix.
    const keyless = await withoutModelEnv(() => runSync({ repo, resolve: true }));
    expect(keyless.resolution).toBeUndefined();
    expect(keyless.needsHuman).toBe(true);
    expect(await status(repo)).toBe("");
  }, 120_000);

  test("a BOM table copperhead cannot parse is a person's to fix: reported with the fix, and no run starts", async () => {
    const repo = await initialisedRepo();
    editFile(join(repo, "docs/BOM.md"), (t) => t.replace("<!-- copperhead:bom:end -->\n", ""));
    await commit(repo, "a BOM with its end marker lost");
    const before = fingerprint(repo);
    const model = noModel();
    const result = await runSync({ repo, resolve: true, provider: model });
    expect(result.drift).toEqual([
      {
        kind: "bom",
        doc: "docs/BOM.md",
        line: 9,
        claim: "a copperhead BOM table",
        actual: "docs/BOM.md:9: BOM begin marker without an end marker; run copperhead init --force to regenerate it",
        key: "drift:bom:table",
        resolution: "human",
      },
    ]);
    expect(result.resolution).toBeUndefined();
    expect(model.requests).toEqual([]);
    expect(syncExitCode(result)).toBe(2);
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);

  test("prose the model leaves stale: rolled back after the repair cycles, code's fixes too, byte-identical, exit 1", async () => {
    const repo = await initialisedRepo();
    drift.bom(repo);
    drift.staleRef(repo);
    await commit(repo, "edits made outside copperhead");
    const before = { tree: fingerprint(repo), head: await head(repo) };
    const model = replay("sync-prose-left-stale");

    const result = await runSync({ repo, resolve: true, provider: model });
    const run = result.resolution!;
    // Its second finish changed nothing since the first failed: stalled, not re-verified.
    expect(run.status).toBe("rolled_back");
    expect(run.reason).toBe("stalled");
    expect(run.detail).toContain("unchanged since the last failed verification");
    expect(run.detail).toContain("drift remains: drift:stale-ref:docs/NOTES.md:R9");
    expect(run.verification.repairCycles).toBe(1);
    expect(model.requests.length).toBe(2);
    expect(run.commit).toBeUndefined();
    expect(syncExitCode(result)).toBe(1);
    // The report is the tree as it is now: rolled back, so all the drift is still there.
    expect(keys(result.drift)).toEqual(["drift:bom:R3:value", "drift:stale-ref:docs/NOTES.md:R9"]);
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
    expect(await status(repo)).toBe("");
  }, 120_000);

  test("without a key: drift code resolves is resolved and committed with no model; the violation stays a person's", async () => {
    const repo = await initialisedRepo();
    drift.bom(repo);
    drift.board(repo);
    drift.violation(repo);
    await commit(repo, "edits made outside copperhead");
    const result = await withoutModelEnv(() => runSync({ repo, resolve: true }));
    expect(result.resolution!.status).toBe("committed");
    expect(result.drift).toEqual([]);
    expect(keys(result.violations)).toEqual(["requirements:REQ-LED-1:R3.value >= 2k"]);
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 1k |");
    expect(await status(repo)).toBe("");
  }, 180_000);

  test("without a key, beside uncommitted changes: code's fixes are written in the working tree for the user to commit", async () => {
    const repo = await initialisedRepo();
    // R3's value changed in the schematic, as KiCad saves it: the BOM and the board fall behind.
    editFile(join(repo, "usb-led.kicad_sch"), (t) =>
      t.replace(/(\(property "Reference" "R3"[\s\S]*?\(property "Value" )"1k"/, '$1"2k2"'),
    );
    const head = await git(repo, "rev-parse", "HEAD");
    const result = await withoutModelEnv(() => runSync({ repo, resolve: true }));
    expect(result.resolution).toBeUndefined();
    expect(result.written).toEqual([
      { path: "usb-led.kicad_pcb", action: "updated" },
      { path: "docs/BOM.md", action: "updated" },
    ]);
    expect(result.ok).toBe(true);
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 2k2 |");
    expect(await git(repo, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);

    // A generated cell edited by hand is not overwritten in the working tree: that edit is nobody's commit yet.
    editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 2k2 |", "| R3 | 3k3 |"));
    editFile(join(repo, "usb-led.kicad_sch"), (t) => t.replace('"2k2"', '"4k7"'));
    const handEdited = await withoutModelEnv(() => runSync({ repo, resolve: true }));
    expect(handEdited.written!.find((f) => f.path === "docs/BOM.md")).toMatchObject({ action: "refused" });
    expect(read(repo, "docs/BOM.md")).toContain("| R3 | 3k3 |");
  }, 180_000);

  test("without a key, prose to reword: missing_api_key naming it, carrying the verify report; nothing starts", async () => {
    const repo = await initialisedRepo();
    drift.bom(repo);
    drift.staleRef(repo);
    drift.violation(repo);
    await commit(repo, "edits made outside copperhead");
    const before = treeFingerprint(repo);
    const report = await runSync({ repo });

    const error = await withoutModelEnv(() =>
      runSync({ repo, resolve: true }).then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
    expect(error).toBeInstanceOf(CopperheadError);
    const typed = error as CopperheadError;
    expect(typed.code).toBe("missing_api_key");
    expect(typed.exitCode).toBe(3);
    expect(typed.message).toStartWith("1 drift item(s) need a model to reword prose: docs/NOTES.md:3 (R9).");
    expect(typed.fix).toContain("Reword them by hand");
    expect(typed.details.report).toEqual(report);
    expect(keys(report.drift)).toEqual(["drift:bom:R3:value", "drift:stale-ref:docs/NOTES.md:R9"]);
    expect(keys(report.violations)).toEqual(["requirements:REQ-LED-1:R3.value >= 2k"]);
    // No run was started: no run directory, no lock, no journal.
    expect(treeFingerprint(repo)).toEqual(before);
  }, 60_000);
});
