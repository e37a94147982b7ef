/**
 * Options shared by the commands, declared once. Each command spreads the set it takes into its
 * own `args`; the global ones may also come before the subcommand (`copperhead --repo ../board
 * check`), and the runner (run.ts) passes them down.
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

/** For the commands that work on one KiCad project of the repo. */
export const projectArgs = {
  ...globalArgs,
  project: { type: "string", description: "The .kicad_pro to use (default: the only one in the repo, or the top-level one)", valueHint: "FILE" },
} as const;

/** For the commands that run a model. */
export const modelArg = {
  model: {
    type: "string",
    description: "provider:model-id (anthropic:, openai:, compat:, replay:<file>), or claude-code[:id] / codex[:id] for your logged-in CLI",
    valueHint: "MODEL",
  },
} as const;
