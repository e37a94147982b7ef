import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertGitRepo, commitAll, diffPatch, dirtyPaths, headCommit } from "../../src/repo/git.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { git, isolatedGitEnv, makeRepo, writeFiles } from "./git-repo.ts";
import { rejectedCopperheadError } from "../support/errors.ts";

afterAll(cleanupTempDirs);

describe("assertGitRepo", () => {
  test("accepts the top of a work tree with a commit", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    await assertGitRepo(root);
  });

  test("refuses a plain folder, a repo without commits, and a subfolder", async () => {
    const plain = await makeTempDir();
    expect((await rejectedCopperheadError(assertGitRepo(plain))).code).toBe("not_a_git_repo");

    const empty = await makeTempDir();
    await git(empty, "init", "--quiet");
    const noCommit = await rejectedCopperheadError(assertGitRepo(empty));
    expect(noCommit.code).toBe("not_a_git_repo");
    expect(noCommit.fix).toContain("commit");

    const root = await makeRepo({ "sub/a.txt": "a\n" });
    expect((await rejectedCopperheadError(assertGitRepo(join(root, "sub")))).code).toBe("not_a_git_repo");
  });
});

describe("dirtyPaths", () => {
  test("a fresh commit is clean", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    expect(await dirtyPaths(root)).toEqual([]);
  });

  test("reports modified, deleted, staged and untracked files, not ignored ones", async () => {
    const root = await makeRepo({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", ".gitignore": "*.log\n" });
    writeFileSync(join(root, "a.txt"), "changed\n");
    rmSync(join(root, "b.txt"));
    writeFileSync(join(root, "c.txt"), "staged\n");
    await git(root, "add", "c.txt");
    writeFiles(root, { "new/deep/file.txt": "new\n", "debug.log": "ignored\n" });
    expect(await dirtyPaths(root)).toEqual(["a.txt", "b.txt", "c.txt", "new/deep/file.txt"]);
  });

  test("copperhead's runs, cache and lock never count, even without a .gitignore for them", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    writeFiles(root, {
      ".copperhead/runs/20260101T000000Z-abcdef/journal.json": "{}",
      ".copperhead/cache/x.json": "{}",
      ".copperhead/lock": "{}",
      ".copperhead/lock.4242.x1y2.tmp": "{}",
    });
    expect(await dirtyPaths(root)).toEqual([]);
    writeFiles(root, { ".copperhead/config.json": "{}" });
    expect(await dirtyPaths(root)).toEqual([".copperhead/config.json"]);
  });

  test("a renamed file reports both names", async () => {
    const root = await makeRepo({ "old.txt": "same content\n" });
    await git(root, "mv", "old.txt", "new.txt");
    expect(await dirtyPaths(root)).toEqual(["new.txt", "old.txt"]);
  });
});

describe("diffPatch", () => {
  test("covers modified, deleted and new files and leaves the index as it was", async () => {
    const root = await makeRepo({ "a.txt": "a\n", "gone.txt": "bye\n" });
    writeFileSync(join(root, "a.txt"), "a2\n");
    rmSync(join(root, "gone.txt"));
    writeFiles(root, { "docs/new file.md": "# new\n" });
    const indexBefore = readFileSync(join(root, ".git/index"));
    const patch = await diffPatch(root, ["a.txt", "gone.txt", "docs/new file.md"]);
    expect(patch).toContain("diff --git a/a.txt b/a.txt");
    expect(patch).toContain("+a2");
    expect(patch).toContain("deleted file mode 100644");
    expect(patch).toContain("new file mode 100644");
    expect(patch).toContain("+# new");
    expect(readFileSync(join(root, ".git/index")).equals(indexBefore)).toBe(true);
    expect(await dirtyPaths(root)).toEqual(["a.txt", "docs/new file.md", "gone.txt"]);

    // The patch is exactly the change: applying it in reverse restores HEAD.
    writeFileSync(join(root, "change.patch"), patch);
    await git(root, "apply", "--reverse", "change.patch");
    rmSync(join(root, "change.patch"));
    expect(await dirtyPaths(root)).toEqual([]);
  });

  test("paths are literal, not globs", async () => {
    const root = await makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    writeFileSync(join(root, "a.txt"), "a2\n");
    writeFileSync(join(root, "b.txt"), "b2\n");
    writeFiles(root, { "*.txt": "star\n" });
    const patch = await diffPatch(root, ["*.txt"]);
    expect(patch).toContain("b/*.txt");
    expect(patch).not.toContain("a/a.txt");
  });
});

describe("commitAll", () => {
  const message = [
    "copperhead: add a decoupling capacitor",
    "",
    "# not a comment: the summary may start with a hash",
    "",
    "Change: docs/changes/x.md",
    "Copperhead-Run: 20260101T000000Z-abcdef",
    "Copperhead-Approval: auto",
  ].join("\n");

  test("commits exactly the given paths with the message kept as written", async () => {
    const root = await makeRepo({ "a.txt": "a\n", "b.txt": "b\n", "gone.txt": "bye\n" });
    writeFileSync(join(root, "a.txt"), "a2\n");
    rmSync(join(root, "gone.txt"));
    writeFiles(root, { "docs/new.md": "new\n" });
    writeFileSync(join(root, "b.txt"), "not part of the run\n");
    const result = await commitAll(root, {
      message,
      paths: ["a.txt", "gone.txt", "docs/new.md"],
      env: await isolatedGitEnv(),
    });
    expect(result).toEqual({ ok: true, hash: await headCommit(root) });
    expect(await git(root, "log", "-1", "--format=%B")).toBe(`${message}\n\n`);
    expect((await git(root, "show", "--name-status", "--format=", "HEAD")).trim().split("\n").sort()).toEqual([
      "A\tdocs/new.md",
      "D\tgone.txt",
      "M\ta.txt",
    ]);
    expect(await dirtyPaths(root)).toEqual(["b.txt"]);
    expect((await git(root, "log", "-1", "--format=%(trailers:key=Copperhead-Run,valueonly)")).trim()).toBe(
      "20260101T000000Z-abcdef",
    );
  });

  test("makes a repo's first commit, with only the given paths", async () => {
    const root = await makeTempDir();
    await git(root, "init", "--quiet");
    writeFiles(root, { "a.txt": "a\n", "b.txt": "b\n" });
    const result = await commitAll(root, { message: "first", paths: ["a.txt"], env: await isolatedGitEnv() });
    expect(result).toEqual({ ok: true, hash: await headCommit(root) });
    expect((await git(root, "show", "--name-status", "--format=", "HEAD")).trim()).toBe("A\ta.txt");
    expect(await dirtyPaths(root)).toEqual(["b.txt"]);
  });

  test("falls back to copperhead's identity field by field when git has none", async () => {
    const env = await isolatedGitEnv();
    const root = await makeRepo({ "a.txt": "a\n" });
    await git(root, "config", "--unset", "user.name");
    await git(root, "config", "--unset", "user.email");

    writeFileSync(join(root, "a.txt"), "a2\n");
    expect((await commitAll(root, { message: "both unset", paths: ["a.txt"], env })).ok).toBe(true);
    expect((await git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>")).trim()).toBe(
      "copperhead <copperhead@localhost>|copperhead <copperhead@localhost>",
    );

    await git(root, "config", "user.email", "engineer@example.com");
    writeFileSync(join(root, "a.txt"), "a3\n");
    expect((await commitAll(root, { message: "name unset", paths: ["a.txt"], env })).ok).toBe(true);
    expect((await git(root, "log", "-1", "--format=%an <%ae>")).trim()).toBe("copperhead <engineer@example.com>");

    await git(root, "config", "user.name", "Ada Engineer");
    writeFileSync(join(root, "a.txt"), "a4\n");
    expect((await commitAll(root, { message: "both set", paths: ["a.txt"], env })).ok).toBe(true);
    expect((await git(root, "log", "-1", "--format=%an <%ae>")).trim()).toBe("Ada Engineer <engineer@example.com>");
  });

  test("a rejecting pre-commit hook gives its output back and leaves the index clean", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    const hook = join(root, ".git/hooks/pre-commit");
    mkdirSync(join(root, ".git/hooks"), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\necho "hook saw run=$COPPERHEAD_RUN"\necho "ERC failed: 2 errors" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const head = await headCommit(root);
    writeFileSync(join(root, "a.txt"), "a2\n");
    writeFiles(root, { "new.txt": "new\n" });

    const result = await commitAll(root, {
      message: "rejected",
      paths: ["a.txt", "new.txt"],
      env: { ...(await isolatedGitEnv()), COPPERHEAD_RUN: "20260101T000000Z-abcdef" },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.output).toContain("hook saw run=20260101T000000Z-abcdef");
    expect(result.output).toContain("ERC failed: 2 errors");
    expect(await headCommit(root)).toBe(head);
    expect(await git(root, "diff", "--cached", "--name-only")).toBe("");
    expect(await git(root, "status", "--porcelain")).toBe(" M a.txt\n?? new.txt\n");
  });

  test("ignored new files stay out of the commit, as with git add", async () => {
    const root = await makeRepo({ "a.txt": "a\n", ".gitignore": "*.log\n" });
    writeFileSync(join(root, "a.txt"), "a2\n");
    writeFiles(root, { "out.log": "noise\n" });
    expect((await commitAll(root, { message: "m", paths: ["a.txt", "out.log"], env: await isolatedGitEnv() })).ok).toBe(
      true,
    );
    expect((await git(root, "show", "--name-only", "--format=", "HEAD")).trim()).toBe("a.txt");
  });
});
