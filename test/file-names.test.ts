/**
 * One name per idea: a file's base name says what it holds, so no two files in `src/` share
 * one unless they are the same idea seen from two layers or two documents. Those are listed
 * here with the reason, file by file; a new file that takes an existing name for something
 * else fails, and so does an entry that no longer matches the tree.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { basename, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");

/** A folder's entry point may be called `index.ts` anywhere. */
const ENTRY_POINT = "index.ts";

/** A command: what it does (`commands/`) and how the CLI renders it (`cli/`). */
const command = (name: string, ...more: string[]) => ({
  files: [`cli/${name}`, `commands/${name}`, ...more],
  why: `the \`${name.replace(/\.ts$/, "")}\` command, run by commands/ and rendered by cli/${more.length ? ", over the module that does its work" : ""}`,
});

/** The same job on each document: `kicad/board/` and `kicad/schematic/` never import each other. */
const peers = (board: string, schematic: string) => ({
  files: [`kicad/board/${board}`, `kicad/schematic/${schematic}`],
  why: "the same job on the board and on the schematic",
});

/** Base names shared on purpose, with the exact files that share them. */
const SHARED: Record<string, { files: string[]; why: string }> = {
  "check.ts": command("check.ts", "checks/check.ts"),
  "demo.ts": command("demo.ts"),
  "diff.ts": command("diff.ts", "diff/diff.ts"),
  "do.ts": command("do.ts"),
  "doctor.ts": command("doctor.ts"),
  "init.ts": command("init.ts"),
  "netlist.ts": command("netlist.ts", "kicad/netlist/netlist.ts"),
  "sync.ts": command("sync.ts"),
  "board.ts": {
    files: ["agent/tools/board.ts", "cli/board.ts"],
    why: "board editing: the model's board tools (named for their family, as every tools/ module is) and the user's `copperhead board`",
  },
  "baseline.ts": {
    files: ["checks/baseline.ts", "run/baseline.ts"],
    why: "a run's baseline: matching findings against it (checks/), and the stage that takes it (run/)",
  },
  "requirements.ts": {
    files: ["checks/requirements.ts", "spec/requirements.ts"],
    why: "the requirements: their grammar and evaluator (spec/), and the check family that runs them (checks/)",
  },
  "render.ts": {
    files: ["agent/view/render.ts", "diff/render.ts"],
    why: "a region of a design drawn from kicad-cli's plot: the view tool's picture, and the diff's before and after",
  },
  "connectivity.ts": peers("connectivity.ts", "connectivity.ts"),
  "dialect.ts": peers("footprint/dialect.ts", "dialect.ts"),
  "editor.ts": peers("editor.ts", "edit/editor.ts"),
  "fields.ts": peers("footprint/fields.ts", "edit/fields.ts"),
  "geometry.ts": peers("clearance/geometry.ts", "geometry.ts"),
  "placement.ts": peers("placement.ts", "edit/placement.ts"),
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = resolve(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : [relative(SRC, path).split("\\").join("/")];
  });
}

function filesByName(): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const name = basename(file);
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  return byName;
}

describe("file names in src/", () => {
  test("no base name is shared except by the files listed for it", () => {
    const unlisted: string[] = [];
    for (const [name, files] of filesByName()) {
      if (files.length < 2 || name === ENTRY_POINT) continue;
      const shared = SHARED[name];
      if (!shared) unlisted.push(`${name}: ${files.sort().join(", ")}`);
      else
        for (const file of files)
          if (!shared.files.includes(file)) unlisted.push(`${name}: ${file} is not one of ${shared.files.join(", ")}`);
    }
    expect(unlisted).toEqual([]);
  });

  test("every listed file exists, so the list says no more than the tree", () => {
    const byName = filesByName();
    const stale = Object.entries(SHARED).flatMap(([name, { files }]) =>
      files.filter((file) => !byName.get(name)?.includes(file)),
    );
    expect(stale).toEqual([]);
  });

  test("each sharing has its reason", () => {
    for (const { files, why } of Object.values(SHARED)) {
      expect(files.length).toBeGreaterThan(1);
      expect(why.length).toBeGreaterThan(20);
    }
  });
});
