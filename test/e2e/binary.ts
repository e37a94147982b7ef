/**
 * Locates and runs the compiled executable for binary-level tests. The suite fails loudly when
 * it has not been built, rather than silently testing the sources instead.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

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
  for (const [key, value] of Object.entries({ ...process.env, ...options.env })) if (value !== undefined) env[key] = value;
  const proc = Bun.spawn([requireBinary(), ...args], { cwd: options.cwd, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode, stdout, stderr };
}
