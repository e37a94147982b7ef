/**
 * Strict option checking for every command. citty parses leniently: an unknown option becomes an
 * extra key nobody reads (`do --dryrun` would commit) and a boolean given `=anything` other than
 * `false` is true (`--strict=no` is strict). The runner (run.ts) calls `checkOptions` for each
 * command the line reaches, before that command does anything, so a mistyped option is a usage
 * error naming the closest known option instead of a silently different run.
 */
import type { ArgsDef } from "citty";
import { CopperheadError } from "../errors.ts";
import { closeMatches } from "../util/close-matches.ts";

/** Options every command takes: the runner answers them itself. */
const HELP = new Set(["help", "h"]);

/**
 * Throws a `usage` error for the first word of `rawArgs` that `args` does not declare: an
 * unknown `--long` or `-s` option, a boolean given a value other than `true`/`false`, a
 * `--no-` prefix on an option that is not a boolean, or a positional argument too many. A
 * command with subcommands checks only the words before its subcommand's name; the subcommand
 * checks the rest. An option that takes a value and is followed by another option has none of
 * its own here (`check --baseline --format github`: the command reads the missing value as
 * its default), so the next option is checked as one.
 */
export function checkOptions(
  rawArgs: readonly string[],
  args: ArgsDef,
  command: { path: string[]; hasSubcommands: boolean },
): void {
  const options = optionTable(args);
  let positionals = Object.values(args).filter((def) => def.type === "positional").length;
  const name = command.path.join(" ");
  for (let i = 0; i < rawArgs.length; i++) {
    const word = rawArgs[i]!;
    if (word === "--") {
      const extra = rawArgs[i + 1 + Math.max(positionals, 0)];
      if (extra !== undefined && !command.hasSubcommands) throw unexpectedArgument(extra, name);
      return;
    }
    if (!word.startsWith("-") || word === "-") {
      if (command.hasSubcommands) return;
      if (positionals-- <= 0) throw unexpectedArgument(word, name);
      continue;
    }
    const eq = word.indexOf("=");
    const flag = (eq === -1 ? word : word.slice(0, eq)).replace(/^--?/, "");
    if (HELP.has(flag)) continue;
    const negated = word.startsWith("--no-") ? options.get(flag.slice(3)) : undefined;
    if (negated?.type === "boolean" && eq === -1) continue;
    const type = options.get(flag)?.type;
    if (type === undefined) throw unknownOption(word, flag, options, name);
    if (type === "boolean") {
      if (eq !== -1 && !["true", "false"].includes(word.slice(eq + 1)))
        throw malformedBoolean(word.slice(0, eq), word.slice(eq + 1), name);
    } else if (eq === -1 && !rawArgs[i + 1]?.startsWith("-")) i++;
  }
}

interface OptionEntry {
  type: string;
  /** The declared long name, for suggestions. */
  canonical: string;
}

/** Every spelling citty accepts for each declared option: the name, its camelCase, its aliases. */
function optionTable(args: ArgsDef): Map<string, OptionEntry> {
  const table = new Map<string, OptionEntry>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const entry = { type: def.type ?? "string", canonical: name };
    const aliases = "alias" in def && def.alias ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];
    for (const spelling of [name, name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), ...aliases])
      table.set(spelling, entry);
  }
  return table;
}

function unknownOption(
  word: string,
  flag: string,
  options: Map<string, OptionEntry>,
  command: string,
): CopperheadError {
  const known = [...new Set([...options.values()].map((o) => o.canonical))];
  const close = closeMatches(flag.replace(/^no-/, ""), known, 1);
  const hint = close.length > 0 ? `Did you mean --${close[0]}? ` : "";
  return new CopperheadError("usage", `Unknown option ${word.split("=")[0]} for \`${command}\`.`, {
    option: word.split("=")[0],
    fix: `${hint}Run \`${command} --help\` for its options.`,
  });
}

function malformedBoolean(option: string, value: string, command: string): CopperheadError {
  return new CopperheadError("usage", `${option} takes no value other than true or false (got "${value}").`, {
    option,
    fix: `Write ${option} or ${option.replace(/^--/, "--no-")} (run \`${command} --help\` for its options).`,
  });
}

function unexpectedArgument(word: string, command: string): CopperheadError {
  return new CopperheadError("usage", `Unexpected argument "${word}" for \`${command}\`.`, {
    fix: `Quote an argument that holds spaces, write options with their leading --, and run \`${command} --help\` for what it takes.`,
  });
}
