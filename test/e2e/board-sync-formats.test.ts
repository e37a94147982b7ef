/**
 * `copperhead board sync` through the binary on boards of the corpus, each project in a
 * subfolder of its repository: a part marked "Do not populate" in KiCad reaches the footprint as
 * `(attr … dnp)` only where the board's format has that flag (board format 20230410, KiCad 8).
 * A KiCad 7 board keeps its format, which KiCad 7 can open, and the sync says why DNP is not on it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git } from "../repo/git-repo.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { editFile } from "../support/variants.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { ISOLATED_ENV } from "../support/repos.ts";

afterAll(cleanupTempDirs);
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
});

/** The corpus project copied into `hw/` of a fresh repository, committed; returns the repo. */
async function repoWith(id: string): Promise<{ repo: string; schematic: string; board: string }> {
  const project = corpusProjects().find((p) => p.id === id)!;
  const repo = await makeTempDir();
  cpSync(project.root, join(repo, "hw"), { recursive: true });
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "-c", "user.name=Test", "-c", "user.email=t@example.com", "add", "-A");
  await git(repo, "-c", "user.name=Test", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "design");
  const inCopy = (path: string) => join(repo, "hw", path.slice(project.root.length + 1));
  return { repo, schematic: inCopy(project.schematic!), board: inCopy(project.board!) };
}

/** Marks `ref` "Do not populate" the way KiCad saves it: `(dnp yes)` on its placed symbol. */
function markDnp(schematic: string, ref: string): void {
  editFile(schematic, (text) => {
    const at = text.indexOf(`(property "Reference" "${ref}"`);
    const flag = at < 0 ? -1 : text.lastIndexOf("(dnp no)", at);
    if (flag < 0 || flag < text.lastIndexOf("(lib_id", at)) throw new Error(`no fitted ${ref} placed in ${schematic}`);
    return `${text.slice(0, flag)}(dnp yes)${text.slice(flag + "(dnp no)".length)}`;
  });
}

/** The `(attr …)` of footprint `ref`, as written. */
function attrOf(board: string, ref: string): string {
  const text = readFileSync(board, "utf8");
  const at = text.search(new RegExp(`\\((fp_text reference|property "Reference") "${ref}"`));
  const start = text.lastIndexOf("(footprint ", at);
  const end = text.indexOf("(footprint ", at);
  return /\(attr\b[^()]*\)/.exec(text.slice(start, end < 0 ? undefined : end))?.[0] ?? "";
}

const sync = (repo: string) =>
  runBinary(["board", "sync", "--json", "--repo", join(repo, "hw")], { env: ISOLATED_ENV });

describe("board sync writes DNP only into boards whose format has it", () => {
  test("KiCad 7 board (20221018): no dnp flag, the format kept, a warning that says why", async () => {
    const { repo, schematic, board } = await repoWith("corpus/antenna-eval");
    markDnp(schematic, "R2");
    const result = await sync(repo);
    expect(result.exitCode).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      version: number;
      updated: unknown[];
      warnings: { code: string; ref?: string; message: string }[];
    };
    expect(plan.version).toBe(20221018);
    expect(plan.updated).toEqual([]);
    const warning = plan.warnings.find((w) => w.code === "dnp_not_on_board")!;
    expect(warning.ref).toBe("R2");
    expect(warning.message).toContain("KiCad 7 (20221018) board has no DNP flag");
    expect(warning.message).toContain("20230410");
    expect(attrOf(board, "R2")).not.toContain("dnp");
    expect(readFileSync(board, "utf8")).not.toMatch(/\(attr\b[^()]*\bdnp\b/);
    expect((await git(repo, "status", "--porcelain", "--", "hw/*.kicad_pcb")).trim()).toBe("");
  }, 180_000);

  test("KiCad 9 board: the footprint gets (attr … dnp), as KiCad's update does", async () => {
    const { repo, schematic, board } = await repoWith("corpus/bms-c1");
    markDnp(schematic, "R24");
    const result = await sync(repo);
    expect(result.exitCode).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      updated: { ref: string; flags?: { add: string[] } }[];
      warnings: { code: string }[];
    };
    expect(plan.updated.find((u) => u.ref === "R24")?.flags?.add).toEqual(["dnp"]);
    expect(plan.warnings.map((w) => w.code)).not.toContain("dnp_not_on_board");
    expect(attrOf(board, "R24")).toMatch(/\bdnp\b/);
  }, 180_000);
});
