/**
 * Subcommand dispatch goes through citty's own resolution: global options may come before the
 * subcommand, `--help` shows the usage of the command the line names, and exit codes reach the
 * shell with stdout carrying data only. Each case runs the real entry point in its own process.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");

async function copperhead(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr };
}

afterAll(cleanupTempDirs);

describe("copperhead's command line", () => {
  test("--help after a subcommand shows that subcommand's usage, global options before it included", async () => {
    const help = await copperhead(["--repo", "../board", "check", "--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("USAGE copperhead check [OPTIONS]");
    expect(help.stdout).toContain("--fab");
    expect(help.stderr).toBe("");
    // The same as without the global option in front.
    expect((await copperhead(["check", "--help"])).stdout).toBe(help.stdout);
  });

  test("nested subcommands are named in full, and a missing required argument does not hide the usage", async () => {
    const sync = await copperhead(["--json", "board", "sync", "--help"]);
    expect(sync.exitCode).toBe(0);
    expect(sync.stdout).toContain("USAGE copperhead board sync [OPTIONS]");
    const doHelp = await copperhead(["do", "--help"]);
    expect(doHelp.exitCode).toBe(0);
    expect(doHelp.stdout).toContain("USAGE copperhead do [OPTIONS] <REQUEST>");
    const root = await copperhead([]);
    expect(root.exitCode).toBe(0);
    expect(root.stdout).toContain("USAGE copperhead [OPTIONS]");
  });

  test("global options given before the subcommand reach it; the subcommand's own win", async () => {
    const repo = await copyFixture("usb-led");
    const before = await copperhead(["--json", "--repo", repo, "netlist"]);
    expect(before.exitCode).toBe(0);
    expect(JSON.parse(before.stdout).schema).toBe("copperhead.netlist/1");
    const after = await copperhead(["netlist", "--json", "--repo", repo]);
    expect(after.stdout).toBe(before.stdout);
    const nested = await copperhead(["board", "--repo", repo, "sync", "--dry-run", "--json"]);
    expect(nested.exitCode).toBe(0);
    expect(JSON.parse(nested.stdout)).toMatchObject({ board: "usb-led.kicad_pcb", dryRun: true, written: false });
    const overridden = await copperhead(["--repo", "/nonexistent/board", "netlist", "--repo", repo, "--json"]);
    expect(overridden.stdout).toBe(before.stdout);
  });

  test("errors exit 3 with nothing on stdout, and name what went wrong", async () => {
    const missing = await copperhead(["--repo", "/nonexistent/board", "netlist"]);
    expect(missing.exitCode).toBe(3);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("Repository folder not found: /nonexistent/board");

    const unknown = await copperhead(["frobnicate"]);
    expect(unknown.exitCode).toBe(3);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("Unknown command frobnicate");
    expect(unknown.stderr).toContain("USAGE copperhead [OPTIONS]");

    const noSub = await copperhead(["board"]);
    expect(noSub.exitCode).toBe(3);
    expect(noSub.stdout).toBe("");
    expect(noSub.stderr).toContain("USAGE copperhead board [OPTIONS] sync");

    // With --json the typed error is the data on stdout.
    const json = await copperhead(["--json", "--repo", "/nonexistent/board", "netlist"]);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout).error.code).toBe("not_found");
  });
});

describe("strict options", () => {
  test("an unknown option is a usage error naming the closest known one, for every command and subcommand", async () => {
    for (const [args, option, closest] of [
      [["check", "--stirct"], "--stirct", "--strict"],
      [["do", "--dryrun", "change R1"], "--dryrun", "--dry-run"],
      [["board", "sync", "--feilds"], "--feilds", "--fields"],
      [["--jsno", "netlist"], "--jsno", "--json"],
      [["mcp-bridge", "--socket", "x"], "--socket", undefined],
      [["netlist", "-x"], "-x", undefined],
    ] as const) {
      const result = await copperhead([...args, "--repo", "/nonexistent/board"]);
      expect({ args, exitCode: result.exitCode, stdout: result.stdout }).toEqual({ args, exitCode: 3, stdout: "" });
      expect(result.stderr).toContain(`Unknown option ${option} for \`copperhead`);
      if (closest) expect(result.stderr).toContain(`Did you mean ${closest}?`);
    }
  });

  test("a boolean takes true or false, or --no-; a positional too many is refused; known spellings pass", async () => {
    const malformed = await copperhead(["check", "--strict=no", "--json", "--repo", "/nonexistent/board"]);
    expect(malformed.exitCode).toBe(3);
    expect(JSON.parse(malformed.stdout).error).toMatchObject({ code: "usage", option: "--strict" });
    const extra = await copperhead(["check", "staged", "--repo", "/nonexistent/board"]);
    expect(extra.exitCode).toBe(3);
    expect(extra.stderr).toContain('Unexpected argument "staged"');
    const noHooks = await copperhead([
      "board",
      "--json",
      "sync",
      "--no-fields",
      "--dry-run=false",
      "--repo",
      "/nonexistent/board",
    ]);
    // Past option checking: the missing repo is what stops it.
    expect(JSON.parse(noHooks.stdout).error.code).toBe("not_found");
    const noString = await copperhead(["netlist", "--no-repo"]);
    expect(noString.stderr).toContain("Unknown option --no-repo");
  });
});
