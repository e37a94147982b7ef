/**
 * install.sh against dist/copperhead packed as a local file:// release: it installs a binary
 * that runs, refuses a tampered archive, and never reaches for sudo. It runs under `sh`
 * (dash on Debian), which keeps it POSIX.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { runBinary } from "./binary.ts";
import { makeLocalRelease, type LocalRelease } from "./local-release.ts";

const INSTALL_SH = resolve(import.meta.dir, "../../install.sh");

afterAll(cleanupTempDirs);

let release: LocalRelease;
let expectedVersion = "";
beforeAll(async () => {
  release = await makeLocalRelease();
  expectedVersion = (await runBinary(["--version"])).stdout.trim();
}, 60_000); // packing the real binary at gzip -9 takes seconds

/**
 * Runs install.sh with a HOME of its own and, first on PATH, a `sudo` that only leaves a
 * trace, so a test can prove the script never called it.
 */
async function install(args: string[], env: Record<string, string> = {}) {
  const home = await makeTempDir();
  const stubs = await makeTempDir();
  const sudoTrace = join(stubs, "sudo-was-called");
  writeFileSync(join(stubs, "sudo"), `#!/bin/sh\ntouch '${sudoTrace}'\nexit 1\n`);
  chmodSync(join(stubs, "sudo"), 0o755);
  const proc = Bun.spawn(["sh", INSTALL_SH, ...args], {
    env: { PATH: `${stubs}:/usr/bin:/bin`, HOME: home, ...env },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr, home, sudoCalled: existsSync(sudoTrace) };
}

function run(binary: string, ...args: string[]): string {
  const result = Bun.spawnSync([binary, ...args], { stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${binary} ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.toString().trim();
}

describe("install.sh", () => {
  test("installs into ~/.local/bin by default and prints the PATH hint and the MCP line", async () => {
    const r = await install(["--release-url", release.url]);
    expect(r.exitCode, r.stderr).toBe(0);
    const installed = join(r.home, ".local/bin/copperhead");
    expect(run(installed, "--version")).toBe(expectedVersion);
    expect(r.stderr).toContain(`installed copperhead ${expectedVersion}`);
    expect(r.stderr).toContain(`export PATH="${join(r.home, ".local/bin")}:$PATH"`);
    expect(r.stderr).toContain(`claude mcp add copperhead -- ${installed} mcp`);
    expect(r.stdout).toBe("");
  }, 30_000);

  test("--prefix installs into PREFIX/bin; on PATH, the MCP line uses the bare command", async () => {
    const prefix = await makeTempDir();
    const r = await install(["--prefix", prefix], { COPPERHEAD_RELEASE_URL: release.url });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(run(join(prefix, "bin/copperhead"), "--version")).toBe(expectedVersion);

    const again = await install(["--release-url", release.url], {
      COPPERHEAD_INSTALL_DIR: join(prefix, "bin"),
      PATH: `${join(prefix, "bin")}:/usr/bin:/bin`,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("not on your PATH");
    expect(again.stderr).toContain("claude mcp add copperhead -- copperhead mcp");
  }, 30_000);

  test("a tampered archive fails the checksum and installs nothing", async () => {
    const tampered = await makeTempDir();
    const bytes = readFileSync(join(release.dir, release.artifact.archive));
    bytes[bytes.length - 100]! ^= 0xff;
    writeFileSync(join(tampered, release.artifact.archive), bytes);
    writeFileSync(join(tampered, "SHA256SUMS"), readFileSync(join(release.dir, "SHA256SUMS")));
    const r = await install(["--release-url", `file://${tampered}`]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`checksum mismatch for ${release.artifact.archive}`);
    expect(existsSync(join(r.home, ".local/bin/copperhead"))).toBe(false);
  }, 30_000);

  test("a release without this platform's archive says so", async () => {
    const other = await makeTempDir();
    writeFileSync(join(other, "SHA256SUMS"), `${"0".repeat(64)}  copperhead-${pkg.version}-plan9-mips.tar.gz\n`);
    const r = await install(["--release-url", `file://${other}`]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("has no archive for");
  });

  test("an install dir it cannot create or write is reported, never retried with sudo", async () => {
    const blocker = join(await makeTempDir(), "a-file");
    writeFileSync(blocker, "");
    const r = await install(["--release-url", release.url, "--prefix", blocker]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain(`${blocker}/bin is not writable`);
    expect(r.sudoCalled).toBe(false);
  }, 30_000);

  test("the default download location is the repository package.json names", () => {
    const script = readFileSync(INSTALL_SH, "utf8");
    expect(script).toContain(`REPO_URL="${pkg.repository.url}"`);
  });
});
