/**
 * Locates and runs the compiled executable for binary-level tests. The suite fails loudly when
 * it has not been built, rather than silently testing the sources instead.
 */
import { beforeAll } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { initialisedRepo } from "../support/repos.ts";

/** dist/copperhead, or COPPERHEAD_TEST_BINARY (e.g. a release target from dist/targets/). */
export const BINARY = resolve(process.env.COPPERHEAD_TEST_BINARY ?? resolve(import.meta.dir, "../../dist/copperhead"));

export function requireBinary(): string {
  if (!existsSync(BINARY)) {
    throw new Error(`${BINARY} does not exist: build it first with \`bun run build\` (scripts/test.sh does this).`);
  }
  return BINARY;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the binary with the given arguments; env entries set to undefined are removed. */
export async function runBinary(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<RunResult> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...options.env }))
    if (value !== undefined) env[key] = value;
  const proc = Bun.spawn([requireBinary(), ...args], {
    cwd: options.cwd,
    env,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr };
}

export interface BoundedResult extends RunResult {
  /** Killed for running past `timeoutMs`. */
  timedOut: boolean;
  /** Killed for a resident set past `maxRssBytes`. */
  outOfMemory: boolean;
  /** The largest resident set seen, in bytes (sampled every 50 ms from /proc). */
  peakRssBytes: number;
}

/**
 * `runBinary` with a deadline and a memory ceiling, for hostile inputs that once made
 * copperhead hang or grow without bound: the process (and its children, in their own group)
 * is SIGKILLed at either limit, and the result says which, so a regression fails an assertion
 * instead of taking the machine with it.
 */
export async function runBinaryBounded(
  args: string[],
  options: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    stdin?: "ignore" | "pipe";
    /** A command the binary is started through, e.g. `["prlimit", "--fsize=4096"]`. */
    wrap?: string[];
    timeoutMs: number;
    maxRssBytes: number;
  },
): Promise<BoundedResult> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...options.env }))
    if (value !== undefined) env[key] = value;
  // setsid: the binary leads its own process group, so kicad-cli children die with it.
  const proc = Bun.spawn(["setsid", ...(options.wrap ?? []), requireBinary(), ...args], {
    cwd: options.cwd,
    env,
    stdout: "pipe",
    stderr: "pipe",
    stdin: options.stdin ?? "ignore",
  });
  let timedOut = false;
  let outOfMemory = false;
  let peakRssBytes = 0;
  const kill = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      proc.kill("SIGKILL");
    }
  };
  const deadline = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.timeoutMs);
  const sampler = setInterval(() => {
    const rss = groupRssBytes(proc.pid);
    peakRssBytes = Math.max(peakRssBytes, rss);
    if (rss > options.maxRssBytes) {
      outOfMemory = true;
      kill();
    }
  }, 50);
  try {
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { exitCode, stdout, stderr, timedOut, outOfMemory, peakRssBytes };
  } finally {
    clearTimeout(deadline);
    clearInterval(sampler);
  }
}

/** Resident set of the process group led by `pgid` (copperhead and any kicad-cli it runs). */
function groupRssBytes(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised command name: state ppid pgrp ... rss is field 24.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      total += Number(fields[21]) * PAGE_BYTES;
    } catch {
      // The process ended between listing and reading.
    }
  }
  return total;
}

const PAGE_BYTES = 4096;

/**
 * Registers the setup most binary tests share and returns its repo: the binary must be built,
 * and usb-led with `init` committed is made once per test file (copy it per test).
 */
export function templateRepo(): () => string {
  let template = "";
  beforeAll(async () => {
    requireBinary();
    template = await initialisedRepo();
  }, 60_000);
  return () => template;
}
