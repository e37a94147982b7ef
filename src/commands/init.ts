/**
 * `copperhead init`: sets a KiCad repo up for copperhead. No key, no network.
 *
 * What it writes and who owns it afterwards:
 * - `.copperhead/config.json`: created with every default spelled out; then the human's.
 *   Only an explicit `--project` that differs from the configured one changes it.
 * - `.copperhead/config.schema.json`: the JSON Schema the config's `$schema` points at, so
 *   editors validate offline; copperhead's, refreshed when copperhead's schema changes.
 * - `.copperhead/.gitignore`: makes sure `runs/` and `cache/` stay out of git; other lines
 *   a human adds are kept.
 * - `<docs>/SPEC.md`, `<docs>/DECISIONS.md`, `<docs>/CHANGELOG.md`: created once, never
 *   rewritten.
 * - `<docs>/BOM.md` and `<docs>/PINOUT.md` (spec/generated-docs.ts): the generated tables are
 *   regenerated; human columns and prose are kept. A generated region edited by hand is
 *   `refused` (regenerating would undo the edit) unless `force`.
 * - the pre-commit hook (see src/repo/hooks.ts); a foreign hook is never overwritten.
 *
 * With the hook, init also checks the design as it is and reports what it found: on a board
 * that already has findings they are the baseline the hook (and `do`) compare with, not
 * blockers, and saying so up front keeps a first failing check from reading as a broken setup.
 *
 * Run in a subfolder (where the `.kicad_pro` is), init sets up the repository's root, as every
 * command run anywhere in the repository reads the root's `.copperhead/`; the config's `project`
 * then names the subfolder's project, and the result says where the root is.
 *
 * Idempotent: the output is a pure function of the design and the existing files (no dates),
 * so a second run reports every file `unchanged` and leaves `git status` clean.
 */
import * as v from "valibot";
import { loadDesign, repoPath, type Design } from "../design/design.ts";
import { CONFIG_PATH, CONFIG_SCHEMA_PATH, discoverConfiguredProject, type Config } from "../config/config.ts";
import { configJsonSchemaText } from "../config/schema.ts";
import { checkProject } from "../checks/check.ts";
import { SeverityCountsSchema } from "../checks/types.ts";
import { asCopperheadError, CopperheadError } from "../errors.ts";
import { installPreCommitHook } from "../repo/hooks.ts";
import { withRepoLock } from "../repo/lock.ts";
import { FileOutcomeSchema, refusedWhenConfined, writeOwnedFile, type FileOutcome } from "../repo/owned-files.ts";
import { locateRepo } from "../repo/project.ts";
import { restoreInterruptedRuns } from "../repo/recovery.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
import { GENERATED_DOCS, type GeneratedDoc } from "../spec/generated-docs.ts";
import { changelogTemplate, decisionsTemplate, specTemplate } from "../spec/templates.ts";
import { trimEndOf } from "../util/trim.ts";

export interface InitOptions {
  repo?: string;
  project?: string;
  /** Overwrite a hand-edited generated region of BOM.md or PINOUT.md (never a foreign hook). */
  force?: boolean;
  /** Install the pre-commit hook (default true; `--no-hooks` turns it off). */
  hooks?: boolean;
}

export type { FileAction, FileOutcome } from "../repo/owned-files.ts";

/** What `init` returns (`init --json`, the MCP result): its type, and the tool's `outputSchema`. */
export const InitResultSchema = v.object({
  schema: v.literal("copperhead.init/1"),
  /** Absolute path of the repository's root, where the files below are. */
  root: v.string(),
  /** Repo-relative folder init was run from, when not the root. */
  from: v.optional(v.string()),
  /** Repo-relative path of the `.kicad_pro`. */
  project: v.string(),
  files: v.array(FileOutcomeSchema),
  /**
   * The design's findings when the hook was installed: what it and `do` will compare with, so
   * only findings new since then block. `error` says why the check could not run instead.
   */
  baseline: v.optional(v.union([v.object({ counts: SeverityCountsSchema }), v.object({ error: v.string() })])),
});
export type InitResult = v.InferOutput<typeof InitResultSchema>;

const GITIGNORE_PATH = ".copperhead/.gitignore";
const GITIGNORE_ENTRIES = ["runs/", "cache/", "lock", "lock.*"];

/**
 * init writes files, so it holds the repo lock like `do` and `sync --resolve`: it queues behind
 * them in this process and is `busy` while another process changes the repo. A repo with no
 * KiCad project fails first, before taking the lock could create `.copperhead/` in it.
 */
export async function runInit(options: InitOptions = {}): Promise<InitResult> {
  const { root: repoRoot, within } = locateRepo(options.repo);
  discoverConfiguredProject(repoRoot, options.project, within);
  let locked = false;
  const init = async () => {
    await restoreInterruptedRuns(repoRoot);
    return initRepo(repoRoot, within, options);
  };
  try {
    return await withRepoLock(repoRoot, () => {
      locked = true;
      return init();
    });
  } catch (err) {
    // `.copperhead` cannot hold the lock (a committed symlink, a file in its place): then no run
    // can hold it there either, so init goes on without it and refuses the files there by name.
    if (locked || !(err instanceof CopperheadError && err.code === "bad_path")) throw err;
    return init();
  }
}

async function initRepo(repoRoot: string, within: string, options: InitOptions): Promise<InitResult> {
  const { project, config } = discoverConfiguredProject(repoRoot, options.project, within);
  const design = loadDesign(project);
  const projectPath = repoPath(design, project.projectFile);
  const docs = trimEndOf(config.docs, "\\/");

  // Each file on its own: one that copperhead may not write (a symlink out of the repo, a
  // folder in its place) is refused with the reason, and the others are still set up.
  const files: FileOutcome[] = [
    refusedWhenConfined(CONFIG_PATH, () => writeConfig(repoRoot, projectPath, options.project !== undefined)),
    writeOwnedFile(repoRoot, CONFIG_SCHEMA_PATH, configJsonSchemaText()),
    refusedWhenConfined(GITIGNORE_PATH, () => writeGitignore(repoRoot)),
    createOnce(repoRoot, `${docs}/SPEC.md`, () => specTemplate(design)),
    ...GENERATED_DOCS.map((doc) => {
      const path = `${docs}/${doc.file}`;
      return refusedWhenConfined(path, () => writeGenerated(design, doc, path, options.force === true));
    }),
    createOnce(repoRoot, `${docs}/DECISIONS.md`, decisionsTemplate),
    createOnce(repoRoot, `${docs}/CHANGELOG.md`, () => changelogTemplate(docs)),
    options.hooks === false
      ? { path: ".git/hooks/pre-commit", action: "skipped", reason: "turned off with --no-hooks" }
      : installPreCommitHook(repoRoot),
  ];
  const hook = files.at(-1)!;
  const result: InitResult = {
    schema: "copperhead.init/1",
    root: repoRoot,
    ...(within ? { from: within } : {}),
    project: projectPath,
    files,
  };
  if (hook.action === "created" || hook.action === "updated" || hook.action === "unchanged")
    result.baseline = await baselineFindings(repoRoot, projectPath);
  return result;
}

/** The findings of the design as init leaves it; a check that cannot run is reported, not thrown. */
async function baselineFindings(repoRoot: string, projectPath: string): Promise<NonNullable<InitResult["baseline"]>> {
  try {
    // The config init just wrote, so the check sees the docs it just created.
    const { project, config } = discoverConfiguredProject(repoRoot, projectPath);
    return { counts: (await checkProject(project, config)).counts };
  } catch (err) {
    const typed = asCopperheadError(err);
    return { error: typed.fix ? `${typed.message} ${typed.fix}` : typed.message };
  }
}

/** The config a fresh repo gets: every key spelled out, so the file documents itself. */
function freshConfig(projectPath: string): Config & { $schema: string } {
  return {
    $schema: "./config.schema.json",
    project: projectPath,
    docs: "docs",
    model: null,
    maxRepairCycles: 3,
    maxTurns: 40,
    strict: false,
  };
}

function writeConfig(repoRoot: string, projectPath: string, explicitProject: boolean): FileOutcome {
  const existing = readRepoDoc(repoRoot, CONFIG_PATH);
  if (existing === undefined) return writeOwnedFile(repoRoot, CONFIG_PATH, toJson(freshConfig(projectPath)));
  // discoverConfiguredProject validated the file already, so it parses to an object.
  const current = JSON.parse(existing.replace(/^\uFEFF/, "")) as Record<string, unknown>;
  if (!explicitProject || current.project === projectPath) return { path: CONFIG_PATH, action: "unchanged" };
  return writeOwnedFile(repoRoot, CONFIG_PATH, toJson({ ...current, project: projectPath }));
}

function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

function writeGitignore(repoRoot: string): FileOutcome {
  const existing = readRepoDoc(repoRoot, GITIGNORE_PATH);
  if (existing === undefined) {
    const header = "# copperhead's run records and check cache stay local; the config is shared.";
    return writeOwnedFile(repoRoot, GITIGNORE_PATH, [header, ...GITIGNORE_ENTRIES, ""].join("\n"));
  }
  const present = new Set(existing.split(/\r?\n/).map((l) => l.trim()));
  const missing = GITIGNORE_ENTRIES.filter((e) => !present.has(e) && !present.has(`/${e}`));
  if (missing.length === 0) return { path: GITIGNORE_PATH, action: "unchanged" };
  const base = existing === "" || existing.endsWith("\n") ? existing : existing + "\n";
  return writeOwnedFile(repoRoot, GITIGNORE_PATH, base + missing.join("\n") + "\n");
}

/** Human-owned docs: written when missing, never touched again (also `sync --resolve`'s fix for a missing record). */
export function createOnce(repoRoot: string, path: string, content: () => string): FileOutcome {
  return refusedWhenConfined(path, () =>
    readRepoDoc(repoRoot, path) !== undefined
      ? { path, action: "unchanged" }
      : writeOwnedFile(repoRoot, path, content()),
  );
}

/**
 * A generated doc: regenerated, unless that would undo a hand edit and `force` is off (also
 * `sync --resolve`'s fix for a table that drifted, in the working tree).
 */
export function writeGenerated(design: Design, doc: GeneratedDoc, path: string, force: boolean): FileOutcome {
  const repoRoot = design.project.repoRoot;
  const existing = readRepoDoc(repoRoot, path);
  if (existing !== undefined && !force) {
    const refusal = generatedRefusal(doc, existing, path);
    if (refusal) return { path, action: "refused", reason: refusal };
  }
  return writeOwnedFile(repoRoot, path, doc.render(design, existing));
}

/** Why regenerating an existing generated doc would lose someone's work, if it would. */
function generatedRefusal(doc: GeneratedDoc, existing: string, path: string): string | undefined {
  let table;
  try {
    table = doc.parse(existing, path);
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "parse_error") {
      return `${err.message}; fix the markers, or rerun with --force to rewrite the table`;
    }
    throw err;
  }
  if (!table) {
    return `${path} has no copperhead table markers; rerun with --force to append the generated table, or add the begin/end markers where it should go`;
  }
  if (table.edited) return doc.editedAdvice;
  return undefined;
}
