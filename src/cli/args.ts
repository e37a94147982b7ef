/**
 * Options every command accepts. citty does not pass a parent's args down to subcommands, so
 * each command spreads these into its own `args`.
 */
export const globalArgs = {
  repo: {
    type: "string",
    description: "Path of the repository holding the KiCad project (default: current directory)",
    valueHint: "PATH",
  },
  json: {
    type: "boolean",
    description: "Print the result as JSON on stdout",
    default: false,
  },
} as const;
