/**
 * A KiCad project in a subfolder of its repository (OLIMEX's RVPC, a KiCad 7 board kept in
 * `HARDWARE/RVPC_Rev.B/`), every command run from that folder through the binary: one
 * repository, found the way git finds it — the root's `.copperhead/`, and snapshots of a commit
 * taken from the root, so nothing reads as new when nothing changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { BINARY, runBinary } from "./binary.ts";
import { openMcpWire } from "./mcp-wire.ts";

afterAll(cleanupTempDirs);

const SUBFOLDER = "HARDWARE/RVPC_Rev.B";
const PROJECT = `${SUBFOLDER}/RVPC_Rev_B.kicad_pro`;

/** git with the built binary first on PATH, as a user who put copperhead there. */
function git(cwd: string, ...args: string[]): { code: number; out: string } {
  const r = Bun.spawnSync(["git", ...args], {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      PATH: `${join(BINARY, "..")}:${process.env.PATH}`,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });
  return { code: r.exitCode ?? 1, out: r.stdout.toString() + r.stderr.toString() };
}

function gitOk(cwd: string, ...args: string[]): string {
  const r = git(cwd, ...args);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.out}`);
  return r.out;
}

let root = "";
let folder = "";
const run = (args: string[], cwd = folder) => runBinary(args, { cwd, env: ISOLATED_ENV });

beforeAll(async () => {
  await requireKicadCli();
  const rvpc = corpusProjects().find((p) => p.id === "corpus/rvpc-revb");
  if (!rvpc) throw new Error("corpus/rvpc-revb is missing from the corpus");
  root = (await copyCorpusProject(rvpc)).root;
  folder = join(root, SUBFOLDER);
  gitOk(root, "init", "-q", "-b", "main");
  gitOk(root, "add", "-A");
  gitOk(root, "commit", "-q", "-m", "design");
}, 60_000);

describe("a project in a subfolder of its repository, every command run from that folder", () => {
  test("init sets up the repository's root, points the config at the subfolder's project, and says so", async () => {
    const result = await run(["init", "--json"]);
    expect(result.exitCode).toBe(0);
    const init = JSON.parse(result.stdout);
    expect(init.root).toBe(root);
    expect(init.from).toBe(SUBFOLDER);
    expect(init.project).toBe(PROJECT);
    expect(existsSync(join(root, ".copperhead/config.json"))).toBe(true);
    expect(existsSync(join(root, "docs/BOM.md"))).toBe(true);
    expect(existsSync(join(folder, ".copperhead"))).toBe(false);
    expect(existsSync(join(folder, "docs"))).toBe(false);
    expect(JSON.parse(readFileSync(join(root, ".copperhead/config.json"), "utf8")).project).toBe(PROJECT);
    const text = await run(["init"]);
    expect(text.stdout).toContain(`Set up the repository's root, ${root}, not ${SUBFOLDER}/`);
    // The hook init installed runs at the commit, from the root as git runs hooks, and passes.
    gitOk(root, "add", "-A");
    gitOk(folder, "commit", "-q", "-m", "copperhead init");
  }, 180_000);

  test("doctor finds the root's config and the project", async () => {
    const result = await run(["doctor", "--json"]);
    const items = JSON.parse(result.stdout).items as { id: string; status: string; summary: string }[];
    const config = items.find((i) => i.id === "config")!;
    expect(config.status).toBe("ok");
    expect(config.summary).toContain(".copperhead/config.json is valid");
    expect(config.summary).toContain(root);
    expect(items.find((i) => i.id === "project")!.summary).toStartWith(PROJECT);
  }, 60_000);

  test("check --baseline HEAD with no change reports nothing new, from the folder and with --repo", async () => {
    for (const [args, cwd] of [
      [["check", "--baseline", "HEAD", "--json"], folder],
      [["check", "--repo", SUBFOLDER, "--baseline", "HEAD", "--json"], root],
    ] as const) {
      const result = await run([...args], cwd);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report.project).toBe(PROJECT);
      expect(report.baseline.counts.new).toBe(0);
      expect(report.baseline.counts.unchanged).toBeGreaterThan(0);
      // Drift and requirements ran: the root's config and docs were found.
      for (const id of ["drift", "requirements"])
        expect(report.checks.find((c: { id: string }) => c.id === id).status).not.toBe("skipped");
    }
  }, 180_000);

  test("check --staged judges the staged design against HEAD from the folder", async () => {
    const sch = join(folder, "RVPC_Rev_B.kicad_sch");
    // A change that leaves the design as it was: the file is staged, so the hook's check runs.
    await Bun.write(sch, readFileSync(sch, "utf8") + "\n");
    gitOk(folder, "add", "RVPC_Rev_B.kicad_sch");
    const result = await run(["check", "--staged", "--json"]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).baseline.counts.new).toBe(0);
    gitOk(root, "reset", "-q", "--hard");
  }, 180_000);

  test("diff, netlist and board sync find the project from the folder", async () => {
    const diff = await run(["diff", "--json"]);
    expect(diff.exitCode).toBe(0);
    expect(JSON.parse(diff.stdout).project).toBe(PROJECT);
    const netlist = await run(["netlist", "--json"]);
    expect(netlist.exitCode).toBe(0);
    expect(JSON.parse(netlist.stdout).project).toBe(PROJECT);
    const board = await run(["board", "sync", "--dry-run", "--json"]);
    expect(board.exitCode).toBe(0);
    expect(JSON.parse(board.stdout).board).toBe(`${SUBFOLDER}/RVPC_Rev_B.kicad_pcb`);
  }, 120_000);

  test("an MCP server started in the folder checks against HEAD with nothing new", async () => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...ISOLATED_ENV }))
      if (value !== undefined) env[key] = value;
    const wire = await openMcpWire(folder, env);
    try {
      await wire.send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "copperhead_check", arguments: { baseline: "HEAD" } },
      });
      const response = await wire.response(1, 180_000);
      const report = response.result!.structuredContent as { project: string; baseline: { counts: { new: number } } };
      expect(report.project).toBe(PROJECT);
      expect(report.baseline.counts.new).toBe(0);
    } finally {
      await wire.close();
    }
  }, 200_000);

  test("the hook blocks a resistor value changed in KiCad with the fix named; that fix, run with no model, lets the commit pass", async () => {
    const sch = join(folder, "RVPC_Rev_B.kicad_sch");
    // R1's value, as KiCad's symbol properties dialog saves it.
    const text = readFileSync(sch, "utf8");
    const r1 = text.indexOf('(property "Reference" "R1"');
    const at = text.indexOf('(property "Value" "2k/1/8W"', r1);
    expect(r1).toBeGreaterThan(0);
    await Bun.write(
      sch,
      `${text.slice(0, at)}(property "Value" "4.7k/1/8W"${text.slice(at + '(property "Value" "2k/1/8W"'.length)}`,
    );
    gitOk(folder, "add", "RVPC_Rev_B.kicad_sch");
    const blocked = git(folder, "commit", "-q", "-m", "R1 4.7k");
    expect(blocked.code).not.toBe(0);
    // The text report wraps at 80 columns.
    const said = blocked.out.replace(/\s+/g, " ");
    expect(said).toContain(
      'R1 value is "2k/1/8W" in the BOM but "4.7k/1/8W" in the design; fix: run `copperhead sync --resolve` (no model needed)',
    );
    expect(said).toContain(
      "fix: run `copperhead sync --resolve`: it regenerates the BOM and pinout and updates the board from the schematic, no model needed",
    );

    const resolved = await run(["sync", "--resolve"]);
    expect(resolved.exitCode).toBe(0);
    expect(resolved.stdout).toContain("resolved by code in the working tree:");
    expect(resolved.stdout).toContain(`updated  ${SUBFOLDER}/RVPC_Rev_B.kicad_pcb`);
    expect(resolved.stdout).toContain("updated  docs/BOM.md");
    expect(readFileSync(join(root, "docs/BOM.md"), "utf8")).toContain("| R1 | 4.7k/1/8W |");
    gitOk(folder, "add", "-A", root);
    const commit = git(folder, "commit", "-q", "-m", "R1 4.7k");
    expect(commit.out).toContain("check passed");
    expect(commit.code).toBe(0);
    expect(gitOk(root, "status", "--porcelain")).toBe("");
  }, 240_000);
});
