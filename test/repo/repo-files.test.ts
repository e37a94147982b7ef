import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorCode } from "../../src/errors.ts";
import {
  listRepoFolder,
  ownFolder,
  readOwnFile,
  readRepoDoc,
  readRepoText,
  READ_LIMITS,
  assertRepoFile,
} from "../../src/repo/repo-files.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { thrownCopperheadError } from "../support/errors.ts";

afterAll(cleanupTempDirs);

/** A repo folder with a doc, a linked doc inside, and links and special files that must be refused. */
async function repo(): Promise<{ root: string; outside: string }> {
  const root = await makeTempDir();
  const outside = await makeTempDir();
  writeFileSync(join(outside, "secret.txt"), "outside\n");
  mkdirSync(join(root, "docs"));
  writeFileSync(join(root, "docs/SPEC.md"), "# Spec\n");
  symlinkSync("SPEC.md", join(root, "docs/alias.md"));
  symlinkSync(join(outside, "secret.txt"), join(root, "docs/out.md"));
  symlinkSync("/dev/zero", join(root, "docs/zero.md"));
  symlinkSync("loop.md", join(root, "docs/loop.md"));
  mkdirSync(join(root, "docs/folder.md"));
  writeFileSync(join(root, "file"), "a file\n");
  expect(Bun.spawnSync(["mkfifo", join(root, "docs/pipe.md")]).exitCode).toBe(0);
  return { root, outside };
}

describe("readRepoText", () => {
  test("reads a file inside the repo, through a symlink that stays inside too", async () => {
    const { root } = await repo();
    expect(readRepoText("docs/SPEC.md", { within: root })).toBe("# Spec\n");
    expect(readRepoText("docs/alias.md", { within: root })).toBe("# Spec\n");
    expect(readRepoText(join(root, "docs/SPEC.md"), { within: root })).toBe("# Spec\n");
  });

  test("refuses what leads outside, what is not a regular file, and what is over the cap, by name", async () => {
    const { root } = await repo();
    const cases: [string, ErrorCode, string][] = [
      ["docs/out.md", "bad_path", "outside the repository"],
      ["docs/zero.md", "bad_path", "resolves to /dev/zero, outside the repository"],
      ["../x", "not_found", "does not exist"],
      ["docs/loop.md", "bad_path", "symlink loop"],
      ["docs/folder.md", "bad_path", "is a folder, not a file"],
      ["docs/pipe.md", "bad_path", "is not a regular file"],
      ["file/inside.md", "bad_path", "a folder on its path is a file"],
      ["docs/missing.md", "not_found", "does not exist"],
    ];
    for (const [path, code, says] of cases) {
      const err = thrownCopperheadError(() => readRepoText(path, { within: root }));
      expect({ path, code: err.code, says: err.message.includes(says), fix: typeof err.fix }).toEqual({
        path,
        code,
        says: true,
        fix: "string",
      });
    }
    writeFileSync(join(root, "docs/big.md"), "");
    truncateSync(join(root, "docs/big.md"), READ_LIMITS.text + 1);
    const big = thrownCopperheadError(() => readRepoDoc(root, "docs/big.md"));
    expect(big.code).toBe("input_too_large");
    expect(big.details.file).toBe("docs/big.md");
  });

  test("within null (a stock library) reads anywhere, but still only regular files", async () => {
    const { root, outside } = await repo();
    expect(readRepoText(join(outside, "secret.txt"), { within: null })).toBe("outside\n");
    expect(thrownCopperheadError(() => readRepoText("/dev/zero", { within: null })).message).toContain(
      "not a regular file",
    );
    expect(thrownCopperheadError(() => readRepoText(join(root, "docs/pipe.md"), { within: null })).code).toBe(
      "bad_path",
    );
  });

  test("readRepoDoc is undefined only for a missing file", async () => {
    const { root } = await repo();
    expect(readRepoDoc(root, "docs/missing.md")).toBeUndefined();
    expect(() => readRepoDoc(root, "docs/folder.md")).toThrow("is a folder");
  });

  test("assertRepoFile checks without reading", async () => {
    const { root } = await repo();
    expect(() => assertRepoFile("docs/SPEC.md", { within: root })).not.toThrow();
    expect(thrownCopperheadError(() => assertRepoFile("docs/pipe.md", { within: root })).code).toBe("bad_path");
  });
});

describe("listRepoFolder", () => {
  test("lists a folder inside, [] for none, and refuses one that leads outside or is a file", async () => {
    const { root, outside } = await repo();
    symlinkSync(outside, join(root, "linked"));
    expect(listRepoFolder(root, "docs")).toContain("SPEC.md");
    expect(listRepoFolder(root, "nothing-here")).toEqual([]);
    expect(thrownCopperheadError(() => listRepoFolder(root, "linked")).message).toContain("outside the repository");
    expect(thrownCopperheadError(() => listRepoFolder(root, "file")).message).toContain("is a file, not a folder");
  });
});

describe("copperhead's own folders and files", () => {
  test("ownFolder creates real folders, and refuses a symlink or a file on the way", async () => {
    const { root, outside } = await repo();
    expect(ownFolder(root, ".copperhead/runs/x")).toEndWith(".copperhead/runs/x");
    symlinkSync(outside, join(root, ".copperhead/cache"));
    expect(thrownCopperheadError(() => ownFolder(root, ".copperhead/cache/y")).message).toContain(
      ".copperhead/cache is a symlink",
    );
    expect(thrownCopperheadError(() => ownFolder(root, "file/y")).message).toContain("file is not a folder");
  });

  test("readOwnFile never follows a symlink, not even one that stays inside", async () => {
    const { root } = await repo();
    expect(readOwnFile(root, "docs/SPEC.md", 1024)?.toString()).toBe("# Spec\n");
    expect(readOwnFile(root, "docs/none.md", 1024)).toBeUndefined();
    expect(thrownCopperheadError(() => readOwnFile(root, "docs/alias.md", 1024)).message).toContain(
      "docs/alias.md is a symlink",
    );
    expect(thrownCopperheadError(() => readOwnFile(root, "docs/pipe.md", 1024)).message).toContain(
      "is not a regular file",
    );
  });
});
