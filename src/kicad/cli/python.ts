/**
 * KiCad's Python: the interpreter that imports KiCad's `pcbnew` module, for the jobs kicad-cli
 * has no command for (refilling zones with KiCad's own filler).
 *
 * Discovery order, like kicad-cli's (`install.ts`): `COPPERHEAD_KICAD_PYTHON`, then the Python
 * that ships with KiCad next to the kicad-cli that would run (macOS app bundle, Windows
 * `bin\python.exe`), then a system `python3` that imports `pcbnew` (Debian and Ubuntu's
 * `kicad` package installs the module for `/usr/bin/python3`). A Python on PATH need not be
 * that one (pyenv, Homebrew, a venv), so every candidate is tried by importing `pcbnew`, and
 * the first that does wins. An explicit `COPPERHEAD_KICAD_PYTHON` that does not import it is an
 * error, never a fallback, for the reason `install.ts` gives for kicad-cli.
 *
 * Scripts run like kicad-cli does (`process.ts`): in a private scratch dir with a seeded config
 * home, output captured, killed after a timeout.
 */
import { realpathSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { findKicadCli, isExecutableFile } from "./install.ts";
import { execKicad, withScratchDir, type KicadRun } from "./process.ts";
import { prepareSpare, runOnSpare, takeSpare } from "./python-spare.ts";

export const KICAD_PYTHON_ENV = "COPPERHEAD_KICAD_PYTHON";

export interface KicadPython {
  /** Absolute path of the interpreter. */
  path: string;
  /** What `pcbnew.Version()` printed, e.g. "9.0.8". */
  version: string;
}

export interface PythonRunOptions {
  timeoutMs: number;
  /** Arguments the script sees as `sys.argv[1:]`. */
  args?: string[];
  /** The file name the script runs as, which its tracebacks name (default `script.py`). */
  name?: string;
}

/** How to get KiCad's Python module, per platform. */
export const KICAD_PYTHON_HINT =
  "KiCad's Python module `pcbnew` is needed to refill zones — Debian/Ubuntu: `apt-get install kicad` " +
  "(it installs pcbnew for /usr/bin/python3); macOS: `brew install --cask kicad` (the app bundle ships its Python); " +
  "Windows: the installer from https://www.kicad.org/download/windows/ (it ships bin\\python.exe) — " +
  `or set ${KICAD_PYTHON_ENV} to a Python that can \`import pcbnew\`.`;

const PROBE_TIMEOUT_MS = 30_000;
const PROBE = "import pcbnew, sys; sys.stdout.write(pcbnew.Version())";

/** One probe per setting of the variable per process: importing pcbnew costs about a second. */
const found = new Map<string, Promise<KicadPython>>();
/** What those probes found, for a caller that cannot wait (`prepareKicadPython`). */
const ready = new Map<string, KicadPython>();

/** Finds KiCad's Python or throws `kicad_python_missing` naming the fix. */
export async function findKicadPython(): Promise<KicadPython> {
  const key = process.env[KICAD_PYTHON_ENV] ?? "";
  let probe = found.get(key);
  if (!probe) {
    probe = locate();
    found.set(key, probe);
    // A failed search is not remembered: the user may install KiCad and retry in the same session.
    probe.then(
      (python) => ready.set(key, python),
      () => found.delete(key),
    );
  }
  return probe;
}

async function locate(): Promise<KicadPython> {
  const fromEnv = process.env[KICAD_PYTHON_ENV];
  if (fromEnv !== undefined && fromEnv !== "") {
    const path = resolve(fromEnv);
    const probe = isExecutableFile(path) ? await probePython(path) : { error: "it is not an executable file" };
    if ("version" in probe) return { path, version: probe.version };
    throw new CopperheadError("kicad_python_missing", `${KICAD_PYTHON_ENV} is set to ${fromEnv}, but ${probe.error}.`, {
      fix: `Point ${KICAD_PYTHON_ENV} at a Python that can \`import pcbnew\`, or unset it. ${KICAD_PYTHON_HINT}`,
      path,
    });
  }
  const tried: string[] = [];
  for (const path of await candidates()) {
    const probe = await probePython(path);
    if ("version" in probe) return { path, version: probe.version };
    tried.push(`${path}: ${probe.error}`);
  }
  throw new CopperheadError(
    "kicad_python_missing",
    `No Python that imports KiCad's pcbnew module was found${tried.length ? ` (tried ${tried.join("; ")})` : ""}.`,
    {
      fix: KICAD_PYTHON_HINT,
    },
  );
}

/** Bundled Pythons next to the kicad-cli that would run, then system ones, deduplicated. */
async function candidates(): Promise<string[]> {
  const list: string[] = [];
  try {
    const cli = realpathSync((await findKicadCli()).path);
    const bin = dirname(cli);
    if (process.platform === "darwin")
      list.push(join(bin, "..", "Frameworks", "Python.framework", "Versions", "Current", "bin", "python3"));
    if (process.platform === "win32") list.push(join(bin, "python.exe"));
  } catch {
    // No kicad-cli: the system Pythons may still import pcbnew.
  }
  if (process.platform !== "win32") list.push("/usr/bin/python3", "/usr/local/bin/python3");
  for (const name of ["python3", "python"]) {
    const onPath = Bun.which(name);
    if (onPath) list.push(onPath);
  }
  const seen = new Set<string>();
  return list.map((p) => resolve(p)).filter((p) => isExecutableFile(p) && !seen.has(p) && seen.add(p) !== undefined);
}

async function probePython(path: string): Promise<{ version: string } | { error: string }> {
  try {
    const run = await execPython(path, PROBE, { timeoutMs: PROBE_TIMEOUT_MS });
    if (run.exitCode === 0 && run.stdout.trim() !== "") return { version: run.stdout.trim() };
    return {
      error: /No module named|ModuleNotFoundError/.test(run.stderr)
        ? "it cannot import pcbnew"
        : `importing pcbnew failed: ${run.excerpt.split("\n").at(-1)}`,
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Starts KiCad's Python ahead of a job that will follow shortly (a refill after a board edit),
 * so the job does not wait for it to start (`python-spare.ts`). Without KiCad's Python it does
 * nothing: the job reports that.
 */
export function prepareKicadPython(): void {
  const known = ready.get(process.env[KICAD_PYTHON_ENV] ?? "");
  if (known) prepareSpare(known.path);
  else
    void findKicadPython().then(
      ({ path }) => prepareSpare(path),
      () => {},
    );
}

/**
 * Runs `script` (Python source) under KiCad's Python in a scratch dir and returns its captured
 * output; a non-zero exit is `kicad_failed` with the end of its stderr. A spare started for it
 * (`prepareKicadPython`) runs it when there is one.
 */
export async function runKicadPython(script: string, what: string, opts: PythonRunOptions): Promise<string> {
  const python = await findKicadPython();
  const spare = takeSpare(python.path);
  const onSpare =
    spare &&
    (await runOnSpare(spare, script, {
      name: opts.name ?? "script.py",
      args: opts.args ?? [],
      timeoutMs: opts.timeoutMs,
      label: "KiCad's Python",
    }));
  const run = onSpare ?? (await execPython(python.path, script, opts));
  if (run.exitCode !== 0) {
    throw new CopperheadError(
      "kicad_failed",
      `KiCad's Python failed to ${what} (exit ${run.exitCode}): ${lastLine(run.stderr) || lastLine(run.stdout)}`,
      {
        fix: `Run ${python.path} -c "import pcbnew" to check KiCad's Python, and open the board in KiCad to see whether it loads.`,
        path: python.path,
        exitCode: run.exitCode,
        output: run.excerpt,
      },
    );
  }
  return run.stdout;
}

/**
 * The script runs from a file in the scratch dir, not `-c`: a traceback then names the
 * program's file and line, and the source stays out of the process table.
 */
async function execPython(path: string, script: string, opts: PythonRunOptions): Promise<KicadRun> {
  return withScratchDir(async (scratch) => {
    const file = join(scratch, basename(opts.name ?? "script.py"));
    await writeFile(file, script, { mode: 0o600 });
    return execKicad(path, [file, ...(opts.args ?? [])], {
      scratchDir: scratch,
      timeoutMs: opts.timeoutMs,
      label: "KiCad's Python",
    });
  });
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
