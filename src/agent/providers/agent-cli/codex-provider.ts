/**
 * The Codex user's own model provider, carried over as `-c` overrides.
 *
 * copperhead runs Codex with `--ignore-user-config`, so the tools, MCP servers and rules in the
 * user's `config.toml` stay out of the run. But a user whose config selects a model provider of
 * their own (Azure, a local server, a gateway) would silently lose it, and Codex would dial the
 * hosted API instead. So exactly two things are read from `$CODEX_HOME/config.toml` (default
 * `~/.codex/config.toml`): `model_provider`, and that provider's table under `model_providers`,
 * and they are passed back as `-c model_provider=…` and `-c model_providers.<id>={…}`, which
 * Codex honours even with `--ignore-user-config`. Nothing else in the file is read.
 */
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CopperheadError } from "../../../errors.ts";

/** A config.toml is a few KB; one past this is not read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The `-c key=value` pairs that select the user's provider; none when the config names none. */
export function userProviderOverrides(env: Record<string, string | undefined>): Array<[string, string]> {
  const home = env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
  const file = join(home, "config.toml");
  let text: string;
  try {
    if (!statSync(file).isFile() || statSync(file).size > MAX_CONFIG_BYTES) return [];
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  let config: Record<string, unknown>;
  try {
    config = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new CopperheadError(
      "config_invalid",
      `${file} is not valid TOML: ${err instanceof Error ? err.message : String(err)}`,
      {
        file,
        fix: "Fix the Codex config (codex reads it too), or move it aside for this run.",
      },
    );
  }
  const id = config.model_provider;
  if (typeof id !== "string" || !id) return [];
  const table = (config.model_providers as Record<string, unknown> | undefined)?.[id];
  const overrides: Array<[string, string]> = [["model_provider", tomlValue(id)]];
  // A built-in provider (openai, ollama, …) has no table of its own: the id alone selects it.
  if (table && typeof table === "object" && !Array.isArray(table))
    overrides.push([`model_providers.${tomlKey(id)}`, tomlValue(table)]);
  return overrides;
}

/** A TOML inline value: strings as basic strings, tables inline, arrays in brackets. */
export function tomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (value && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)
      .join(", ")}}`;
  }
  throw new CopperheadError(
    "config_invalid",
    `a Codex provider setting has a value TOML cannot write inline: ${String(value)}`,
  );
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}
