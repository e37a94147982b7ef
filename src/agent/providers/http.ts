/**
 * The HTTP behaviour shared by the real providers: plain `fetch` of a streamed answer
 * (server-sent events), an idle timeout (an attempt is given up when the server stays silent
 * too long, however long the whole answer takes), a total deadline on the call (a server that
 * keeps it alive with keep-alives or a byte at a time is never idle), a cap on the bytes one
 * answer may take,
 * retries with exponential backoff and jitter on 429, 5xx, network failures and streams cut
 * short, `retry-after` honoured, and the caller's abort signal obeyed at once.
 *
 * Everything that goes wrong becomes a typed `provider_error`, and every message and detail is
 * passed through a redactor that knows the API key, so a key can never reach an error, a log
 * line or the transcript by way of a server echoing it back.
 */
import {
  DEFAULT_PROVIDER_RETRIES,
  DEFAULT_PROVIDER_TIMEOUT_SECONDS,
  PROVIDER_DEADLINE_FACTOR,
} from "../../config/schema.ts";
import { CopperheadError } from "../../errors.ts";
import { makeRedactor } from "../../redact.ts";
import { trimEndOf } from "../../util/trim.ts";
import { SseParser, type SseEvent } from "./sse.ts";

export interface HttpOptions {
  /**
   * How long the server may stay silent (before its answer starts, and between two pieces of
   * it) before the attempt is given up. Default {@link DEFAULT_IDLE_TIMEOUT_MS}.
   */
  idleTimeoutMs?: number;
  /**
   * The most the whole call may take, every attempt and backoff included, however steadily the
   * server sends. Default {@link PROVIDER_DEADLINE_FACTOR} × the idle timeout.
   */
  deadlineMs?: number;
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

/**
 * Hosted APIs stream an event (or a keep-alive) within seconds; two minutes of silence means
 * the connection or the server is gone. A local model reading a long prompt on a CPU can be
 * silent for longer before its first token: its users raise `providerTimeoutSeconds`.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = DEFAULT_PROVIDER_TIMEOUT_SECONDS * 1000;

export const DEFAULT_HTTP_OPTIONS: Required<Omit<HttpOptions, "deadlineMs">> = {
  idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
  maxRetries: DEFAULT_PROVIDER_RETRIES,
  backoffBaseMs: 1_000,
  maxRetryAfterMs: 60_000,
};

/**
 * The most one answer may take on the wire. An answer of 16,000 tokens streamed as events is a
 * few MB; this leaves room for servers that send every token with a large envelope, and stops
 * a server sending without end (which once grew the process until the kernel killed it).
 */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** How much of an error answer is read: its message is in the first few hundred bytes. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
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
 * Assembles one streamed answer from its events; a fresh reader per attempt. A server that
 * ignored the request to stream and sent one JSON body is read by `whole` instead.
 */
export interface AnswerReader<T> {
  /** One server-sent event; throws a {@link StreamFailure} for an error the server reported in the stream. */
  event(event: SseEvent): void;
  /** The answer, once the stream has ended; throws a {@link StreamFailure} when it ended incomplete. */
  finish(): T;
  /** The answer of a server that sent one JSON body. */
  whole(json: unknown): T;
}

/** Something wrong inside a streamed answer: an error event, a stream cut short. */
export class StreamFailure extends Error {
  constructor(
    message: string,
    /** Worth another attempt (an overloaded server, a cut connection), or not (a bad request). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** An event's data, which every provider's stream sends as one JSON object. */
export function eventObject(data: string): Record<string, unknown> {
  try {
    const value = JSON.parse(data) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new StreamFailure(`an event whose data is not a JSON object: ${excerpt(data)}`, false);
}

/**
 * POSTs `body` as JSON and reads the streamed answer with a fresh `newReader()` per attempt,
 * retrying what is worth retrying. Throws `provider_error`; a call aborted through `signal`
 * throws `provider_error` with `details.cancelled: true` and is never retried.
 */
export async function postStreaming<T>(
  request: JsonPost,
  newReader: () => AnswerReader<T>,
  options: HttpOptions = {},
  signal?: AbortSignal,
): Promise<T> {
  const opts = { ...DEFAULT_HTTP_OPTIONS, ...options };
  const deadlineMs = options.deadlineMs ?? PROVIDER_DEADLINE_FACTOR * opts.idleTimeoutMs;
  const redact = makeRedactor({}, request.secrets);
  const payload = JSON.stringify(request.body);
  const deadline = new AbortTimer(deadlineMs);
  const stop: Stop = { caller: signal, deadline, deadlineMs };
  try {
    return await attempts(request, payload, newReader, opts, redact, stop);
  } finally {
    deadline.stop();
  }
}

/** What ends a call from outside an attempt: the caller's signal, or the call's deadline. */
interface Stop {
  caller: AbortSignal | undefined;
  deadline: AbortTimer;
  deadlineMs: number;
}

async function attempts<T>(
  request: JsonPost,
  payload: string,
  newReader: () => AnswerReader<T>,
  opts: Required<Omit<HttpOptions, "deadlineMs">>,
  redact: (text: string) => string,
  stop: Stop,
): Promise<T> {
  let attempt = 0;
  for (;;) {
    const outcome = await attemptOnce(request, payload, newReader(), opts.idleTimeoutMs, redact, stop);
    if (outcome.kind === "ok") return outcome.value;
    if (outcome.kind === "fatal") throw outcome.error;
    if (attempt >= opts.maxRetries) {
      throw providerError(
        redact,
        `${request.label}: ${outcome.reason} (gave up after ${attempt + 1} attempt${attempt === 0 ? "" : "s"})`,
        { ...outcome.details, attempts: attempt + 1 },
        outcome.details.idleTimeoutMs !== undefined
          ? "The model server stopped sending; if it is a slow local model, raise providerTimeoutSeconds in .copperhead/config.json (or --provider-timeout, COPPERHEAD_PROVIDER_TIMEOUT)."
          : outcome.details.network
            ? unreachableFix(request.url)
            : "The model provider is unavailable or rate-limiting; try again later.",
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
    await sleep(delay, stop, request.label, () =>
      deadlineError(request.label, stop.deadlineMs, redact, outcome.reason),
    );
    attempt++;
  }
}

type Outcome<T> =
  | { kind: "ok"; value: T }
  | { kind: "fatal"; error: CopperheadError }
  | { kind: "retry"; reason: string; details: Record<string, unknown>; retryAfterMs?: number };

/**
 * An abort that fires after `ms`: the idle timer re-arms it on every arrival with
 * {@link touch}, the call's deadline never does.
 */
class AbortTimer {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout>;
  fired = false;

  constructor(private readonly ms: number) {
    this.timer = this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  touch(): void {
    clearTimeout(this.timer);
    this.timer = this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): ReturnType<typeof setTimeout> {
    return setTimeout(() => {
      this.fired = true;
      this.controller.abort();
    }, this.ms);
  }
}

async function attemptOnce<T>(
  request: JsonPost,
  payload: string,
  reader: AnswerReader<T>,
  idleTimeoutMs: number,
  redact: (text: string) => string,
  stop: Stop,
): Promise<Outcome<T>> {
  const signal = stop.caller;
  if (signal?.aborted) return { kind: "fatal", error: cancelled(request.label) };
  if (stop.deadline.fired) return { kind: "fatal", error: deadlineError(request.label, stop.deadlineMs, redact) };
  const idle = new AbortTimer(idleTimeoutMs);
  const combined = AbortSignal.any([...(signal ? [signal] : []), stop.deadline.signal, idle.signal]);
  try {
    const res = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: payload,
      signal: combined,
      // Never follow: a redirect would carry the key header to wherever it points.
      redirect: "manual",
    });
    idle.touch();
    if (res.status < 200 || res.status >= 300) {
      const text = await readText(res, idle, MAX_ERROR_BODY_BYTES);
      return failedStatus(request, res, text, redact);
    }
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      await readEvents(res, reader, idle, request.label);
      return { kind: "ok", value: reader.finish() };
    }
    const text = await readText(res, idle, MAX_RESPONSE_BYTES, request.label);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        kind: "fatal",
        error: providerError(
          redact,
          `${request.label}: the response was not valid JSON: ${excerpt(text)}`,
          { status: res.status, body: excerpt(text) },
          "The server at the configured base URL does not speak this provider's API; check the base URL.",
        ),
      };
    }
    return { kind: "ok", value: reader.whole(json) };
  } catch (err) {
    if (signal?.aborted) return { kind: "fatal", error: cancelled(request.label) };
    if (stop.deadline.fired) return { kind: "fatal", error: deadlineError(request.label, stop.deadlineMs, redact) };
    if (idle.fired) {
      return {
        kind: "retry",
        reason: `the server sent nothing for ${formatSeconds(idleTimeoutMs)}`,
        details: { idleTimeoutMs },
      };
    }
    if (err instanceof CopperheadError) return { kind: "fatal", error: err };
    if (err instanceof StreamFailure) {
      if (err.retryable) return { kind: "retry", reason: redact(err.message), details: { stream: true } };
      return {
        kind: "fatal",
        error: providerError(
          redact,
          `${request.label}: ${err.message}`,
          {},
          "The provider rejected the request; see the message for the reason.",
        ),
      };
    }
    return {
      kind: "retry",
      reason: `network error reaching ${request.url}: ${redact(networkMessage(err))}`,
      details: { network: true, url: request.url },
    };
  } finally {
    idle.stop();
  }
}

/**
 * GETs a small JSON document from the provider (its model list): one attempt, ended by the idle
 * timeout, read within {@link MAX_RESPONSE_BYTES}. Throws `provider_error` (with `details.status`
 * for an HTTP error), redacted like every other provider error.
 */
export async function getJson(
  request: Omit<JsonPost, "body">,
  idleTimeoutMs: number = DEFAULT_IDLE_TIMEOUT_MS,
): Promise<unknown> {
  const redact = makeRedactor({}, request.secrets);
  const idle = new AbortTimer(idleTimeoutMs);
  try {
    const res = await fetch(request.url, { headers: request.headers, signal: idle.signal, redirect: "manual" });
    idle.touch();
    if (res.status < 200 || res.status >= 300) {
      const text = await readText(res, idle, MAX_ERROR_BODY_BYTES);
      const detail = errorDetail(text);
      throw providerError(
        redact,
        `${request.label}: HTTP ${res.status}${detail ? `: ${detail}` : ""}`,
        { status: res.status, url: request.url },
        fixFor(res.status, { ...request, body: undefined }),
      );
    }
    const text = await readText(res, idle, MAX_RESPONSE_BYTES, request.label);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw providerError(
        redact,
        `${request.label}: the answer from ${request.url} was not valid JSON: ${excerpt(text)}`,
        { url: request.url },
        "The server at the configured base URL does not speak this provider's API; check the base URL.",
      );
    }
  } catch (err) {
    if (err instanceof CopperheadError) throw err;
    const why = idle.fired ? `the server sent nothing for ${formatSeconds(idleTimeoutMs)}` : networkMessage(err);
    throw providerError(
      redact,
      `${request.label}: network error reaching ${request.url}: ${why}`,
      { network: true, url: request.url },
      unreachableFix(request.url),
    );
  } finally {
    idle.stop();
  }
}

/** Feeds the body's events to `reader` as they arrive, within {@link MAX_RESPONSE_BYTES}. */
async function readEvents<T>(res: Response, reader: AnswerReader<T>, idle: AbortTimer, label: string): Promise<void> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  let bytes = 0;
  for await (const chunk of chunks(res, idle)) {
    bytes += chunk.byteLength;
    if (bytes > MAX_RESPONSE_BYTES) throw responseCapError(label);
    for (const event of parser.push(decoder.decode(chunk, { stream: true }))) reader.event(event);
  }
  for (const event of parser.push(decoder.decode())) reader.event(event);
}

/**
 * The body as text, at most `maxBytes`: past that an answer is refused (`refuseAs`, the
 * provider's label, given) or cut there (an error answer, whose message comes first).
 */
async function readText(res: Response, idle: AbortTimer, maxBytes: number, refuseAs?: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of chunks(res, idle)) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      if (refuseAs !== undefined) throw responseCapError(refuseAs);
      return text + decoder.decode(chunk.subarray(0, chunk.byteLength - (bytes - maxBytes)));
    }
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/** The body's chunks, each arrival re-arming the idle timer; leaving early cancels the body. */
async function* chunks(res: Response, idle: AbortTimer): AsyncGenerator<Uint8Array> {
  if (!res.body) return;
  const body = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await body.read();
      if (done) return;
      idle.touch();
      yield value;
    }
  } finally {
    body.cancel().catch(() => {});
  }
}

/** A failed connection in words; Bun's own ask whether the machine can reach "the url" without naming it. */
function networkMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s*Is the computer able to access the url\?/, "");
}

function unreachableFix(url: string): string {
  return `Nothing answered at ${new URL(url).origin}: check that the model server is running there and that the provider's base URL is right.`;
}

function responseCapError(label: string): CopperheadError {
  return new CopperheadError(
    "provider_error",
    `${label}: the answer exceeded ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB, the cap on one model response; the rest was not read`,
    {
      cap: "response_bytes",
      limitBytes: MAX_RESPONSE_BYTES,
      fix: "The server sent far more than a model answer; check that the base URL points at a model server.",
    },
  );
}

/** A non-2xx answer: retried (429, 5xx) or the typed error that names the fix. */
function failedStatus<T>(request: JsonPost, res: Response, text: string, redact: (text: string) => string): Outcome<T> {
  const status = res.status;
  if (status >= 300 && status < 400) {
    const location = res.headers.get("location");
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
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
    return {
      kind: "retry",
      reason: `HTTP ${status}${detail ? `: ${detail}` : ""}`,
      details,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  return {
    kind: "fatal",
    error: providerError(
      redact,
      `${request.label}: HTTP ${status}${detail ? `: ${detail}` : ""}`,
      details,
      fixFor(status, request),
    ),
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
export function errorDetail(text: string): string | undefined {
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

/**
 * The call ran past its total deadline: the server kept sending (keep-alives, a byte at a
 * time) or kept failing in ways worth a retry, but never finished an answer in time.
 */
function deadlineError(
  label: string,
  deadlineMs: number,
  redact: (text: string) => string,
  lastFailure?: string,
): CopperheadError {
  return providerError(
    redact,
    `${label}: the model call ran past its deadline of ${formatSeconds(deadlineMs)} without a complete answer${lastFailure ? ` (last attempt: ${lastFailure})` : ""}`,
    { deadlineMs },
    "The model server kept the call open without finishing its answer. If a slow model needs longer, raise providerDeadlineSeconds in .copperhead/config.json (or --provider-deadline, COPPERHEAD_PROVIDER_DEADLINE).",
  );
}

function cancelled(label: string): CopperheadError {
  return new CopperheadError("provider_error", `${label}: the model call was cancelled`, {
    cancelled: true,
    fix: "The run was cancelled; start it again when ready.",
  });
}

/** `base` + `path`, whatever slashes the user's base URL ends with. */
export function joinUrl(base: string, path: string): string {
  return `${trimEndOf(base, "/")}/${path}`;
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

/** The backoff before the next attempt, cut short by the caller's cancel or the call's deadline. */
function sleep(ms: number, stop: Stop, label: string, pastDeadline: () => CopperheadError): Promise<void> {
  const signal = stop.caller ? AbortSignal.any([stop.caller, stop.deadline.signal]) : stop.deadline.signal;
  const stopped = () => (stop.caller?.aborted ? cancelled(label) : pastDeadline());
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(stopped());
    const onAbort = () => {
      clearTimeout(timer);
      reject(stopped());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
