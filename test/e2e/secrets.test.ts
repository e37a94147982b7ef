/**
 * No secret leaves the compiled binary, wherever a model puts it: with a canary API key and a
 * canary token in the environment, a recorded session (fixtures/sessions/secret-in-keys.json)
 * slips them into object keys of tool arguments, a tool's name, field names and values, a
 * doc path and an extra argument. The design-file calls that hold one fail, the run still
 * commits its clean change, and neither key is in a design file, doc, commit, run record,
 * stdout, stderr or — over MCP — any frame the server writes, progress notifications included.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV } from "../support/repos.ts";
import { runBinaryBounded, templateRepo } from "./binary.ts";
import { openMcpWire } from "./mcp-wire.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const KEY = "sk-ant-canary-0123456789abcdefABCDEF";
const TOKEN = "ctt-canary-5f1e2d3c4b5a69788796";
const SECRETS = { ANTHROPIC_API_KEY: KEY, COPPERHEAD_TEST_TOKEN: TOKEN };
const MODEL = `replay:${join(SESSIONS_DIR, "secret-in-keys.json")}`;
const REQUEST = "add a 100 nF decoupling capacitor on the LDO output";

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

const leaks = (text: string) => [KEY, TOKEN, "sk-ant-canary", "ctt-canary"].filter((s) => text.includes(s));

/** Every file under `dir` (the working tree, the run records), as text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes("/.git/"))
    .map((e) => ({ path: join(e.parentPath, e.name), text: readFileSync(join(e.parentPath, e.name), "latin1") }));
}

/** The tool errors the transcript recorded, by call id. */
function toolErrors(repo: string, transcriptPath: string): Record<string, string> {
  const events = readFileSync(join(repo, transcriptPath), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  return Object.fromEntries(events.filter((e) => e.type === "tool_result" && e.isError).map((e) => [e.id, e.content]));
}

async function expectNoLeakInRepo(repo: string): Promise<void> {
  for (const { path, text } of filesUnder(repo)) expect({ path, leaks: leaks(text) }).toEqual({ path, leaks: [] });
  expect(leaks(await git(repo, "log", "-p", "--all"))).toEqual([]);
}

describe("a model that puts secrets in keys, names and values", () => {
  test("do: the design-file calls holding one fail, the clean change commits, and no secret is written or printed", async () => {
    const repo = await copyRepo(template());
    const result = await runBinaryBounded(["do", REQUEST, "--model", MODEL, "--repo", repo, "--json"], {
      env: { ...ISOLATED_ENV, ...SECRETS },
      timeoutMs: 120_000,
      maxRssBytes: 2 * 1024 * 1024 * 1024,
    });
    expect(result.exitCode).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("committed");
    expect(leaks(result.stdout)).toEqual([]);
    expect(leaks(result.stderr)).toEqual([]);

    const errors = toolErrors(repo, summary.transcriptPath);
    expect(Object.keys(errors).sort()).toEqual(["s10", "s11", "s2", "s3", "s5", "s6"]);
    for (const id of ["s2", "s5", "s6", "s10", "s11"])
      expect(errors[id]).toContain("never writes one into a design file");
    expect(errors.s3).toBe("there is no tool called [REDACTED]");
    // What did go through: C3 with its MPN, on the schematic and the board.
    const regulator = readFileSync(join(repo, "regulator.kicad_sch"), "utf8");
    expect(regulator).toContain('"GRM188R71H104KA93D"');
    expect(regulator).not.toContain("[REDACTED]");
    expect(readFileSync(join(repo, "usb-led.kicad_pcb"), "utf8")).toContain('"C3"');
    await expectNoLeakInRepo(repo);
  }, 150_000);

  test("mcp: no frame the server writes (progress, result, errors) holds a secret", async () => {
    const repo = await copyRepo(template());
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...ISOLATED_ENV, ...SECRETS, COPPERHEAD_MODEL: MODEL }))
      if (v !== undefined) env[k] = v;
    const wire = await openMcpWire(repo, env);
    await wire.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "copperhead_do", arguments: { request: REQUEST }, _meta: { progressToken: "p" } },
    });
    const response = await wire.response(1, 120_000);
    // An unknown tool whose name is a secret, over MCP itself.
    await wire.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: TOKEN, arguments: {} } });
    await wire.response(2);
    const { stderr } = await wire.close();

    expect((response.result?.structuredContent as { status: string }).status).toBe("committed");
    const progress = wire.frames().filter((f) => f.method === "notifications/progress");
    expect(progress.length).toBeGreaterThan(5);
    expect(progress.some((f) => String(f.params?.message).includes("there is no tool called [REDACTED]"))).toBe(true);
    expect(leaks(wire.lines.join("\n"))).toEqual([]);
    expect(leaks(stderr)).toEqual([]);
    await expectNoLeakInRepo(repo);
  }, 150_000);
});

describe("a key holding invisible characters", () => {
  // A line separator, a zero-width space and a BEL: each is spelled out (`\u2028`) or escaped
  // by JSON where a person reads it, and the key must be redacted before either happens.
  const ODD_KEY = "ctt-canary-qz7wvx\u2028kj9mnp\u200bhgf4rt\u0007wq8zyx";
  const PIECES = ["ctt-canary", "qz7wvx", "kj9mnp", "hgf4rt", "wq8zyx"];
  const oddLeaks = (text: string) => PIECES.filter((p) => text.includes(p));
  const env = { ...ISOLATED_ENV, COPPERHEAD_TEST_TOKEN: ODD_KEY };

  test("do: a request that quotes it leaves it out of summary.md, the transcript, stdout, stderr and the repo", async () => {
    const repo = await copyRepo(template());
    const result = await runBinaryBounded(
      [
        "do",
        `${REQUEST} (token ${ODD_KEY})`,
        "--model",
        `replay:${join(SESSIONS_DIR, "add-decoupling-cap.json")}`,
        "--repo",
        repo,
        "--json",
      ],
      {
        env,
        timeoutMs: 120_000,
        maxRssBytes: 2 * 1024 * 1024 * 1024,
      },
    );
    expect(result.exitCode).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.status).toBe("committed");
    const runDir = join(repo, summary.transcriptPath, "..");
    const summaryMd = readFileSync(join(runDir, "summary.md"), "utf8");
    expect(summaryMd).toContain("(token [REDACTED])");
    expect(oddLeaks(summaryMd)).toEqual([]);
    expect(oddLeaks(readFileSync(join(runDir, "transcript.jsonl"), "utf8"))).toEqual([]);
    expect({ stdout: oddLeaks(result.stdout), stderr: oddLeaks(result.stderr) }).toEqual({ stdout: [], stderr: [] });
    for (const { path, text } of filesUnder(repo)) expect({ path, leaks: oddLeaks(text) }).toEqual({ path, leaks: [] });
    expect(oddLeaks(await git(repo, "log", "-p", "--all"))).toEqual([]);
  }, 150_000);

  test("mcp: no frame of a copperhead_do whose request quotes it holds any of it", async () => {
    const repo = await copyRepo(template());
    const wireEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries({
      ...process.env,
      ...env,
      COPPERHEAD_MODEL: `replay:${join(SESSIONS_DIR, "add-decoupling-cap.json")}`,
    }))
      if (v !== undefined) wireEnv[k] = v;
    const wire = await openMcpWire(repo, wireEnv);
    await wire.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "copperhead_do",
        arguments: { request: `${REQUEST} (token ${ODD_KEY})` },
        _meta: { progressToken: "p" },
      },
    });
    const response = await wire.response(1, 120_000);
    const { stderr } = await wire.close();
    expect((response.result?.structuredContent as { status: string }).status).toBe("committed");
    expect({ frames: oddLeaks(wire.lines.join("\n")), stderr: oddLeaks(stderr) }).toEqual({ frames: [], stderr: [] });
  }, 150_000);

  test("an error that quotes it (a --project of that name) leaves it out of the JSON error and the log line", async () => {
    const repo = await copyRepo(template());
    const result = await runBinaryBounded(["check", "--repo", repo, "--project", `${ODD_KEY}.kicad_pro`, "--json"], {
      env,
      timeoutMs: 60_000,
      maxRssBytes: 1024 * 1024 * 1024,
    });
    expect(result.exitCode).toBe(3);
    expect(JSON.parse(result.stdout).error.message).toContain("[REDACTED]");
    expect({ stdout: oddLeaks(result.stdout), stderr: oddLeaks(result.stderr) }).toEqual({ stdout: [], stderr: [] });
  }, 90_000);
});
