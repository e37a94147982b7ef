/**
 * How patient the HTTP providers are: the idle timeout of a model call and its retries.
 *
 * The timeout comes from `--provider-timeout`, then `COPPERHEAD_PROVIDER_TIMEOUT`, then the
 * config's `providerTimeoutSeconds`, then the default suited to hosted APIs; the retries from
 * the config's `providerRetries` or the default. `doctor` shows the same resolution.
 */
import {
  DEFAULT_PROVIDER_RETRIES,
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  MAX_PROVIDER_TIMEOUT_SECONDS,
  type Config,
} from "../../config/schema.ts";
import { CopperheadError } from "../../errors.ts";
import type { HttpOptions } from "./http.ts";

export const PROVIDER_TIMEOUT_VARIABLE = "COPPERHEAD_PROVIDER_TIMEOUT";

export interface Patience {
  timeoutSeconds: number;
  /** Where the timeout came from: the flag, the variable, the config or the default. */
  timeoutFrom: "--provider-timeout" | typeof PROVIDER_TIMEOUT_VARIABLE | "config" | "default";
  retries: number;
  retriesFrom: "config" | "default";
}

export interface PatienceSources {
  /** `--provider-timeout`, already parsed with {@link parseTimeoutSeconds}. */
  timeoutSeconds?: number;
  env?: Record<string, string | undefined>;
  config?: Pick<Config, "providerTimeoutSeconds" | "providerRetries"> | null;
}

export function resolvePatience(sources: PatienceSources = {}): Patience {
  const env = sources.env ?? process.env;
  const fromEnv = env[PROVIDER_TIMEOUT_VARIABLE] ? parseTimeoutSeconds(env[PROVIDER_TIMEOUT_VARIABLE]!, PROVIDER_TIMEOUT_VARIABLE) : undefined;
  const configTimeout = sources.config?.providerTimeoutSeconds;
  const configRetries = sources.config?.providerRetries;
  const [timeoutSeconds, timeoutFrom]: [number, Patience["timeoutFrom"]] =
    sources.timeoutSeconds !== undefined
      ? [sources.timeoutSeconds, "--provider-timeout"]
      : fromEnv !== undefined
        ? [fromEnv, PROVIDER_TIMEOUT_VARIABLE]
        : configTimeout !== undefined
          ? [configTimeout, "config"]
          : [DEFAULT_PROVIDER_TIMEOUT_SECONDS, "default"];
  return {
    timeoutSeconds,
    timeoutFrom,
    retries: configRetries ?? DEFAULT_PROVIDER_RETRIES,
    retriesFrom: configRetries !== undefined ? "config" : "default",
  };
}

export function httpOptions(patience: Patience): HttpOptions {
  return { idleTimeoutMs: patience.timeoutSeconds * 1000, maxRetries: patience.retries };
}

/** A timeout written by a person (the flag, the variable): seconds from 1 to an hour. */
export function parseTimeoutSeconds(value: string, from: string): number {
  const seconds = Number(value.trim());
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 1 || seconds > MAX_PROVIDER_TIMEOUT_SECONDS) {
    throw new CopperheadError("usage", `${from} needs a number of seconds from 1 to ${MAX_PROVIDER_TIMEOUT_SECONDS}, not "${value}"`, {
      fix: `Pass ${from === PROVIDER_TIMEOUT_VARIABLE ? `${from}=600` : `${from} 600`}, for example, for a local model on a CPU.`,
    });
  }
  return seconds;
}
