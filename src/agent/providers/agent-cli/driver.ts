/**
 * What differs between agent CLIs (Claude Code, Codex): how one is launched, and how its JSON
 * event stream reads. The session (session.ts) is the same for every CLI.
 */
import { CopperheadError } from "../../../errors.ts";
import type { Usage } from "../../conversation.ts";

/** One line of the CLI's JSON event stream, in the terms the adapter needs. */
export type CliEvent =
  | { type: "session"; id: string }
  | { type: "text"; text: string }
  | ({ type: "usage" } & Usage)
  /** The CLI has, or used, a tool copperhead did not give it. */
  | { type: "foreign_tool"; name: string }
  | { type: "failed"; message: string };

export interface LaunchOptions {
  prompt: string;
  system: string;
  model?: string;
  /** The session to continue, when the CLI already ended one this run. */
  resume?: string;
  /** How the CLI starts the bridge: this binary's `mcp-bridge`, with the run's socket. */
  bridge: { command: string; args: string[]; env: Record<string, string> };
  /** The private folder the CLI runs in (absolute); `files` are written there. */
  dir: string;
  /** The environment the CLI runs with (where its own config lives). */
  env: Record<string, string | undefined>;
}

export interface Launch {
  /** Never the prompt or the system prompt: argv is readable by every local user. */
  args: string[];
  /** Files written into the private folder, mode 0600, before the CLI starts. */
  files?: Record<string, string>;
  env?: Record<string, string>;
  /** What the CLI reads on stdin: the prompt. */
  stdin: string;
}

export interface AgentCliDriver {
  /** `claude-code` or `codex`. */
  readonly provider: string;
  /** The executable looked up on PATH. */
  readonly executable: string;
  readonly product: string;
  readonly install: string;
  /** The command that saves a login, named in every login error. */
  readonly login: string;
  /** Arguments that exit 0 exactly when a login is saved. */
  readonly loginStatusArgs: string[];
  launch(options: LaunchOptions): Launch;
  readEvent(event: Record<string, unknown>): CliEvent[];
}

/** The file in the private folder that holds the system prompt, for the CLIs that read one. */
export const SYSTEM_PROMPT_FILE = "system-prompt.md";

/** Long enough for a full check of a big design inside `finish`. */
export const TOOL_TIMEOUT_SECONDS = 3600;

/** A token count from a CLI's event, or 0 when it is missing or malformed. */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** `howToPickModel`: where the person running copperhead chooses the model (a flag, or MCP's server environment). */
export function notInstalledError(driver: AgentCliDriver, howToPickModel: string): CopperheadError {
  return new CopperheadError("cli_not_found", `${driver.product}'s \`${driver.executable}\` is not on PATH.`, {
    fix: `${driver.install}, run \`${driver.login}\`, then run the change again; or pick another model with ${howToPickModel}.`,
  });
}
