/**
 * Loading `.copperhead/config.json`.
 *
 * The file is optional; every key has a default. When it exists it must be exactly right: a
 * misspelt key silently ignored would mean a setting the user believes in does nothing, so an
 * unknown key is an error that names the closest valid key. Every error names the file, the
 * JSON path of the bad key and what was expected, and carries a fix.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as v from "valibot";
import { CopperheadError } from "../errors.ts";
import { redactedJson } from "../redact.ts";
import { discoverProject, type KicadProject } from "../repo/project.ts";
import { READ_LIMITS, readRepoTextIfPresent } from "../repo/repo-files.ts";
import { editDistance } from "../util/close-matches.ts";
import { parseJsonText } from "./json-syntax.ts";
import { CHECK_SWITCH_KEYS, CONFIG_KEYS, ConfigSchema, type Config } from "./schema.ts";

export type { Config } from "./schema.ts";

/** Repo-relative location of the config file. */
export const CONFIG_PATH = ".copperhead/config.json";
/** Repo-relative location of the schema copy `init` writes next to the config. */
export const CONFIG_SCHEMA_PATH = ".copperhead/config.schema.json";

export interface LoadedConfig {
  /** The configuration with defaults applied. */
  config: Config;
  /** Repo-relative path of the file, when one exists. */
  path?: string;
}

/** One problem found in the file, for `details.issues` of the typed error. */
export interface ConfigIssue {
  /** Dot path of the bad key, e.g. `checks.erx`; `(root)` for the document itself. */
  path: string;
  message: string;
  fix: string;
}

export function loadConfig(repoRoot: string): LoadedConfig {
  const text = readRepoTextIfPresent(CONFIG_PATH, { within: repoRoot, maxBytes: READ_LIMITS.config });
  if (text === undefined) return { config: parseConfigValue({}, CONFIG_PATH) };
  return { config: parseConfigText(text, CONFIG_PATH), path: CONFIG_PATH };
}

/** Parses and validates the text of a config file; `file` only labels errors. */
export function parseConfigText(text: string, file: string = CONFIG_PATH): Config {
  const value = parseJsonText(
    text,
    (where, at) =>
      new CopperheadError("config_invalid", `${file} is not valid JSON (${where})`, {
        file,
        ...(at ? { line: at.line, column: at.column } : {}),
        fix: `Fix the JSON syntax in ${file}${at ? ` at line ${at.line}, column ${at.column}` : ""} (JSON allows no comments or trailing commas), or delete the file to use the defaults.`,
      }),
  );
  return parseConfigValue(value, file);
}

/** Validates an already-parsed config value and applies defaults. */
export function parseConfigValue(value: unknown, file: string = CONFIG_PATH): Config {
  // valibot's object schemas accept arrays (they are objects), so rule them out first.
  if (Array.isArray(value)) {
    throw new CopperheadError("config_invalid", `${file}: (root): expected a JSON object, got ${shown(value)}`, {
      file,
      path: "(root)",
      fix: `Make ${file} a JSON object such as {}, or delete it to use the defaults.`,
    });
  }
  const result = v.safeParse(ConfigSchema, value);
  const issues = result.success
    ? pathIssues(result.output)
    : firstPerPath(result.issues.map((i) => describeIssue(i, file)));
  if (issues.length > 0 || !result.success) {
    const first = issues[0]!;
    const message =
      issues.length === 1
        ? `${file}: ${first.path}: ${first.message}`
        : `${file} has ${issues.length} problems: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`;
    throw new CopperheadError("config_invalid", message, {
      file,
      path: first.path,
      issues,
      fix: issues.length === 1 ? first.fix : issues.map((i) => i.fix).join(" "),
    });
  }
  return result.output;
}

type Issue = v.InferIssue<typeof ConfigSchema>;

/** A pipe can fail several actions on one value (-1.5 is neither whole nor >= 0): say it once. */
function firstPerPath(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => !seen.has(i.path) && seen.add(i.path));
}

function describeIssue(issue: Issue, file: string): ConfigIssue {
  const path = v.getDotPath(issue) ?? "(root)";
  const keys = issue.path ?? [];
  const key = keys.length > 0 ? String(keys[keys.length - 1]!.key) : undefined;
  if (issue.type === "strict_object" && issue.expected === "never" && key !== undefined) {
    const valid = keys.length > 1 ? CHECK_SWITCH_KEYS : CONFIG_KEYS;
    const suggestion = closestKey(key, valid);
    const hint = suggestion ? `did you mean ${suggestion}?` : `valid keys are ${valid.join(", ")}`;
    return {
      path,
      message: `unknown key "${key}" (${hint})`,
      fix: suggestion ? `Rename "${key}" to "${suggestion}", or remove it.` : `Remove "${key}"; ${hint}.`,
    };
  }
  const expected = issue.message;
  return {
    path,
    message: `expected ${expected}, got ${shown(issue.input)}`,
    fix:
      keys.length === 0
        ? `Make ${file} a JSON object such as {}, or delete it to use the defaults.`
        : `Set ${path} in ${file} to ${expected}, or remove it to use the default.`,
  };
}

/**
 * A bad value as the user wrote it, shortened so one huge value cannot flood the message. A
 * number too large for a double (1e400) parses as infinity, which JSON would show as null.
 */
function shown(value: unknown): string {
  if (typeof value === "number" && !Number.isFinite(value)) return "a number out of range (too large to represent)";
  const text = redactedJson(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Paths must stay inside the repo: the agent's file access is confined to it (ARCHITECTURE.md, "Invariants"). */
function pathIssues(config: Config): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const key of ["project", "docs"] as const) {
    const value = config[key];
    if (value === undefined || !escapesRepo(value)) continue;
    issues.push({
      path: key,
      message: `expected a path inside the repository, got ${JSON.stringify(value)}`,
      fix: `Make ${key} a relative path without ".." segments, e.g. ${key === "docs" ? '"docs"' : '"board/board.kicad_pro"'}.`,
    });
  }
  return issues;
}

function escapesRepo(path: string): boolean {
  return isAbsolute(path) || /^[a-zA-Z]:/.test(path) || path.split(/[\\/]/).includes("..");
}

/**
 * The valid key closest to `key` by edit distance (case-insensitive), when it is close enough
 * to be a plausible typo: at most a third of the key's length, and at least 2 edits allowed.
 */
export function closestKey(key: string, valid: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of valid) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

export interface ConfiguredProject extends LoadedConfig {
  project: KicadProject;
}

/**
 * Project discovery honouring the config: an explicit `--project` wins, then the config's
 * `project`, then discovery (in the folder `within` first: see `discoverProject`). The config
 * speaks for the whole repository, so it wins wherever in the repository a command runs.
 */
export function discoverConfiguredProject(repoRoot: string, explicit?: string, within = ""): ConfiguredProject {
  const loaded = loadConfig(repoRoot);
  const configured = loaded.config.project;
  if (!explicit && configured && !existsSync(join(repoRoot, configured))) {
    throw new CopperheadError("config_invalid", `${CONFIG_PATH}: project: ${configured} does not exist`, {
      file: CONFIG_PATH,
      path: "project",
      fix: `Set "project" in ${CONFIG_PATH} to the repo-relative path of an existing .kicad_pro, or remove it to discover the project.`,
    });
  }
  if (explicit) return { ...loaded, project: discoverProject(repoRoot, explicit, within) };
  return {
    ...loaded,
    project: configured ? discoverProject(repoRoot, configured) : discoverProject(repoRoot, undefined, within),
  };
}
