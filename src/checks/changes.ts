/**
 * The `changes` family: every `docs/changes/*.md` must be a well-formed proposal whose id
 * matches its file name and whose requirement ids exist in the spec.
 */
import { basename, join } from "node:path";
import { listRepoFolder, readRepoDoc } from "../repo/repo-files.ts";
import { parseProposal } from "../spec/proposal.ts";
import { repoPath, type Design } from "../design/design.ts";
import { familyResult } from "./result.ts";
import type { CheckResult, Finding } from "./types.ts";

export interface ChangesOptions {
  /** Absolute docs folder. */
  docsDir: string;
  /** Requirement ids defined in docs/SPEC.md, when it exists. */
  requirementIds?: Set<string>;
}

export function checkChanges(design: Design, options: ChangesOptions): CheckResult {
  const dir = join(options.docsDir, "changes");
  const files = listRepoFolder(design.project.repoRoot, dir).filter((f) => f.endsWith(".md"));
  const findings: Finding[] = [];
  for (const name of files) {
    const path = join(dir, name);
    const file = repoPath(design, path);
    const problem = (rule: string, line: number, message: string) =>
      findings.push({
        check: "changes",
        rule,
        severity: "error",
        message: `${file}: ${message}`,
        key: `changes:${rule}:${file}:${message}`,
        location: { file, ...(line ? { line } : {}) },
      });
    const { proposal, problems } = parseProposal(readRepoDoc(design.project.repoRoot, path) ?? "");
    for (const p of problems) problem("malformed", p.line, p.message);
    if (!proposal) continue;
    if (proposal.id !== basename(name, ".md"))
      problem("id_mismatch", 0, `the proposal's id "${proposal.id}" does not match its file name`);
    for (const req of proposal.requirements) {
      if (options.requirementIds && !options.requirementIds.has(req))
        problem("unknown_requirement", 0, `names ${req}, which docs/SPEC.md does not define`);
    }
  }
  const clean =
    files.length === 0 ? "no change proposals" : `${files.length} proposal${files.length === 1 ? "" : "s"} well-formed`;
  return familyResult("changes", findings, { cleanSummary: clean });
}
