/**
 * Shared setup for tests that run the real kicad-cli.
 *
 * Tests never skip when KiCad is missing: a skipped KiCad test is a check that silently did
 * not run, which is exactly what copperhead exists to prevent. They fail with the fix instead.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CopperheadError } from "../../src/errors.ts";
import { findKicadCli, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";

export const FIXTURES_DIR = resolve(import.meta.dir, "..", "..", "fixtures");

/** Resolves kicad-cli through the wrapper, or throws a loud error saying how to install it. */
export async function requireKicadCli(): Promise<KicadCli> {
  try {
    return await findKicadCli();
  } catch (err) {
    const detail =
      err instanceof CopperheadError ? `${err.code}: ${err.message}\n  fix: ${err.fix ?? "-"}` : String(err);
    throw new Error(
      `These tests need the real kicad-cli (KiCad 8+, 9 recommended) and must not be skipped.\n  ${detail}`,
    );
  }
}

const tempDirs: string[] = [];

/**
 * Removes every dir made by `copyFixture` and `makeTempDir` so far. A test file that uses
 * them calls `afterAll(cleanupTempDirs)`: bun test neither fires `process.on("exit")` nor
 * runs a hook registered by a shared module for more than the first file that imports it.
 */
export async function cleanupTempDirs(): Promise<void> {
  const dirs = tempDirs.splice(0);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * Copies `fixtures/<name>` into a fresh temp dir and returns the copy's path, so tests can
 * run kicad-cli and modify files without touching the checked-in fixtures.
 */
export async function copyFixture(name: string): Promise<string> {
  const dir = await makeTempDir();
  const dest = join(dir, name.split("/").pop() ?? name);
  // A checkout where someone ran copperhead on a fixture holds its cache; tests start cold.
  await cp(join(FIXTURES_DIR, name), dest, {
    recursive: true,
    filter: (src) => !/[\\/]\.copperhead([\\/]|$)/.test(src),
  });
  return dest;
}

/** An empty temp dir, removed by `cleanupTempDirs`. */
export async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "copperhead-test-"));
  tempDirs.push(dir);
  return dir;
}
