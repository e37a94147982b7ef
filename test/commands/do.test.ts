/**
 * `copperhead do` end to end, in process: a real git repo holding the usb-led board after
 * `copperhead init`, the real kicad-cli behind every check, and a scripted model
 * (`fixtures/sessions/*.json` through the replay provider). Each scenario asserts the summary,
 * the git state and the bytes on disk — a rollback must leave the tree byte-identical.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { runDo, type DoOptions, type DoSummary } from "../../src/commands/do.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { RunJournal } from "../../src/repo/journal.ts";
import { withRepoLock } from "../../src/repo/lock.ts";
import { newRunId, runDir } from "../../src/repo/run-dir.ts";
import { parseProposal } from "../../src/spec/proposal.ts";
import { cleanupTempDirs, FIXTURES_DIR, makeTempDir } from "../support/kicad.ts";
import { git } from "../repo/git-repo.ts";
import { fingerprint, initialisedRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const SESSIONS = join(FIXTURES_DIR, "sessions");
/** copperhead's own bookkeeping, which a run may add to (gitignored; not part of the tree). */
const ADD_CAP_REQUEST = "Add a 100 nF decoupling capacitor on the LDO output";

/** usb-led in a fresh git repo: the design committed, then `copperhead init` committed. */

function run(repo: string, session: string, request: string, options: Partial<DoOptions> = {}): Promise<DoSummary> {
  return runDo({ request, repo, provider: createReplayProvider(join(SESSIONS, `${session}.json`)), ...options });
}

const head = async (repo: string) => (await git(repo, "rev-parse", "HEAD")).trim();
const status = (repo: string) => git(repo, "status", "--porcelain", "--untracked-files=all");
const read = (repo: string, rel: string) => readFileSync(join(repo, rel), "utf8");

interface Event {
  type: string;
  [field: string]: unknown;
}

function transcript(repo: string, summary: DoSummary): Event[] {
  return read(repo, summary.transcriptPath)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Event);
}

/** The `tool_result` events that were errors, as `tool-use id → message`. */
function toolErrors(events: Event[]): Record<string, string> {
  return Object.fromEntries(
    events
      .filter((e) => e.type === "tool_result" && e.isError === true)
      .map((e) => [e.id as string, e.content as string]),
  );
}

/** Asserts a run that ended without a commit left the tree, HEAD and the index as they were. */
async function expectUntouched(repo: string, before: { tree: Record<string, string>; head: string }): Promise<void> {
  expect(fingerprint(repo)).toEqual(before.tree);
  expect(await head(repo)).toBe(before.head);
  expect(await status(repo)).toBe("");
}

async function snapshot(repo: string) {
  return { tree: fingerprint(repo), head: await head(repo) };
}

describe("copperhead do (scripted model, real kicad-cli and git)", () => {
  test("adds a 100 nF decoupling capacitor with board sync: committed with proposal, records and trailers", async () => {
    const repo = await initialisedRepo();
    const parent = await head(repo);
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST);

    expect(summary.status).toBe("committed");
    expect(summary.reason).toBeUndefined();
    expect(summary.schema).toBe("copperhead.do/1");
    expect(summary.approval).toBe("auto");
    expect(summary.dryRun).toBe(false);
    expect(summary.request).toBe(ADD_CAP_REQUEST);
    expect(summary.commit).toBe(await head(repo));
    expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
    expect(await status(repo)).toBe("");

    const date = summary.runId.slice(0, 8);
    const id = `${date}-add-a-100-nf-decoupling-capacitor-on-the-ldo`;
    expect(summary.proposal).toEqual({
      id,
      path: `docs/changes/${id}.md`,
      title: "Add a 100 nF decoupling capacitor on the LDO output",
    });
    const files = [
      `docs/changes/${id}.md`,
      "docs/BOM.md",
      "docs/CHANGELOG.md",
      "docs/DECISIONS.md",
      "regulator.kicad_sch",
      "usb-led.kicad_pcb",
    ].sort();
    expect([...summary.filesTouched].sort()).toEqual(files);
    expect((await git(repo, "show", "--name-only", "--format=", "HEAD")).trim().split("\n").sort()).toEqual(files);
    // The record's renders are the one sheet the change drew on, before and after; the root
    // sheet, plotted alike both times, is not kept.
    const render = join(".copperhead", "runs", summary.runId, "render");
    const plotted = (side: string) => readdirSync(join(repo, render, side));
    expect(plotted("before")).toEqual(plotted("after"));
    expect(plotted("after")).toEqual([expect.stringMatching(/^usb-led-.+\.svg$/)]);
    expect(summary.renders).toEqual(["before", "after"].map((side) => join(render, side, plotted(side)[0]!)));

    expect(summary.verification.ok).toBe(true);
    expect(summary.verification.newFindings).toEqual([]);
    expect(summary.verification.repairCycles).toBe(0);
    expect(summary.verification.maxRepairCycles).toBe(3);
    const checks = Object.fromEntries(summary.verification.checks.map((c) => [c.id, c.status]));
    for (const id of ["erc", "drc", "parity", "requirements", "drift", "changes"]) expect(checks[id]).toBe("pass");
    expect(summary.usage).toEqual({
      turns: 6,
      inputTokens: 22000,
      outputTokens: 820,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    // C3's footprint went onto the board next to the regulator, so no layout is left pending.
    expect(summary.layoutPending).toEqual([]);
    const board = Board.load(join(repo, "usb-led.kicad_pcb"));
    const outline = board.edgeCutsBBox()!;
    const c3 = board.footprints().find((f) => f.ref === "C3")!;
    expect(c3.at.x > outline.minX && c3.at.x < outline.maxX && c3.at.y > outline.minY && c3.at.y < outline.maxY).toBe(
      true,
    );
    expect(summary.recovered).toEqual([]);

    // The proposal, in the documented format, and it parses back to what the model proposed.
    const proposalText = read(repo, summary.proposal!.path);
    expect(proposalText.split("\n").slice(0, 11)).toEqual([
      "# Add a 100 nF decoupling capacitor on the LDO output",
      "",
      `- Change: ${id}`,
      `- Run: ${summary.runId}`,
      "- Approval: auto",
      "- Requirements touched: REQ-PWR-1",
      "- Refs: U1",
      "- Nets: +3V3, GND",
      "- New refs: C3",
      "- New nets: none",
      "",
    ]);
    for (const heading of ["## Why", "## Planned changes", "## Verification"])
      expect(proposalText).toContain(`\n${heading}\n`);
    const parsed = parseProposal(proposalText);
    expect(parsed.problems).toEqual([]);
    expect(parsed.proposal?.changes).toEqual([
      "add C3, 100 nF 0603 ceramic, on the Regulator sheet",
      "connect C3 between +3V3 and GND",
      "sync the board: C3 gets a footprint to place next to U1",
    ]);
    expect(parsed.proposal?.scope).toEqual({ refs: ["U1"], nets: ["+3V3", "GND"], newRefs: ["C3"], newNets: [] });

    // Records appended by the pipeline.
    const isoDate = `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
    const changelog = read(repo, "docs/CHANGELOG.md");
    expect(changelog).toContain(`### ${isoDate} — Add a 100 nF decoupling capacitor on the LDO output`);
    expect(changelog).toContain(
      `Change: \`docs/changes/${id}.md\` · Run: \`${summary.runId}\` · Verification: ERC clean, DRC clean, parity clean, requirements`,
    );
    expect(read(repo, "docs/DECISIONS.md")).toContain(
      `- ${isoDate} ${summary.runId}: Decouple the LDO output with 100 nF in parallel with the 1 uF bulk capacitor — lower impedance at high frequency on +3V3`,
    );
    expect(read(repo, "docs/BOM.md")).toContain("C3");

    // The commit message and its trailers, as git itself parses them.
    const message = await git(repo, "log", "-1", "--format=%B");
    expect(message.split("\n")[0]).toBe("copperhead: Add a 100 nF decoupling capacitor on the LDO output");
    expect(message).toContain(`\nChange: docs/changes/${id}.md\n`);
    expect(message).toMatch(/\nVerification: ERC clean, DRC clean, parity clean, requirements (\d+)\/\1\n/);
    expect((await git(repo, "log", "-1", "--format=%(trailers:key=Copperhead-Run,valueonly)")).trim()).toBe(
      summary.runId,
    );
    expect((await git(repo, "log", "-1", "--format=%(trailers:key=Copperhead-Approval,valueonly)")).trim()).toBe(
      "auto",
    );
    expect((await git(repo, "log", "-1", "--format=%an <%ae>")).trim()).toBe("Test User <test@example.com>");

    // KiCad itself agrees the board matches the schematic, and C3 arrives routed: nothing is unconnected.
    const drc = await runDrc(join(repo, "usb-led.kicad_pcb"), { schematicParity: true });
    expect(drc.parityChecked).toBe(true);
    expect(drc.report.schematic_parity.map((v) => `${v.type}: ${v.description}`)).toEqual([]);
    expect(drc.report.unconnected_items.map((v) => v.items.map((i) => i.description).join(" | "))).toEqual([]);

    // The run directory: transcript, summary, diff, and a journal marked committed.
    const dir = join(repo, ".copperhead", "runs", summary.runId);
    expect(summary.transcriptPath).toBe(`.copperhead/runs/${summary.runId}/transcript.jsonl`);
    expect(summary.summaryPath).toBe(`.copperhead/runs/${summary.runId}/summary.md`);
    expect(read(repo, summary.summaryPath)).toContain("Status: **committed**");
    expect(readFileSync(join(dir, "diff.patch"), "utf8")).toContain("C3");
    expect(JSON.parse(readFileSync(join(dir, "journal.json"), "utf8")).state).toBe("committed");
    const events = transcript(repo, summary);
    expect(events.find((e) => e.type === "proposal")).toMatchObject({ id, approval: "auto" });
    expect(events.at(-1)).toMatchObject({ type: "end", status: "committed" });
    expect(toolErrors(events)).toEqual({});
  }, 120_000);

  test("renames /LED_A to /LED_DRIVE: the commit touches the schematic label, the board's net names and the records only", async () => {
    const repo = await initialisedRepo();
    const summary = await run(repo, "rename-led-net", "Rename the net LED_A to LED_DRIVE");

    expect(summary.status).toBe("committed");
    expect(summary.reason).toBeUndefined();
    expect(summary.verification.ok).toBe(true);
    expect(summary.verification.repairCycles).toBe(0);
    expect(summary.layoutPending).toEqual([]);
    expect(summary.usage).toEqual({
      turns: 5,
      inputTokens: 13400,
      outputTokens: 350,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(await status(repo)).toBe("");

    const proposal = summary.proposal!.path;
    const files = [proposal, "docs/CHANGELOG.md", "usb-led.kicad_pcb", "usb-led.kicad_sch"].sort();
    expect([...summary.filesTouched].sort()).toEqual(files);
    const numstat = Object.fromEntries(
      (await git(repo, "show", "--numstat", "--format=", "HEAD"))
        .trim()
        .split("\n")
        .map((line) => line.split("\t"))
        .map(([added, deleted, path]) => [path!, { added: Number(added), deleted: Number(deleted) }]),
    );
    expect(Object.keys(numstat).sort()).toEqual(files);
    // One label in the schematic (renamed where it stands: the longer name ends short of the GND
    // symbol's text); the net's declaration and its two pads on the board.
    expect(numstat["usb-led.kicad_sch"]).toEqual({ added: 1, deleted: 1 });
    expect(numstat["usb-led.kicad_pcb"]!.added).toBe(numstat["usb-led.kicad_pcb"]!.deleted);
    expect(numstat["usb-led.kicad_pcb"]!.added).toBeLessThanOrEqual(3);

    const sch = read(repo, "usb-led.kicad_sch");
    expect(sch).toContain('(label "LED_DRIVE"');
    expect(sch).not.toContain("LED_A");
    const pcb = read(repo, "usb-led.kicad_pcb");
    expect(pcb).toContain('"/LED_DRIVE"');
    expect(pcb).not.toContain("LED_A");

    const drc = await runDrc(join(repo, "usb-led.kicad_pcb"), { schematicParity: true });
    expect(drc.parityChecked).toBe(true);
    expect(drc.report.schematic_parity).toEqual([]);
    expect(drc.report.unconnected_items).toEqual([]);
  }, 120_000);

  test("a proposal that needs a requirement changed is refused as requirement_change before any edit", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "requirement-change", "Remove the CC2 pull-down resistor R2");

    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("requirement_change");
    // The refusal keeps what was proposed and why, for the person who decides on the requirement.
    expect(summary.detail).toBe(
      [
        "REQ-BOM-1 would have to change: The design would keep only 2 R* parts; REQ-BOM-1 needs at least 3.",
        "Proposed: Remove the CC2 pull-down resistor. The request asks for one fewer part.",
        "Changes:",
        "- remove R2",
      ].join("\n"),
    );
    expect(summary.proposal).toBeUndefined();
    expect(summary.approval).toBeNull();
    expect(summary.commit).toBeUndefined();
    expect(summary.filesTouched).toEqual([]);
    expect(summary.usage.turns).toBe(2);
    await expectUntouched(repo, before);
    // Refused at the spec gate: no journal was ever opened.
    expect(existsSync(join(repo, ".copperhead", "runs", summary.runId, "journal.json"))).toBe(false);
    expect(transcript(repo, summary).at(-1)).toMatchObject({
      type: "end",
      status: "refused",
      reason: "requirement_change",
    });
  }, 60_000);

  test("removing R2 breaks REQ-BOM-1; the model abandons the change: rolled back at once, byte-identical, with the finding and its reason", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "remove-cc-pulldown", "Remove the CC2 pull-down resistor R2");

    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("abandoned");
    expect(summary.commit).toBeUndefined();
    expect(summary.verification.ok).toBe(false);
    // One failed verification, then the way out: no cycle burnt on a change that cannot pass.
    expect(summary.verification.repairCycles).toBe(1);
    expect(transcript(repo, summary).filter((e) => e.type === "verify")).toHaveLength(1);
    // The record shows the change that was tried: the root sheet R2 was on, before and after.
    const render = join(".copperhead", "runs", summary.runId, "render");
    expect(summary.renders).toEqual(["before", "after"].map((side) => join(render, side, "usb-led.svg")));
    for (const side of ["before", "after"]) expect(readdirSync(join(repo, render, side))).toEqual(["usb-led.svg"]);
    const req = summary.verification.newFindings.find((f) => f.check === "requirements" && f.rule === "REQ-BOM-1");
    expect(req).toBeDefined();
    expect(req!.severity).toBe("error");
    expect(req!.message).toContain("count R*");
    expect(summary.detail).toBe(
      "Removing R2 breaks REQ-BOM-1 (count R* >= 3); only a person can change that requirement.",
    );
    // It got as far as editing: the files it touched are listed, and all are back.
    expect(summary.filesTouched).toContain("usb-led.kicad_sch");
    expect(summary.filesTouched).toContain(summary.proposal!.path);
    await expectUntouched(repo, before);
    expect(JSON.parse(read(repo, `.copperhead/runs/${summary.runId}/journal.json`)).state).toBe("rolled_back");
  }, 120_000);

  test("an ERC error the model never repairs: rolled back after maxRepairCycles, byte-identical", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "erc-never-repaired", "Add a 10k pull-down resistor R4 to GND");

    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("verification_failed");
    expect(summary.verification.ok).toBe(false);
    expect(summary.verification.maxRepairCycles).toBe(3);
    expect(summary.verification.repairCycles).toBe(3);
    const erc = summary.verification.newFindings.filter((f) => f.check === "erc");
    expect(erc.length).toBeGreaterThan(0);
    expect(erc.every((f) => f.severity === "error")).toBe(true);
    expect(erc.map((f) => f.rule)).toContain("pin_not_connected");
    // Initial finish plus one per repair cycle; four verifications, three repair messages.
    const events = transcript(repo, summary);
    expect(events.filter((e) => e.type === "verify").map((e) => e.ok)).toEqual([false, false, false, false]);
    expect(events.filter((e) => e.type === "repair").map((e) => e.cycle)).toEqual([1, 2, 3]);
    expect(summary.usage.turns).toBe(7);
    expect([...summary.filesTouched].sort()).toEqual(
      [summary.proposal!.path, "docs/BOM.md", "usb-led.kicad_pcb", "usb-led.kicad_sch"].sort(),
    );
    await expectUntouched(repo, before);
  }, 120_000);

  test("finish again on a design unchanged since the failed verification: stalled at once, not re-verified", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "finish-unchanged", "Add a 10k pull-down resistor R4 to GND");

    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("stalled");
    expect(summary.detail).toContain("unchanged since the last failed verification");
    expect(summary.detail).toContain("pin_not_connected");
    expect(summary.verification.repairCycles).toBe(1);
    const events = transcript(repo, summary);
    expect(events.filter((e) => e.type === "verify").map((e) => e.ok)).toEqual([false]);
    await expectUntouched(repo, before);
  }, 120_000);

  test("refuse after approval ends the run as refused and rolls back what was edited", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "refuse-after-edit", ADD_CAP_REQUEST);

    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("refused");
    expect(summary.detail).toContain("AP2112K");
    expect(summary.proposal).toBeDefined();
    await expectUntouched(repo, before);
  }, 60_000);

  test("the provider fails mid-edit: rolled back as provider_error, byte-identical", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "provider-fails-mid-edit", ADD_CAP_REQUEST);

    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("provider_error");
    expect(summary.detail).toContain("HTTP 500");
    expect(summary.usage.turns).toBe(4);
    expect([...summary.filesTouched].sort()).toEqual([summary.proposal!.path, "regulator.kicad_sch"].sort());
    // Never verified, it has no "after" plots, and HEAD's alone are not kept.
    expect(summary.renders).toEqual([]);
    expect(readdirSync(join(repo, ".copperhead", "runs", summary.runId, "render", "before"))).toEqual([]);
    await expectUntouched(repo, before);
    const events = transcript(repo, summary);
    expect(events.find((e) => e.type === "error")).toMatchObject({ where: "provider", code: "provider_error" });
    expect(events.find((e) => e.type === "rollback")).toMatchObject({ reason: "provider_error" });
  }, 60_000);

  test("a dirty tree is refused before anything runs; the uncommitted files are untouched", async () => {
    const repo = await initialisedRepo();
    writeFileSync(join(repo, "notes.txt"), "work in progress\n");
    const sch = join(repo, "usb-led.kicad_sch");
    writeFileSync(sch, `${readFileSync(sch, "utf8")}\n`);
    const before = await snapshot(repo);
    const porcelain = await status(repo);

    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST);
    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("dirty_tree");
    expect(summary.detail).toContain("notes.txt");
    expect(summary.detail).toContain("usb-led.kicad_sch");
    expect(summary.usage.turns).toBe(0);
    expect(summary.filesTouched).toEqual([]);
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
    expect(await status(repo)).toBe(porcelain);
  }, 60_000);

  test("tool misuse: every call is a tool error that writes nothing, in the repo or outside it", async () => {
    const outside = await makeTempDir();
    const target = join(outside, "target.md");
    writeFileSync(target, "outside original\n");
    const repo = await initialisedRepo((repo) => {
      symlinkSync(target, join(repo, "docs", "evil.md"));
      symlinkSync(join(outside, "missing.md"), join(repo, "docs", "dangling.md"));
      symlinkSync(outside, join(repo, "docs", "outside"));
      symlinkSync(".", join(repo, "docs", "self"));
      symlinkSync("..", join(repo, "docs", "up"));
    });
    const before = await snapshot(repo);
    const parentDir = readdirSync(join(repo, "..")).sort();
    const spec = read(repo, "docs/SPEC.md");

    const summary = await run(repo, "tool-misuse", "Write a note about the LED indicator");
    const errors = toolErrors(transcript(repo, summary));
    expect(Object.keys(errors).sort()).toEqual([
      "m1",
      "m10",
      "m11",
      "m12",
      "m13",
      "m14",
      "m15",
      "m16",
      "m17",
      "m18",
      "m2",
      "m20",
      "m4",
      "m5",
      "m6",
      "m7",
      "m8",
      "m9",
    ]);
    expect(errors.m1).toContain("add_component is locked until a proposal is accepted and approved");
    expect(errors.m2).toContain("edit_doc is locked");
    expect(errors.m4).toContain("may not leave the docs/ folder");
    expect(errors.m5).toContain("may not leave the docs/ folder");
    expect(errors.m6).toContain("it is a symlink; copperhead does not follow file symlinks");
    expect(errors.m7).toContain("it is a symlink; copperhead does not follow file symlinks");
    expect(errors.m8).toContain("a symlinked folder leads outside the repository");
    expect(errors.m9).toContain("Requirements section");
    expect(errors.m10).toContain("written by copperhead itself");
    expect(errors.m11).toContain("Requirements section");
    expect(errors.m12).toMatch(/^invalid arguments for connect: .*ref.*pin.*net/);
    expect(errors.m13).toMatch(/^invalid arguments for edit_doc: path/);
    expect(errors.m14).toMatch(/^invalid arguments for set_field: .*extra/);
    expect(errors.m15).toContain("propose_change is not available now");
    expect(errors.m16).toContain("there is no tool called write_file");
    expect(errors.m17).toContain("written by copperhead itself");
    expect(errors.m18).toContain("written by copperhead itself");
    expect(errors.m20).toContain("a symlink that leads outside docs/");

    // Only finish went through, so the commit holds the proposal and its CHANGELOG entry.
    expect(summary.status).toBe("committed");
    const files = [summary.proposal!.path, "docs/CHANGELOG.md"].sort();
    expect([...summary.filesTouched].sort()).toEqual(files);
    expect((await git(repo, "show", "--name-only", "--format=", "HEAD")).trim().split("\n").sort()).toEqual(files);
    expect(await status(repo)).toBe("");
    const unchanged = (tree: Record<string, string>) => {
      const rest = { ...tree };
      for (const path of [...files, "docs/changes/"]) delete rest[path];
      return rest;
    };
    expect(unchanged(fingerprint(repo))).toEqual(unchanged(before.tree));
    expect(read(repo, "docs/SPEC.md")).toBe(spec);

    // Nothing escaped: the symlink targets and the folders around the repo are as they were.
    expect(readFileSync(target, "utf8")).toBe("outside original\n");
    expect(readdirSync(outside).sort()).toEqual(["target.md"]);
    expect(readdirSync(join(repo, "..")).sort()).toEqual(parentDir);
  }, 120_000);

  test("--dry-run: verified and proposed, diff.patch kept, tree restored byte-identical, no commit", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST, { dryRun: true });

    expect(summary.status).toBe("proposed");
    expect(summary.reason).toBeUndefined();
    expect(summary.dryRun).toBe(true);
    expect(summary.commit).toBeUndefined();
    expect(summary.verification.ok).toBe(true);
    expect(summary.layoutPending).toEqual([]);
    expect(summary.filesTouched).toContain("regulator.kicad_sch");
    const patch = read(repo, `.copperhead/runs/${summary.runId}/diff.patch`);
    expect(patch).toContain("C3");
    for (const file of summary.filesTouched) expect(patch).toContain(`b/${file}`);
    await expectUntouched(repo, before);
  }, 120_000);

  test("maxTurns 2 on the add-capacitor session: rolled back as turn_budget_exhausted, byte-identical", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST, { maxTurns: 2 });

    // Turn 2 was the accepted proposal, so the proposal file was written before the budget ran out.
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("turn_budget_exhausted");
    expect(summary.usage.turns).toBe(2);
    expect(summary.filesTouched).toEqual([summary.proposal!.path]);
    await expectUntouched(repo, before);
  }, 60_000);

  test("a model that never calls a tool is stalled and rolled back", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "text-only", ADD_CAP_REQUEST);

    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("stalled");
    expect(summary.usage.turns).toBe(3);
    expect(summary.filesTouched).toEqual([]);
    expect(summary.proposal).toBeUndefined();
    await expectUntouched(repo, before);
  }, 60_000);

  test("a baseline kicad-cli cannot load stops the model and is reported as a check would, with nothing changed", async () => {
    const repo = await initialisedRepo((r) => writeFileSync(join(r, "usb-led.kicad_pro"), "{ not json\n"));
    const before = await snapshot(repo);
    const err = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST).catch((e) => e);
    expect(err).toMatchObject({ code: "kicad_load_failed", exitCode: 3 });
    await expectUntouched(repo, before);
  }, 120_000);

  test("interactive approval: a yes is recorded as interactive in the proposal and the commit trailer", async () => {
    const repo = await initialisedRepo();
    const shown: string[] = [];
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST, {
      approve: async (proposal) => {
        shown.push(proposal.title);
        return true;
      },
    });
    expect(shown).toEqual(["Add a 100 nF decoupling capacitor on the LDO output"]);
    expect(summary.status).toBe("committed");
    expect(summary.approval).toBe("interactive");
    expect(read(repo, summary.proposal!.path)).toContain("\n- Approval: interactive\n");
    expect((await git(repo, "log", "-1", "--format=%(trailers:key=Copperhead-Approval,valueonly)")).trim()).toBe(
      "interactive",
    );
  }, 120_000);

  test("interactive approval: a no ends the run as refused/not_approved with nothing written", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST, { approve: async () => false });
    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("not_approved");
    expect(summary.approval).toBeNull();
    expect(summary.proposal).toBeUndefined();
    expect(summary.usage.turns).toBe(2);
    await expectUntouched(repo, before);
  }, 60_000);

  test("cancelled mid-edit (the signal fires after a connect): rolled back as cancelled, byte-identical", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    const controller = new AbortController();
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST, {
      signal: controller.signal,
      onProgress: (event) => {
        if (event.type === "tool" && event.name === "connect") controller.abort();
      },
    });
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("cancelled");
    expect(summary.usage.turns).toBe(4);
    expect(summary.filesTouched).toContain("regulator.kicad_sch");
    await expectUntouched(repo, before);
  }, 60_000);

  test("a pre-commit hook that says no: rolled back as commit_failed, byte-identical, index clean", async () => {
    const repo = await initialisedRepo();
    writeFileSync(
      join(repo, ".git", "hooks", "pre-commit"),
      '#!/bin/sh\necho "hook says no to $COPPERHEAD_RUN" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const before = await snapshot(repo);
    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST);
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("commit_failed");
    expect(summary.detail).toContain(`hook says no to ${summary.runId}`);
    expect(summary.verification.ok).toBe(true);
    expect(summary.commit).toBeUndefined();
    await expectUntouched(repo, before);
  }, 120_000);

  test("a run that crashed mid-edit is restored before the next do starts, which then commits normally", async () => {
    const repo = await initialisedRepo();
    const before = await snapshot(repo);
    // A run that died after its first write: its journal says "editing" and no lock is held.
    const crashed = newRunId();
    await withRepoLock(repo, async () => {
      const journal = RunJournal.begin(repo, crashed, runDir(repo, crashed));
      journal.writeFile("usb-led.kicad_sch", "half-written by a run that crashed\n");
      journal.writeFile("docs/notes.md", "left behind\n");
    });
    expect(await status(repo)).not.toBe("");

    const summary = await run(repo, "add-decoupling-cap", ADD_CAP_REQUEST);
    expect(summary.recovered).toEqual([crashed]);
    expect(summary.status).toBe("committed");
    expect(JSON.parse(read(repo, `.copperhead/runs/${crashed}/journal.json`)).state).toBe("recovered");
    // The commit holds this run's change only; the crashed run's writes were undone first.
    const files = (await git(repo, "show", "--name-only", "--format=", "HEAD")).trim().split("\n");
    expect(files).not.toContain("usb-led.kicad_sch");
    expect(files).not.toContain("docs/notes.md");
    expect(fingerprint(repo)["usb-led.kicad_sch"]).toBe(before.tree["usb-led.kicad_sch"]);
    expect(existsSync(join(repo, "docs", "notes.md"))).toBe(false);
    expect(await status(repo)).toBe("");
  }, 120_000);

  describe("secrets", () => {
    const KEY = "sk-ant-canary-0123456789abcdefABCDEF";
    const TOKEN = "ctt-canary-5f1e2d3c4b5a69788796";
    const saved = { key: process.env.ANTHROPIC_API_KEY, token: process.env.COPPERHEAD_TEST_TOKEN };
    afterEach(() => {
      for (const [name, value] of [
        ["ANTHROPIC_API_KEY", saved.key],
        ["COPPERHEAD_TEST_TOKEN", saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    test("a canary key in the environment, echoed by the model, reaches no run file, commit or summary", async () => {
      process.env.ANTHROPIC_API_KEY = KEY;
      process.env.COPPERHEAD_TEST_TOKEN = TOKEN;
      const repo = await initialisedRepo();
      const summary = await run(repo, "canary-echo", ADD_CAP_REQUEST);
      expect(summary.status).toBe("committed");

      const leaks = (text: string) => [KEY, TOKEN, "sk-ant-canary", "ctt-canary"].filter((s) => text.includes(s));
      expect(leaks(JSON.stringify(summary))).toEqual([]);
      const runFiles: string[] = [];
      const walk = (dir: string): void => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) walk(path);
          else runFiles.push(path);
        }
      };
      walk(join(repo, ".copperhead", "runs"));
      expect(runFiles.length).toBeGreaterThan(2);
      for (const file of runFiles)
        expect({ file, leaks: leaks(readFileSync(file, "utf8")) }).toEqual({ file, leaks: [] });
      expect(leaks(await git(repo, "log", "-p", "--all"))).toEqual([]);
      expect(leaks(await git(repo, "grep", "-h", "-I", "-e", "canary", "HEAD").catch(() => ""))).toEqual([]);
      // The transcript shows the echo happened, redacted.
      const text = read(repo, summary.transcriptPath);
      expect(text).toContain("[REDACTED]");
    }, 120_000);
  });
});

// A repo-wide guard: the scripted sessions each say what they are for.
test("every scripted session has a description", () => {
  for (const name of readdirSync(SESSIONS).filter((f) => f.endsWith(".json"))) {
    const session = JSON.parse(readFileSync(join(SESSIONS, name), "utf8")) as { description?: string };
    expect({ name, description: typeof session.description === "string" && session.description.length > 20 }).toEqual({
      name,
      description: true,
    });
  }
});
