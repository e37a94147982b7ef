/**
 * CLI runner: dispatches to citty commands and owns the process exit code.
 *
 * citty's own `runMain` prints usage errors to stdout and exits 1; copperhead reserves stdout for
 * data and uses exit 3 for "could not run", so this runner handles help, version and errors
 * itself and lets citty do only argument parsing and usage rendering.
 */
import { renderUsage, runCommand, type CommandDef } from "citty";
import { asCopperheadError, CopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { globalArgs } from "./args.ts";
import { renderError, useColor } from "./output.ts";

export const rootCommand: CommandDef = {
  meta: {
    name: "copperhead",
    version: VERSION,
    description: "Spec-gated, verification-gated changes to KiCad designs",
  },
  args: globalArgs,
  subCommands: {
    demo: () => import("./demo.ts").then((m) => m.demoCommand),
    init: () => import("./init.ts").then((m) => m.initCommand),
    check: () => import("./check.ts").then((m) => m.checkCommand),
    diff: () => import("./diff.ts").then((m) => m.diffCommand),
    do: () => import("./do.ts").then((m) => m.doCommand),
    board: () => import("./board.ts").then((m) => m.boardCommand),
    doctor: () => import("./doctor.ts").then((m) => m.doctorCommand),
    mcp: () => import("./mcp.ts").then((m) => m.mcpCommand),
    "mcp-bridge": () => import("./mcp-bridge.ts").then((m) => m.mcpBridgeCommand),
    sync: () => import("./sync.ts").then((m) => m.syncCommand),
    netlist: () => import("./netlist.ts").then((m) => m.netlistCommand),
  },
};

async function resolveTarget(rawArgs: string[]): Promise<{ cmd: CommandDef; parent?: CommandDef }> {
  let cmd = rootCommand;
  let parent: CommandDef | undefined;
  for (const arg of rawArgs) {
    if (arg.startsWith("-")) break;
    const subs = (await resolve(cmd.subCommands)) ?? {};
    const next = subs[arg];
    if (!next) break;
    parent = cmd;
    cmd = (await resolve(next)) as CommandDef;
  }
  return { cmd, parent };
}

async function resolve<T>(value: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

/** Runs the CLI and returns the exit code (the caller sets it on the process). */
export async function runCli(rawArgs: string[]): Promise<number> {
  const wantsJson = rawArgs.includes("--json");
  if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return ExitCode.ok;
  }
  if (rawArgs.length === 0 || rawArgs.includes("--help") || rawArgs.includes("-h")) {
    const { cmd, parent } = await resolveTarget(rawArgs);
    process.stdout.write(plain(await renderUsage(cmd, parent), process.stdout) + "\n");
    return ExitCode.ok;
  }
  log.debug(`copperhead ${VERSION}`);
  try {
    const exit = { code: ExitCode.ok as number };
    await runCommand(reportingExitCode(rootCommand, exit), { rawArgs });
    return exit.code;
  } catch (err) {
    if (isCittyUsageError(err)) {
      const { cmd, parent } = await resolveTarget(rawArgs);
      log.error((err as Error).message);
      process.stderr.write(plain(await renderUsage(cmd, parent), process.stderr) + "\n");
      return ExitCode.cannotRun;
    }
    const typed = asCopperheadError(err);
    if (typed.code === "internal_error" && !(err instanceof CopperheadError)) log.debug(err);
    renderError(typed, wantsJson);
    return typed.exitCode;
  }
}

/**
 * citty drops what a subcommand's `run` returns, so each command (nested ones included) is
 * wrapped to record its numeric result — the exit code — where `runCli` can read it.
 */
function reportingExitCode(cmd: CommandDef, exit: { code: number }): CommandDef {
  const { run, subCommands } = cmd;
  return {
    ...cmd,
    run: run
      ? async (context) => {
          const result = await run(context);
          if (typeof result === "number") exit.code = result;
          return result;
        }
      : undefined,
    subCommands: subCommands
      ? async () => {
          const resolved = (await resolve(subCommands)) ?? {};
          return Object.fromEntries(
            Object.entries(resolved).map(([name, sub]) => [name, async () => reportingExitCode((await resolve(sub)) as CommandDef, exit)]),
          );
        }
      : undefined,
  };
}

/** citty colours its usage text unconditionally; keep colour for terminals that want it. */
function plain(text: string, stream: NodeJS.WriteStream): string {
  return useColor(stream) ? text : Bun.stripANSI(text);
}

function isCittyUsageError(err: unknown): boolean {
  return err instanceof Error && err.name === "CLIError";
}
