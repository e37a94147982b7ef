/**
 * Running one kicad-cli process: scratch dir, isolated config home, environment, timeout,
 * captured output, and the classification of failures.
 *
 * ## Config home: a fresh, seeded one per invocation
 *
 * kicad-cli reads its global library tables from `$KICAD_CONFIG_HOME/<major>.0/{sym,fp}-lib-table`
 * (verified with 9.0.8). A machine that never ran the KiCad GUI has no `sym-lib-table` there, so
 * ERC reports `lib_symbol_issues` and DRC `lib_footprint_issues` for every stock part. Each
 * invocation therefore gets its own config home inside its scratch dir, seeded with the
 * installation's template tables, and the scratch dir is removed afterwards.
 *
 * Why per invocation and not one home per process: a cold home is filled by kicad-cli on
 * exit (kicad_common.json, eeschema.json, pcbnew.json, … written in place, not atomically),
 * and even a warm one gets kicad_common.json rewritten whenever the working directory changes
 * (it records `working_dir`). ERC and DRC run concurrently, so a shared home would have two
 * processes writing the same files. A fresh home avoids that by construction, and it is free:
 * seeding (mkdtemp + two table copies + one small JSON + removal) measured ~0.6–0.8 ms, and
 * ERC/DRC on a fresh home were within run-to-run noise of a warm one (ERC ~240 ms vs ~250 ms,
 * DRC ~380 ms vs ~370 ms, 25 runs each on the test fixtures).
 *
 * The seeded `kicad_common.json` pins the UI language to English. Otherwise kicad-cli follows
 * the user's locale (measured under `LC_ALL=de_DE.UTF-8`: German on stdout and stderr and in
 * report descriptions; JSON numbers are unaffected), and the few facts we read from its text
 * (load failures, whether schematic parity ran) must not depend on that. KiCad merges a
 * partial settings file with its defaults, so the one key is enough.
 *
 * The stock-library variables (`KICAD9_SYMBOL_DIR`, …) are set from the same share dir the
 * template tables came from, unless the user set them; KiCad derives the same defaults for a
 * standard install, and this keeps a relocated install consistent with its own tables.
 *
 * ## A process group of its own, and bounded output
 *
 * Many installs start KiCad through a launcher (Flatpak, AppImage, a distribution's wrapper
 * script) that runs the real program as its child. Killing the launcher alone on a timeout
 * would leave that child running, holding our pipes open, so the call would wait for it as
 * long as it ran. Each process therefore starts a process group of its own (a new session on
 * POSIX), and a timeout kills the whole group; pipes some process outside it still holds are
 * given up shortly after. Output is captured up to `MAX_OUTPUT_BYTES` per stream: a process
 * that prints more is killed the same way, and the call is `kicad_output_too_large`. Signals
 * and exit are handled in `process-group.ts`.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { OWN_GROUP, signalGroup } from "../../util/signals.ts";
import { trackGroup } from "./process-group.ts";

/** What a config home is seeded from; null seeds nothing (the version probe, before the major is known). */
export interface ConfigSeed {
  major: number;
  shareDir: string | null;
}

export interface ExecOptions {
  /** A private dir (from `withScratchDir`): kicad-cli's cwd and the parent of its config home. */
  scratchDir: string;
  timeoutMs: number;
  seed?: ConfigSeed;
  /** What the program is called in errors; default "kicad-cli" and its subcommand. */
  label?: string;
  /** Called once the process has been spawned. */
  onSpawn?: () => void;
}

export interface KicadRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stderr then stdout, trimmed and bounded, for error messages. */
  excerpt: string;
}

const EXCERPT_MAX = 2000;

/** How much of each of stdout and stderr is kept; a report of a huge board is a few MB. */
export const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** How long a killed group's pipes are waited for once its leader is gone, ms. */
const PIPE_GRACE_MS = 2000;

/** Library-path variables KiCad reads, suffix → subdir of the share dir. */
const LIBRARY_VARS: ReadonlyArray<readonly [string, string]> = [
  ["SYMBOL_DIR", "symbols"],
  ["FOOTPRINT_DIR", "footprints"],
  ["3DMODEL_DIR", "3dmodels"],
  ["TEMPLATE_DIR", "template"],
];

/** Creates a temp dir, hands it to `fn`, and removes it whatever happens. */
export async function withScratchDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "copperhead-kicad-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Spawns kicad-cli with captured stdout/stderr (it prints chatter on stdout, which must never
 * reach ours) in a process group of its own, which is killed with SIGKILL on timeout or when
 * either stream passes `MAX_OUTPUT_BYTES`. Resolves with the exit code whatever it is; callers
 * decide what a non-zero code means.
 */
export async function execKicad(binary: string, args: string[], opts: ExecOptions): Promise<KicadRun> {
  const proc = spawnKicad(binary, args, opts);
  return awaitKicad(proc, opts.label ?? `kicad-cli ${args.slice(0, 2).join(" ")}`, opts.timeoutMs);
}

/** A KiCad process spawned in its own group, its stdin a pipe when it was asked for one. */
export type KicadProcess = Bun.Subprocess<"ignore" | "pipe", "pipe", "pipe">;

/**
 * The first half of `execKicad`: seeds the config home and spawns the process in a group of its
 * own, watched until it exits (`process-group.ts`). With `stdin: "pipe"` it can be started ahead
 * of its job and handed it later (`python-spare.ts`); nothing reads its output or times it until
 * `awaitKicad`. It runs in step: a caller about to work without yielding (placing and routing a
 * part) has the process running meanwhile.
 */
export function spawnKicad(
  binary: string,
  args: string[],
  opts: Omit<ExecOptions, "timeoutMs"> & { stdin?: "ignore" | "pipe" },
): KicadProcess {
  const configHome = join(opts.scratchDir, "config");
  seedConfigHome(configHome, opts.seed);
  let proc: KicadProcess;
  try {
    proc = Bun.spawn([binary, ...args], {
      cwd: opts.scratchDir,
      env: kicadEnv(configHome, opts.seed),
      stdin: opts.stdin ?? "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: OWN_GROUP,
    });
  } catch (err) {
    throw new CopperheadError("kicad_cli_missing", `Could not start ${binary}: ${(err as Error).message}`, {
      fix: "Check that kicad-cli is installed and executable, or set COPPERHEAD_KICAD_CLI to it.",
      path: binary,
    });
  }
  trackGroup(proc);
  opts.onSpawn?.();
  return proc;
}

/**
 * The second half of `execKicad`: captures the output of `proc` until it exits, killing its
 * group after `timeoutMs` or when a stream passes `MAX_OUTPUT_BYTES`. `label` names it in errors.
 */
export async function awaitKicad(proc: KicadProcess, label: string, timeoutMs: number): Promise<KicadRun> {
  let stopped: "timeout" | "stdout" | "stderr" | undefined;
  const killed = Promise.withResolvers<void>();
  const stop = (why: NonNullable<typeof stopped>) => {
    if (stopped) return;
    stopped = why;
    signalGroup(proc);
    killed.resolve();
  };
  // Once the group is killed and its leader gone, pipes still open belong to something that
  // left the group: they are not waited for.
  const abandoned = killed.promise.then(() => proc.exited).then(() => Bun.sleep(PIPE_GRACE_MS));
  const timer = setTimeout(() => stop("timeout"), timeoutMs);
  try {
    const [stdout, stderr, exitCode] = await Promise.all([
      capture(proc.stdout, () => stop("stdout"), abandoned),
      capture(proc.stderr, () => stop("stderr"), abandoned),
      proc.exited,
    ]);
    const run = { exitCode, stdout, stderr, excerpt: excerpt(stderr, stdout) };
    if (stopped === "timeout") {
      throw new CopperheadError("kicad_timeout", `${label} timed out after ${timeoutMs} ms.`, {
        fix: "The design may be very large or the machine busy; set COPPERHEAD_KICAD_TIMEOUT to more seconds and retry.",
        timeoutMs,
        output: run.excerpt,
      });
    }
    if (stopped) {
      throw new CopperheadError(
        "kicad_output_too_large",
        `${label} wrote more than ${MAX_OUTPUT_BYTES / (1024 * 1024)} MiB to ${stopped}, so it was stopped.`,
        {
          fix: "Run the same command by hand to see what it prints; a KiCad that prints without end is broken or is not KiCad.",
          limitBytes: MAX_OUTPUT_BYTES,
          output: run.excerpt,
        },
      );
    }
    return run;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A stream's text, read until it ends or `abandoned` settles; past `MAX_OUTPUT_BYTES` it calls
 * `overflow` and keeps nothing more.
 */
async function capture(
  stream: ReadableStream<Uint8Array>,
  overflow: () => void,
  abandoned: Promise<void>,
): Promise<string> {
  const reader = stream.getReader();
  void abandoned.then(() => reader.cancel().catch(() => {}));
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > MAX_OUTPUT_BYTES) {
      overflow();
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Throws the typed error for a run that did not succeed, judged by its exit code and by the
 * text kicad-cli prints when it cannot load a file:
 * - exit 3 is kicad-cli's "invalid input file" code ("Failed to load schematic|board");
 * - a sexpr parse error inside a file kicad-cli loads on its own — the schematic next to a
 *   board under `--schematic-parity` — exits 255 with "Expecting '(' in '<file>', line N";
 * - "Failed to load" on stderr counts even with exit 0 (not seen with 9.0.8; cheap insurance);
 * - anything else non-zero is a plain failure.
 * `input` is the file the caller asked kicad-cli to read.
 */
export function assertRunSucceeded(run: KicadRun, input: string, what: string): void {
  const parseError = /in '([^']+)', line \d+/.exec(run.stderr);
  const loadFailed =
    run.exitCode === 3 ||
    (run.exitCode !== 0 && parseError !== null) ||
    /Failed to load|does not exist or is not accessible/i.test(run.stderr);
  if (loadFailed) {
    const file = parseError?.[1] ?? input;
    throw new CopperheadError("kicad_load_failed", `kicad-cli could not load ${file}: ${firstLine(run.excerpt)}`, {
      fix: "Open the file in KiCad 9 and fix or re-save it; check that it is a complete, valid KiCad file.",
      file,
      exitCode: run.exitCode,
      output: run.excerpt,
    });
  }
  if (run.exitCode !== 0) {
    throw new CopperheadError(
      "kicad_failed",
      `kicad-cli ${what} failed on ${input} (exit ${run.exitCode}): ${firstLine(run.excerpt)}`,
      {
        fix: "Run the same kicad-cli command by hand to see the full output.",
        file: input,
        exitCode: run.exitCode,
        output: run.excerpt,
      },
    );
  }
}

/** The error for a run that exited 0 but did not write what it should have. */
export function missingOutputError(run: KicadRun, input: string, what: string): CopperheadError {
  return new CopperheadError("kicad_failed", `kicad-cli ${what} exited 0 but wrote no output for ${input}.`, {
    fix: "Run the same kicad-cli command by hand to see the full output.",
    file: input,
    output: run.excerpt,
  });
}

/** Seeds a config home (see above): a millisecond's work, done in step so a spawn can be too. */
function seedConfigHome(configHome: string, seed: ConfigSeed | undefined): void {
  if (!seed) {
    mkdirSync(configHome);
    return;
  }
  const dir = join(configHome, `${seed.major}.0`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "kicad_common.json"), `${JSON.stringify({ system: { language: "English" } })}\n`);
  if (!seed.shareDir) return;
  const templates = join(seed.shareDir, "template");
  for (const table of ["sym-lib-table", "fp-lib-table"]) {
    if (existsSync(join(templates, table))) copyFileSync(join(templates, table), join(dir, table));
  }
}

function kicadEnv(configHome: string, seed: ConfigSeed | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  env.KICAD_CONFIG_HOME = configHome;
  if (seed?.shareDir) {
    for (const [suffix, subdir] of LIBRARY_VARS) {
      const name = `KICAD${seed.major}_${suffix}`;
      const dir = join(seed.shareDir, subdir);
      if (!env[name] && existsSync(dir)) env[name] = dir;
    }
  }
  return env;
}

function excerpt(stderr: string, stdout: string): string {
  const text = [stderr.trim(), stdout.trim()].filter(Boolean).join("\n");
  return text.length > EXCERPT_MAX ? `${text.slice(0, EXCERPT_MAX)}…` : text;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] || "(no output)";
}
