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
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeRedactor, redactDeep } from "../redact.ts";

export const TRANSCRIPT_FILE = "transcript.jsonl";

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
}

export class Transcript {
  readonly path: string;
  /** This run's redactor (its environment's secrets, `secrets` and the known key shapes). */
  readonly redact: (text: string) => string;
  private readonly startedAt: number;
  private seq = 0;

  constructor(runDir: string, options: TranscriptOptions = {}) {
    mkdirSync(runDir, { recursive: true });
    this.path = join(runDir, TRANSCRIPT_FILE);
    this.redact = makeRedactor(options.env ?? process.env, options.secrets ?? []);
    this.startedAt = options.startedAt ?? Date.now();
  }

  /** Appends one event and returns the line as written (redacted). */
  append(event: TranscriptEvent): TranscriptLine {
    const { type, seq: _seq, t: _t, ...fields } = event;
    // Round-trip through JSON first so errors, dates and class instances become the plain data
    // that will actually be written, then redact every string in it.
    const plain = JSON.parse(JSON.stringify(fields, errorsAsData)) as Record<string, unknown>;
    const line: TranscriptLine = {
      seq: ++this.seq,
      t: Date.now() - this.startedAt,
      type: this.redact(type),
      ...redactDeep(plain, this.redact),
    };
    appendFileSync(this.path, `${JSON.stringify(line)}\n`);
    return line;
  }
}

/** `JSON.stringify` drops an Error's own fields (they are not enumerable); keep name and message. */
function errorsAsData(_key: string, value: unknown): unknown {
  if (value instanceof Error && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    return { name: value.name, message: value.message };
  }
  return value;
}
