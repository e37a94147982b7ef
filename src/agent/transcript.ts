/**
 * The run transcript: `<runDir>/transcript.jsonl`, one JSON event per line.
 *
 * It is the record a reviewer reads after a run (what the model was asked, what it answered,
 * which tools ran, why the gate said no), so it is append-only and ordered: every event gets a
 * sequence number and a time offset from the start of the run. Writes are synchronous, which
 * makes the file order the call order with no interleaving, and a crash loses nothing already
 * appended.
 *
 * Secrets are redacted here, at write time (ARCHITECTURE.md, "Invariants"): the text is redacted before it is
 * serialised, so an unredacted string never reaches the disk, whatever the caller passed in.
 *
 * It is bounded, whatever the model sends: a string longer than {@link MAX_TRANSCRIPT_STRING}
 * characters is cut (saying how long it was), and past {@link MAX_TRANSCRIPT_BYTES} each event
 * is written without its fields, so the record of how the run ended is still there.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeRedactor, redactDeep } from "../redact.ts";

export const TRANSCRIPT_FILE = "transcript.jsonl";
/** The longest string an event keeps: a whole design file a tool returned reads fine in less. */
export const MAX_TRANSCRIPT_STRING = 64 * 1024;
/** The most a transcript holds before it keeps only each event's type and place. */
export const MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024;

/**
 * One transcript event. The loop uses `phase`, `model_request`, `model_response`, `tool_call`,
 * `tool_result`, `verify`, `repair`, `commit`, `rollback`, `error` and `note`, the spec gate
 * `proposal` and `amendment`; the writer itself
 * accepts any type so a new event kind needs no change here.
 */
export interface TranscriptEvent {
  type: string;
  [field: string]: unknown;
}

/** What lands on disk: the event plus its place in the run. */
export interface TranscriptLine extends TranscriptEvent {
  /** 1-based position in the file. */
  seq: number;
  /** Milliseconds since the run started. */
  t: number;
}

export interface TranscriptOptions {
  /** Environment whose secret-looking values are redacted; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Further secrets to redact, e.g. a key that did not come from the environment. */
  secrets?: readonly string[];
  /** When the run started (epoch ms); defaults to now. */
  startedAt?: number;
  /** Defaults to {@link MAX_TRANSCRIPT_BYTES}. */
  maxBytes?: number;
}

export class Transcript {
  readonly path: string;
  /** This run's redactor (its environment's secrets, `secrets` and the known key shapes). */
  readonly redact: (text: string) => string;
  private readonly startedAt: number;
  private seq = 0;
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(runDir: string, options: TranscriptOptions = {}) {
    mkdirSync(runDir, { recursive: true });
    this.path = join(runDir, TRANSCRIPT_FILE);
    this.redact = makeRedactor(options.env ?? process.env, options.secrets ?? []);
    this.startedAt = options.startedAt ?? Date.now();
    this.maxBytes = options.maxBytes ?? MAX_TRANSCRIPT_BYTES;
  }

  /** Appends one event and returns the line as written (redacted). */
  append(event: TranscriptEvent): TranscriptLine {
    const { type, seq: _seq, t: _t, ...fields } = event;
    // Round-trip through JSON first so errors, dates and class instances become the plain data
    // that will actually be written, then redact every string in it.
    const plain = JSON.parse(JSON.stringify(fields, errorsAsData)) as Record<string, unknown>;
    const place = { seq: ++this.seq, t: Date.now() - this.startedAt, type: cut(this.redact(type)) };
    let line: TranscriptLine = {
      ...place,
      ...(cutLongStrings(redactDeep(plain, this.redact)) as Record<string, unknown>),
    };
    let text = `${JSON.stringify(line)}\n`;
    if (this.bytes + Buffer.byteLength(text) > this.maxBytes) {
      line = {
        ...place,
        truncated: `the transcript reached its cap of ${this.maxBytes} bytes; this event's fields were left out`,
      };
      text = `${JSON.stringify(line)}\n`;
    }
    appendFileSync(this.path, text);
    this.bytes += Buffer.byteLength(text);
    return line;
  }
}

function cut(text: string): string {
  return text.length > MAX_TRANSCRIPT_STRING
    ? `${text.slice(0, MAX_TRANSCRIPT_STRING)}… [cut: ${text.length} characters in all]`
    : text;
}

/** Plain JSON data with every string cut to {@link MAX_TRANSCRIPT_STRING}, object keys included. */
function cutLongStrings(value: unknown): unknown {
  if (typeof value === "string") return cut(value);
  if (Array.isArray(value)) return value.map(cutLongStrings);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cut(k), cutLongStrings(v)]));
  return value;
}

/** `JSON.stringify` drops an Error's own fields (they are not enumerable); keep name and message. */
function errorsAsData(_key: string, value: unknown): unknown {
  if (value instanceof Error && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    return { name: value.name, message: value.message };
  }
  return value;
}
