/**
 * The only place that writes to stdout. stdout carries data alone (`--json`, report formats);
 * everything a person reads goes to stderr through `log`. Both are redacted on the way out, and
 * both show control, bidi and invisible characters from repo content escaped (visible.ts).
 */
import { CopperheadError } from "../errors.ts";
import { log } from "../log.ts";
import { redactedJson } from "../redact.ts";
import { shown } from "../visible.ts";

/**
 * Writes one result to stdout; an empty result (e.g. no annotations) writes nothing. Hidden
 * characters are spelled out: in text and markdown for the reader, and in JSON and SARIF as
 * the `\uXXXX` escapes JSON reads back as the same value (JSON itself escapes only C0).
 */
export function writeData(text: string): void {
  if (text === "") return;
  const redacted = shown(text);
  process.stdout.write(redacted.endsWith("\n") ? redacted : redacted + "\n");
}

export function writeJson(value: unknown): void {
  writeData(redactedJson(value, { space: 2 }));
}

/** Renders a typed error: JSON on stdout with `--json` (so scripts can parse it), else stderr. */
export function renderError(err: CopperheadError, json: boolean): void {
  if (json) writeJson(err.toJSON());
  log.error(err.message);
  if (err.fix) log.info(`Fix: ${err.fix}`);
}

/** Whether to colour text output: only on a TTY and only without NO_COLOR. */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR;
}
