/**
 * `copperhead doctor`: is this machine and repo ready for copperhead? Each item says what was
 * found and, when something is wrong, how to fix it. No network calls; provider keys are
 * reported by variable name only, never by value.
 */
import { existsSync } from "node:fs";
import { resolvePatience, type Patience } from "../agent/providers/patience.ts";
import { discoverConfiguredProject, loadConfig } from "../config/config.ts";
import type { Config } from "../config/schema.ts";
import { asCopperheadError } from "../errors.ts";
import { findKicadCli, type KicadCli } from "../kicad/cli/kicad-cli.ts";
import { findKicadPython } from "../kicad/cli/python.ts";
import { projectLibraries, type LibraryKind } from "../kicad/library/libraries.ts";
import { installedGit } from "../repo/git.ts";
import { resolveRepoRoot } from "../repo/project.ts";
import { repoPath } from "../design/design.ts";

export type DoctorStatus = "ok" | "warn" | "fail";

export interface DoctorItem {
  id: "kicad-cli" | "kicad-python" | "git" | "config" | "project" | "libraries" | "providers" | "agent-clis";
  status: DoctorStatus;
  summary: string;
  fix?: string;
}

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
  let configOk = false;
  let config: Config | undefined;
  try {
    repoRoot = resolveRepoRoot(options.repo);
    const loaded = loadConfig(repoRoot);
    const path = loaded.path;
    config = loaded.config;
    configOk = true;
    items.push({ id: "config", status: "ok", summary: path ? `${path} is valid` : "no .copperhead/config.json; defaults apply" });
  } catch (err) {
    items.push(failure("config", err));
  }

  let projectFile: string | undefined;
  if (repoRoot && configOk) {
    try {
      const { project } = discoverConfiguredProject(repoRoot, options.project);
      projectFile = project.projectFile;
      const parts = [repoPath(project, project.schematic), project.board ? repoPath(project, project.board) : "no board"];
      items.push({ id: "project", status: "ok", summary: `${repoPath(project, project.projectFile)} (${parts.join(", ")})` });
    } catch (err) {
      items.push(failure("project", err));
    }
  }
  items.push(librariesItem(projectFile ?? repoRoot ?? process.cwd(), kicad.cli));
  items.push(providersItem(config), agentClisItem());
  return { schema: "copperhead.doctor/1", ok: items.every((i) => i.status !== "fail"), items };
}

async function kicadItem(): Promise<{ item: DoctorItem; cli?: KicadCli }> {
  try {
    const cli = await findKicadCli();
    const libs = cli.shareDir ? `, stock libraries in ${cli.shareDir}` : "; KiCad's template library tables were not found";
    return { cli, item: { id: "kicad-cli", status: cli.shareDir ? "ok" : "warn", summary: `KiCad ${cli.version.raw} at ${cli.path}${libs}` } };
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
  if (!git) return { id: "git", status: "fail", summary: "git is not on PATH", fix: "Install git; `do` and `sync --resolve` commit through it." };
  return { id: "git", status: "ok", summary: `${git.version} at ${git.path}` };
}

/** Every library named by the project and global tables must point at something that exists. */
function librariesItem(project: string, cli: KicadCli | undefined): DoctorItem {
  const libraries = projectLibraries(project, cli);
  const problems: string[] = [];
  const counts: string[] = [];
  try {
    for (const kind of ["symbol", "footprint"] as LibraryKind[]) {
      const entries = libraries.entries(kind);
      const missing = entries.filter((e) => !existsSync(e.path));
      counts.push(`${entries.length - missing.length}/${entries.length} ${kind} libraries`);
      for (const e of missing.slice(0, 5)) problems.push(`${kind} library "${e.nickname}" → ${e.path} (from ${e.table})`);
      if (missing.length > 5) problems.push(`…and ${missing.length - 5} more ${kind} libraries`);
    }
  } catch (err) {
    return failure("libraries", err);
  }
  if (problems.length === 0) return { id: "libraries", status: "ok", summary: `${counts.join(", ")} resolve` };
  return {
    id: "libraries",
    status: "warn",
    summary: `${counts.join(", ")} resolve; missing: ${problems.join("; ")}`,
    fix: "Install the missing libraries or fix their URIs in the lib tables; parts from them cannot be added or checked.",
  };
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
  const host = "COPPERHEAD_MODEL=host works under `copperhead mcp` when the MCP client supports sampling with tools (decided per connection)";
  if (installed.length === 0) {
    return {
      id: "agent-clis",
      status: "warn",
      summary: `neither claude nor codex is on PATH; ${host}`,
      fix: "To use a subscription instead of an API key, install Claude Code or the Codex CLI and log in (claude login, codex login).",
    };
  }
  const parts = found.map((c) => (c.path ? `${c.executable} at ${c.path} (--model ${c.model})` : `${c.executable} not installed`));
  return { id: "agent-clis", status: "ok", summary: `${parts.join("; ")}; ${host}` };
}

const AGENT_CLIS = [
  { executable: "claude", model: "claude-code" },
  { executable: "codex", model: "codex" },
] as const;

function failure(id: DoctorItem["id"], err: unknown): DoctorItem {
  const typed = asCopperheadError(err);
  return { id, status: "fail", summary: typed.message, ...(typed.fix ? { fix: typed.fix } : {}) };
}
