/**
 * How patient the model providers are: the idle timeout of a model call, its total deadline,
 * and the HTTP providers' retries.
 *
 * The idle timeout comes from `--provider-timeout`, then `COPPERHEAD_PROVIDER_TIMEOUT`, then the
 * config's `providerTimeoutSeconds`, then the default suited to hosted APIs. The deadline comes
 * from `--provider-deadline`, `COPPERHEAD_PROVIDER_DEADLINE`, `providerDeadlineSeconds`, in that
 * order, else a few idle timeouts. The retries from the config's `providerRetries` or the
 * default. `doctor` shows the same resolution.
 */
import {
  DEFAULT_PROVIDER_RETRIES,
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  MAX_PROVIDER_DEADLINE_SECONDS,
  MAX_PROVIDER_TIMEOUT_SECONDS,
  PROVIDER_DEADLINE_FACTOR,
  type Config,
} from "../../config/schema.ts";
import { CopperheadError } from "../../errors.ts";
import type { HttpOptions } from "./http.ts";

export const PROVIDER_TIMEOUT_VARIABLE = "COPPERHEAD_PROVIDER_TIMEOUT";
export const PROVIDER_DEADLINE_VARIABLE = "COPPERHEAD_PROVIDER_DEADLINE";

export interface Patience {
  timeoutSeconds: number;
  /** Where the timeout came from: the flag, the variable, the config or the default. */
  timeoutFrom: "--provider-timeout" | typeof PROVIDER_TIMEOUT_VARIABLE | "config" | "default";
  deadlineSeconds: number;
  /** Where the deadline came from; "default" is {@link PROVIDER_DEADLINE_FACTOR} idle timeouts. */
  deadlineFrom: "--provider-deadline" | typeof PROVIDER_DEADLINE_VARIABLE | "config" | "default";
  retries: number;
  retriesFrom: "config" | "default";
}

export interface PatienceSources {
  /** `--provider-timeout`, already parsed with {@link parseTimeoutSeconds}. */
  timeoutSeconds?: number;
  /** `--provider-deadline`, already parsed with {@link parseDeadlineSeconds}. */
  deadlineSeconds?: number;
  env?: Record<string, string | undefined>;
  config?: Pick<Config, "providerTimeoutSeconds" | "providerDeadlineSeconds" | "providerRetries"> | null;
}

export function resolvePatience(sources: PatienceSources = {}): Patience {
  const env = sources.env ?? process.env;
  const timeoutEnv = env[PROVIDER_TIMEOUT_VARIABLE]
    ? parseTimeoutSeconds(env[PROVIDER_TIMEOUT_VARIABLE]!, PROVIDER_TIMEOUT_VARIABLE)
    : undefined;
  const deadlineEnv = env[PROVIDER_DEADLINE_VARIABLE]
    ? parseDeadlineSeconds(env[PROVIDER_DEADLINE_VARIABLE]!, PROVIDER_DEADLINE_VARIABLE)
    : undefined;
  const config = sources.config;
  const [timeoutSeconds, timeoutFrom] = firstOf<Patience["timeoutFrom"]>(
    [sources.timeoutSeconds, "--provider-timeout"],
    [timeoutEnv, PROVIDER_TIMEOUT_VARIABLE],
    [config?.providerTimeoutSeconds, "config"],
  ) ?? [DEFAULT_PROVIDER_TIMEOUT_SECONDS, "default"];
  const [deadlineSeconds, deadlineFrom] = firstOf<Patience["deadlineFrom"]>(
    [sources.deadlineSeconds, "--provider-deadline"],
    [deadlineEnv, PROVIDER_DEADLINE_VARIABLE],
    [config?.providerDeadlineSeconds, "config"],
  ) ?? [PROVIDER_DEADLINE_FACTOR * timeoutSeconds, "default"];
  const configRetries = config?.providerRetries;
  return {
    timeoutSeconds,
    timeoutFrom,
    deadlineSeconds,
    deadlineFrom,
    retries: configRetries ?? DEFAULT_PROVIDER_RETRIES,
    retriesFrom: configRetries !== undefined ? "config" : "default",
  };
}

/** The first source that set a value, with its name. */
function firstOf<From>(...sources: Array<[number | undefined, From]>): [number, From] | undefined {
  const found = sources.find(([value]) => value !== undefined);
  return found ? [found[0]!, found[1]] : undefined;
}

export function httpOptions(patience: Patience): HttpOptions {
  return {
    idleTimeoutMs: patience.timeoutSeconds * 1000,
    deadlineMs: patience.deadlineSeconds * 1000,
    maxRetries: patience.retries,
  };
}

/** An idle timeout written by a person (the flag, the variable): seconds from 1 to an hour. */
export function parseTimeoutSeconds(value: string, from: string): number {
  return parseSeconds(value, from, MAX_PROVIDER_TIMEOUT_SECONDS, "600", "for a local model on a CPU");
}

/** A total deadline written by a person: seconds from 1 to {@link MAX_PROVIDER_DEADLINE_SECONDS}. */
export function parseDeadlineSeconds(value: string, from: string): number {
  return parseSeconds(value, from, MAX_PROVIDER_DEADLINE_SECONDS, "1800", "for a slow model writing long answers");
}

function parseSeconds(value: string, from: string, max: number, example: string, forWhat: string): number {
  const seconds = Number(value.trim());
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 1 || seconds > max) {
    throw new CopperheadError("usage", `${from} needs a number of seconds from 1 to ${max}, not "${value}"`, {
      fix: `Pass ${from.startsWith("--") ? `${from} ${example}` : `${from}=${example}`}, for example, ${forWhat}.`,
    });
  }
  return seconds;
}
