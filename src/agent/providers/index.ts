/**
 * Which model a run talks to.
 *
 * Resolution order: the `--model` flag, then `COPPERHEAD_MODEL`, then the config's `model`, then
 * the first configured key (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `COPPERHEAD_BASE_URL`, in
 * that order). A model is written `provider:id`, or `host`, `claude-code[:id]`, `codex[:id]` for
 * the keyless ones; the config never names a `replay:` file (see `replayFromRepoError`).
 * Resolution only builds the provider (and reads a replay file): it makes no
 * network call and starts no process, so preflight can run it before anything starts.
 */
import { CLI_PROVIDERS, HOST_MODEL, KEYED_PROVIDERS, MODEL_PROVIDERS, type Config } from "../../config/schema.ts";
import { CopperheadError } from "../../errors.ts";
import { selfCommand } from "../../util/self-command.ts";
import { FULL_CONTEXT_VARIABLE } from "../history.ts";
import type { ModelProvider } from "../conversation.ts";
import { claudeCodeDriver } from "./agent-cli/claude-code.ts";
import { codexDriver } from "./agent-cli/codex.ts";
import { notInstalledError } from "./agent-cli/driver.ts";
import { createAgentCliProvider } from "./agent-cli/session.ts";
import {
  ANTHROPIC_VERSION,
  createAnthropicProvider,
  DEFAULT_ANTHROPIC_BASE_URL,
  DEFAULT_ANTHROPIC_MODEL,
} from "./anthropic.ts";
import { createHostProvider, hostUnavailableError, type HostSampler } from "./host.ts";
import { joinUrl, type HttpOptions } from "./http.ts";
import { withModelList, type ModelListing } from "./model-list.ts";
import { createCompatProvider, createOpenAIProvider, DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL } from "./openai.ts";
import { httpOptions, resolvePatience } from "./patience.ts";
import { createReplayProvider } from "./replay.ts";

export { DEFAULT_ANTHROPIC_MODEL } from "./anthropic.ts";
export { DEFAULT_OPENAI_MODEL } from "./openai.ts";

/** `COPPERHEAD_IMAGES=1`: the OpenAI-compatible server's model takes image input. */
export const COMPAT_IMAGES_VARIABLE = "COPPERHEAD_IMAGES";

export interface ResolveProviderOptions {
  /** The `--model` flag. */
  model?: string;
  config?:
    | (Pick<Config, "providerTimeoutSeconds" | "providerDeadlineSeconds" | "providerRetries"> & {
        model: string | null;
      })
    | null;
  /** `--provider-timeout`, in seconds (see `patience.ts` for the order of the sources). */
  providerTimeoutSeconds?: number;
  /** `--provider-deadline`, in seconds. */
  providerDeadlineSeconds?: number;
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where a relative `replay:` path is resolved; defaults to the current directory. */
  cwd?: string;
  /** Timeouts and retries for the HTTP providers, overriding everything (tests). */
  http?: HttpOptions;
  /**
   * The MCP client's model, lent by `copperhead mcp` (and only there); `host` needs it. Its
   * presence also says the run was asked for over MCP, where there is no `--model`: errors then
   * name what an MCP user can set (see {@link howToPickModel}).
   */
  host?: HostSampler;
}

/**
 * Where a person picks the model: a terminal has `--model`; an MCP server's tools take no model,
 * so only its environment (set in the host's MCP config) and the repo's config choose one.
 */
export function howToPickModel(overMcp: boolean): string {
  return overMcp
    ? "COPPERHEAD_MODEL in the copperhead MCP server's environment (the env of its entry in your AI host's MCP config; restart the server after changing it) or the config's model"
    : "--model or COPPERHEAD_MODEL";
}

/** The error for "no model provider is configured", for every command that needs one. */
export function missingApiKeyError(overMcp = false): CopperheadError {
  return new CopperheadError(
    "missing_api_key",
    "No model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or COPPERHEAD_BASE_URL, or COPPERHEAD_MODEL=host|claude-code|codex",
    {
      fix:
        "Without an API key: COPPERHEAD_MODEL=claude-code or codex runs your logged-in Claude Code or Codex CLI, and under `copperhead mcp` " +
        `COPPERHEAD_MODEL=host uses the AI host's own model. With a key: ${overMcp ? "set" : "export"} ANTHROPIC_API_KEY or OPENAI_API_KEY, or COPPERHEAD_BASE_URL ` +
        `for an OpenAI-compatible server${overMcp ? ", in the MCP server's environment" : ""}. Pick a model with ${howToPickModel(overMcp)} (providers: ${MODEL_PROVIDERS.join(", ")}; e.g. anthropic:${DEFAULT_ANTHROPIC_MODEL}).`,
    },
  );
}

export function resolveProvider(options: ResolveProviderOptions = {}): ModelProvider {
  const env = options.env ?? process.env;
  const overMcp = options.host !== undefined;
  const get = (name: string): string | undefined => env[name] || undefined;
  const fromConfig = options.config?.model ? { spec: options.config.model, from: "the config's model" } : undefined;
  const explicit =
    (options.model ? { spec: options.model, from: "--model" } : undefined) ??
    (get("COPPERHEAD_MODEL") ? { spec: get("COPPERHEAD_MODEL")!, from: "COPPERHEAD_MODEL" } : undefined) ??
    fromConfig;
  if (explicit) {
    const { provider, id } = parseSpec(explicit.spec, explicit.from);
    if (provider === "replay" && explicit === fromConfig) throw replayFromRepoError(explicit.spec);
    return build(provider, id, get, options);
  }
  // The default is checked against the provider's own model list at preflight (model-list.ts).
  if (get("ANTHROPIC_API_KEY")) return build("anthropic", DEFAULT_ANTHROPIC_MODEL, get, options, true);
  if (get("OPENAI_API_KEY")) return build("openai", DEFAULT_OPENAI_MODEL, get, options);
  if (get("COPPERHEAD_BASE_URL")) {
    // A local server's models have no common default; guessing one would fail later and vaguer.
    throw new CopperheadError("usage", "COPPERHEAD_BASE_URL is set but no model is chosen for it", {
      fix: `Name the server's model as compat:<id> with ${howToPickModel(overMcp)}.`,
    });
  }
  throw missingApiKeyError(overMcp);
}

type Provider = (typeof MODEL_PROVIDERS)[number];

/**
 * A repo is input: its config may pick a provider and model id, never a file to read as the
 * model's answers (the config schema refuses it too; this holds for a config built in code).
 */
function replayFromRepoError(spec: string): CopperheadError {
  return new CopperheadError(
    "config_invalid",
    `the config's model ${JSON.stringify(spec)} names a recorded session; a repo's config may not choose a file to replay`,
    {
      fix: "Remove the model from .copperhead/config.json, and pass a recorded session yourself with --model replay:<file> or COPPERHEAD_MODEL.",
    },
  );
}

function parseSpec(spec: string, from: string): { provider: Provider; id: string } {
  const colon = spec.indexOf(":");
  const provider = colon < 0 ? spec : spec.slice(0, colon);
  const id = colon < 0 ? "" : spec.slice(colon + 1);
  const known = MODEL_PROVIDERS.join(", ");
  const examples = `e.g. anthropic:${DEFAULT_ANTHROPIC_MODEL}, openai:${DEFAULT_OPENAI_MODEL}, compat:llama3.1, replay:session.json, host, claude-code or codex:<model>`;
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider)) {
    throw new CopperheadError(
      "usage",
      colon < 0
        ? `${from}: "${spec}" names no provider; expected ${HOST_MODEL}, ${CLI_PROVIDERS.join(", ")} or provider:id with provider one of ${KEYED_PROVIDERS.join(", ")}`
        : `${from}: unknown model provider "${provider}"; expected one of ${known}`,
      { fix: `Write the model as one of: ${examples}.` },
    );
  }
  if (provider === HOST_MODEL && colon >= 0) {
    throw new CopperheadError(
      "usage",
      `${from}: "${spec}": host takes no model id (the MCP client chooses its model)`,
      { fix: `Write the model as ${HOST_MODEL}.` },
    );
  }
  if ((KEYED_PROVIDERS as readonly string[]).includes(provider) && !id) {
    throw new CopperheadError("usage", `${from}: "${spec}" has no model id after "${provider}:"`, {
      fix: `Write the model as ${provider}:<id>.`,
    });
  }
  if (colon >= 0 && !id) {
    throw new CopperheadError("usage", `${from}: "${spec}" has an empty model id`, {
      fix: `Write ${provider} alone for the CLI's default model, or ${provider}:<id>.`,
    });
  }
  return { provider: provider as Provider, id };
}

function build(
  provider: Provider,
  id: string,
  get: (name: string) => string | undefined,
  options: ResolveProviderOptions,
  defaultModel = false,
): ModelProvider {
  const overMcp = options.host !== undefined;
  // Read only for the providers that wait on a model, so a bad COPPERHEAD_PROVIDER_TIMEOUT bothers no one else.
  const patience = () =>
    resolvePatience({
      timeoutSeconds: options.providerTimeoutSeconds,
      deadlineSeconds: options.providerDeadlineSeconds,
      env: options.env,
      config: options.config,
    });
  const http = () => ({ http: options.http ?? httpOptions(patience()) });
  const listed = (listing: ModelListing, make: (model: string) => ModelProvider) =>
    withModelList(make, id, {
      listing,
      defaultModel,
      howToPickModel: howToPickModel(overMcp),
      ...(options.env ? { env: options.env } : {}),
    });
  switch (provider) {
    case "anthropic": {
      const apiKey = requireVar(get, "ANTHROPIC_API_KEY", `anthropic:${id}`, overMcp);
      const base = baseUrl(get, "ANTHROPIC_BASE_URL");
      const listing = {
        label: "anthropic (its model list)",
        url: joinUrl(base.baseUrl ?? DEFAULT_ANTHROPIC_BASE_URL, "v1/models"),
        headers: { "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION },
        secrets: [apiKey],
        keyEnvVar: "ANTHROPIC_API_KEY",
      };
      // The full-context switch (for measuring) sends no cache breakpoints either.
      return listed(listing, (model) =>
        createAnthropicProvider({ model, apiKey, ...base, ...http(), promptCache: get(FULL_CONTEXT_VARIABLE) !== "1" }),
      );
    }
    case "openai": {
      const apiKey = requireVar(get, "OPENAI_API_KEY", `openai:${id}`, overMcp);
      const base = baseUrl(get, "OPENAI_BASE_URL");
      const listing = {
        label: "openai (its model list)",
        url: joinUrl(base.baseUrl ?? DEFAULT_OPENAI_BASE_URL, "models"),
        headers: { authorization: `Bearer ${apiKey}` },
        secrets: [apiKey],
        keyEnvVar: "OPENAI_API_KEY",
      };
      return listed(listing, (model) => createOpenAIProvider({ model, apiKey, ...base, ...http() }));
    }
    case "compat": {
      requireVar(get, "COPPERHEAD_BASE_URL", `compat:${id}`, overMcp);
      const apiKey = get("COPPERHEAD_API_KEY");
      const base = baseUrl(get, "COPPERHEAD_BASE_URL").baseUrl!;
      const listing: ModelListing = {
        label: "compat (its model list)",
        url: joinUrl(base, "models"),
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        secrets: apiKey ? [apiKey] : [],
        keyEnvVar: "COPPERHEAD_API_KEY",
      };
      return listed(listing, (model) =>
        createCompatProvider({
          model,
          baseUrl: base,
          ...(apiKey ? { apiKey } : {}),
          // Only the user knows whether the server's model is a vision model.
          images: get(COMPAT_IMAGES_VARIABLE) === "1",
          ...http(),
        }),
      );
    }
    case "replay":
      return createReplayProvider(id, options.cwd);
    case "host":
      if (!options.host) throw hostUnavailableError();
      return createHostProvider(options.host);
    case "claude-code":
    case "codex": {
      const driver = provider === "codex" ? codexDriver : claudeCodeDriver;
      const env = options.env ?? process.env;
      if (!Bun.which(driver.executable, { PATH: env.PATH ?? "" }))
        throw notInstalledError(driver, howToPickModel(overMcp));
      const { timeoutSeconds, deadlineSeconds } = patience();
      return createAgentCliProvider(driver, {
        ...(id ? { model: id } : {}),
        selfCommand: selfCommand(),
        env,
        howToPickModel: howToPickModel(overMcp),
        limits: { idleMs: timeoutSeconds * 1000, deadlineMs: deadlineSeconds * 1000 },
      });
    }
  }
}

function requireVar(get: (name: string) => string | undefined, name: string, model: string, overMcp: boolean): string {
  const value = get(name);
  if (value) return value;
  throw new CopperheadError("missing_api_key", `${model} needs ${name}, which is not set`, {
    fix: overMcp
      ? `Set ${name} in the copperhead MCP server's environment, or pick another model with ${howToPickModel(true)}.`
      : `Export ${name}, or pick another model with ${howToPickModel(false)}.`,
  });
}

/** A base URL override, checked now so a typo fails before the run rather than at the first call. */
function baseUrl(get: (name: string) => string | undefined, name: string): { baseUrl?: string } {
  const value = get(name);
  if (!value) return {};
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new CopperheadError("usage", `${name} is not a URL`, {
      fix: `Set ${name} to an http(s) URL such as http://localhost:11434/v1.`,
    });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new CopperheadError("usage", `${name} must be an http or https URL`, {
      fix: `Set ${name} to an http(s) URL such as http://localhost:11434/v1.`,
    });
  }
  return { baseUrl: value };
}
