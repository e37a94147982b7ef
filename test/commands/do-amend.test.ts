/**
 * `amend_proposal` in a real `do` run, in process: usb-led in a git repo after `init`, real
 * kicad-cli and git, a scripted model. An edit outside the approved proposal is refused; an
 * amendment is validated by the proposal's own checks, approved the way the proposal was (asked
 * again when the run asks), and recorded in the proposal file, the transcript, the summary and
 * the commit; one that needs a requirement changed ends the run like propose_change's does.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { runDo, type DoOptions, type DoSummary } from "../../src/commands/do.ts";
import { parseProposal, type Proposal } from "../../src/spec/proposal.ts";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, FIXTURES_DIR } from "../support/kicad.ts";
import { fingerprint, initialisedRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const SESSIONS = join(FIXTURES_DIR, "sessions");
const REQUEST = "add a 100 nF capacitor next to U1";

function run(repo: string, session: string, options: Partial<DoOptions> = {}): Promise<DoSummary> {
  return runDo({
    request: REQUEST,
    repo,
    provider: createReplayProvider(join(SESSIONS, `${session}.json`)),
    ...options,
  });
}

const read = (repo: string, rel: string) => readFileSync(join(repo, rel), "utf8");
const head = async (repo: string) => (await git(repo, "rev-parse", "HEAD")).trim();

type Event = { type: string; [field: string]: unknown };
function transcript(repo: string, summary: DoSummary): Event[] {
  return read(repo, summary.transcriptPath)
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Event);
}

/** The tool errors of the run, as `tool-use id → { code, message }`. */
function toolErrors(events: Event[]): Record<string, { code?: unknown; message: string }> {
  return Object.fromEntries(
    events
      .filter((e) => e.type === "tool_result" && e.isError === true)
      .map((e) => [e.id as string, { code: e.code, message: e.content as string }]),
  );
}

describe("do: the proposal binds the edits, amend_proposal widens it", () => {
  test("an out-of-scope part is refused; the amendment is approved again, recorded everywhere, and the run commits", async () => {
    const repo = await initialisedRepo();
    const asked: Proposal[] = [];
    const summary = await run(repo, "amend-for-test-point", {
      approve: async (proposal) => {
        asked.push(proposal);
        return true;
      },
    });
    expect(summary.status).toBe("committed");
    // The person approved the proposal, then the amended proposal.
    expect(asked.map((p) => p.amendments?.length ?? 0)).toEqual([0, 1]);
    expect(asked[1]!.amendments![0]!.scope).toEqual({ refs: [], nets: [], newRefs: ["TP1"], newNets: [] });

    const events = transcript(repo, summary);
    const refused = toolErrors(events);
    expect(Object.keys(refused)).toEqual(["t3"]);
    expect(refused.t3!.code).toBe("out_of_scope");
    expect(refused.t3!.message).toContain(
      "add_component would change part TP1, which the approved proposal does not name",
    );
    expect(events.find((e) => e.type === "amendment")).toMatchObject({
      approved: true,
      number: 1,
      scope: { newRefs: ["TP1"] },
      covers: { refs: ["U1", "C3", "TP1"], nets: ["+3V3", "GND"] },
    });

    // The proposal file holds the original scope and the amendment, and parses back.
    const parsed = parseProposal(read(repo, summary.proposal!.path));
    expect(parsed.problems).toEqual([]);
    expect(parsed.proposal!.scope).toEqual({ refs: ["U1"], nets: ["+3V3", "GND"], newRefs: ["C3"], newNets: [] });
    expect(parsed.proposal!.amendments).toEqual([
      {
        why: "A test point on +3V3 next to the new capacitor lets the rail be probed where U1 draws its current.",
        changes: ["add TP1, a test point on +3V3, next to C3"],
        requirements: [],
        scope: { refs: [], nets: [], newRefs: ["TP1"], newNets: [] },
      },
    ]);
    expect(summary.proposal!.amendments).toEqual(parsed.proposal!.amendments);

    const message = await git(repo, "log", "-1", "--format=%B");
    expect(message).toContain(
      "\nProposal amended during the run:\n1. adds TP1 (new): A test point on +3V3 next to the new capacitor lets the rail be probed where U1 draws its current.\n",
    );
    expect(read(repo, summary.summaryPath)).toContain("\n- Amendment 1: adds TP1 (new) — A test point on +3V3");
    // The refused call wrote nothing: TP1 was placed once, by the call after the amendment.
    expect(read(repo, "regulator.kicad_sch").match(/\(property "Reference" "TP1"/g)?.length).toBe(1);
  }, 120_000);

  test("an amendment that does not match the design is refused by the proposal's validation; a declined one is a tool error", async () => {
    const repo = await initialisedRepo();
    const before = { tree: fingerprint(repo), head: await head(repo) };
    const summary = await run(repo, "amend-declined", {
      approve: async (proposal) => proposal.amendments === undefined,
    });
    expect(summary.status).toBe("rolled_back");
    expect(summary.reason).toBe("abandoned");

    const refused = toolErrors(transcript(repo, summary));
    expect(Object.keys(refused)).toEqual(["t3", "t4", "t5"]);
    expect(refused.t3!.code).toBe("out_of_scope");
    expect(refused.t4!.message).toBe(
      "the amendment does not match the design:\n- ref R1 already exists; list it in refs, or pick a free reference\nFix it and call amend_proposal again.",
    );
    expect(refused.t5!.message).toContain("the amendment was not approved");
    expect(transcript(repo, summary).find((e) => e.type === "amendment")).toMatchObject({
      approved: false,
      scope: { newRefs: ["TP1"] },
    });
    expect(summary.proposal!.amendments).toBeUndefined();
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
  }, 120_000);

  test("an amendment that needs a requirement changed ends the run as requirement_change, everything rolled back", async () => {
    const repo = await initialisedRepo();
    const before = { tree: fingerprint(repo), head: await head(repo) };
    const summary = await run(repo, "amend-needs-requirement-change");
    expect(summary.status).toBe("refused");
    expect(summary.reason).toBe("requirement_change");
    expect(summary.detail).toBe(
      [
        "REQ-BOM-1 would have to change: Removing R2 leaves two resistors; REQ-BOM-1 asks for at least three.",
        "Amendment: Room for C3 on the board needs R2 gone.",
        "Changes:",
        "- remove R2",
      ].join("\n"),
    );
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
  }, 120_000);
});
