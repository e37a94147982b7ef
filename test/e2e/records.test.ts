/**
 * What a run says and records, through the compiled binary on the built-in board and two
 * corpus projects: `check`'s text by rule with `--all`, the MCP relay block beside a JSON block
 * byte-equal to `check --json`, the `needs_input` ending over the CLI and MCP, the BOM's DNP
 * column after a gated DNP change (with sync_board saying what it did to attributes), and on
 * usb-led the one-line provider failure and a run that did not carry out its proposal. The
 * record agrees with itself: newFindings, run_check only "new" and the Verification line name
 * the same findings; usage is counted when a run ends by an error; the model's refuse has its
 * own reason; proposal ids spell signs; a refused edit advises only what the tools can do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CheckReport } from "../../src/checks/types.ts";
import { Board as PcbBoard } from "../../src/kicad/board/model.ts";
import { BOARD, has } from "../../src/kicad/format-versions.ts";
import { groupMissingLibraries } from "../../src/checks/missing-libraries.ts";
import { summariseCheck } from "../../src/mcp/check-summary.ts";
import { parseBom } from "../../src/spec/bom.ts";
import { git } from "../repo/git-repo.ts";
import { corpusProjects, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { relayOf, textOf } from "../support/mcp.ts";
import { copyRepo, fingerprint, initialisedCorpusRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { BINARY, requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const LONG = 600_000;
const ASK = `replay:${join(SESSIONS_DIR, "ask-which-led.json")}`;

const run = (args: string[], env: Record<string, string | undefined> = {}) =>
  runBinary(args, { env: { ...ISOLATED_ENV, ...env } });

function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...ISOLATED_ENV, ...extra })) if (v !== undefined) env[k] = v;
  return env;
}

async function mcp(repo: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp", "--repo", repo],
    env: serverEnv(env),
    stderr: "ignore",
  });
  const client = new Client({ name: "copperhead-records", version: "0" });
  await client.connect(transport);
  await client.listTools();
  return {
    call: (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: LONG }) as Promise<CallToolResult>,
    close: () => transport.close(),
  };
}

/** A scripted session that marks `ref` DNP through the gate: proposal, set_attribute, sync_board, finish. */
async function dnpSession(ref: string): Promise<string> {
  const file = join(await makeTempDir(), "dnp.json");
  const turn = (id: string, name: string, input: unknown) => ({
    content: [{ type: "tool_use", id, name, input }],
    usage: { inputTokens: 100, outputTokens: 10 },
  });
  const turns = [
    turn("t1", "propose_change", {
      title: `Do not fit ${ref}`,
      why: `${ref} is not needed on this build.`,
      changes: [`mark ${ref} DNP`],
      requirements_touched: [],
      verification: "ERC, DRC, parity and drift as before.",
      refs: [ref],
    }),
    turn("t2", "set_attribute", { ref, dnp: true }),
    turn("t3", "sync_board", {}),
    turn("t4", "finish", { summary: `${ref} is marked do-not-populate.` }),
  ];
  writeFileSync(file, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", turns }));
  return `replay:${file}`;
}

interface Board {
  name: string;
  repo: () => Promise<string>;
}

const corpus = (id: string): Board => ({
  name: id,
  repo: () => initialisedCorpusRepo(corpusProjects().find((p) => p.id === id)!),
});
// Two KiCad 7 projects: KiCad 6 schematics have no do-not-populate attribute at all.
const BOARDS: Board[] = [
  { name: "usb-led", repo: () => initialisedRepo() },
  corpus("corpus/emf-hexpansion"),
  corpus("corpus/rvpc-revb"),
];

beforeAll(() => {
  requireBinary();
});

for (const board of BOARDS) {
  describe(`records on ${board.name}`, () => {
    let template = "";
    beforeAll(async () => {
      template = await board.repo();
    }, LONG);

    test(
      "check: text by rule (then how to see all), --all lists every finding; MCP leads with the relay block and its JSON is the summary of `check --json`",
      async () => {
        const repo = await copyRepo(template);
        const json = await run(["check", "--json", "--repo", repo]);
        const report = JSON.parse(json.stdout) as CheckReport;
        const [text, all] = await Promise.all([
          run(["check", "--repo", repo]),
          run(["check", "--all", "--repo", repo]),
        ]);
        expect([text.exitCode, all.exitCode]).toEqual([json.exitCode, json.exitCode]);
        expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(all.stdout.trimEnd().split("\n").at(-1));
        for (const f of report.checks.flatMap((c) => c.findings))
          expect(all.stdout).toContain(f.message.split("\n")[0]!.split(" ").slice(0, 3).join(" "));
        // A missing library is one line of its own; the rest of each family is shown by rule.
        const { libraries, rest } = groupMissingLibraries(report.checks.flatMap((c) => c.findings));
        for (const lib of libraries) expect(text.stdout).toContain(`${lib.kind} library ${lib.library}: `);
        let elided = false;
        for (const c of report.checks) {
          const findings = rest.filter((f) => f.check === c.id);
          if (findings.length <= 10) continue;
          const byRule = new Map<string, number>();
          for (const f of findings) byRule.set(f.rule, (byRule.get(f.rule) ?? 0) + 1);
          for (const [rule, n] of byRule) {
            expect(text.stdout).toContain(`    ${rule}: `);
            if (n > 3) {
              expect(text.stdout).toContain(`… and ${n - 3} more ${rule}`);
              elided = true;
            }
          }
        }
        expect(text.stdout.includes("--all lists every finding")).toBe(elided);
        expect(text.stdout.split("\n").length).toBeLessThanOrEqual(all.stdout.split("\n").length);

        const server = await mcp(repo);
        const result = await server.call("copperhead_check", {});
        await server.close();
        expect(textOf(result)).toBe(JSON.stringify(summariseCheck(JSON.parse(json.stdout) as CheckReport), null, 2));
        const relay = relayOf(result);
        expect(relay).toStartWith(`Check ${report.ok ? "passed" : "failed"}: `);
        for (const c of report.checks.filter((c) => c.status === "fail" || c.status === "warn"))
          expect(relay).toContain(`${c.id} ${c.summary}`);
      },
      LONG,
    );

    test(
      "a request naming a part the board lacks: the model asks; refused / needs_input with the question, exit 2, nothing written",
      async () => {
        const repo = await copyRepo(template);
        const before = fingerprint(repo);
        const [textRun, jsonRun] = [
          await run(["do", "Make LED1 red", "--model", ASK, "--repo", repo]),
          await run(["do", "Make LED1 red", "--model", ASK, "--repo", repo, "--json"]),
        ];
        expect([textRun.exitCode, jsonRun.exitCode]).toEqual([2, 2]);
        const summary = JSON.parse(jsonRun.stdout);
        expect([summary.status, summary.reason, summary.verification.ok, summary.filesTouched]).toEqual([
          "refused",
          "needs_input",
          null,
          [],
        ]);
        expect(textRun.stdout).toStartWith(
          "copperhead do: needs input — nothing was changed. The model asks:\n  There is no LED1 on this board",
        );
        expect(textRun.stdout).toContain("Run the request again with your answer in it.");
        expect(fingerprint(repo)).toEqual(before);
        expect(await git(repo, "status", "--porcelain")).toBe("");
      },
      LONG,
    );

    test(
      "a part marked DNP through the gate: committed, its BOM row says DNP, drift passes, and sync_board said what it pushed",
      async () => {
        const repo = await copyRepo(template);
        const bom = parseBom(readFileSync(join(repo, "docs/BOM.md"), "utf8"))!;
        const ref = bom.rows.find((r) => r.dnp === "")!.ref;
        const result = await run([
          "do",
          `Do not fit ${ref}`,
          "--model",
          await dnpSession(ref),
          "--repo",
          repo,
          "--json",
        ]);
        const summary = JSON.parse(result.stdout);
        expect([summary.status, result.exitCode]).toEqual(["committed", 0]);
        const after = parseBom(readFileSync(join(repo, "docs/BOM.md"), "utf8"))!;
        expect(after.columns).toContain("DNP");
        expect(after.rows.filter((r) => r.dnp === "DNP").map((r) => r.ref)).toContain(ref);
        expect(summary.diff.bom).toContainEqual(
          expect.objectContaining({
            ref,
            status: "changed",
            changes: expect.arrayContaining([{ field: "DNP", before: "", after: "DNP" }]),
          }),
        );
        const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
        const synced = events.find((e) => e.type === "tool_result" && e.id === "t3");
        const sync = JSON.parse(synced.content);
        // A board older than KiCad 8 has no DNP flag: the sync says so and leaves the board as KiCad 7 keeps it.
        const boardFile = readdirSync(repo, { recursive: true, encoding: "utf8" }).find(
          (f) => f.endsWith(".kicad_pcb") && !f.startsWith(".copperhead"),
        )!;
        if (has(PcbBoard.load(join(repo, boardFile), { within: repo }).version!, BOARD.footprintDnp))
          expect(sync.attributes.pushed).toContain(`${ref}: DNP set`);
        else expect(sync.warnings.byKind.dnp_not_on_board.examples.join("\n")).toContain(ref);
        const check = JSON.parse((await run(["check", "--json", "--repo", repo])).stdout);
        expect(
          check.checks
            .find((c: { id: string }) => c.id === "drift")
            .findings.filter((f: { key: string }) => f.key.startsWith("drift:bom:")),
        ).toEqual([]);
      },
      LONG,
    );
  });
}

describe("records of a run that ends by an error", () => {
  test(
    "internal_error mid-conversation (a board edit on a poured board without KiCad's Python): the summary counts the model's turns and tokens",
    async () => {
      const demo = demoProjects().find((p) => p.id === "demos/custom_pads_test/custom_pads_test")!;
      const repo = await initialisedCorpusRepo(demo);
      const file = join(await makeTempDir(), "sync.json");
      const turn = (id: string, name: string, input: unknown) => ({
        content: [{ type: "tool_use", id, name, input }],
        usage: { inputTokens: 1000, outputTokens: 50 },
      });
      const turns = [
        turn("t1", "propose_change", {
          title: "Add a spare resistor",
          why: "A footprint for rework.",
          changes: ["add R900", "sync the board"],
          requirements_touched: [],
          verification: "as before",
          new_refs: ["R900"],
        }),
        turn("t2", "add_component", {
          lib_id: "Device:R",
          value: "10k",
          footprint: "Resistor_SMD:R_0603_1608Metric",
          sheet: "/",
          ref: "R900",
        }),
        turn("t3", "sync_board", {}),
      ];
      writeFileSync(file, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", turns }));
      const result = await run(["do", "Add a spare resistor", "--model", `replay:${file}`, "--repo", repo, "--json"], {
        COPPERHEAD_KICAD_PYTHON: "/bin/false",
      });
      expect(result.exitCode).toBe(3);
      const runs = join(repo, ".copperhead/runs");
      const [id] = readdirSync(runs);
      const record = readFileSync(join(runs, id!, "summary.md"), "utf8");
      expect(record).toContain("internal_error");
      expect(record).toContain("- Model usage: 3 turns, 3000 input and 150 output tokens");
    },
    LONG,
  );
});

describe("records on usb-led only", () => {
  let template = "";
  beforeAll(async () => {
    template = await initialisedRepo();
  }, LONG);

  test(
    "the needs_input ending over MCP: the relay block asks the host to ask its human and call again",
    async () => {
      const repo = await copyRepo(template);
      const before = fingerprint(repo);
      const server = await mcp(repo, { COPPERHEAD_MODEL: ASK });
      const result = await server.call("copperhead_do", { request: "Make LED1 red" });
      await server.close();
      const summary = JSON.parse(textOf(result));
      expect([summary.status, summary.reason]).toEqual(["refused", "needs_input"]);
      expect(relayOf(result)).toBe(
        `copperhead needs an answer before it changes anything: ${summary.detail} Ask your user, then call copperhead_do again with the request and their answer.`,
      );
      expect(fingerprint(repo)).toEqual(before);
    },
    LONG,
  );

  test(
    "a change that commits with new warnings: run_check only new, the record's newFindings and the Verification line name the same findings, each with its place",
    async () => {
      const repo = await copyRepo(template);
      const model = `replay:${join(SESSIONS_DIR, "rename-net-similar-label.json")}`;
      const result = await run(["do", "Rename CC1 to cc2", "--model", model, "--repo", repo, "--json"]);
      const summary = JSON.parse(result.stdout);
      expect([result.exitCode, summary.status]).toEqual([0, "committed"]);
      const counted = [...(summary.verificationLine as string).matchAll(/(\d+) new\b/g)].reduce(
        (n, m) => n + Number(m[1]),
        0,
      );
      expect(counted).toBeGreaterThan(0);
      type Row = { key: string; location?: { x?: number; y?: number; sheet?: string; layer?: string } };
      const listed = summary.verification.newFindings as Row[];
      expect(listed).toHaveLength(counted);
      const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const asked = JSON.parse(events.find((e) => e.type === "tool_result" && e.id === "t3").content) as {
        ok: boolean;
        total: number;
        new: number;
        baseline: number;
        findings: Row[];
      };
      expect(asked).toMatchObject({ ok: true, total: counted, new: counted, baseline: 0 });
      expect(asked.findings.map((f) => f.key).sort()).toEqual(listed.map((f) => f.key).sort());
      for (const f of [...listed, ...asked.findings]) {
        expect(f.location?.x).toBeNumber();
        expect(f.location?.y).toBeNumber();
        expect(f.location?.sheet ?? f.location?.layer).toBeString();
      }
      const record = readFileSync(join(repo, summary.summaryPath), "utf8");
      expect(record).toContain("## New findings");
      expect(record.split("\n").filter((l) => l.startsWith("- [") && l.includes(" at ("))).toHaveLength(counted);
      expect(await git(repo, "log", "-1", "--format=%B")).toContain(`Verification: ${summary.verificationLine}`);
    },
    LONG,
  );

  test(
    "the model's own refuse: reason refused (no spec gate involved) in --json, the text report, summary.md and the MCP relay; exit 2",
    async () => {
      const repo = await copyRepo(template);
      const model = `replay:${join(SESSIONS_DIR, "refuse-unclear-request.json")}`;
      const [json, text] = [
        await run(["do", "Make it better", "--model", model, "--repo", repo, "--json"]),
        await run(["do", "Make it better", "--model", model, "--repo", repo]),
      ];
      const summary = JSON.parse(json.stdout);
      expect([json.exitCode, text.exitCode, summary.status, summary.reason]).toEqual([2, 2, "refused", "refused"]);
      expect(text.stdout).toStartWith("copperhead do: refused (the model declined): nothing was changed");
      expect(readFileSync(join(repo, summary.summaryPath), "utf8")).toContain("- Status: **refused** (refused)");
      const server = await mcp(repo, { COPPERHEAD_MODEL: model });
      const result = await server.call("copperhead_do", { request: "Make it better" });
      await server.close();
      expect(JSON.parse(textOf(result)).reason).toBe("refused");
      expect(relayOf(result)).toStartWith("Refused (the model declined), nothing was changed: ");
    },
    LONG,
  );

  test(
    "a proposal's id is whole words of its title with the signs spelled (plus-12v, minus-12v)",
    async () => {
      const repo = await copyRepo(template);
      const file = join(await makeTempDir(), "rails.json");
      const title = "Add bulk capacitors on +12V and -12V at the regulator inputs";
      const turn = (id: string, name: string, input: unknown) => ({
        content: [{ type: "tool_use", id, name, input }],
        usage: { inputTokens: 100, outputTokens: 10 },
      });
      const turns = [
        turn("t1", "propose_change", {
          title,
          why: "Bulk capacitance at each rail's input.",
          changes: ["add C10 on +12V", "add C11 on -12V"],
          requirements_touched: [],
          verification: "as before",
        }),
        turn("t2", "refuse", { reason: "This board has no ±12 V rails." }),
      ];
      writeFileSync(file, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", turns }));
      const summary = JSON.parse(
        (await run(["do", title, "--model", `replay:${file}`, "--repo", repo, "--json"])).stdout,
      );
      expect(summary.proposal.id).toBe(`${summary.runId.slice(0, 8)}-add-bulk-capacitors-on-plus-12v-and-minus-12v`);
    },
    LONG,
  );

  test(
    "a refused edit advises only what the model's tools can do: moving a part routed before the run names find_space and refuse, not KiCad",
    async () => {
      const repo = await copyRepo(template);
      const file = join(await makeTempDir(), "move-routed.json");
      const turn = (id: string, name: string, input: unknown) => ({
        content: [{ type: "tool_use", id, name, input }],
        usage: { inputTokens: 100, outputTokens: 10 },
      });
      const turns = [
        turn("t1", "propose_change", {
          title: "Move R3 closer to the LED",
          why: "Shorter LED loop.",
          changes: ["move R3 next to D1"],
          requirements_touched: [],
          verification: "as before",
          refs: ["R3", "D1"],
        }),
        turn("t2", "place_footprint", { ref: "R3", near: "D1" }),
        turn("t3", "refuse", { reason: "R3 is routed; it stays where it is." }),
      ];
      writeFileSync(file, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", turns }));
      const summary = JSON.parse(
        (await run(["do", "Move R3 closer to the LED", "--model", `replay:${file}`, "--repo", repo, "--json"])).stdout,
      );
      const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const refused = events.find((e) => e.type === "tool_result" && e.id === "t2");
      expect(refused.isError).toBe(true);
      expect(refused.content).toContain("R3 is routed with copper that was there before this run");
      expect(refused.content).toContain("find_space");
      expect(refused.content).toContain("refuse");
      expect(refused.content).not.toMatch(/KiCad/);
    },
    LONG,
  );

  test(
    "a provider that fails before any edit: one line says so; verification not run",
    async () => {
      const repo = await copyRepo(template);
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: () => Response.json({ error: { message: "invalid api key" } }, { status: 401 }),
      });
      try {
        const env = {
          COPPERHEAD_BASE_URL: `http://127.0.0.1:${server.port}/v1`,
          COPPERHEAD_API_KEY: "test-key-not-secret",
        };
        const text = await run(["do", "Add a test point", "--model", "compat:test", "--repo", repo], env);
        expect(text.exitCode).toBe(1);
        const [first, ...rest] = text.stdout.trimEnd().split("\n");
        expect(first).toStartWith(
          "copperhead do: the model provider failed before any edit, so nothing was started and nothing was changed: ",
        );
        expect(rest).toHaveLength(1);
        expect(rest[0]).toStartWith("transcript: ");
        const json = JSON.parse(
          (await run(["do", "Add a test point", "--model", "compat:test", "--repo", repo, "--json"], env)).stdout,
        );
        expect([json.reason, json.verification.ok]).toEqual(["provider_error", null]);
        expect(readFileSync(join(repo, json.summaryPath), "utf8")).toContain("- Verification: not run");
      } finally {
        server.stop(true);
      }
    },
    LONG,
  );

  test(
    "a run whose only edit failed, then sync_board and finish, does not commit: the unmet plan goes back to the model, then rolls back as verification_failed naming it",
    async () => {
      const repo = await copyRepo(template);
      const before = { tree: fingerprint(repo), head: await git(repo, "rev-parse", "HEAD") };
      const model = `replay:${join(SESSIONS_DIR, "edit-failed-then-finish.json")}`;
      const result = await run([
        "do",
        "Add a 100 uF bulk capacitor on +3V3",
        "--model",
        model,
        "--repo",
        repo,
        "--max-repair-cycles",
        "1",
        "--json",
      ]);
      const summary = JSON.parse(result.stdout);
      expect([
        result.exitCode,
        summary.status,
        summary.reason,
        summary.verification.ok,
        summary.verification.repairCycles,
      ]).toEqual([1, "rolled_back", "verification_failed", false, 1]);
      expect(summary.detail).toContain("the proposal adds C3, but the design has no C3");
      expect(summary.detail).toContain("no schematic or board file changed");
      const events = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events.filter((e) => e.type === "verify").map((e) => e.ok)).toEqual([false, false]);
      expect(events.find((e) => e.type === "repair")).toMatchObject({ cycle: 1 });
      expect(fingerprint(repo)).toEqual(before.tree);
      expect(await git(repo, "rev-parse", "HEAD")).toBe(before.head);
    },
    LONG,
  );
});
