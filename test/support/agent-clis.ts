/**
 * Puts the stand-in `claude` and `codex` CLIs (test/support/agent-cli-standin.ts) first on a
 * PATH, for tests of the claude-code and codex providers.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeTempDir } from "./kicad.ts";

const STANDIN = resolve(import.meta.dir, "agent-cli-standin.ts");

export interface StandIns {
  /** PATH with the stand-ins first. */
  path: string;
  /** Environment for a run that uses them: PATH, the session to play, the argument log. */
  env(session: string, extra?: Record<string, string>): Record<string, string>;
  /** Every invocation's arguments so far, `[cli, ...args]`. */
  invocations(): string[][];
  /** The environment each MCP server the stand-ins started was given (the bridge's socket and token). */
  serverEnvs(): Record<string, string>[];
  /** Each session's pid and the prompt and system prompt it read (on stdin, from a file). */
  inputs(): { pid: number; prompt: string; system: string }[];
  /** The pids of the helper processes hanging stand-ins started. */
  helpers(): number[];
}

export async function standIns(): Promise<StandIns> {
  const dir = await makeTempDir();
  const bin = join(dir, "bin");
  const log = join(dir, "invocations.jsonl");
  writeFileSync(log, "");
  await Bun.write(join(bin, ".keep"), "");
  for (const cli of ["claude", "codex"]) {
    const wrapper = join(bin, cli);
    writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${STANDIN}" ${cli} "$@"\n`);
    chmodSync(wrapper, 0o755);
  }
  const path = `${bin}:${process.env.PATH ?? ""}`;
  return {
    path,
    env: (session, extra = {}) => ({
      PATH: path,
      COPPERHEAD_STANDIN_SESSION: session,
      COPPERHEAD_STANDIN_LOG: log,
      ...extra,
    }),
    invocations: () => entries(log).flatMap((e) => (e.args ? [e.args] : [])),
    serverEnvs: () => entries(log).flatMap((e) => (e.env ? [e.env] : [])),
    inputs: () =>
      entries(log).flatMap((e) =>
        e.pid !== undefined ? [{ pid: e.pid, prompt: e.prompt ?? "", system: e.system ?? "" }] : [],
      ),
    helpers: () => entries(log).flatMap((e) => (e.helper !== undefined ? [e.helper] : [])),
  };
}

function entries(log: string): {
  args?: string[];
  env?: Record<string, string>;
  pid?: number;
  prompt?: string;
  system?: string;
  helper?: number;
}[] {
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}
