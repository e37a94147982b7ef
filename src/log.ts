/**
 * The one logger. stdout is reserved for data (`--json`, report formats, MCP frames), so every
 * log line goes to stderr — including consola's "log" level, which would otherwise use stdout.
 */
import { createConsola } from "consola";

export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: process.env.COPPERHEAD_DEBUG ? 4 : 3,
});
