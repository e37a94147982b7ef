/**
 * CLI runner: dispatches to citty commands and owns the process exit code.
 *
 * citty resolves the command line itself (`runCommand`: flags before a subcommand, values of
 * string flags, aliases); this runner only watches which command citty reached, so help and
 * usage errors show that command's usage. It does not use citty's `runMain`, which prints usage
 * errors to stdout and exits 1: copperhead reserves stdout for data (usage requested with
 * `--help` is the data then) and uses exit 3 for "could not run".
 */
import { renderUsage, runCommand, type ArgsDef, type CommandDef } from "citty";
import { asCopperheadError, CopperheadError, ExitCode } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { closeMatches } from "../util/close-matches.ts";
import { globalArgs } from "./args.ts";
import { checkOptions } from "./options.ts";
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
    help: () => helpCommand,
    version: () => versionCommand,
  },
};

const versionCommand: CommandDef = {
  meta: { name: "version", description: "Print copperhead's version (as --version does)" },
  run: () => {
    process.stdout.write(`${VERSION}\n`);
    return ExitCode.ok;
  },
};

const helpCommand: CommandDef = {
  meta: { name: "help", description: "Show how to use copperhead, or a command (copperhead help board sync)" },
  args: {
    command: { type: "positional", required: false, description: "The command to explain", valueHint: "COMMAND" },
    subcommand: {
      type: "positional",
      required: false,
      description: "Its subcommand, for board",
      valueHint: "SUBCOMMAND",
    },
  },
  run: async ({ args }) => {
    let cmd = rootCommand;
    const path = ["copperhead"];
    const words = [args.command, args.subcommand].filter((w) => typeof w === "string" && w !== "") as string[];
    for (const word of words) {
      const subCommands = (await resolve(cmd.subCommands)) ?? {};
      const next = subCommands[word];
      if (!next) throw unknownCommand(word, path, Object.keys(subCommands));
      cmd = (await resolve(next)) as CommandDef;
      path.push(word);
    }
    process.stdout.write(await usage({ cmd, path }, process.stdout));
    return ExitCode.ok;
  },
};

/** A mistyped command, with the closest one: `chek` is a usage error that says `check`. */
function unknownCommand(word: string, path: string[], known: string[]): CopperheadError {
  const close = closeMatches(
    word,
    known.filter((name) => name !== "mcp-bridge"),
    1,
  );
  const hint = close.length > 0 ? `Did you mean \`${[...path, close[0]].join(" ")}\`? ` : "";
  return new CopperheadError("usage", `Unknown command ${word} for \`${path.join(" ")}\`.`, {
    command: word,
    fix: `${hint}Run \`${path.join(" ")} --help\` for its commands.`,
  });
}

/** What one dispatch saw: the deepest command citty reached, and the exit code it returned. */
interface Dispatch {
  /** Requested help: every command's `run` is skipped, and the reached command's usage shown. */
  help: boolean;
  /** The reached command, and the words that name it (`copperhead board sync`). */
  reached: { cmd: CommandDef; path: string[] };
  /** Global options given before the subcommand (`copperhead --repo ../board check`). */
  globals: Record<string, unknown>;
  code: number;
}

const GLOBAL_KEYS = Object.keys(globalArgs);

/** Runs the CLI and returns the exit code (the caller sets it on the process). */
export async function runCli(rawArgs: string[]): Promise<number> {
  const wantsJson = rawArgs.includes("--json");
  if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return ExitCode.ok;
  }
  const help = rawArgs.length === 0 || rawArgs.includes("--help") || rawArgs.includes("-h");
  const dispatch: Dispatch = {
    help,
    reached: { cmd: rootCommand, path: ["copperhead"] },
    globals: {},
    code: ExitCode.ok,
  };
  if (!help) log.debug(`copperhead ${VERSION}`);
  try {
    await runCommand(watched(rootCommand, ["copperhead"], dispatch), { rawArgs });
  } catch (err) {
    // With --help, a command line citty cannot run (`do --help` has no request) still names
    // the command whose usage is wanted.
    if (!help) return failed(err, dispatch, wantsJson);
  }
  if (help) {
    process.stdout.write(await usage(dispatch.reached, process.stdout));
    return ExitCode.ok;
  }
  return dispatch.code;
}

async function failed(err: unknown, dispatch: Dispatch, json: boolean): Promise<number> {
  if (isCittyUsageError(err)) {
    const message = Bun.stripANSI((err as Error).message);
    // citty names an unknown command; which commands there were is known here, so say the closest.
    const unknown = /^Unknown command (.+)$/.exec(message);
    if (unknown) {
      const known = Object.keys((await resolve(dispatch.reached.cmd.subCommands)) ?? {});
      renderError(unknownCommand(unknown[1]!, dispatch.reached.path, known), json);
    } else log.error(message);
    if (!json) process.stderr.write(await usage(dispatch.reached, process.stderr));
    return ExitCode.cannotRun;
  }
  const typed = asCopperheadError(err);
  if (typed.code === "internal_error" && !(err instanceof CopperheadError)) log.debug(err);
  renderError(typed, json);
  return typed.exitCode;
}

/** The reached command's usage, titled with its whole name and copperhead's version. */
async function usage(reached: Dispatch["reached"], stream: NodeJS.WriteStream): Promise<string> {
  const { cmd, path } = reached;
  const parent = path.length > 1 ? { meta: { name: path.slice(0, -1).join(" "), version: VERSION } } : undefined;
  return plain(await renderUsage(cmd, parent), stream) + "\n";
}

/**
 * `cmd` as citty runs it, reporting to `dispatch`. citty resolves a command's args just before
 * it parses them, so the last command whose args were resolved is the one the command line
 * reached. citty hands a subcommand only the words after its name, so the global options
 * given before it are collected here and passed down. citty drops what `run` returns, so its
 * numeric result — the exit code — is recorded here; with `--help`, nothing runs. Before a
 * command's own setup, its words are checked against the options it declares (options.ts).
 */
function watched(cmd: CommandDef, path: string[], dispatch: Dispatch): CommandDef {
  const { run, setup, subCommands } = cmd;
  let declared: string[] = [];
  let defaults: Record<string, unknown> = {};
  let options: ArgsDef = {};
  return {
    ...cmd,
    args: async () => {
      dispatch.reached = { cmd, path };
      const args = (await resolve(cmd.args)) ?? {};
      options = args;
      declared = GLOBAL_KEYS.filter((key) => key in args);
      defaults = Object.fromEntries(
        declared.flatMap((key) => ("default" in args[key]! ? [[key, args[key]!.default]] : [])),
      );
      // Without their defaults, the global options a command line leaves out stay undefined,
      // so `withGlobals` can tell them from options given.
      return Object.fromEntries(
        Object.entries(args).map(([key, def]) => [key, key in defaults ? { ...def, default: undefined } : def]),
      );
    },
    setup: (context) => {
      if (!dispatch.help) checkOptions(context.rawArgs, options, { path, hasSubcommands: subCommands !== undefined });
      for (const key of GLOBAL_KEYS) if (context.args[key] !== undefined) dispatch.globals[key] = context.args[key];
      return setup?.(context);
    },
    run: dispatch.help
      ? () => undefined
      : run &&
        (async (context) => {
          for (const key of declared) context.args[key] ??= (dispatch.globals[key] ?? defaults[key]) as never;
          const result = await run(context);
          if (typeof result === "number") dispatch.code = result;
          return result;
        }),
    subCommands:
      subCommands &&
      (async () => {
        const resolved = (await resolve(subCommands)) ?? {};
        return Object.fromEntries(
          Object.entries(resolved).map(([name, sub]) => [
            name,
            async () => watched((await resolve(sub)) as CommandDef, [...path, name], dispatch),
          ]),
        );
      }),
  };
}

async function resolve<T>(value: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

/** citty colours its usage text unconditionally; keep colour for terminals that want it. */
function plain(text: string, stream: NodeJS.WriteStream): string {
  return useColor(stream) ? text : Bun.stripANSI(text);
}

function isCittyUsageError(err: unknown): boolean {
  return err instanceof Error && err.name === "CLIError";
}
