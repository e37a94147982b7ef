import { parseDeadlineSeconds, parseTimeoutSeconds } from "../agent/providers/patience.ts";

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
  project: {
    type: "string",
    description: "The .kicad_pro to use (default: the only one in the repo, or the top-level one)",
    valueHint: "FILE",
  },
} as const;

/** For the commands that run a model. */
export const modelArg = {
  model: {
    type: "string",
    description:
      "provider:model-id (anthropic:, openai:, compat:, replay:<file>), or claude-code[:id] / codex[:id] for your logged-in CLI",
    valueHint: "MODEL",
  },
  "provider-timeout": {
    type: "string",
    description:
      "Seconds a model server may stay silent before the call is retried, or an agent CLI before it is stopped (default: COPPERHEAD_PROVIDER_TIMEOUT, the config's providerTimeoutSeconds, 120)",
    valueHint: "SECONDS",
  },
  "provider-deadline": {
    type: "string",
    description:
      "Seconds one model call may take in all, however steadily the server sends (default: COPPERHEAD_PROVIDER_DEADLINE, the config's providerDeadlineSeconds, 4 × the idle timeout)",
    valueHint: "SECONDS",
  },
} as const;

/** `--provider-timeout`'s value, checked. */
export function providerTimeout(value: string | undefined): number | undefined {
  return value === undefined ? undefined : parseTimeoutSeconds(value, "--provider-timeout");
}

/** `--provider-deadline`'s value, checked. */
export function providerDeadline(value: string | undefined): number | undefined {
  return value === undefined ? undefined : parseDeadlineSeconds(value, "--provider-deadline");
}
