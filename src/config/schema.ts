/**
 * The `.copperhead/config.json` schema, defined once in valibot.
 *
 * The same definition validates the file at run time and, through `@valibot/to-json-schema`,
 * becomes the JSON Schema editors use (`schema/config.schema.json`, and the copy `init` writes
 * next to the config). Every validation message is phrased as "what was expected", because the
 * loader prints it after the key's JSON path: `model: expected "provider:model-id" …`.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { CHECK_IDS, type CheckId } from "../checks/types.ts";

/** Model providers written `provider:model-id` (an API, a server, a recorded session). */
export const KEYED_PROVIDERS = ["anthropic", "openai", "compat", "replay"] as const;
/** Logged-in agent CLIs: `claude-code` or `claude-code:<model-id>`, likewise `codex`. */
export const CLI_PROVIDERS = ["claude-code", "codex"] as const;
/** The MCP client's own model, through sampling; it takes no id. */
export const HOST_MODEL = "host";
/** Every provider a `model` value may name. */
export const MODEL_PROVIDERS = [...KEYED_PROVIDERS, HOST_MODEL, ...CLI_PROVIDERS] as const;

/**
 * The providers a repo's config may name. A recorded session (`replay:<file>`) names a file, so
 * it comes only from the person running copperhead (`--model`, `COPPERHEAD_MODEL`): a cloned
 * repo is input, and must not pick which file is read as the model's answers.
 */
export const CONFIG_PROVIDERS = KEYED_PROVIDERS.filter((p) => p !== "replay");
/**
 * A model id as the config may write it: a name (`claude-sonnet-4-5`, `llama3.1`,
 * `meta-llama/Llama-3.1-8B`), never a path, URL or option: it starts with a letter or digit
 * and holds no ":", whitespace or control character.
 */
const MODEL_ID = "[A-Za-z0-9][A-Za-z0-9._/@+-]{0,199}";
const MODEL_PATTERN = new RegExp(
  `^((${CONFIG_PROVIDERS.join("|")}):${MODEL_ID}|${HOST_MODEL}|(${CLI_PROVIDERS.join("|")})(:${MODEL_ID})?)$`,
);
const MODEL_EXPECTED = `null, "${HOST_MODEL}", "${CLI_PROVIDERS.join('" or "')}" (optionally ":model-id"), or "provider:model-id" with provider one of ${CONFIG_PROVIDERS.join(", ")} (replay: only with --model or COPPERHEAD_MODEL)`;

/** The idle timeout of a model call, in seconds: hosted APIs send within seconds; a local model on a CPU may need minutes. */
export const DEFAULT_PROVIDER_TIMEOUT_SECONDS = 120;
/** An hour of silence is no longer a slow model. */
export const MAX_PROVIDER_TIMEOUT_SECONDS = 3600;
/**
 * The total deadline of a model call, absent a setting, is this many idle timeouts: a server
 * that keeps a call alive with keep-alives or a byte at a time is never idle, and without a
 * total it would hold the run (and the repo lock) forever.
 */
export const PROVIDER_DEADLINE_FACTOR = 4;
export const MAX_PROVIDER_DEADLINE_SECONDS = PROVIDER_DEADLINE_FACTOR * MAX_PROVIDER_TIMEOUT_SECONDS;
export const DEFAULT_PROVIDER_RETRIES = 3;
export const MAX_PROVIDER_RETRIES = 10;

/** A request's default size bound, in estimated tokens (see agent/history.ts). */
export const DEFAULT_CONTEXT_BUDGET_TOKENS = 60_000;
/** Below this the system prompt and tool list alone would not fit. */
export const MIN_CONTEXT_BUDGET_TOKENS = 16_000;
const BUDGET_KEY_PATTERN = new RegExp(
  `^(default|(${CONFIG_PROVIDERS.join("|")}|${HOST_MODEL}|${CLI_PROVIDERS.join("|")})(:${MODEL_ID})?)$`,
);
const BUDGET_EXPECTED = `a whole number of tokens >= ${MIN_CONTEXT_BUDGET_TOKENS}, or an object of them keyed by "provider:model-id", "provider" or "default"`;

const checkSwitch = v.optional(v.boolean("true or false"));

/** Per-check switches: one optional boolean per check family, nothing else. */
const ChecksSchema = v.pipe(
  v.strictObject(
    Object.fromEntries(CHECK_IDS.map((id) => [id, checkSwitch])) as Record<CheckId, typeof checkSwitch>,
    "an object of per-check switches",
  ),
  v.description("Turns check families on (true) or off (false); absent means the default."),
);

export const ConfigSchema = v.strictObject(
  {
    $schema: v.optional(
      v.pipe(v.string("a string"), v.description("Path or URL of this file's JSON Schema, for editors.")),
    ),
    project: v.optional(
      v.pipe(
        v.string("a path to a .kicad_pro file, relative to the repo"),
        v.endsWith(".kicad_pro", "a path ending in .kicad_pro"),
        v.description(
          "The KiCad project to work on, relative to the repo root. Needed only when the repo holds several.",
        ),
      ),
    ),
    docs: v.optional(
      v.pipe(
        v.string("a folder path relative to the repo"),
        v.minLength(1, "a non-empty folder path relative to the repo"),
        v.description("Folder holding SPEC.md, BOM.md, DECISIONS.md, CHANGELOG.md and changes/."),
      ),
      "docs",
    ),
    model: v.optional(
      v.pipe(
        v.nullable(v.pipe(v.string(MODEL_EXPECTED), v.regex(MODEL_PATTERN, MODEL_EXPECTED))),
        v.description(
          'Model for `copperhead do`: "provider:model-id" (anthropic, openai, compat), "host" (the MCP client\'s model), "claude-code" or "codex" (your logged-in CLI, optionally ":model-id"); null picks the first provider with a key. A recorded session (replay:) is named only with --model or COPPERHEAD_MODEL.',
        ),
      ),
      null,
    ),
    maxRepairCycles: v.optional(
      v.pipe(
        v.number("a whole number >= 0"),
        v.integer("a whole number >= 0"),
        v.minValue(0, "a whole number >= 0"),
        v.description("Repair cycles `do` allows after a failed verification before it rolls back."),
      ),
      3,
    ),
    maxTurns: v.optional(
      v.pipe(
        v.number("a whole number >= 1"),
        v.integer("a whole number >= 1"),
        v.minValue(1, "a whole number >= 1"),
        v.description("Model turns one `do` run may take before it rolls back."),
      ),
      40,
    ),
    providerTimeoutSeconds: v.optional(
      v.pipe(
        v.number(`a number of seconds from 1 to ${MAX_PROVIDER_TIMEOUT_SECONDS}`),
        v.minValue(1, `a number of seconds from 1 to ${MAX_PROVIDER_TIMEOUT_SECONDS}`),
        v.maxValue(MAX_PROVIDER_TIMEOUT_SECONDS, `a number of seconds from 1 to ${MAX_PROVIDER_TIMEOUT_SECONDS}`),
        v.description(
          `How long a model server may stay silent (before its answer starts, and between two pieces of it) before the call is retried, and an agent CLI (claude-code, codex) before it is stopped; absent means ${DEFAULT_PROVIDER_TIMEOUT_SECONDS}. Raise it for a local model (Ollama, LM Studio) on a CPU. COPPERHEAD_PROVIDER_TIMEOUT and --provider-timeout override it.`,
        ),
      ),
    ),
    providerDeadlineSeconds: v.optional(
      v.pipe(
        v.number(`a number of seconds from 1 to ${MAX_PROVIDER_DEADLINE_SECONDS}`),
        v.minValue(1, `a number of seconds from 1 to ${MAX_PROVIDER_DEADLINE_SECONDS}`),
        v.maxValue(MAX_PROVIDER_DEADLINE_SECONDS, `a number of seconds from 1 to ${MAX_PROVIDER_DEADLINE_SECONDS}`),
        v.description(
          `The most one model call may take in all, however steadily the server (or agent CLI) keeps sending, retries included; absent means ${PROVIDER_DEADLINE_FACTOR} times the idle timeout. COPPERHEAD_PROVIDER_DEADLINE and --provider-deadline override it.`,
        ),
      ),
    ),
    providerRetries: v.optional(
      v.pipe(
        v.number(`a whole number from 0 to ${MAX_PROVIDER_RETRIES}`),
        v.integer(`a whole number from 0 to ${MAX_PROVIDER_RETRIES}`),
        v.minValue(0, `a whole number from 0 to ${MAX_PROVIDER_RETRIES}`),
        v.maxValue(MAX_PROVIDER_RETRIES, `a whole number from 0 to ${MAX_PROVIDER_RETRIES}`),
        v.description(
          `Retries of a model call after a timeout, a network error, a 429 or a 5xx, with backoff; absent means ${DEFAULT_PROVIDER_RETRIES}.`,
        ),
      ),
    ),
    contextBudgetTokens: v.optional(
      v.pipe(
        v.union(
          [
            v.pipe(v.number(), v.integer(), v.minValue(MIN_CONTEXT_BUDGET_TOKENS)),
            v.record(
              v.pipe(v.string(), v.regex(BUDGET_KEY_PATTERN)),
              v.pipe(v.number(), v.integer(), v.minValue(MIN_CONTEXT_BUDGET_TOKENS)),
            ),
          ],
          BUDGET_EXPECTED,
        ),
        v.description(
          `The most tokens one model request of \`do\` may carry (estimated as text characters / 3.5 plus 1,600 per picture); older turns are compacted to stay within it. A number for every model, or an object keyed by "provider:model-id", "provider" or "default" (the most specific wins). Absent means ${DEFAULT_CONTEXT_BUDGET_TOKENS}.`,
        ),
      ),
    ),
    strict: v.optional(
      v.pipe(v.boolean("true or false"), v.description("Treat warnings as failures in `check` and `do`.")),
      false,
    ),
    checks: v.optional(ChecksSchema),
  },
  "a JSON object",
);

export type Config = v.InferOutput<typeof ConfigSchema>;

/** Keys valid at the top level and inside `checks`, for "did you mean" suggestions. */
export const CONFIG_KEYS: readonly string[] = Object.keys(ConfigSchema.entries);
export const CHECK_SWITCH_KEYS: readonly string[] = CHECK_IDS;

/** The JSON Schema shipped as `schema/config.schema.json`. */
export function configJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = toJsonSchema(ConfigSchema);
  return { $schema, title: "copperhead configuration (.copperhead/config.json)", ...rest };
}

/** The schema file's exact bytes: stable key order, 2-space indent, trailing newline. */
export function configJsonSchemaText(): string {
  return JSON.stringify(configJsonSchema(), null, 2) + "\n";
}
