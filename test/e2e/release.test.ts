/**
 * The release packaging (scripts/release/): archives are byte-for-byte reproducible and hold
 * one executable entry with pinned metadata, SHA256SUMS verifies with `sha256sum -c`, and the
 * Homebrew formula is generated from the checksums and its MCP smoke test passes against
 * dist/copperhead. The archive tests pack a small stand-in file (compressing the real 100 MiB
 * binary takes seconds per archive; install.test.ts and action.test.ts pack the real one).
 * The full five-target build (`bun run build.ts --release`) is too slow for the suite.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { homebrewFormula, releaseBaseUrl } from "../../scripts/release/homebrew.ts";
import { MCP_SMOKE_TEST_INPUT, MCP_TOOL_NAMES } from "../../scripts/release/mcp-smoke.ts";
import { checksumsText, packageTarget, type ReleaseArtifact } from "../../scripts/release/release.ts";
import { RELEASE_TARGETS } from "../../scripts/release/targets.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { requireBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

const MTIME = 1_700_000_000;
const target = (os: string, arch: string) => RELEASE_TARGETS.find((t) => t.os === os && t.arch === arch)!;

/** A small stand-in executable, not world-writable, so archives record their own mode. */
async function standIn(): Promise<string> {
  const path = join(await makeTempDir(), "built");
  writeFileSync(path, "#!/bin/sh\necho stand-in\n".repeat(1000));
  chmodSync(path, 0o600);
  return path;
}

function sh(cmd: string[], cwd?: string): string {
  const r = Bun.spawnSync(cmd, { cwd, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

describe("release archives", () => {
  test("a .tar.gz is reproducible and holds one executable `copperhead` owned by 0:0 at the pinned time", async () => {
    const [a, b, binary] = [await makeTempDir(), await makeTempDir(), await standIn()];
    const first = packageTarget(binary, target("linux", "x64"), pkg.version, a, MTIME);
    const second = packageTarget(binary, target("linux", "x64"), pkg.version, b, MTIME);
    expect(first.archive).toBe(`copperhead-${pkg.version}-linux-x64.tar.gz`);
    expect(second.sha256).toBe(first.sha256);
    const listing = sh(["tar", "--numeric-owner", "--full-time", "-tvzf", join(a, first.archive)], undefined).trim();
    expect(listing).toMatch(/^-rwxr-xr-x 0\/0 +\d+ 2023-11-14 22:13:20 copperhead$/);
    // The gzip header carries no name and no timestamp (bytes 4-7 are the mtime).
    const gz = await Bun.file(join(a, first.archive)).bytes();
    expect([...gz.subarray(3, 8)]).toEqual([0, 0, 0, 0, 0]);
  });

  test("the Windows .zip is reproducible and holds copperhead.exe with no extra fields", async () => {
    const [a, b, binary] = [await makeTempDir(), await makeTempDir(), await standIn()];
    const first = packageTarget(binary, target("windows", "x64"), pkg.version, a, MTIME);
    const second = packageTarget(binary, target("windows", "x64"), pkg.version, b, MTIME);
    expect(first.archive).toBe(`copperhead-${pkg.version}-windows-x64.zip`);
    expect(second.sha256).toBe(first.sha256);
    const info = sh([
      "python3",
      "-c",
      "import sys,zipfile; [print(i.filename, i.date_time, len(i.extra), oct(i.external_attr >> 16)) for i in zipfile.ZipFile(sys.argv[1]).infolist()]",
      join(a, first.archive),
    ]);
    expect(info.trim()).toBe("copperhead.exe (2023, 11, 14, 22, 13, 20) 0 0o100755");
  });

  test("SHA256SUMS lists archives by name and verifies with sha256sum -c", async () => {
    const [dir, binary] = [await makeTempDir(), await standIn()];
    const artifacts = ["linux-x64", "windows-x64"].map((t) => {
      const [os, arch] = t.split("-") as [string, string];
      return packageTarget(binary, target(os, arch), pkg.version, dir, MTIME);
    });
    const text = checksumsText([...artifacts].reverse());
    expect(text.split("\n")[0]).toEndWith("linux-x64.tar.gz");
    writeFileSync(join(dir, "SHA256SUMS"), text);
    expect(sh(["sha256sum", "-c", "SHA256SUMS"], dir)).toContain(`copperhead-${pkg.version}-windows-x64.zip: OK`);
  });
});

describe("Homebrew formula", () => {
  const artifacts: ReleaseArtifact[] = RELEASE_TARGETS.map((t, i) => ({
    target: t,
    archive: `copperhead-${pkg.version}-${t.os}-${t.arch}.${t.os === "windows" ? "zip" : "tar.gz"}`,
    sha256: String(i).repeat(64),
    binaryBytes: 1,
    archiveBytes: 1,
  }));
  const formula = homebrewFormula(pkg.version, artifacts);

  test("points each macOS and Linux platform at its archive and checksum", () => {
    for (const [block, os] of [
      ["on_macos", "darwin"],
      ["on_linux", "linux"],
    ] as const) {
      const section = formula.slice(formula.indexOf(`${block} do`));
      for (const [arm, arch] of [
        ["on_arm", "arm64"],
        ["on_intel", "x64"],
      ] as const) {
        const a = artifacts.find((x) => x.target.os === os && x.target.arch === arch)!;
        const entry = section.slice(section.indexOf(`${arm} do`));
        expect(entry).toStartWith(
          `${arm} do\n      url "${releaseBaseUrl(pkg.version)}/${a.archive}"\n      sha256 "${a.sha256}"`,
        );
      }
    }
    expect(formula).not.toContain("windows");
    expect(releaseBaseUrl(pkg.version)).toBe(`${pkg.repository.url}/releases/download/v${pkg.version}`);
  });

  test("depends on nothing, tells the user to install the KiCad cask, and tests --version and MCP", () => {
    expect(formula).not.toContain("depends_on");
    expect(formula).toContain("brew install --cask kicad");
    expect(formula).toContain('shell_output("#{bin}/copperhead --version")');
    for (const line of MCP_SMOKE_TEST_INPUT) expect(formula).toContain(line);
    for (const tool of MCP_TOOL_NAMES) expect(formula).toContain(tool);
  });

  test("the MCP smoke test it runs passes against the built binary", async () => {
    const proc = Bun.spawn([requireBinary(), "mcp"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    proc.stdin.write(MCP_SMOKE_TEST_INPUT.map((l) => `${l}\n`).join(""));
    await proc.stdin.end();
    const output = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    for (const tool of MCP_TOOL_NAMES) expect(output).toContain(tool);
  }, 30_000);
});
