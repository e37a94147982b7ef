import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CopperheadError } from "../../src/errors.ts";
import { RunJournal, recoverUnfinished, type JournalData } from "../../src/repo/journal.ts";
import { LOCK_PATH, withRepoLock } from "../../src/repo/lock.ts";
import { resolveRepoPath } from "../../src/repo/repo-path.ts";
import { newRunId, runDir } from "../../src/repo/run-dir.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { makeRepo, treeFingerprint, writeFiles } from "./git-repo.ts";

afterAll(cleanupTempDirs);

const BINARY = new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));

/** A repo with text, CRLF, binary, executable and untracked files. */
async function sampleRepo(): Promise<string> {
  const root = await makeRepo({
    "board.kicad_pcb": "(kicad_pcb (version 20241229))\n",
    "docs/SPEC.md": "# Spec\r\n\r\nwindows line endings\r\n",
    "docs/BOM.md": "# BOM\n",
    "art/logo.bin": BINARY,
    "scripts/run.sh": { content: "#!/bin/sh\necho hi\n", mode: 0o755 },
    "private.txt": { content: "only me\n", mode: 0o600 },
  });
  writeFiles(root, { "notes/untracked.txt": "not in git\n" });
  return root;
}

/** Runs `fn` as a run would: inside the repo lock, with a fresh journal. */
function inRun<T>(root: string, fn: (journal: RunJournal) => T | Promise<T>): Promise<T> {
  return withRepoLock(root, () => {
    const id = newRunId();
    return fn(RunJournal.begin(root, id, runDir(root, id)));
  });
}

function readJournal(journal: RunJournal): JournalData {
  return JSON.parse(readFileSync(join(journal.runDir, "journal.json"), "utf8")) as JournalData;
}

function expectBadPath(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CopperheadError);
  expect((caught as CopperheadError).code).toBe("bad_path");
}

describe("RunJournal", () => {
  test("modify, create (in new folders), delete, then rollback: the tree is byte-identical", async () => {
    const root = await sampleRepo();
    const before = treeFingerprint(root, [".git", ".copperhead"]);
    await inRun(root, async (journal) => {
      expect(readJournal(journal).state).toBe("editing");

      journal.writeFile("board.kicad_pcb", "(kicad_pcb (version 20241229) (changed))\n");
      journal.writeFile("board.kicad_pcb", "(kicad_pcb (version 20241229) (changed twice))\n");
      journal.writeFile("docs/SPEC.md", "# Spec\nunix now\n");
      journal.writeFile("art/logo.bin", BINARY.slice().reverse());
      journal.writeFile("scripts/run.sh", "#!/bin/sh\necho changed\n");
      journal.writeFile("private.txt", "still private\n");
      journal.writeFile("docs/changes/deep/er/proposal.md", "# proposal\n");
      journal.writeFile("./notes//new.md", "new\n");
      journal.removeFile("docs/BOM.md");
      journal.removeFile("notes/untracked.txt");

      expect(statSync(join(root, "scripts/run.sh")).mode & 0o777).toBe(0o755);
      expect(statSync(join(root, "private.txt")).mode & 0o777).toBe(0o600);
      expect(existsSync(join(root, "docs/BOM.md"))).toBe(false);
      expect(journal.touched()).toEqual([
        "board.kicad_pcb",
        "docs/SPEC.md",
        "art/logo.bin",
        "scripts/run.sh",
        "private.txt",
        "docs/changes/deep/er/proposal.md",
        "notes/new.md",
        "docs/BOM.md",
        "notes/untracked.txt",
      ]);
      const data = readJournal(journal);
      expect(data.files.find((f) => f.path === "docs/changes/deep/er/proposal.md")).toEqual({
        path: "docs/changes/deep/er/proposal.md",
        existed: false,
      });
      expect(data.createdDirs).toEqual(["docs/changes", "docs/changes/deep", "docs/changes/deep/er"]);
      expect(treeFingerprint(root, [".git", ".copperhead"])).not.toEqual(before);

      expect(journal.rollback()).toEqual(journal.touched());
      expect(treeFingerprint(root, [".git", ".copperhead"])).toEqual(before);
      expect(readJournal(journal).state).toBe("rolled_back");

      // Idempotent: a second rollback changes nothing.
      journal.rollback();
      expect(treeFingerprint(root, [".git", ".copperhead"])).toEqual(before);
    });
  });

  test("what a file held when the run started: the backup of a changed one, an untouched one as it is, nothing for a created one", async () => {
    const root = await sampleRepo();
    await inRun(root, async (journal) => {
      journal.writeFile("board.kicad_pcb", "(kicad_pcb (version 20241229) (changed))\n");
      journal.writeFile("docs/new.md", "new\n");
      expect(journal.bytesBefore("board.kicad_pcb")?.toString()).toBe("(kicad_pcb (version 20241229))\n");
      expect(journal.bytesBefore("docs/BOM.md")?.toString()).toBe("# BOM\n");
      expect(journal.bytesBefore("docs/new.md")).toBeUndefined();
      expect(journal.bytesBefore("docs/none.md")).toBeUndefined();
      journal.rollback();
    });
  });

  test("CRLF and binary bytes survive a write exactly as given", async () => {
    const root = await sampleRepo();
    await inRun(root, async (journal) => {
      journal.writeFile("docs/SPEC.md", "a\r\nb\r\n");
      journal.writeFile("art/new.bin", BINARY);
      expect(readFileSync(join(root, "docs/SPEC.md"), "utf8")).toBe("a\r\nb\r\n");
      expect(new Uint8Array(readFileSync(join(root, "art/new.bin")))).toEqual(BINARY);
      journal.rollback();
    });
  });

  test("a created folder that something else filled is kept on rollback", async () => {
    const root = await sampleRepo();
    const before = treeFingerprint(root, [".git", ".copperhead"]);
    await inRun(root, async (journal) => {
      journal.writeFile("out/run.md", "x\n");
      writeFileSync(join(root, "out/kicad-output.txt"), "someone else\n");
      journal.rollback();
      expect(existsSync(join(root, "out/run.md"))).toBe(false);
      expect(existsSync(join(root, "out/kicad-output.txt"))).toBe(true);
      expect(Object.keys(treeFingerprint(root, [".git", ".copperhead"])).sort()).toEqual(
        [...Object.keys(before), "out/", "out/kicad-output.txt"].sort(),
      );
    });
  });

  test("takes no writes once committed, and refuses to roll back a committed run", async () => {
    const root = await sampleRepo();
    await inRun(root, async (journal) => {
      journal.writeFile("docs/BOM.md", "# BOM v2\n");
      journal.complete("committed");
      expect(() => journal.writeFile("docs/BOM.md", "late\n")).toThrow(CopperheadError);
      expect(() => journal.rollback()).toThrow(CopperheadError);
      expect(readFileSync(join(root, "docs/BOM.md"), "utf8")).toBe("# BOM v2\n");
    });
  });

  test("removing a missing file is not_found", async () => {
    const root = await sampleRepo();
    await inRun(root, async (journal) => {
      expect(() => journal.removeFile("nope.txt")).toThrow(expect.objectContaining({ code: "not_found" }));
      expect(journal.touched()).toEqual([]);
    });
  });
});

describe("confinement", () => {
  test("'..', absolute paths, .git and symlinks out of the repo are bad_path, and nothing is written", async () => {
    const root = await sampleRepo();
    const outside = await makeTempDir();
    writeFileSync(join(outside, "secret.txt"), "outside\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "link-out.txt"));
    symlinkSync(outside, join(root, "dir-out"));
    symlinkSync(join(root, ".git"), join(root, "git-alias"));
    symlinkSync(join(outside, "missing"), join(root, "dangling"));
    // .git is fingerprinted too (nothing may be written there), but for the journal key the
    // first journal of a clone creates.
    const inside = () => treeFingerprint(root, [".copperhead", ".git/copperhead"]);
    const before = inside();
    const outsideBefore = treeFingerprint(outside);
    await inRun(root, async (journal) => {
      for (const path of [
        "../x",
        "docs/../../x",
        "docs/../SPEC.md",
        "/etc/passwd",
        "C:/x",
        "docs\\x.md",
        ".git/config",
        ".git/hooks/pre-commit",
        ".GIT/config",
        "sub/.git/config",
        "link-out.txt",
        "dir-out/secret.txt",
        "dir-out/new.txt",
        "git-alias/config",
        "dangling/new.txt",
        "",
        ".",
      ]) {
        expectBadPath(() => journal.writeFile(path, "pwned\n"));
        expectBadPath(() => journal.removeFile(path));
      }
      expect(journal.touched()).toEqual([]);
      expect(inside()).toEqual(before);
      expect(treeFingerprint(outside)).toEqual(outsideBefore);
      expect(readFileSync("/etc/passwd", "utf8")).not.toContain("pwned");
    });
  });

  test("a symlinked folder inside the repo resolves to the path git knows", async () => {
    const root = await sampleRepo();
    symlinkSync("docs", join(root, "documentation"));
    expect(resolveRepoPath(root, "documentation/SPEC.md").path).toBe("docs/SPEC.md");
    await inRun(root, async (journal) => {
      journal.writeFile("documentation/SPEC.md", "via link\n");
      journal.writeFile("docs/SPEC.md", "direct\n");
      expect(journal.touched()).toEqual(["docs/SPEC.md"]);
      journal.rollback();
      expect(readFileSync(join(root, "docs/SPEC.md"), "utf8")).toBe("# Spec\r\n\r\nwindows line endings\r\n");
    });
  });
});

describe("recoverUnfinished", () => {
  test("restores a run whose process was SIGKILLed mid-edit, byte-identically, and reports it", async () => {
    const root = await sampleRepo();
    const before = treeFingerprint(root, [".git", ".copperhead"]);
    const runId = newRunId();
    const script = join(await makeTempDir(), "crash.ts");
    writeFileSync(
      script,
      `import { RunJournal } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/journal.ts"))};
import { withRepoLock } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/lock.ts"))};
import { runDir } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/run-dir.ts"))};
const root = process.argv[2]!;
await withRepoLock(root, () => {
  const journal = RunJournal.begin(root, ${JSON.stringify(runId)}, runDir(root, ${JSON.stringify(runId)}));
  journal.writeFile("board.kicad_pcb", "(kicad_pcb (half-done))\\n");
  journal.writeFile("art/logo.bin", new Uint8Array([0, 1, 2]));
  journal.writeFile("docs/changes/new/p.md", "# p\\n");
  journal.removeFile("docs/BOM.md");
  journal.removeFile("notes/untracked.txt");
  process.kill(process.pid, "SIGKILL");
});
`,
    );
    const child = Bun.spawn([process.execPath, script, root], { stdout: "pipe", stderr: "pipe" });
    expect(await child.exited).not.toBe(0);
    expect(child.signalCode).toBe("SIGKILL");
    expect(treeFingerprint(root, [".git", ".copperhead"])).not.toEqual(before);

    const recovered = await recoverUnfinished(root);
    expect(recovered).toEqual([
      {
        runId,
        restored: ["board.kicad_pcb", "art/logo.bin", "docs/changes/new/p.md", "docs/BOM.md", "notes/untracked.txt"],
      },
    ]);
    expect(treeFingerprint(root, [".git", ".copperhead"])).toEqual(before);
    const journal = JSON.parse(
      readFileSync(join(root, ".copperhead/runs", runId, "journal.json"), "utf8"),
    ) as JournalData;
    expect(journal.state).toBe("recovered");
    expect(await recoverUnfinished(root)).toEqual([]);
    // The dead run's lock is stale: the next run takes it over.
    expect(existsSync(join(root, LOCK_PATH))).toBe(true);
    expect(await withRepoLock(root, () => "next run")).toBe("next run");
  });

  test("leaves a live run alone, and recovers it once it ended without a rollback", async () => {
    const root = await sampleRepo();
    const abandoned = await inRun(root, async (journal) => {
      journal.writeFile("docs/BOM.md", "# BOM in progress\n");
      // e.g. a concurrent `check` in the same MCP server
      expect(await recoverUnfinished(root)).toEqual([]);
      expect(readFileSync(join(root, "docs/BOM.md"), "utf8")).toBe("# BOM in progress\n");
      return journal.runId; // the pipeline threw past its rollback
    });
    expect(await withRepoLock(root, () => recoverUnfinished(root))).toEqual([
      { runId: abandoned, restored: ["docs/BOM.md"] },
    ]);
    expect(readFileSync(join(root, "docs/BOM.md"), "utf8")).toBe("# BOM\n");
  });

  test("this clone's own journal, changed on disk after it was sealed (an entry or a backup), is refused, and nothing is restored", async () => {
    for (const tamper of ["entry", "backup"] as const) {
      const root = await sampleRepo();
      const abandoned = await inRun(root, async (journal) => {
        journal.writeFile("docs/BOM.md", "# BOM in progress\n");
        journal.writeFile("board.kicad_pcb", "(kicad_pcb (half-done))\n");
        return journal;
      });
      const file = join(abandoned.runDir, "journal.json");
      if (tamper === "entry") {
        const data = JSON.parse(readFileSync(file, "utf8")) as JournalData;
        data.files[1] = { path: "board.kicad_pcb", existed: false };
        writeFileSync(file, JSON.stringify(data));
      } else {
        writeFileSync(join(abandoned.runDir, "backup/0"), "# swapped\n");
      }
      const refused = await recoverUnfinished(root).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect({ tamper, code: (refused as CopperheadError | undefined)?.code }).toEqual({
        tamper,
        code: "journal_refused",
      });
      expect((refused as CopperheadError).fix).toContain(`rm -rf .copperhead/runs/${abandoned.runId}`);
      // Nothing was put back: the half-done edits are still there for a person to judge.
      expect(readFileSync(join(root, "docs/BOM.md"), "utf8")).toBe("# BOM in progress\n");
      expect(readFileSync(join(root, "board.kicad_pcb"), "utf8")).toBe("(kicad_pcb (half-done))\n");
    }
  });

  test("a journal can only be started under the repo lock", async () => {
    const root = await sampleRepo();
    const id = newRunId();
    expect(() => RunJournal.begin(root, id, runDir(root, id))).toThrow(
      expect.objectContaining({ code: "internal_error" }),
    );
  });

  test("never writes outside the repo, even from a forged journal", async () => {
    const root = await sampleRepo();
    const outside = await makeTempDir();
    writeFileSync(join(outside, "victim.txt"), "keep\n");
    const runId = newRunId();
    const dir = runDir(root, runId);
    mkdirSync(join(dir, "backup"), { recursive: true });
    writeFileSync(join(dir, "backup/0"), "pwned\n");
    const forged: JournalData = {
      schema: "copperhead.journal/2",
      runId,
      pid: 999_999_999,
      hostname: "nowhere",
      startedAt: new Date().toISOString(),
      lockStartedAt: new Date().toISOString(),
      state: "editing",
      files: [
        { path: `../${outside.split("/").pop()}/victim.txt`, existed: true, backup: "backup/0", mode: 0o644 },
        { path: ".git/HEAD", existed: false },
      ],
      createdDirs: [],
    };
    writeFileSync(join(dir, "journal.json"), JSON.stringify(forged));
    await expect(recoverUnfinished(root)).rejects.toThrow(CopperheadError);
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("keep\n");
    expect(existsSync(join(root, ".git/HEAD"))).toBe(true);
  });
});
