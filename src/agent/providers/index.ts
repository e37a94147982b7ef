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
import type { ModelProvider } from "../model.ts";
import { claudeCodeDriver } from "./agent-cli/claude-code.ts";
import { codexDriver } from "./agent-cli/codex.ts";
import { createAgentCliProvider, notInstalledError } from "./agent-cli/session.ts";
import { createAnthropicProvider, DEFAULT_ANTHROPIC_MODEL } from "./anthropic.ts";
import { createHostProvider, hostUnavailableError, type HostSampler } from "./host.ts";
import type { HttpOptions } from "./http.ts";
import { createCompatProvider, createOpenAIProvider, DEFAULT_OPENAI_MODEL } from "./openai.ts";
import { httpOptions, resolvePatience } from "./patience.ts";
import { createReplayProvider } from "./replay.ts";

export { DEFAULT_ANTHROPIC_MODEL } from "./anthropic.ts";
export { DEFAULT_OPENAI_MODEL } from "./openai.ts";

/** `COPPERHEAD_IMAGES=1`: the OpenAI-compatible server's model takes image input. */
export const COMPAT_IMAGES_VARIABLE = "COPPERHEAD_IMAGES";

export interface ResolveProviderOptions {
  /** The `--model` flag. */
  model?: string;
  config?: (Pick<Config, "providerTimeoutSeconds" | "providerRetries"> & { model: string | null }) | null;
  /** `--provider-timeout`, in seconds (see `patience.ts` for the order of the sources). */
  providerTimeoutSeconds?: number;
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Where a relative `replay:` path is resolved; defaults to the current directory. */
  cwd?: string;
  /** Timeouts and retries for the HTTP providers, overriding everything (tests). */
  http?: HttpOptions;
  /** The MCP client's model, lent by `copperhead mcp`; `host` needs it. */
  host?: HostSampler;
}

/** The error for "no model provider is configured", for every command that needs one. */
export function missingApiKeyError(): CopperheadError {
  return new CopperheadError(
    "missing_api_key",
    "No model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or COPPERHEAD_BASE_URL, or COPPERHEAD_MODEL=host|claude-code|codex",
    {
      fix:
        "Without an API key: COPPERHEAD_MODEL=claude-code or codex runs your logged-in Claude Code or Codex CLI, and under `copperhead mcp` " +
        "COPPERHEAD_MODEL=host uses the AI host's own model. With a key: export ANTHROPIC_API_KEY or OPENAI_API_KEY, or COPPERHEAD_BASE_URL " +
        `for an OpenAI-compatible server. Pick a model with --model or COPPERHEAD_MODEL (providers: ${MODEL_PROVIDERS.join(", ")}; e.g. anthropic:${DEFAULT_ANTHROPIC_MODEL}).`,
    },
  );
}

export function resolveProvider(options: ResolveProviderOptions = {}): ModelProvider {
  const env = options.env ?? process.env;
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
  if (get("ANTHROPIC_API_KEY")) return build("anthropic", DEFAULT_ANTHROPIC_MODEL, get, options);
  if (get("OPENAI_API_KEY")) return build("openai", DEFAULT_OPENAI_MODEL, get, options);
  if (get("COPPERHEAD_BASE_URL")) {
    // A local server's models have no common default; guessing one would fail later and vaguer.
    throw new CopperheadError("usage", "COPPERHEAD_BASE_URL is set but no model is chosen for it", {
      fix: "Name the server's model with --model compat:<id> or COPPERHEAD_MODEL=compat:<id>.",
    });
  }
  throw missingApiKeyError();
}

type Provider = (typeof MODEL_PROVIDERS)[number];

/**
 * A repo is input: its config may pick a provider and model id, never a file to read as the
 * model's answers (the config schema refuses it too; this holds for a config built in code).
 */
function replayFromRepoError(spec: string): CopperheadError {
  return new CopperheadError("config_invalid", `the config's model ${JSON.stringify(spec)} names a recorded session; a repo's config may not choose a file to replay`, {
    fix: "Remove the model from .copperhead/config.json, and pass a recorded session yourself with --model replay:<file> or COPPERHEAD_MODEL.",
  });
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
    throw new CopperheadError("usage", `${from}: "${spec}": host takes no model id (the MCP client chooses its model)`, { fix: `Write the model as ${HOST_MODEL}.` });
  }
  if ((KEYED_PROVIDERS as readonly string[]).includes(provider) && !id) {
    throw new CopperheadError("usage", `${from}: "${spec}" has no model id after "${provider}:"`, {
      fix: `Write the model as ${provider}:<id>.`,
    });
  }
  if (colon >= 0 && !id) {
    throw new CopperheadError("usage", `${from}: "${spec}" has an empty model id`, { fix: `Write ${provider} alone for the CLI's default model, or ${provider}:<id>.` });
  }
  return { provider: provider as Provider, id };
}

function build(
  provider: Provider,
  id: string,
  get: (name: string) => string | undefined,
  options: ResolveProviderOptions,
): ModelProvider {
  // Read only for the HTTP providers, so a bad COPPERHEAD_PROVIDER_TIMEOUT bothers no one else.
  const http = () => ({
    http: options.http ?? httpOptions(resolvePatience({ timeoutSeconds: options.providerTimeoutSeconds, env: options.env, config: options.config })),
  });
  switch (provider) {
    case "anthropic": {
      const apiKey = requireVar(get, "ANTHROPIC_API_KEY", `anthropic:${id}`);
      // The full-context switch (for measuring) sends no cache breakpoints either.
      return createAnthropicProvider({ model: id, apiKey, ...baseUrl(get, "ANTHROPIC_BASE_URL"), ...http(), promptCache: get(FULL_CONTEXT_VARIABLE) !== "1" });
    }
    case "openai": {
      const apiKey = requireVar(get, "OPENAI_API_KEY", `openai:${id}`);
      return createOpenAIProvider({ model: id, apiKey, ...baseUrl(get, "OPENAI_BASE_URL"), ...http() });
    }
    case "compat": {
      requireVar(get, "COPPERHEAD_BASE_URL", `compat:${id}`);
      const apiKey = get("COPPERHEAD_API_KEY");
      return createCompatProvider({
        model: id,
        baseUrl: baseUrl(get, "COPPERHEAD_BASE_URL").baseUrl!,
        ...(apiKey ? { apiKey } : {}),
        // Only the user knows whether the server's model is a vision model.
        images: get(COMPAT_IMAGES_VARIABLE) === "1",
        ...http(),
      });
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
      if (!Bun.which(driver.executable, { PATH: env.PATH ?? "" })) throw notInstalledError(driver);
      return createAgentCliProvider(driver, { ...(id ? { model: id } : {}), selfCommand: selfCommand(), env });
    }
  }
}

function requireVar(get: (name: string) => string | undefined, name: string, model: string): string {
  const value = get(name);
  if (value) return value;
  throw new CopperheadError("missing_api_key", `${model} needs ${name}, which is not set`, {
    fix: `Export ${name}, or pick another model with --model or COPPERHEAD_MODEL.`,
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
    throw new CopperheadError("usage", `${name} is not a URL`, { fix: `Set ${name} to an http(s) URL such as http://localhost:11434/v1.` });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new CopperheadError("usage", `${name} must be an http or https URL`, {
      fix: `Set ${name} to an http(s) URL such as http://localhost:11434/v1.`,
    });
  }
  return { baseUrl: value };
}
