/**
 * KiCad demo projects as git repos, for tests of what copperhead does with a repo's history
 * (baselines, the pre-commit hook), and the one edit those tests make: a label connected to
 * nothing, which ERC reports as a new `label_dangling` error.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { git } from "../repo/git-repo.ts";
import { copyCorpusProject, demoProjects, type CorpusProject } from "./corpora.ts";

/** A copy of `demos/<id>` (e.g. `custom_pads_test/custom_pads_test`) in a fresh repo, committed once. */
export async function demoRepo(id: string): Promise<CorpusProject> {
  const found = demoProjects().find((p) => p.id === `demos/${id}`);
  if (!found) throw new Error(`the KiCad demo ${id} is not installed; run scripts/setup.sh --test`);
  const project = await copyCorpusProject(found);
  await git(project.root, "init", "--quiet", "--initial-branch=main");
  await git(project.root, "config", "user.name", "Test User");
  await git(project.root, "config", "user.email", "test@example.com");
  await git(project.root, "add", "-A");
  await git(project.root, "commit", "--quiet", "-m", "the design as KiCad ships it");
  return project;
}

/** Places a label named `name`, joined to nothing, on the sheet at `schematic`. */
export function addDanglingLabel(schematic: string, name: string): void {
  const text = readFileSync(schematic, "utf8").trimEnd();
  if (!text.endsWith(")")) throw new Error(`${schematic} does not end with its root list`);
  const label = [
    `\t(label ${JSON.stringify(name)}`,
    "\t\t(at 25.4 25.4 0)",
    "\t\t(effects (font (size 1.27 1.27)) (justify left bottom))",
    `\t\t(uuid "${crypto.randomUUID()}")`,
    "\t)",
  ].join("\n");
  writeFileSync(schematic, `${text.slice(0, -1)}${label}\n)\n`);
}
