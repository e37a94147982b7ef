/**
 * The baseline check of a gated run, taken on a snapshot of HEAD. The run starts from a clean
 * tree, so HEAD is exactly the design before the run; checking a copy of it lets the model
 * propose and edit the real tree meanwhile, and the gate awaits the baseline only when it needs
 * it — with a real model the baseline costs no wall time at all. Check results are cached by
 * content, so the snapshot shares the repo's cache in both directions.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { CACHE_DIR } from "../checks/cache.ts";
import type { CheckReport } from "../checks/types.ts";
import { runCheck } from "../commands/check.ts";
import { CopperheadError } from "../errors.ts";
import type { KicadProject } from "../repo/project.ts";

export async function checkCommitted(project: KicadProject, strict: boolean): Promise<CheckReport> {
  const root = project.repoRoot;
  const snapshot = mkdtempSync(join(tmpdir(), "copperhead-baseline-"));
  try {
    const archive = Bun.spawn(["git", "-C", root, "archive", "--format=tar", "HEAD"], { stdout: "pipe", stderr: "pipe" });
    const untar = Bun.spawn(["tar", "-x", "-f", "-", "-C", snapshot], { stdin: archive.stdout, stdout: "ignore", stderr: "pipe" });
    const [archived, extracted] = await Promise.all([archive.exited, untar.exited]);
    if (archived !== 0 || extracted !== 0) {
      const why = (await new Response(archive.stderr).text()) || (await new Response(untar.stderr).text());
      throw new CopperheadError("git_failed", `Could not snapshot HEAD for the baseline check: ${why.trim()}`, { fix: "Check that `git archive HEAD` works in this repo." });
    }
    const cache = join(root, CACHE_DIR);
    if (existsSync(cache)) cpSync(cache, join(snapshot, CACHE_DIR), { recursive: true });
    const report = await runCheck({ repo: snapshot, project: relative(root, project.projectFile).split(sep).join("/"), strict });
    if (existsSync(join(snapshot, CACHE_DIR))) cpSync(join(snapshot, CACHE_DIR), cache, { recursive: true, force: false });
    return report;
  } finally {
    rmSync(snapshot, { recursive: true, force: true });
  }
}
