/**
 * Stand-ins for the launchers many KiCad installs start through (Flatpak, AppImage, wrapper
 * scripts): a shell script that runs the real program as its child instead of exec'ing it, so
 * killing the script alone leaves the program running with the caller's pipes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A launcher script at `dir/name` that runs `program "$@"` as its child, or `hang` (a shell
 * command line) when the arguments are not `passThrough`'s; the hung child writes its pid to
 * `dir/child.pid` first.
 */
export function launcher(
  dir: string,
  name: string,
  program: string,
  hang?: { unless: string; command: string },
): string {
  const path = join(dir, name);
  const run = `${JSON.stringify(program)} "$@"`;
  const body = hang
    ? `case "$1" in\n  ${hang.unless}) ${run} ;;\n  *) sh -c 'echo $$ > ${join(dir, "child.pid")}; exec ${hang.command}' ;;\nesac\n`
    : `${run}\n`;
  writeFileSync(path, `#!/bin/sh\n${body}`, { mode: 0o755 });
  return path;
}

/** The pid the launcher's hung child wrote. */
export function childPid(dir: string): number {
  return Number(readFileSync(join(dir, "child.pid"), "utf8").trim());
}

/** Whether `pid` is a live process (a zombie nobody reaped yet counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
