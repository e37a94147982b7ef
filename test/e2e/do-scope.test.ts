/**
 * The approved proposal binds the edits, through the compiled binary with real kicad-cli and
 * git: on usb-led and on a KiCad demo copied to a temp repo, a recorded session makes an edit
 * its proposal does not cover (a part on usb-led, a net on the demo). The call is refused as out
 * of scope and changes nothing; the model amends the proposal, repeats the edit, and the run
 * commits — with the amendment in the proposal file, the transcript and the commit message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { parseProposal } from "../../src/spec/proposal.ts";
import { git } from "../repo/git-repo.ts";
import { demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, initialisedCorpusRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

let usbLed = "";
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  usbLed = await initialisedRepo();
}, 120_000);

const CASES = [
  {
    id: "fixtures/usb-led",
    repo: () => copyRepo(usbLed),
    session: "amend-for-test-point",
    refused: "add_component would change part TP1",
    amendment: { refs: [], nets: [], newRefs: ["TP1"], newNets: [] },
    added: ["C3", "TP1"],
  },
  {
    id: "demos/interf_u/interf_u",
    repo: () => initialisedCorpusRepo(demoProjects().find((p) => p.id === "demos/interf_u/interf_u")!),
    session: "amend-for-ground",
    refused: "add_component would change net GND",
    amendment: { refs: [], nets: ["GND"], newRefs: [], newNets: [] },
    added: ["C900"],
  },
];

type Event = { type: string; [field: string]: unknown };

function transcript(repo: string): Event[] {
  const runs = join(repo, ".copperhead/runs");
  const [runId] = readdirSync(runs);
  return readFileSync(join(runs, runId!, "transcript.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Event);
}

describe("do: an out-of-scope edit is refused, the model amends the proposal, the run commits", () => {
  for (const c of CASES) {
    test(c.id, async () => {
      const repo = await c.repo();
      const parts = () => listComponents(loadSchematicProject(discoverProject(repo).schematic)).map((p) => p.ref);
      const before = parts();
      const run = await runBinary(
        [
          "do",
          "add a 100 nF capacitor next to U1",
          "--model",
          `replay:${join(SESSIONS_DIR, `${c.session}.json`)}`,
          "--json",
          "--repo",
          repo,
        ],
        { env: ISOLATED_ENV },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout);
      expect(summary.status).toBe("committed");
      expect(summary.proposal.amendments.map((a: { scope: unknown }) => a.scope)).toEqual([c.amendment]);

      // The refusal came first, typed, and the amendment after it; the same call then ran.
      const events = transcript(repo);
      const refusal = events.findIndex((e) => e.type === "tool_result" && e.code === "out_of_scope");
      const amendment = events.findIndex((e) => e.type === "amendment" && e.approved === true);
      expect(refusal).toBeGreaterThan(-1);
      expect(String(events[refusal]!.content)).toContain(c.refused);
      expect(String(events[refusal]!.content)).toContain("call amend_proposal");
      expect(amendment).toBeGreaterThan(refusal);
      expect(events.filter((e) => e.type === "tool_result" && e.isError === true)).toHaveLength(1);

      // Each new part exists once: the refused call wrote nothing.
      const after = parts();
      expect(after.filter((ref) => !before.includes(ref)).sort()).toEqual(c.added);
      expect(after.length).toBe(before.length + c.added.length);

      const committed = parseProposal(await git(repo, "show", `HEAD:${summary.proposal.path}`));
      expect(committed.problems).toEqual([]);
      expect(committed.proposal!.amendments!.map((a) => a.scope)).toEqual([c.amendment]);
      expect(await git(repo, "log", "-1", "--format=%B")).toContain("\nProposal amended during the run:\n1. adds ");
    }, 300_000);
  }
});
