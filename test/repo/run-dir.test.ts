import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dirtyPaths } from "../../src/repo/git.ts";
import { isRunId, newRunId, runDir } from "../../src/repo/run-dir.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { makeRepo } from "./git-repo.ts";

afterAll(cleanupTempDirs);

describe("run ids", () => {
  test("are UTC stamps with a random suffix, sortable by start time", () => {
    expect(newRunId(new Date("2026-11-29T21:45:01.123Z"))).toMatch(/^20261129T214501Z-[0-9a-f]{6}$/);
    const ids = [
      new Date("2026-01-02T00:00:00Z"),
      new Date("2026-01-01T23:59:59Z"),
      new Date("2027-01-01T00:00:00Z"),
    ].map((d) => newRunId(d));
    expect([...ids].sort()).toEqual([ids[1]!, ids[0]!, ids[2]!]);
    expect(new Set(Array.from({ length: 50 }, () => newRunId())).size).toBe(50);
    expect(isRunId("../../etc")).toBe(false);
  });
});

describe("runDir", () => {
  test("creates .copperhead/runs/<id>/ and keeps it out of git without copperhead init", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    const id = newRunId();
    const dir = runDir(root, id);
    expect(dir).toBe(join(root, ".copperhead/runs", id));
    writeFileSync(join(dir, "transcript.jsonl"), "{}\n");
    expect(readFileSync(join(root, ".copperhead/runs/.gitignore"), "utf8")).toBe("*\n");
    expect(await dirtyPaths(root)).toEqual([]);
  });

  test("leaves the ignoring to .copperhead/.gitignore when init wrote one", async () => {
    const root = await makeRepo({ ".copperhead/.gitignore": "runs/\ncache/\n" });
    runDir(root, newRunId());
    expect(existsSync(join(root, ".copperhead/runs/.gitignore"))).toBe(false);
  });

  test("refuses an id that is not a run id", async () => {
    const root = await makeRepo({ "a.txt": "a\n" });
    expect(() => runDir(root, "../../outside")).toThrow(expect.objectContaining({ code: "bad_path" }));
  });
});
