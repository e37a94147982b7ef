/**
 * The MCP server in process: the SDK's `Client` talking to `createMcpServer` over the SDK's
 * in-memory transport, on private git copies of usb-led with `init` committed. kicad-cli and
 * git are real; the model is a recorded session (`replay:` through `COPPERHEAD_MODEL`, as a
 * host would configure the server) or, where a run must be parked mid-edit, the loopback
 * scripted model behind `compat:`. Every outbound server message is recorded, so tests can
 * assert what a host would see on the wire (progress, leaks, ordering).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolResultSchema,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { runCheck } from "../../src/commands/check.ts";
import { MAX_REQUEST_BYTES } from "../../src/commands/do.ts";
import { summariseCheck, type CheckSummary } from "../../src/mcp/check-summary.ts";
import { createMcpServer, type McpServerHandle } from "../../src/mcp/server.ts";
import { serveScriptedModel, sessionTurns } from "../e2e/scripted-model.ts";
import { git, makeRepo } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import {
  ADD_CAP_REQUEST,
  buildTemplateRepo,
  copyRepo,
  errorOf,
  fingerprint,
  gitStatus,
  head,
  PROVIDER_VARS,
  relayOf,
  replayModel,
  setEnv,
  textOf,
  TOOL_NAMES,
} from "../support/mcp.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  template = await buildTemplateRepo();
}, 60_000);

// No model provider, no kicad-cli override: each test sets what it needs and gets it undone.
let restoreEnv: () => void = () => {};
beforeEach(() => {
  restoreEnv = setEnv(
    Object.fromEntries([...PROVIDER_VARS, "COPPERHEAD_KICAD_CLI", "COPPERHEAD_TEST_TOKEN"].map((k) => [k, undefined])),
  );
});
afterEach(() => restoreEnv());

const LONG = { timeout: 600_000 };

interface Connection {
  client: Client;
  handle: McpServerHandle;
  /** Every message the server sent, in order. */
  sent: JSONRPCMessage[];
  close(): Promise<void>;
}

async function connect(repo: string): Promise<Connection> {
  const handle = createMcpServer(repo);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverTransport.send.bind(serverTransport);
  serverTransport.send = async (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await handle.server.connect(serverTransport);
  const client = new Client({ name: "copperhead-test", version: "0" });
  // E.g. a progress notification after its request's response (the client drops those).
  const errors: Error[] = [];
  client.onerror = (err) => errors.push(err);
  await client.connect(clientTransport);
  // Listing caches each tool's output schema, so every later result is validated against it.
  await client.listTools();
  return {
    client,
    handle,
    sent,
    async close() {
      await client.close();
      await handle.idle();
      expect(errors).toEqual([]);
    },
  };
}

interface Progress {
  progress: number;
  message?: string;
}

async function call(
  conn: Connection,
  name: string,
  args: Record<string, unknown> = {},
  options: { progress?: Progress[]; signal?: AbortSignal } = {},
): Promise<CallToolResult> {
  const onprogress = options.progress
    ? (p: Progress) => void options.progress!.push({ progress: p.progress, message: p.message })
    : undefined;
  return (await conn.client.callTool({ name, arguments: args }, CallToolResultSchema, {
    ...LONG,
    ...(onprogress ? { onprogress, resetTimeoutOnProgress: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  })) as CallToolResult;
}

interface DoResult {
  status: string;
  reason?: string;
  runId: string;
  commit?: string;
  approval: string | null;
  filesTouched: string[];
  verification: { ok: boolean; newFindings: unknown[] };
  transcriptPath: string;
  summaryPath: string;
}

/** A successful (non-error) result: its structured content, checked to be what the text says. */
function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError ?? false).toBe(false);
  expect(textOf(result)).toBe(JSON.stringify(result.structuredContent, null, 2));
  return result.structuredContent as T;
}

function transcript(repo: string, summary: DoResult): Array<{ type: string; t: number; [k: string]: unknown }> {
  return readFileSync(join(repo, summary.transcriptPath), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

function progressSent(sent: JSONRPCMessage[]): Array<{ progressToken: unknown; progress: number; message?: string }> {
  return sent.flatMap((m) =>
    "method" in m && m.method === "notifications/progress"
      ? [m.params as { progressToken: unknown; progress: number; message?: string }]
      : [],
  );
}

/** Hand edits that leave the design as it is but its docs drifted, committed so a run may start. */
async function drift(repo: string, options: { violation?: boolean } = {}): Promise<void> {
  writeFileSync(join(repo, "docs/NOTES.md"), "# Notes\n\nThe LED current is set by `R9`.\n");
  if (options.violation) {
    const spec = join(repo, "docs/SPEC.md");
    writeFileSync(
      spec,
      readFileSync(spec, "utf8").trimEnd() +
        "\n- REQ-LED-1: The LED series resistor is at least 2k.\n  - check: R3.value >= 2k\n",
    );
  }
  const bom = join(repo, "docs/BOM.md");
  writeFileSync(bom, readFileSync(bom, "utf8").replace("| R3 | 1k |", "| R3 | 2k2 |"));
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "docs drifted");
}

describe("tools/list", () => {
  test("exactly the four outcome tools, each with schemas, annotations and the guarantees in its description", async () => {
    const conn = await connect(template);
    const { tools } = await conn.client.listTools();
    await conn.close();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t])) as Record<string, Tool>;

    const properties: Record<string, string[]> = {
      copperhead_check: ["baseline", "check", "fab", "limit", "offset", "only_new", "rule", "severity", "strict"],
      copperhead_do: ["dry_run", "request"],
      copperhead_sync: ["resolve"],
      copperhead_init: ["force"],
    };
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(properties[tool.name]!);
      // Unknown fields are refused, and nothing shaped like a key can be passed in.
      expect(tool.inputSchema.additionalProperties).toBe(false);
      for (const prop of Object.keys(tool.inputSchema.properties ?? {}))
        expect(prop).not.toMatch(/key|token|secret|password|model|url/i);
      expect(tool.outputSchema?.type).toBe("object");
      expect(Object.keys(tool.outputSchema?.properties ?? {})).toContain("schema");
      expect(typeof tool.title).toBe("string");
      expect(tool.description!.length).toBeGreaterThan(100);
      expect(tool.annotations?.readOnlyHint).toBe(tool.name === "copperhead_check");
    }
    expect(byName.copperhead_do!.inputSchema.required).toEqual(["request"]);
    expect(
      (byName.copperhead_do!.inputSchema.properties as Record<string, { maxLength?: number }>).request!.maxLength,
    ).toBe(MAX_REQUEST_BYTES);

    const doText = byName.copperhead_do!.description!;
    expect(doText).toContain("Spec gate");
    expect(doText).toContain("Verification gate");
    expect(doText).toMatch(/rolled back byte for byte/);
    expect(doText).toContain("AUTO approval");
    expect(doText).toMatch(/rolled_back.*not an error/);
    for (const name of ["copperhead_do", "copperhead_sync"]) {
      const text = byName[name]!.description!;
      for (const v of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPPERHEAD_BASE_URL", "missing_api_key"])
        expect(text).toContain(v);
    }
    expect(byName.copperhead_sync!.description).toContain("same gated pipeline as copperhead_do");
    expect(byName.copperhead_sync!.description).toContain("byte for byte");
    expect(byName.copperhead_sync!.description).toContain("Requirement violations are never changed");
    for (const name of ["copperhead_check", "copperhead_init"])
      expect(byName[name]!.description).toContain("no key needed");
  });

  test("the bypass rule: no tool changes a repo file except do, init and sync with resolve", async () => {
    const repo = await copyRepo(template);
    await drift(repo, { violation: true });
    const conn = await connect(repo);
    const { tools } = await conn.client.listTools();
    // A fifth tool fails here until it is reviewed against the bypass rule.
    expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
    // The gated pipelines (tested below) are the only ways to change files.
    const gated = (name: string, args: Record<string, unknown>) =>
      name === "copperhead_do" || name === "copperhead_init" || (name === "copperhead_sync" && args.resolve === true);

    const calls: Array<[string, Record<string, unknown>]> = [];
    for (const tool of tools) {
      let combos: Record<string, unknown>[] = [{}];
      for (const [prop, schema] of Object.entries(tool.inputSchema.properties ?? {}) as Array<
        [string, { type?: string }]
      >) {
        // check's selection inputs choose what its answer lists, never what runs.
        if (tool.name === "copperhead_check" && SELECTION_INPUTS.includes(prop)) continue;
        if (schema.type !== "boolean") {
          // Only check's baseline (a ref it reads a snapshot of) and do's request (do is gated
          // as a whole) are not booleans.
          expect(`${tool.name}.${prop}`).toBeOneOf(["copperhead_check.baseline", "copperhead_do.request"]);
          if (prop === "baseline") combos = combos.flatMap((c) => [c, { ...c, [prop]: "HEAD" }]);
          continue;
        }
        combos = combos.flatMap((c) => [c, { ...c, [prop]: false }, { ...c, [prop]: true }]);
      }
      for (const args of combos) if (!gated(tool.name, args)) calls.push([tool.name, args]);
    }
    expect(calls.map(([n]) => n).sort()).toEqual([
      ...Array(18).fill("copperhead_check"),
      "copperhead_sync",
      "copperhead_sync",
    ]);

    const before = { tree: fingerprint(repo), head: await head(repo) };
    for (const [name, args] of calls) {
      const result = await call(conn, name, args);
      expect({ name, args, isError: result.isError ?? false }).toEqual({ name, args, isError: false });
      expect({ name, args, tree: fingerprint(repo) }).toEqual({ name, args, tree: before.tree });
    }
    expect(await head(repo)).toBe(before.head);
    expect(await gitStatus(repo)).toBe("");
    expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
    await conn.close();
  }, 240_000);
});

/** copperhead_check's inputs that choose which findings its answer lists. */
const SELECTION_INPUTS = ["only_new", "check", "rule", "severity", "limit", "offset"];

describe("copperhead_check", () => {
  test("structuredContent deep-equals the summary of runCheck and the text block is its JSON, for every flag", async () => {
    const repo = await copyRepo(template);
    // A design with a finding, so the report has something in it.
    const sch = join(repo, "usb-led.kicad_sch");
    writeFileSync(sch, readFileSync(sch, "utf8").replace('(property "Value" "1k"', '(property "Value" "680"'));
    const conn = await connect(repo);
    for (const args of [{}, { fab: true }, { strict: true }, { fab: true, strict: true }, { baseline: "HEAD" }]) {
      const result = await call(conn, "copperhead_check", args);
      const report = await runCheck({ repo, ...args });
      const expected = summariseCheck(report);
      expect(result.structuredContent).toEqual(JSON.parse(JSON.stringify(expected)));
      expect(textOf(result)).toBe(JSON.stringify(expected, null, 2));
      // usb-led's report is small: the summary lists every finding.
      expect(expected.findings.map((f) => f.key)).toEqual(report.checks.flatMap((c) => c.findings.map((f) => f.key)));
      expect(result.isError ?? false).toBe(false);
      // The relay block says the verdict and names each family that did not pass, with its summary.
      const relay = relayOf(result);
      expect(relay).toStartWith(
        args.baseline ? "Check against HEAD: " : `Check ${expected.ok ? "passed" : "failed"}: `,
      );
      for (const c of expected.checks.filter((c) => c.status === "fail" || c.status === "warn"))
        expect(relay).toContain(`${c.id} ${c.summary}`);
    }
    await conn.close();
  }, 120_000);
});

describe("copperhead_check baseline", () => {
  test("a ref marks each finding against that state; what is not a ref is refused before anything runs", async () => {
    const repo = await copyRepo(template);
    const sch = join(repo, "usb-led.kicad_sch");
    writeFileSync(sch, readFileSync(sch, "utf8").replace('(property "Value" "1k"', '(property "Value" "680"'));
    const conn = await connect(repo);
    const judged = (await call(conn, "copperhead_check", { baseline: "HEAD" }))
      .structuredContent as unknown as CheckSummary;
    expect(judged.baseline?.ref).toBe("HEAD");
    expect(judged.baseline!.counts.new).toBeGreaterThan(0);
    expect(judged.findings.length).toBe(judged.baseline!.counts.new);
    expect(judged.findings.every((f) => f.baselineState === "new")).toBe(true);
    const onlyNew = (await call(conn, "copperhead_check", { baseline: "HEAD", only_new: true }))
      .structuredContent as unknown as CheckSummary;
    expect(onlyNew.findings).toEqual(judged.findings);
    expect(onlyNew.page).toMatchObject({ mode: "filter", selected: judged.baseline!.counts.new });
    // only_new without a baseline is refused before anything runs.
    const alone = await call(conn, "copperhead_check", { only_new: true });
    expect(alone.isError).toBe(true);
    expect(errorOf(alone).code).toBe("usage");
    for (const baseline of ["--upload-pack=x", "", "two words"]) {
      const refused = await call(conn, "copperhead_check", { baseline });
      expect(refused.isError).toBe(true);
    }
    const unknown = await call(conn, "copperhead_check", { baseline: "no-such-branch" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("not_found");
    await conn.close();
  }, 120_000);
});

describe("copperhead_do", () => {
  test(
    "AUTO approval, progress with a token, the run summary, a commit",
    async () => {
      const repo = await copyRepo(template);
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
      const parent = await head(repo);
      const conn = await connect(repo);
      const progress: Progress[] = [];
      const result = await call(conn, "copperhead_do", { request: ADD_CAP_REQUEST }, { progress });
      const summary = ok<
        DoResult & { schema: string; request: string; dryRun: boolean; proposal: { path: string; title: string } }
      >(result);
      await conn.close();
      expect(relayOf(result)).toBe(
        `Committed ${summary.commit!.slice(0, 7)}: ${summary.proposal.title}; ERC/DRC: no new errors; layout: nothing pending.`,
      );

      expect(summary.schema).toBe("copperhead.do/1");
      expect(summary.status).toBe("committed");
      expect(summary.approval).toBe("auto");
      expect(summary.dryRun).toBe(false);
      expect(summary.request).toBe(ADD_CAP_REQUEST);
      expect(summary.commit).toBe(await head(repo));
      expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
      expect(await gitStatus(repo)).toBe("");
      expect(summary.filesTouched).toContain("regulator.kicad_sch");
      expect(summary.filesTouched).toContain(summary.proposal.path);
      expect(summary.verification.ok).toBe(true);
      expect(existsSync(join(repo, summary.transcriptPath))).toBe(true);
      expect(existsSync(join(repo, summary.summaryPath))).toBe(true);
      expect(await git(repo, "log", "-1", "--format=%(trailers:key=Copperhead-Approval,valueonly)")).toBe("auto\n\n");

      // Progress: strictly increasing, every message a sentence about phase, turn, tool or outcome.
      expect(progress.length).toBeGreaterThan(10);
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
      const messages = progress.map((p) => p.message ?? "");
      for (const m of messages)
        expect(m).toMatch(
          /^(preflight|baseline|propose|approve|edit|verify|commit|rollback): |^model turn \d+\/\d+$|^tool (error )?[a-z_]+: |^verification |^committed [0-9a-f]{12}$/,
        );
      expect(messages[0]).toStartWith(`preflight: run ${summary.runId}`);
      expect(messages).toContain("baseline: checking the design before any change (alongside the model)");
      expect(messages).toContain("model turn 1/40");
      expect(messages).toContain("tool add_component: ok");
      expect(messages).toContain("verification passed");
      expect(messages.at(-1)).toBe(`committed ${summary.commit!.slice(0, 12)}`);
      // Every notification precedes the response that ends the request.
      const responseAt = conn.sent.findIndex(
        (m) =>
          "result" in m &&
          (m.result as { structuredContent?: { runId?: string } }).structuredContent?.runId === summary.runId,
      );
      expect(conn.sent.findLastIndex((m) => "method" in m && m.method === "notifications/progress")).toBeLessThan(
        responseAt,
      );
      // Intermediate steps are progress, never tool interactions: the host saw one response.
      expect(conn.sent.filter((m) => "id" in m && !("method" in m)).length).toBe(3); // initialize, tools/list, tools/call
    },
    LONG.timeout,
  );

  test(
    "no progressToken, no progress notifications; a dry run is proposed and leaves the tree as it was",
    async () => {
      const repo = await copyRepo(template);
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
      const before = { tree: fingerprint(repo), head: await head(repo) };
      const conn = await connect(repo);
      const summary = ok<DoResult>(await call(conn, "copperhead_do", { request: ADD_CAP_REQUEST, dry_run: true }));
      await conn.close();
      expect(summary.status).toBe("proposed");
      expect(progressSent(conn.sent)).toEqual([]);
      expect(fingerprint(repo)).toEqual(before.tree);
      expect(await head(repo)).toBe(before.head);
    },
    LONG.timeout,
  );

  test(
    "a rollback is a successful call with status rolled_back, and the tree is byte-identical",
    async () => {
      const repo = await copyRepo(template);
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("erc-never-repaired") }));
      const before = { tree: fingerprint(repo), head: await head(repo) };
      const conn = await connect(repo);
      const progress: Progress[] = [];
      const result = await call(
        conn,
        "copperhead_do",
        { request: "Add a 10k pull-down resistor R4 to GND" },
        { progress },
      );
      await conn.close();
      expect(result.isError).toBeFalsy();
      const summary = ok<DoResult>(result);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("verification_failed");
      expect(summary.commit).toBeUndefined();
      expect(summary.verification.ok).toBe(false);
      expect(summary.verification.newFindings.length).toBeGreaterThan(0);
      expect(summary.filesTouched.length).toBeGreaterThan(0);
      expect(fingerprint(repo)).toEqual(before.tree);
      expect(await head(repo)).toBe(before.head);
      expect(await gitStatus(repo)).toBe("");
      const messages = progress.map((p) => p.message);
      expect(messages).toContain("repair cycle 1/3");
      expect(messages.at(-1)).toBe("rolled back: verification_failed");
    },
    LONG.timeout,
  );
});

describe("copperhead_do needs input", () => {
  test("the model asks: refused / needs_input, the question in the summary and the relay block, which tells the host to ask and call again; nothing written", async () => {
    const repo = await copyRepo(template);
    restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("ask-which-led") }));
    const before = { tree: fingerprint(repo), head: await head(repo) };
    const conn = await connect(repo);
    const result = await call(conn, "copperhead_do", { request: "Make LED1 red" });
    await conn.close();
    const summary = ok<Omit<DoResult, "verification"> & { detail: string; verification: { ok: boolean | null } }>(
      result,
    );
    expect([summary.status, summary.reason, summary.verification.ok, summary.filesTouched]).toEqual([
      "refused",
      "needs_input",
      null,
      [],
    ]);
    expect(summary.detail).toStartWith("There is no LED1 on this board");
    const relay = relayOf(result);
    expect(relay).toContain(summary.detail);
    expect(relay).toContain("Ask your user, then call copperhead_do again with the request and their answer.");
    expect(fingerprint(repo)).toEqual(before.tree);
    expect(await head(repo)).toBe(before.head);
    expect(existsSync(join(repo, ".copperhead/runs", summary.runId, "journal.json"))).toBe(false);
    expect(readFileSync(join(repo, summary.summaryPath), "utf8")).toContain("- Question: There is no LED1");
    expect(readFileSync(join(repo, summary.summaryPath), "utf8")).toContain("- Verification: not run");
  }, 120_000);
});

describe("copperhead_sync", () => {
  test("without resolve: the full report, violations flagged, and nothing written", async () => {
    const repo = await copyRepo(template);
    await drift(repo, { violation: true });
    const before = fingerprint(repo);
    const conn = await connect(repo);
    for (const args of [{}, { resolve: false }]) {
      const result = await call(conn, "copperhead_sync", args);
      expect(relayOf(result)).toBe(
        "Out of sync: 2 drift items, 1 requirement violation; some need a person to decide.",
      );
      const report = ok<{
        ok: boolean;
        drift: Array<{ kind: string; key: string }>;
        violations: Array<{ kind: string; key: string; resolution: string }>;
        needsHuman: boolean;
      }>(result);
      expect(report.ok).toBe(false);
      expect(report.drift.map((d) => d.kind).sort()).toEqual(["bom", "stale-ref"]);
      expect(report.violations.map((v) => [v.kind, v.resolution])).toEqual([["requirement", "human"]]);
      expect(report.violations[0]!.key).toContain("REQ-LED-1");
      expect(report.needsHuman).toBe(true);
      expect("resolution" in report).toBe(false);
    }
    await conn.close();
    expect(fingerprint(repo)).toEqual(before);
    expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
  }, 120_000);

  test(
    "with resolve: the gated resolve phase commits the drift fix; the violation is flagged, never resolved",
    async () => {
      const repo = await copyRepo(template);
      await drift(repo, { violation: true });
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("sync-respects-requirements") }));
      const spec = readFileSync(join(repo, "docs/SPEC.md"), "utf8");
      const sch = readFileSync(join(repo, "usb-led.kicad_sch"), "utf8");
      const parent = await head(repo);
      const conn = await connect(repo);
      const progress: Progress[] = [];
      const result = ok<{
        ok: boolean;
        drift: unknown[];
        violations: Array<{ key: string }>;
        needsHuman: boolean;
        resolution: DoResult;
      }>(await call(conn, "copperhead_sync", { resolve: true }, { progress }));
      await conn.close();
      expect(result.resolution.status).toBe("committed");
      expect(result.resolution.approval).toBe("auto");
      expect(result.resolution.commit).toBe(await head(repo));
      expect((await git(repo, "rev-parse", "HEAD~1")).trim()).toBe(parent);
      expect(result.drift).toEqual([]);
      expect(result.violations.map((v) => v.key.includes("REQ-LED-1"))).toEqual([true]);
      expect(result.needsHuman).toBe(true);
      expect(result.ok).toBe(false);
      expect(readFileSync(join(repo, "docs/NOTES.md"), "utf8")).toContain("set by `R3`");
      expect(readFileSync(join(repo, "docs/BOM.md"), "utf8")).toContain("| R3 | 1k |");
      // The requirement and the design it is about are untouched.
      expect(readFileSync(join(repo, "docs/SPEC.md"), "utf8")).toBe(spec);
      expect(readFileSync(join(repo, "usb-led.kicad_sch"), "utf8")).toBe(sch);
      expect(progress.map((p) => p.message)).toContain("edit: the model resolves what code could not");
      expect(await gitStatus(repo)).toBe("");
    },
    LONG.timeout,
  );
});

describe("copperhead_init", () => {
  test("works with no key; a hand-edited BOM region is refused, and force regenerates it", async () => {
    const repo = await copyRepo(template);
    const conn = await connect(repo);
    type Init = { schema: string; project: string; files: Array<{ path: string; action: string }> };
    const actions = (r: Init) => Object.fromEntries(r.files.map((f) => [f.path, f.action]));

    const first = await call(conn, "copperhead_init");
    expect(relayOf(first)).toStartWith("Set up usb-led.kicad_pro: unchanged ");
    const again = ok<Init>(first);
    expect(again.schema).toBe("copperhead.init/1");
    expect(again.project).toBe("usb-led.kicad_pro");
    expect(actions(again)["docs/BOM.md"]).toBe("unchanged");

    const bom = join(repo, "docs/BOM.md");
    const original = readFileSync(bom, "utf8");
    const handEdited = original.replace("| R3 | 1k |", "| R3 | 2k2 |");
    writeFileSync(bom, handEdited);
    expect(actions(ok<Init>(await call(conn, "copperhead_init", { force: false })))["docs/BOM.md"]).toBe("refused");
    expect(readFileSync(bom, "utf8")).toBe(handEdited);
    expect(actions(ok<Init>(await call(conn, "copperhead_init", { force: true })))["docs/BOM.md"]).toBe("updated");
    expect(readFileSync(bom, "utf8")).toBe(original);
    await conn.close();
  }, 120_000);
});

describe("keys", () => {
  test("without any key: check and init work; do and sync resolve return missing_api_key and start nothing", async () => {
    const repo = await copyRepo(template);
    await drift(repo);
    const before = fingerprint(repo);
    const conn = await connect(repo);
    expect(ok(await call(conn, "copperhead_check")).schema).toBe("copperhead.check-summary/1");
    expect(ok(await call(conn, "copperhead_init")).schema).toBe("copperhead.init/1");
    const afterInit = fingerprint(repo);

    for (const [name, args] of [
      ["copperhead_do", { request: ADD_CAP_REQUEST }],
      ["copperhead_do", { request: ADD_CAP_REQUEST, dry_run: true }],
      ["copperhead_sync", { resolve: true }],
    ] as const) {
      const result = await call(conn, name, args);
      const error = errorOf(result);
      expect(relayOf(result)).toStartWith(`copperhead could not do it (${error.code}): `);
      // The message, then what to do on a line of its own, in MCP's terms: no --model there.
      expect(relayOf(result)).toContain(`|claude-code|codex. To fix: ${error.fix}`);
      expect(error.fix).not.toContain("--model");
      expect(error.fix).toContain("COPPERHEAD_MODEL in the copperhead MCP server's environment");
      expect(error.code).toBe("missing_api_key");
      for (const v of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPPERHEAD_BASE_URL"])
        expect(error.message).toContain(v);
      expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
      expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
      expect(fingerprint(repo)).toEqual(afterInit);
    }
    await conn.close();
    // init with hooks installs the pre-commit hook (inside .git); nothing in the tree moved.
    expect(afterInit).toEqual(before);
  }, 120_000);

  test(
    "a canary key in the environment appears in no result, progress message or run file",
    async () => {
      const KEY = "sk-ant-canary-0123456789abcdefABCDEF";
      const TOKEN = "ctt-canary-5f1e2d3c4b5a69788796";
      const leaks = (text: string) => [KEY, TOKEN, "sk-ant-canary", "ctt-canary"].filter((s) => text.includes(s));
      const repo = await copyRepo(template);
      restoreEnv = chain(
        restoreEnv,
        setEnv({ ANTHROPIC_API_KEY: KEY, COPPERHEAD_TEST_TOKEN: TOKEN, COPPERHEAD_MODEL: replayModel("canary-echo") }),
      );
      const conn = await connect(repo);
      const progress: Progress[] = [];
      const summary = ok<DoResult>(await call(conn, "copperhead_do", { request: ADD_CAP_REQUEST }, { progress }));
      const check = await call(conn, "copperhead_check");
      await conn.close();
      expect(summary.status).toBe("committed");
      expect(progress.length).toBeGreaterThan(5);
      // The model echoed the key into a tool call whose error quotes it back: that progress
      // message exists, redacted.
      expect(progress.some((p) => p.message?.includes("[REDACTED]"))).toBe(true);
      expect(leaks(JSON.stringify(progress))).toEqual([]);
      expect(leaks(JSON.stringify(summary))).toEqual([]);
      expect(leaks(JSON.stringify(check))).toEqual([]);
      // Everything the server put on the wire.
      expect(leaks(JSON.stringify(conn.sent))).toEqual([]);
      const runDirFiles: string[] = [];
      const walk = (dir: string): void => {
        for (const e of readdirSync(dir, { withFileTypes: true }))
          (e.isDirectory() ? walk : (p: string) => runDirFiles.push(p))(join(dir, e.name));
      };
      walk(join(repo, ".copperhead/runs"));
      for (const file of runDirFiles)
        expect({ file, leaks: leaks(readFileSync(file, "utf8")) }).toEqual({ file, leaks: [] });
      expect(readFileSync(join(repo, summary.transcriptPath), "utf8")).toContain("[REDACTED]");
      expect(leaks(await git(repo, "log", "-p", "--all"))).toEqual([]);
    },
    LONG.timeout,
  );
});

describe("serialisation", () => {
  test(
    "two concurrent copperhead_do calls on one server run one after the other: no overlap, two commits",
    async () => {
      const repo = await copyRepo(template);
      const parent = await head(repo);
      const conn = await connect(repo);
      const first: Progress[] = [];
      const second: Progress[] = [];
      // The model is resolved from the environment when a call arrives, so each call gets its
      // own session by the variable being set before that call is sent.
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
      const a = call(conn, "copperhead_do", { request: ADD_CAP_REQUEST }, { progress: first });
      while (first.length === 0) await Bun.sleep(5);
      process.env.COPPERHEAD_MODEL = replayModel("rename-led-net");
      const b = call(conn, "copperhead_do", { request: "Rename the net LED_A to LED_DRIVE" }, { progress: second });
      const [ra, rb] = [ok<DoResult>(await a), ok<DoResult>(await b)];
      await conn.close();

      expect([ra.status, rb.status]).toEqual(["committed", "committed"]);
      expect((await git(repo, "rev-list", `${parent}..HEAD`)).trim().split("\n")).toEqual([rb.commit!, ra.commit!]);
      expect(await gitStatus(repo)).toBe("");

      // On the wire: the second run's first progress (sent under the repo lock) comes after the
      // first run's last one ("committed …", sent just before it released the lock).
      const progressIndexes = (token: unknown) =>
        conn.sent.flatMap((m, i) =>
          "method" in m &&
          m.method === "notifications/progress" &&
          (m.params as { progressToken: unknown }).progressToken === token
            ? [i]
            : [],
        );
      const tokens = [...new Set(progressSent(conn.sent).map((p) => p.progressToken))];
      expect(tokens.length).toBe(2);
      expect(first.at(-1)!.message).toBe(`committed ${ra.commit!.slice(0, 12)}`);
      expect(second[0]!.message).toStartWith(`preflight: run ${rb.runId}`);
      expect(progressIndexes(tokens[1])[0]!).toBeGreaterThan(progressIndexes(tokens[0]).at(-1)!);

      // On disk: the first run's transcript ended before the second run's journal began.
      const journalStart = (s: DoResult) =>
        Date.parse(JSON.parse(readFileSync(join(repo, `.copperhead/runs/${s.runId}/journal.json`), "utf8")).startedAt);
      const transcriptEnd = (s: DoResult) => statSync(join(repo, s.transcriptPath)).mtimeMs;
      expect(transcriptEnd(ra)).toBeLessThanOrEqual(journalStart(rb));
      expect(transcript(repo, ra).at(-1)!.type).toBe("end");
      expect(transcript(repo, rb)[0]!.type).toBe("phase");
    },
    LONG.timeout,
  );

  test(
    "a mutation held by another process is a typed busy error, for do, init and sync resolve",
    async () => {
      const repo = await copyRepo(template);
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
      const lockModule = resolve(import.meta.dir, "../../src/repo/lock.ts");
      const holder = Bun.spawn(
        [
          "bun",
          "-e",
          `const { withRepoLock } = await import(${JSON.stringify(lockModule)}); await withRepoLock(${JSON.stringify(repo)}, async () => { console.log("held"); await new Promise(() => {}); });`,
        ],
        { stdout: "pipe", stderr: "inherit" },
      );
      try {
        const reader = holder.stdout.getReader();
        const { value } = await reader.read();
        expect(new TextDecoder().decode(value)).toBe("held\n");
        const before = fingerprint(repo);
        const conn = await connect(repo);
        await drift(repo);
        const drifted = fingerprint(repo);
        for (const [name, args] of [
          ["copperhead_do", { request: ADD_CAP_REQUEST }],
          ["copperhead_sync", { resolve: true }],
          ["copperhead_init", { force: true }],
        ] as const) {
          const error = errorOf(await call(conn, name, args));
          expect({ name, code: error.code, pid: error.pid }).toEqual({ name, code: "busy", pid: holder.pid });
          expect(fingerprint(repo)).toEqual(drifted);
        }
        // check does not take the lock.
        expect(ok(await call(conn, "copperhead_check")).schema).toBe("copperhead.check-summary/1");
        await conn.close();
        expect(before).not.toEqual(drifted);
      } finally {
        holder.kill();
        await holder.exited;
      }
    },
    LONG.timeout,
  );

  test(
    "checks run while a mutation is in flight, in parallel; init queues behind it; a disconnect mid-run still rolls back",
    async () => {
      const repo = await copyRepo(template);
      const model = serveScriptedModel(sessionTurns("add-decoupling-cap").slice(0, 5));
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: "compat:test", COPPERHEAD_BASE_URL: model.baseUrl }));
      try {
        const before = { tree: fingerprint(repo), head: await head(repo) };
        const conn = await connect(repo);
        const run = call(conn, "copperhead_do", { request: ADD_CAP_REQUEST }).then(
          (r) => ({ r }),
          (e: unknown) => ({ e }),
        );
        await model.held;
        // Parked mid-edit, holding the repo: checks are not queued behind it.
        expect(fingerprint(repo)).not.toEqual(before.tree);
        // init is a mutation: it queues behind the run (it would install the pre-commit hook).
        const hook = join(repo, ".git/hooks/pre-commit");
        const init = call(conn, "copperhead_init").catch(() => undefined);
        const [c1, c2] = await Promise.all([call(conn, "copperhead_check"), call(conn, "copperhead_check")]);
        expect(ok(c1).schema).toBe("copperhead.check-summary/1");
        // The same findings (KiCad may name a different nearest track in a message, so by key).
        const keys = (r: CallToolResult) =>
          (r.structuredContent as unknown as CheckSummary).findings.map((f) => f.key).sort();
        expect(keys(c2)).toEqual(keys(c1));
        const settled = { run: false, init: false };
        void run.then(() => (settled.run = true));
        void init.then(() => (settled.init = true));
        await Bun.sleep(50);
        expect(settled).toEqual({ run: false, init: false });
        expect(existsSync(hook)).toBe(false);

        // The host goes away mid-run: the run stops at its next step and rolls back.
        await conn.client.close();
        await conn.handle.idle();
        expect("e" in (await run)).toBe(true);
        // The queued init ran once the run had rolled back.
        expect(existsSync(hook)).toBe(true);
        expect(fingerprint(repo)).toEqual(before.tree);
        expect(await head(repo)).toBe(before.head);
        expect(await gitStatus(repo)).toBe("");
        const runs = readdirSync(join(repo, ".copperhead/runs"));
        expect(runs.length).toBe(1);
        const end = transcript(repo, { transcriptPath: `.copperhead/runs/${runs[0]}/transcript.jsonl` } as DoResult).at(
          -1,
        )!;
        expect([end.type, end.status, end.reason]).toEqual(["end", "rolled_back", "cancelled"]);
      } finally {
        await model.stop();
      }
    },
    LONG.timeout,
  );
});

describe("cancellation", () => {
  test(
    "a cancelled do rolls back byte for byte; a later check sees a consistent tree and the server keeps serving",
    async () => {
      const repo = await copyRepo(template);
      const model = serveScriptedModel(sessionTurns("add-decoupling-cap").slice(0, 5));
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: "compat:test", COPPERHEAD_BASE_URL: model.baseUrl }));
      try {
        const before = { tree: fingerprint(repo), head: await head(repo) };
        const baseline = await runCheck({ repo });
        const conn = await connect(repo);
        const controller = new AbortController();
        const progress: Progress[] = [];
        const run = call(conn, "copperhead_do", { request: ADD_CAP_REQUEST }, { progress, signal: controller.signal });
        await model.held;
        expect(fingerprint(repo)).not.toEqual(before.tree);
        controller.abort("the host gave up");
        await expect(run).rejects.toThrow();
        await conn.handle.idle();

        expect(fingerprint(repo)).toEqual(before.tree);
        expect(await head(repo)).toBe(before.head);
        expect(await gitStatus(repo)).toBe("");
        expect(existsSync(join(repo, ".copperhead/lock"))).toBe(false);
        const runs = readdirSync(join(repo, ".copperhead/runs"));
        const events = transcript(repo, { transcriptPath: `.copperhead/runs/${runs[0]}/transcript.jsonl` } as DoResult);
        expect(events.some((e) => e.type === "rollback")).toBe(true);
        expect([events.at(-1)!.status, events.at(-1)!.reason]).toEqual(["rolled_back", "cancelled"]);

        const check = ok<{ ok: boolean }>(await call(conn, "copperhead_check"));
        expect(check).toEqual(JSON.parse(JSON.stringify(summariseCheck(baseline))));
        expect(check.ok).toBe(true);
        await conn.close();
      } finally {
        await model.stop();
      }
    },
    LONG.timeout,
  );
});

describe("errors", () => {
  test(
    "bad input, an unknown tool, a repo that is not a KiCad project and a missing kicad-cli are typed errors; the server keeps serving",
    async () => {
      const repo = await copyRepo(template);
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
      const before = fingerprint(repo);
      const conn = await connect(repo);
      const stillServes = async () => expect(ok(await call(conn, "copperhead_sync")).schema).toBe("copperhead.sync/1");

      const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
        ["copperhead_check", { fab: "yes" }, "usage", /fab/],
        ["copperhead_check", { strict: 1 }, "usage", /strict/],
        ["copperhead_check", { api_key: "sk-ant-whatever-0123456789abcdef" }, "usage", /api_key/],
        ["copperhead_sync", { resolve: "true" }, "usage", /resolve/],
        ["copperhead_init", { force: null }, "usage", /force/],
        ["copperhead_do", {}, "usage", /request/],
        ["copperhead_do", { request: 42 }, "usage", /request/],
        ["copperhead_do", { request: "" }, "usage", /request/],
        ["copperhead_do", { request: "   \n\t " }, "usage", /request/],
        ["copperhead_do", { request: ADD_CAP_REQUEST, dry_run: "no" }, "usage", /dry_run/],
        ["copperhead_do", { request: ADD_CAP_REQUEST, model: "anthropic:x" }, "usage", /model/],
        ["copperhead_do", { request: "x".repeat(MAX_REQUEST_BYTES + 1) }, "usage", /request/],
        // Under the character limit but over 16 KB of UTF-8.
        ["copperhead_do", { request: "é".repeat(MAX_REQUEST_BYTES / 2 + 1) }, "input_too_large", /16384/],
        ["copperhead_write_file", { path: "x", content: "y" }, "usage", /Unknown tool "copperhead_write_file"/],
        ["kicad_cli", {}, "usage", /Unknown tool/],
      ];
      for (const [name, args, code, message] of cases) {
        const error = errorOf(await call(conn, name, args));
        expect({ name, args: Object.keys(args), code: error.code }).toEqual({ name, args: Object.keys(args), code });
        expect(error.message).toMatch(message);
        expect(error.fix).toBeString();
        if (error.message.startsWith("Unknown tool"))
          expect(error.fix).toBe("Call one of copperhead_check, copperhead_do, copperhead_sync, copperhead_init.");
        expect(JSON.stringify(error)).not.toContain("sk-ant-whatever");
        await stillServes();
      }
      expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
      expect(fingerprint(repo)).toEqual(before);

      // Protocol misuse is a protocol error, and the server keeps serving after that too.
      await expect(
        conn.client.request({ method: "tools/call", params: {} as never }, CallToolResultSchema),
      ).rejects.toBeInstanceOf(McpError);
      await stillServes();

      // kicad-cli missing: the tools that need it say so, typed.
      restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_KICAD_CLI: "/nonexistent/kicad-cli" }));
      for (const [name, args] of [
        ["copperhead_check", {}],
        ["copperhead_do", { request: ADD_CAP_REQUEST }],
      ] as const) {
        const error = errorOf(await call(conn, name, args));
        expect({ name, code: error.code }).toEqual({ name, code: "kicad_cli_missing" });
        expect(error.message).toContain("/nonexistent/kicad-cli");
      }
      delete process.env.COPPERHEAD_KICAD_CLI;
      expect(existsSync(join(repo, ".copperhead/runs"))).toBe(false);
      await stillServes();
      await conn.close();
    },
    LONG.timeout,
  );

  test("a repo that is not a KiCad project: every tool is a typed error, and the server keeps serving", async () => {
    const repo = await makeRepo({ "README.md": "# not a board\n" });
    restoreEnv = chain(restoreEnv, setEnv({ COPPERHEAD_MODEL: replayModel("add-decoupling-cap") }));
    const before = fingerprint(repo);
    const conn = await connect(repo);
    const codes: string[] = [];
    for (const [name, args] of [
      ["copperhead_check", {}],
      ["copperhead_init", {}],
      ["copperhead_sync", {}],
      ["copperhead_sync", { resolve: true }],
      ["copperhead_do", { request: ADD_CAP_REQUEST }],
    ] as const) {
      const error = errorOf(await call(conn, name, args));
      codes.push(error.code);
      expect(error.fix).toBeString();
    }
    expect(new Set(codes).size).toBe(1);
    expect(codes[0]).toBe("project_not_found");
    expect((await conn.client.listTools()).tools).toHaveLength(4);
    await conn.close();
    expect(fingerprint(repo)).toEqual(before);
  }, 120_000);
});

function chain(a: () => void, b: () => void): () => void {
  return () => {
    b();
    a();
  };
}
