/**
 * `copperhead check`: the deterministic gate over the repo as it is (see `checks/check.ts`),
 * with the repo's own settings from `.copperhead/config.json`. No network, no model.
 *
 * With a baseline (`--baseline <ref>`, and `--staged`, the pre-commit hook's check against
 * HEAD) the other state is checked on a snapshot in a temporary folder, sharing the repo's
 * result cache, and the report is judged against it (see `checks/baseline.ts`).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join, posix } from "node:path";
import { reportAgainstBaseline, ruleFiles, unchangedItems } from "../checks/baseline.ts";
import { sameBytes } from "../kicad/sexpr/index.ts";
import { checkProject } from "../checks/check.ts";
import { skippedResult } from "../checks/result.ts";
import { CHECK_IDS, type CheckReport } from "../checks/types.ts";
import { CONFIG_PATH, discoverConfiguredProject } from "../config/config.ts";
import { repoPath } from "../design/design.ts";
import { Board } from "../kicad/board/model.ts";
import { openRepo } from "../repo/recovery.ts";
import { headOrNothing, stagedPaths, withSnapshot, withStagedSnapshot } from "../repo/snapshot.ts";
import { trimEndOf } from "../util/trim.ts";

export interface CheckOptions {
  repo?: string;
  project?: string;
  /** Also run the fabrication checks; unconnected items become errors. */
  fab?: boolean;
  /** Warnings fail their family too. Default: the config's `strict`. */
  strict?: boolean;
  /**
   * Judge the design against this git ref (`HEAD`, `main`, a hash): every finding is marked
   * new, unchanged or absent, and only new ones fail. Checked on a snapshot of the ref, never
   * a checkout in the user's tree.
   */
  baseline?: string;
  /**
   * Check what is staged instead of the working tree, against HEAD (against nothing in a repo
   * with no commit yet): what the pre-commit hook runs. A commit that stages nothing a check
   * reads is not checked at all.
   */
  staged?: boolean;
}

export async function runCheck(options: CheckOptions = {}): Promise<CheckReport> {
  const { root: repoRoot, within } = await openRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project, within);
  const flags = { strict: options.strict ?? config.strict, fab: options.fab ?? false, cacheRepo: repoRoot };
  const projectPath = repoPath(project, project.projectFile);
  const current = () => checkProject(project, { ...config, ...flags });
  if (options.baseline === undefined && !options.staged) return current();

  // Another state is checked on a snapshot of the whole tree, with that state's own config (docs
  // folder, switches) and this run's flags.
  const checkAt = async (root: string, ref?: string): Promise<CheckReport> => {
    // A ref from before the project existed has nothing to compare with: every finding is new.
    if (ref && !existsSync(join(root, projectPath)))
      return uncheckedReport(projectPath, flags, `${projectPath} does not exist at ${ref}`);
    const there = discoverConfiguredProject(realpathSync(root), projectPath);
    return checkProject(there.project, { ...there.config, ...flags });
  };
  // The board in the repo's folder of a tree (the working tree, a snapshot), when it has one.
  const boardIn = (folder: string) => {
    const file = project.board && join(folder, repoPath(project, project.board));
    return file && existsSync(file) ? Board.load(file, { within: realpathSync(folder) }) : undefined;
  };
  const bytesIn = (folder: string, path: string) =>
    existsSync(join(folder, path)) ? readFileSync(join(folder, path)) : undefined;
  // `report` is the check of the tree in `folder`; the boards tell a violation KiCad reports again from a new one.
  const against = (report: CheckReport, ref: string, folder: string) =>
    withSnapshot(repoRoot, ref, async (snapshot) => {
      const base = snapshot.root;
      const sameRules = ruleFiles(repoPath(project, project.projectFile)).every((rules) =>
        sameBytes(bytesIn(base, rules), bytesIn(folder, rules)),
      );
      const unchanged = unchangedItems(() => ({ before: boardIn(base), after: boardIn(folder), sameRules }));
      return reportAgainstBaseline(
        report,
        await checkAt(snapshot.root, ref),
        { ref, commit: snapshot.commit },
        unchanged,
      );
    });

  if (!options.staged) return against(await current(), options.baseline!, repoRoot);
  const touched = (await stagedPaths(repoRoot)).filter((path) => readByChecks(path, config.docs));
  if (touched.length === 0) return uncheckedReport(projectPath, flags);
  // A repo's first commit has no HEAD to compare with: everything staged is checked.
  const first = options.baseline === undefined && (await headOrNothing(repoRoot)) === undefined;
  return withStagedSnapshot(repoRoot, async (root) => {
    const report = await checkAt(root);
    return first ? report : against(report, options.baseline ?? "HEAD", root);
  });
}

const KICAD_FILE = /\.kicad_(?:pro|sch|pcb|sym|mod|dru|wks)$/;
const LIBRARY_TABLES = new Set(["sym-lib-table", "fp-lib-table"]);

/**
 * Whether a change to `path` (repo-relative) can change a check's result, judged by its name
 * alone so the hook decides without loading anything: KiCad design and library files anywhere
 * in the repo, the docs folder and copperhead's config.
 */
function readByChecks(path: string, docs: string): boolean {
  const folder = trimEndOf(posix.normalize(docs), "/");
  return (
    path === CONFIG_PATH ||
    folder === "." ||
    path.startsWith(`${folder}/`) ||
    KICAD_FILE.test(path) ||
    LIBRARY_TABLES.has(posix.basename(path))
  );
}

/**
 * A report with every family skipped and no finding: a commit that stages nothing a check
 * reads passes with it, and a baseline from before the project existed is it.
 */
function uncheckedReport(
  project: string,
  flags: { strict: boolean; fab: boolean },
  why = "nothing staged touches the design, the docs or .copperhead/config.json",
): CheckReport {
  return {
    schema: "copperhead.check/1",
    ok: true,
    project,
    kicad: null,
    strict: flags.strict,
    fab: flags.fab,
    checks: CHECK_IDS.map((id) => skippedResult(id, why)),
    counts: { error: 0, warning: 0, info: 0 },
  };
}
