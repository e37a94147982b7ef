import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { runBinary } from "./binary.ts";

describe("compiled binary", () => {
  test("--version prints the package version and git revision", async () => {
    const { exitCode, stdout } = await runBinary(["--version"]);
    expect(exitCode).toBe(0);
    expect(stdout.trim()).toMatch(
      new RegExp(`^${pkg.version.replaceAll(".", "\\.")}\\+([0-9a-f]{12}(\\.dirty)?|nogit)$`),
    );
  });

  test("--help lists the commands on stdout", async () => {
    const { exitCode, stdout } = await runBinary(["--help"]);
    expect(exitCode).toBe(0);
    expect(stdout).toContain("netlist");
    expect(stdout).toContain("--repo");
  });

  test("an unknown command is a usage error: exit 3, nothing on stdout", async () => {
    const { exitCode, stdout, stderr } = await runBinary(["frobnicate"]);
    expect(exitCode).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toContain("Unknown command");
  });

  test("never autoloads bunfig.toml or .env from the folder it runs in", async () => {
    const dir = mkdtempSync(join(tmpdir(), "copperhead-hostile-"));
    try {
      const marker = join(dir, "PWNED");
      writeFileSync(join(dir, "preload.ts"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`);
      writeFileSync(join(dir, "bunfig.toml"), `preload = ["./preload.ts"]\n[run]\npreload = ["./preload.ts"]\n`);
      writeFileSync(join(dir, ".env"), "COPPERHEAD_DEBUG=1\nNODE_OPTIONS=--require ./preload.ts\n");
      const result = await runBinary(["--version"], { cwd: dir });
      expect(result.exitCode).toBe(0);
      const help = await runBinary(["netlist", "--help"], { cwd: dir });
      expect(help.exitCode).toBe(0);
      expect(existsSync(marker)).toBe(false);
      // COPPERHEAD_DEBUG from .env would turn on debug logging; it must not have been read.
      const run = await runBinary(["netlist"], { cwd: dir });
      expect(run.stderr).not.toContain("[debug]");
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
