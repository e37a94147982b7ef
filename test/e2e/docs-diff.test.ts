/**
 * The `copperhead diff` example in docs/commands.md is what the binary prints for the demo's
 * committed change, not prose written to look like it (commit hashes aside). Regenerate it
 * with `bun scripts/gen-docs-diff.ts`.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { diffExample, PAGE, withoutHashes } from "../../scripts/gen-docs-diff.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

test("docs/commands.md's diff example is the binary's output on the demo's committed change", async () => {
  const dir = join(await makeTempDir(), "demo");
  const demo = await runBinary(["demo", "--dir", dir, "--json"], { env: ISOLATED_ENV });
  expect(demo.exitCode, demo.stderr).toBe(0);
  const diff = await runBinary(
    ["diff", "--repo", join(dir, "usb-led"), "--base", "HEAD~1", "--head", "HEAD", "--format", "markdown"],
    { env: ISOLATED_ENV },
  );
  expect(diff.exitCode, diff.stderr).toBe(0);
  const example = diffExample(readFileSync(PAGE, "utf8"));
  expect(example, "docs/commands.md has the generated example block").toBeDefined();
  expect(withoutHashes(example!), "docs/commands.md is out of date: run bun scripts/gen-docs-diff.ts").toBe(
    withoutHashes(diff.stdout),
  );
}, 120_000);
