/**
 * The HTTP behaviour shared by the real providers: plain `fetch`, a per-call
 * timeout, retries with exponential backoff and jitter on 429, 5xx and network failures,
 * `retry-after` honoured, and the caller's abort signal obeyed at once.
 *
 * Everything that goes wrong becomes a typed `provider_error`, and every message and detail is
 * passed through a redactor that knows the API key, so a key can never reach an error, a log
 * line or the transcript by way of a server echoing it back.
 */
import { CopperheadError } from "../../errors.ts";
import { makeRedactor } from "../../redact.ts";

export interface HttpOptions {
  /** Per-attempt timeout, covering the response body too. Default 120 s. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** Backoff before retry n is about base × 2ⁿ, with jitter. Default 1 s. */
  backoffBaseMs?: number;
  /**
   * The longest `retry-after` we are willing to sleep. A server asking for more (a quota reset
   * an hour away) will not be ready after a few retries either, so the call fails at once and
   * says how long the server asked for. Default 60 s.
   */
  maxRetryAfterMs?: number;
}

export const DEFAULT_HTTP_OPTIONS: Required<HttpOptions> = {
  timeoutMs: 120_000,
  maxRetries: 3,
  backoffBaseMs: 1_000,
  maxRetryAfterMs: 60_000,
};

/** Cap on one backoff sleep, so the exponential never runs away. */
const MAX_BACKOFF_MS = 30_000;
/** How much of an error body goes into a message. */
const BODY_EXCERPT_CHARS = 500;

export interface JsonPost {
  /** Shown in messages, e.g. `anthropic:claude-sonnet-5-5`. */
  label: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Values that must never appear in an error (the API key). */
  secrets: readonly string[];
  /** The env var that holds the key, named in the fix of a 401/403. */
  keyEnvVar?: string;
}

/**
 * POSTs `body` as JSON and returns the parsed JSON response, retrying what is worth retrying.
 * Throws `provider_error`; a call aborted through `signal` throws `provider_error` with
 * `details.cancelled: true` and is never retried.
 */
export async function postJson(request: JsonPost, options: HttpOptions = {}, signal?: AbortSignal): Promise<unknown> {
  const opts = { ...DEFAULT_HTTP_OPTIONS, ...options };
  const redact = makeRedactor({}, request.secrets);
  const payload = JSON.stringify(request.body);
  let attempt = 0;
  for (;;) {
    const outcome = await attemptOnce(request, payload, opts.timeoutMs, redact, signal);
    if (outcome.kind === "ok") return outcome.value;
    if (outcome.kind === "fatal") throw outcome.error;
    if (attempt >= opts.maxRetries) {
      throw providerError(
        redact,
        `${request.label}: ${outcome.reason} (gave up after ${attempt + 1} attempt${attempt === 0 ? "" : "s"})`,
        { ...outcome.details, attempts: attempt + 1 },
        "The model provider is unavailable or rate-limiting; try again later.",
      );
    }
    let delay = backoffDelay(attempt, opts.backoffBaseMs);
    if (outcome.retryAfterMs !== undefined) {
      if (outcome.retryAfterMs > opts.maxRetryAfterMs) {
        throw providerError(
          redact,
          `${request.label}: ${outcome.reason}; the server asked to retry after ${Math.ceil(outcome.retryAfterMs / 1000)} s`,
          { ...outcome.details, retryAfterMs: outcome.retryAfterMs },
          "The provider's rate limit or quota resets later; try again after the wait it asked for.",
        );
      }
      delay = Math.max(delay, outcome.retryAfterMs);
    }
    await sleep(delay, signal, request.label);
    attempt++;
  }
}

type Outcome =
  | { kind: "ok"; value: unknown }
  | { kind: "fatal"; error: CopperheadError }
  | { kind: "retry"; reason: string; details: Record<string, unknown>; retryAfterMs?: number };

async function attemptOnce(
  request: JsonPost,
  payload: string,
  timeoutMs: number,
  redact: (text: string) => string,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  if (signal?.aborted) return { kind: "fatal", error: cancelled(request.label) };
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let status: number;
  let text: string;
  let retryAfter: string | null;
  let location: string | null;
  try {
    const res = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: payload,
      signal: combined,
      // Never follow: a redirect would carry the key header to wherever it points.
      redirect: "manual",
    });
    status = res.status;
    retryAfter = res.headers.get("retry-after");
    location = res.headers.get("location");
    text = await res.text();
  } catch (err) {
    if (signal?.aborted) return { kind: "fatal", error: cancelled(request.label) };
    if (timeout.aborted) {
      return { kind: "retry", reason: `no response within ${formatSeconds(timeoutMs)}`, details: { timeoutMs } };
    }
    const message = err instanceof Error ? err.message : String(err);
    return { kind: "retry", reason: `network error: ${redact(message)}`, details: { network: true } };
  }

  if (status >= 200 && status < 300) {
    try {
      return { kind: "ok", value: JSON.parse(text) };
    } catch {
      return {
        kind: "fatal",
        error: providerError(
          redact,
          `${request.label}: the response was not valid JSON: ${excerpt(text)}`,
          { status, body: excerpt(text) },
          "The server at the configured base URL does not speak this provider's API; check the base URL.",
        ),
      };
    }
  }

  if (status >= 300 && status < 400) {
    return {
      kind: "fatal",
      error: providerError(
        redact,
        `${request.label}: HTTP ${status} redirect${location ? ` to ${location}` : ""}; redirects are not followed`,
        { status, ...(location ? { location } : {}) },
        "Set the provider's base URL to the address the server redirects to.",
      ),
    };
  }

  const detail = errorDetail(text);
  const details = { status, body: excerpt(text) };
  if (status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    return {
      kind: "retry",
      reason: `HTTP ${status}${detail ? `: ${detail}` : ""}`,
      details,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  return {
    kind: "fatal",
    error: providerError(redact, `${request.label}: HTTP ${status}${detail ? `: ${detail}` : ""}`, details, fixFor(status, request)),
  };
}

function fixFor(status: number, request: JsonPost): string {
  if (status === 401 || status === 403) {
    return request.keyEnvVar
      ? `Check that ${request.keyEnvVar} holds a valid key for this provider.`
      : "The server refused the request; check its credentials.";
  }
  if (status === 404) return "Check the model id and the provider's base URL.";
  return "The provider rejected the request; see the message for the reason.";
}

/** The provider's own error message when the body is the usual `{ error: { message } }`. */
function errorDetail(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === "string") return excerpt(body.error);
    if (body.error && typeof body.error.message === "string") return excerpt(body.error.message);
    if (typeof body.message === "string") return excerpt(body.message);
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return text.trim() ? excerpt(text) : undefined;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}

function providerError(
  redact: (text: string) => string,
  message: string,
  details: Record<string, unknown>,
  fix: string,
): CopperheadError {
  const safe = Object.fromEntries(Object.entries(details).map(([k, v]) => [k, typeof v === "string" ? redact(v) : v]));
  return new CopperheadError("provider_error", redact(message), { ...safe, fix });
}

function cancelled(label: string): CopperheadError {
  return new CopperheadError("provider_error", `${label}: the model call was cancelled`, {
    cancelled: true,
    fix: "The run was cancelled; start it again when ready.",
  });
}

/** `base` + `path`, whatever slashes the user's base URL ends with. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

/** `retry-after` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Full jitter over the upper half: spreads retries from many clients without ever sleeping ~0. */
function backoffDelay(attempt: number, baseMs: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function sleep(ms: number, signal: AbortSignal | undefined, label: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled(label));
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled(label));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
