#!/usr/bin/env bun
/** copperhead entry point: run the CLI and exit with its code. */
import { runCli } from "./cli/run.ts";

process.exitCode = await runCli(process.argv.slice(2));
