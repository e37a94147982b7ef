/**
 * `copperhead doctor`: is this machine and repo ready for copperhead? Each item says what was
 * found and, when something is wrong, how to fix it. No network calls; provider keys are
 * reported by variable name only, never by value.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { resolvePatience, type Patience } from "../agent/providers/patience.ts";
import { CONFIG_PATH, discoverConfiguredProject, loadConfig } from "../config/config.ts";
import type { Config } from "../config/schema.ts";
import { asCopperheadError } from "../errors.ts";
import { findKicadCli, type KicadCli } from "../kicad/cli/kicad-cli.ts";
import { findKicadPython } from "../kicad/cli/python.ts";
import { Board } from "../kicad/board/model.ts";
import type { UnresolvedLibrary } from "../kicad/library/design-libraries.ts";
import { projectLibraries, type LibraryKind } from "../kicad/library/libraries.ts";
import { loadSchematicProject } from "../kicad/schematic/model/hierarchy.ts";
import { installedGit } from "../repo/git.ts";
import { locateRepo, type KicadProject } from "../repo/project.ts";
import { repoPath } from "../design/design.ts";
import { missingDesignLibraries } from "../design/library-uses.ts";
import { selfCommand } from "../util/self-command.ts";

export type DoctorStatus = "ok" | "warn" | "fail";

export interface DoctorItem {
  id: "kicad-cli" | "kicad-python" | "git" | "config" | "project" | "libraries" | "providers" | "agent-clis" | "mcp";
  status: DoctorStatus;
  summary: string;
  fix?: string;
  /** For `libraries`: each library the design names that does not resolve, and the table line that adds it. */
  missing?: MissingLibrary[];
  /** Command lines to run as they are (the host registrations for this machine). */
  commands?: string[];
}

/** A library the design names that does not resolve; its table is repo-relative here. */
export type MissingLibrary = UnresolvedLibrary;

export interface DoctorResult {
  schema: "copperhead.doctor/1";
  /** False when any item failed: copperhead cannot do its job here yet. */
  ok: boolean;
  items: DoctorItem[];
}

/** Provider variables `do` and `sync --resolve` read; names only are reported. */
export const PROVIDER_VARIABLES = [
  "COPPERHEAD_MODEL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "COPPERHEAD_BASE_URL",
  "COPPERHEAD_API_KEY",
  "COPPERHEAD_PROVIDER_TIMEOUT",
  "COPPERHEAD_IMAGES",
] as const;

export interface DoctorOptions {
  repo?: string;
  project?: string;
}

export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorResult> {
  const items: DoctorItem[] = [];
  const kicad = await kicadItem();
  items.push(kicad.item, await kicadPythonItem(), gitItem());

  let repoRoot: string | undefined;
  let within = "";
  let configOk = false;
  let config: Config | undefined;
  try {
    ({ root: repoRoot, within } = locateRepo(options.repo));
    const loaded = loadConfig(repoRoot);
    const path = loaded.path;
    config = loaded.config;
    configOk = true;
    // From a subfolder, say which root's config applies: it is the one every command there reads.
    const where = within === "" ? "" : ` (the repository's root, ${repoRoot})`;
    items.push({
      id: "config",
      status: "ok",
      summary: path ? `${path} is valid${where}` : `no ${CONFIG_PATH}${where}; defaults apply`,
    });
  } catch (err) {
    items.push(failure("config", err));
  }

  let project: KicadProject | undefined;
  if (repoRoot && configOk) {
    try {
      project = discoverConfiguredProject(repoRoot, options.project, within).project;
      const parts = [
        repoPath(project, project.schematic),
        project.board ? repoPath(project, project.board) : "no board",
      ];
      items.push({
        id: "project",
        status: "ok",
        summary: `${repoPath(project, project.projectFile)} (${parts.join(", ")})`,
      });
    } catch (err) {
      items.push(failure("project", err));
    }
  }
  items.push(librariesItem(project ?? repoRoot ?? process.cwd(), kicad.cli));
  items.push(providersItem(config), agentClisItem(), mcpItem());
  return { schema: "copperhead.doctor/1", ok: items.every((i) => i.status !== "fail"), items };
}

async function kicadItem(): Promise<{ item: DoctorItem; cli?: KicadCli }> {
  try {
    const cli = await findKicadCli();
    const libs = cli.shareDir
      ? `, stock libraries in ${cli.shareDir}`
      : "; KiCad's template library tables were not found";
    return {
      cli,
      item: {
        id: "kicad-cli",
        status: cli.shareDir ? "ok" : "warn",
        summary: `KiCad ${cli.version.raw} at ${cli.path}${libs}`,
      },
    };
  } catch (err) {
    return { item: failure("kicad-cli", err) };
  }
}

/** KiCad's Python refills the zones an added part's copper touches; without it such edits stop. */
async function kicadPythonItem(): Promise<DoctorItem> {
  try {
    const python = await findKicadPython();
    return { id: "kicad-python", status: "ok", summary: `KiCad's Python (pcbnew ${python.version}) at ${python.path}` };
  } catch (err) {
    // `check` and schematic-only runs do not need it, so the machine is still usable.
    return { ...failure("kicad-python", err), status: "warn" };
  }
}

function gitItem(): DoctorItem {
  const git = installedGit();
  if (!git)
    return {
      id: "git",
      status: "fail",
      summary: "git is not on PATH",
      fix: "Install git; `do` and `sync --resolve` commit through it.",
    };
  return { id: "git", status: "ok", summary: `${git.version} at ${git.path}` };
}

/**
 * The libraries the design names must resolve (a design from another machine often names
 * libraries that were only in its author's global table), and every library named by the
 * project and global tables must point at something that exists.
 */
function librariesItem(where: KicadProject | string, cli: KicadCli | undefined): DoctorItem {
  const project = typeof where === "string" ? undefined : where;
  const libraries = projectLibraries(project?.projectFile ?? (where as string), cli);
  const problems: string[] = [];
  const counts: string[] = [];
  let missing: MissingLibrary[] = [];
  try {
    for (const kind of ["symbol", "footprint"] as LibraryKind[]) {
      const entries = libraries.entries(kind);
      const broken = entries.filter((e) => !existsSync(e.path));
      counts.push(`${entries.length - broken.length}/${entries.length} ${kind} libraries`);
      for (const e of broken.slice(0, 5))
        problems.push(`${kind} library "${e.nickname}" → ${e.path} (from ${e.table})`);
      if (broken.length > 5) problems.push(`…and ${broken.length - 5} more ${kind} libraries`);
    }
    if (project) {
      const within = project.repoRoot;
      const schematic = loadSchematicProject(project.schematic, { within });
      const board = project.board ? Board.load(project.board, { within }) : undefined;
      missing = missingDesignLibraries(libraries, schematic, board).map((lib) => ({
        ...lib,
        table: repoPath(project, lib.table),
      }));
    }
  } catch (err) {
    return failure("libraries", err);
  }
  const tables = `${counts.join(", ")} in the tables resolve`;
  if (missing.length > 0) {
    // The summary names the first few; the fix and `missing` carry every one.
    const named = missing
      .slice(0, LIBRARIES_NAMED)
      .map((m) => `${m.kind} library "${m.nickname}" (${describeUses(m)})`);
    if (missing.length > LIBRARIES_NAMED) named.push(`and ${missing.length - LIBRARIES_NAMED} more`);
    return {
      id: "libraries",
      status: "warn",
      summary: `the design names ${missing.length} ${missing.length === 1 ? "library" : "libraries"} that do not resolve: ${named.join(", ")}; ${tables}${problems.length ? `; missing: ${problems.join("; ")}` : ""}`,
      fix: addLibrariesFix(project!, missing),
      missing,
    };
  }
  if (problems.length === 0)
    return {
      id: "libraries",
      status: "ok",
      summary: project ? `every library the design names resolves; ${tables}` : tables,
    };
  return {
    id: "libraries",
    status: "warn",
    summary: `${tables}; missing: ${problems.join("; ")}`,
    fix: "Install the missing libraries or fix their URIs in the lib tables; parts from them cannot be added or checked.",
  };
}

/** Missing libraries the doctor's summary line names before it counts the rest. */
const LIBRARIES_NAMED = 8;

function describeUses(lib: { symbols: number; footprints: number }): string {
  const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  return [lib.symbols && plural(lib.symbols, "symbol"), lib.footprints && plural(lib.footprints, "footprint")]
    .filter(Boolean)
    .join(", ");
}

/** Per table, the lines that add each library (or the whole table, when there is none yet); or KiCad's own dialog. */
function addLibrariesFix(project: KicadProject, missing: MissingLibrary[]): string {
  const tables = [...new Set(missing.map((m) => m.table))];
  const parts = tables.map((table) => {
    const lines = missing.filter((m) => m.table === table).map((m) => `  ${m.line}`);
    if (existsSync(join(project.repoRoot, table)))
      return `add to ${table}, before its closing parenthesis, with each library's real folder:\n${lines.join("\n")}`;
    const root = missing.find((m) => m.table === table)!.kind === "symbol" ? "sym_lib_table" : "fp_lib_table";
    return `create ${table}, with each library's real folder:\n(${root}\n  (version 7)\n${lines.join("\n")}\n)`;
  });
  return [
    `Install each library, then ${parts.join("\nand ")}`,
    "Or in KiCad: Preferences > Manage Symbol Libraries / Manage Footprint Libraries, Project Specific Libraries tab. Until then ERC and DRC warn about every part from them.",
  ].join("\n");
}

function providersItem(config: Config | undefined): DoctorItem {
  let patience: Patience;
  try {
    patience = resolvePatience({ config });
  } catch (err) {
    return failure("providers", err);
  }
  const set = PROVIDER_VARIABLES.filter((name) => (process.env[name] ?? "") !== "");
  const calls =
    `model calls: idle timeout ${patience.timeoutSeconds} s (${patience.timeoutFrom}), deadline ${patience.deadlineSeconds} s (${patience.deadlineFrom}), ` +
    `${patience.retries} retries (${patience.retriesFrom})`;
  if (set.length === 0) {
    return {
      id: "providers",
      status: "warn",
      summary: `no model provider variables set; check, init and doctor need none; ${calls}`,
      fix:
        "For `do` and `sync --resolve`, set COPPERHEAD_MODEL=claude-code or codex (your logged-in CLI; host under `copperhead mcp`), " +
        "or ANTHROPIC_API_KEY, OPENAI_API_KEY, or COPPERHEAD_BASE_URL (an OpenAI-compatible server).",
    };
  }
  return { id: "providers", status: "ok", summary: `set: ${set.join(", ")}; ${calls}` };
}

/**
 * The keyless models: which agent CLIs are on PATH (their login is checked when a run starts),
 * and a reminder that `host` depends on each MCP client, not on this machine.
 */
function agentClisItem(): DoctorItem {
  const found = AGENT_CLIS.map(({ executable, model }) => ({ executable, model, path: Bun.which(executable) }));
  const installed = found.filter((c) => c.path);
  const host =
    "COPPERHEAD_MODEL=host works under `copperhead mcp` when the MCP client supports sampling with tools (decided per connection)";
  if (installed.length === 0) {
    return {
      id: "agent-clis",
      status: "warn",
      summary: `neither claude nor codex is on PATH; ${host}`,
      fix: "To use a subscription instead of an API key, install Claude Code or the Codex CLI and log in (claude login, codex login).",
    };
  }
  const parts = found.map((c) =>
    c.path ? `${c.executable} at ${c.path} (--model ${c.model})` : `${c.executable} not installed`,
  );
  return { id: "agent-clis", status: "ok", summary: `${parts.join("; ")}; ${host}` };
}

/**
 * The exact lines that register this copperhead with Claude Code and Codex, by the absolute path
 * of the running binary: a host starts the server without the user's shell, so a bare
 * `copperhead` off PATH (the binary a source setup leaves in `dist/`) fails to connect.
 */
function mcpItem(): DoctorItem {
  const command = selfCommand().map(shellWord).join(" ");
  return {
    id: "mcp",
    status: "ok",
    summary:
      "to register this copperhead with an AI host, run one of these in the design's repository (Claude Code's --scope project writes .mcp.json for the team to commit; name the binary there as every machine has it)",
    commands: AGENT_CLIS.map(
      ({ executable, model }) => `${executable} mcp add copperhead --env COPPERHEAD_MODEL=${model} -- ${command} mcp`,
    ),
  };
}

/** A word as a POSIX shell reads it back: bare when it is plainly a path, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const AGENT_CLIS = [
  { executable: "claude", model: "claude-code" },
  { executable: "codex", model: "codex" },
] as const;

function failure(id: DoctorItem["id"], err: unknown): DoctorItem {
  const typed = asCopperheadError(err);
  return { id, status: "fail", summary: typed.message, ...(typed.fix ? { fix: typed.fix } : {}) };
}
