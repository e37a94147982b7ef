/**
 * The one logger. stdout is reserved for data (`--json`, report formats, MCP frames), so every
 * log line goes to stderr — including consola's "log" level, which would otherwise use stdout.
 *
 * Every line is redacted before a reporter formats it (see redact.ts): a message can quote
 * anything a model or a server wrote, and a key must never reach a terminal or a CI log. For
 * the same reason its control, bidi and invisible characters are spelled out (visible.ts).
 */
import { createConsola, type ConsolaReporter, type LogObject } from "consola";
import { redactSecrets } from "./redact.ts";
import { shown } from "./visible.ts";

export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: process.env.COPPERHEAD_DEBUG ? 4 : 3,
});

log.setReporters(log.options.reporters.map(redacting));

function redacting(reporter: ConsolaReporter): ConsolaReporter {
  return {
    log: (logObj: LogObject, ctx) =>
      reporter.log(
        { ...logObj, args: logObj.args.map(redactArg), ...(logObj.message ? { message: shown(logObj.message) } : {}) },
        ctx,
      ),
  };
}

/** An argument as a person may see it: no secrets, no characters that act instead of print. */
function redactArg(arg: unknown): unknown {
  if (typeof arg === "string") return shown(arg);
  if (arg instanceof Error) {
    const copy = new Error(shown(arg.message));
    copy.name = arg.name;
    copy.stack = arg.stack === undefined ? undefined : redactSecrets(arg.stack);
    return copy;
  }
  return arg;
}
