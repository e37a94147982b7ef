import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveCommit, withSnapshot } from "../../src/repo/snapshot.ts";
import { rejectedCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { git, makeRepo, treeFingerprint } from "./git-repo.ts";

afterAll(cleanupTempDirs);

/** A repo with two commits, a staged edit, an unstaged edit and an untracked file. */
async function busyRepo(): Promise<{ root: string; first: string }> {
  const root = await makeRepo({ "a.txt": "a1\n", "sub/b.txt": "b1\n" });
  const first = (await git(root, "rev-parse", "HEAD")).trim();
  writeFileSync(join(root, "a.txt"), "a2\n");
  writeFileSync(join(root, "c.txt"), "c2\n");
  await git(root, "add", "-A");
  await git(root, "commit", "--quiet", "-m", "second");
  writeFileSync(join(root, "c.txt"), "staged\n");
  await git(root, "add", "c.txt");
  writeFileSync(join(root, "a.txt"), "working\n");
  writeFileSync(join(root, "untracked.txt"), "u\n");
  return { root, first };
}

describe("withSnapshot", () => {
  test("holds the tree of the ref, and leaves the user's tree, index and HEAD alone", async () => {
    const { root, first } = await busyRepo();
    const before = treeFingerprint(root, []);
    const status = await git(root, "status", "--porcelain=v1");
    let seen: Record<string, string> = {};
    await withSnapshot(root, "HEAD~1", async (snapshot) => {
      expect(snapshot.commit).toBe(first);
      expect(snapshot.ref).toBe("HEAD~1");
      seen = treeFingerprint(snapshot.root, []);
      expect(readFileSync(join(snapshot.root, "a.txt"), "utf8")).toBe("a1\n");
      expect(readFileSync(join(snapshot.root, "sub/b.txt"), "utf8")).toBe("b1\n");
      // Not a checkout: no .git, nothing the commit does not hold.
      expect(existsSync(join(snapshot.root, ".git"))).toBe(false);
      expect(existsSync(join(snapshot.root, "c.txt"))).toBe(false);
      expect(existsSync(join(snapshot.root, "untracked.txt"))).toBe(false);
    });
    expect(Object.keys(seen).sort()).toEqual(["a.txt", "sub/", "sub/b.txt"]);
    expect(treeFingerprint(root, [])).toEqual(before);
    expect(await git(root, "status", "--porcelain=v1")).toBe(status);
  });

  test("HEAD is the last commit, not the working tree", async () => {
    const { root } = await busyRepo();
    await withSnapshot(root, "HEAD", async (snapshot) => {
      expect(readFileSync(join(snapshot.root, "a.txt"), "utf8")).toBe("a2\n");
      expect(readFileSync(join(snapshot.root, "c.txt"), "utf8")).toBe("c2\n");
    });
  });

  test("removes its folder afterwards, also when the body throws", async () => {
    const { root } = await busyRepo();
    let folder = "";
    await withSnapshot(root, "HEAD", async (snapshot) => {
      folder = snapshot.root;
    });
    expect(existsSync(folder)).toBe(false);
    await expect(
      withSnapshot(root, "HEAD", async (snapshot) => {
        folder = snapshot.root;
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(folder)).toBe(false);
  });
});

describe("resolveCommit", () => {
  test("accepts branches, tags and abbreviated hashes", async () => {
    const { root, first } = await busyRepo();
    await git(root, "tag", "v1", first);
    expect(await resolveCommit(root, "v1")).toBe(first);
    expect(await resolveCommit(root, first.slice(0, 8))).toBe(first);
    expect(await resolveCommit(root, "main")).toBe((await git(root, "rev-parse", "main")).trim());
  });

  test("an unknown ref, or one that reads as an option, is not_found with the fix", async () => {
    const { root } = await busyRepo();
    for (const ref of ["no-such-branch", "--output=/tmp/x", "-h", ""]) {
      const err = await rejectedCopperheadError(resolveCommit(root, ref));
      expect(err.code).toBe("not_found");
      expect(err.message).toContain(JSON.stringify(ref));
      expect(err.fix).toContain("git log");
    }
  });

  test("a folder that is no git repository says so", async () => {
    const plain = await makeTempDir();
    mkdirSync(join(plain, "x"));
    const err = await rejectedCopperheadError(resolveCommit(plain, "HEAD"));
    expect(err.code).toBe("not_a_git_repo");
  });
});
