/**
 * The gated run reports what a verified change did to the design: the summary (`do --json`,
 * the MCP result, `sync --resolve`'s resolution) carries the semantic diff, `summary.md` and the
 * CLI's report show it, and the commit message body carries its short form. A change that did
 * not verify has none.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelProvider } from "../../src/agent/conversation.ts";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { renderDoSummary } from "../../src/cli/do.ts";
import { runDo, type DoSummary } from "../../src/commands/do.ts";
import { runSync } from "../../src/commands/sync.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, FIXTURES_DIR } from "../support/kicad.ts";
import { copyRepo, initialisedRepo } from "../support/repos.ts";
import { editFile, removeFootprint } from "../support/variants.ts";

afterAll(cleanupTempDirs);

const ADD_CAP = "Add a 100 nF decoupling capacitor on the LDO output";
const replay = (session: string) => createReplayProvider(join(FIXTURES_DIR, "sessions", `${session}.json`));
const read = (repo: string, rel: string) => readFileSync(join(repo, rel), "utf8");

let template: string;
beforeAll(async () => {
  template = await initialisedRepo();
}, 60_000);

/** The capacitor the recorded session adds, as the diff reports it. */
function expectCapacitorAdded(summary: DoSummary): void {
  const diff = summary.diff!;
  expect(diff.schema).toBe("copperhead.diff/1");
  expect(diff.sheets).toEqual([{ path: "/Regulator/", status: "changed", file: "regulator.kicad_sch" }]);
  expect(diff.components).toEqual([
    {
      ref: "C3",
      status: "added",
      sheet: "/Regulator/",
      value: "100n",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      libId: "Device:C",
      changes: [],
      moves: [],
      pins: [
        { pin: "1", net: "+3V3" },
        { pin: "2", net: "GND" },
      ],
    },
  ]);
  expect(diff.nets).toEqual([]);
  expect(diff.pins).toEqual([]);
  expect(
    diff.board!.footprints.map((f) => `${f.status} ${f.ref} ${f.pads.map((p) => `${p.pin}:${p.net}`).join(",")}`),
  ).toEqual(["added C3 1:+3V3,2:GND"]);
  // The run routes the part it adds: only new copper, on the capacitor's two nets.
  const tracks = diff.board!.tracks;
  expect(tracks.length).toBeGreaterThan(0);
  expect(new Set(tracks.map((t) => `${t.status} ${t.net}`))).toEqual(new Set(["added +3V3", "added GND"]));
  expect(diff.bom.map((r) => `${r.status} ${r.ref}`)).toEqual(["added C3"]);
  expect(diff.requirements).toEqual([]);
}

describe("the design diff of a gated run", () => {
  test("committed: in the summary, summary.md, the CLI report and the commit message body", async () => {
    const repo = await copyRepo(template);
    const summary = await runDo({ request: ADD_CAP, repo, provider: replay("add-decoupling-cap") });
    expect(summary.status).toBe("committed");
    expectCapacitorAdded(summary);

    const record = read(repo, summary.summaryPath);
    expect(record).toContain(
      "## Design changes\n\n**Parts**\n\n- *added* `C3` `100n` (Device:C, Capacitor_SMD:C_0603_1608Metric) on `/Regulator/` — 1: `+3V3`, 2: `GND`\n",
    );
    expect(record).toContain("**BOM rows**\n\n- *added* `C3`");

    const report = renderDoSummary(summary);
    expect(report).toContain(
      "design changes:\n  Parts\n    + C3 100n (Device:C, Capacitor_SMD:C_0603_1608Metric) on /Regulator/ — 1: +3V3, 2: GND\n",
    );

    const body = await git(repo, "log", "-1", "--format=%B");
    expect(body).toMatch(
      /\n\nDesign changes:\n- parts: \+C3 \(100n\)\n- board: \+C3, tracks \+\d+(, vias \+\d+)?\n- BOM: \+C3\n\nChange: docs\/changes\//,
    );
    // The trailers stay the last paragraph, where git finds them.
    expect(body.trimEnd().split("\n\n").at(-1)).toMatch(
      /^Change: .*\nVerification: .*\nCopperhead-Run: \S+\nCopperhead-Approval: auto$/,
    );
  }, 120_000);

  test("a dry run: the same diff, and the tree as it was", async () => {
    const repo = await copyRepo(template);
    const summary = await runDo({ request: ADD_CAP, repo, dryRun: true, provider: replay("add-decoupling-cap") });
    expect(summary.status).toBe("proposed");
    expectCapacitorAdded(summary);
    expect(await git(repo, "status", "--porcelain")).toBe("");
  }, 120_000);

  test("rolled back: no diff anywhere", async () => {
    const repo = await copyRepo(template);
    const summary = await runDo({
      request: "Remove one of the CC pull-downs",
      repo,
      provider: replay("remove-cc-pulldown"),
    });
    expect(summary.status).toBe("rolled_back");
    expect(summary.diff).toBeNull();
    expect(read(repo, summary.summaryPath)).not.toContain("Design changes");
    expect(renderDoSummary(summary)).not.toContain("design changes");
  }, 120_000);

  test("sync --resolve: the resolution says what code changed", async () => {
    const repo = await copyRepo(template);
    editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |"));
    removeFootprint(join(repo, "usb-led.kicad_pcb"), "D1");
    await git(repo, "commit", "--quiet", "-am", "edits made outside copperhead");
    const noModel: ModelProvider = {
      provider: "replay",
      model: "none",
      label: "no model",
      complete: () => Promise.reject(new Error("no model call expected")),
    };
    const result = await runSync({ repo, resolve: true, provider: noModel });
    const diff = result.resolution!.diff!;
    expect(result.resolution!.status).toBe("committed");
    expect(diff.components).toEqual([]);
    expect(diff.sheets).toEqual([]);
    expect(
      diff.board!.footprints.map((f) => `${f.status} ${f.ref} ${f.pads.map((p) => `${p.pin}:${p.net}`).join(",")}`),
    ).toEqual(["added D1 1:GND,2:/LED_A"]);
    // The LED goes back where its tracks still end, so they connect it and none are added.
    expect(diff.board!.footprints[0]!.at).toMatchObject({ x: 130, y: 94 });
    expect(diff.bom).toEqual([
      { ref: "R3", status: "changed", changes: [{ field: "Value", before: "2k2", after: "1k" }] },
    ]);
    expect(await git(repo, "log", "-1", "--format=%B")).toMatch(/Design changes:\n- board: \+D1\n- BOM: R3 changed\n/);
  }, 120_000);
});
