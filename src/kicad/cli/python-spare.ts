/**
 * A KiCad Python started ahead of its job. Before it can refill a zone, a fresh KiCad Python
 * spends most of a second of its own: starting, importing `pcbnew`, and loading KiCad's stroke
 * font on the first text of the board (measured on glasgow: 0.35 s and 0.34 s of a 1.7 s refill).
 * A board edit knows a refill will follow: it asks for a spare (`python.ts`'s
 * `prepareKicadPython`), which pays that cost while the edit places and routes, and the refill
 * takes it (`takeSpare`).
 *
 * At most one spare waits per process. It is a KiCad process like any other (`process.ts`): a
 * scratch dir and config home of its own, a group of its own killed on exit, and its job's
 * output captured and timed from the moment it is handed the job. It does not keep copperhead
 * running: it is unreferenced until taken, ends when its stdin closes, and ends by itself when
 * no job comes within `IDLE_SECONDS` (a spare past most of that age is never handed one).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { signalGroup } from "../../util/signals.ts";
import { awaitKicad, spawnKicad, type KicadRun } from "./process.ts";
import spareProgram from "./spare.py" with { type: "text" };

/** How long a spare waits for a job, s: as long as a model takes between two board edits. */
const IDLE_SECONDS = 600;

/** A spare this old, ms, may end before it reads its job: it is not handed one. */
const TOO_OLD_MS = (IDLE_SECONDS - 60) * 1000;

export interface Spare {
  /** The interpreter it runs (a job for another waits for a fresh one). */
  python: string;
  dir: string;
  proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  started: number;
}

let waiting: Spare | undefined;

/**
 * Starts a spare of the Python `python` unless one is waiting, in step: the caller goes on
 * working without yielding, and the spare starts meanwhile. One of another Python
 * (`COPPERHEAD_KICAD_PYTHON` set since), or one too old to take, would never be taken: it is
 * ended. A spare that cannot start is simply not there: the job then starts its own Python and
 * reports what went wrong.
 */
export function prepareSpare(python: string): void {
  if (waiting && usable(waiting, python)) return;
  dropWaiting();
  try {
    const spare = startSpare(python);
    waiting = spare;
    void spare.proc.exited.then(() => {
      if (waiting === spare) waiting = undefined;
    });
  } catch {
    // No spare: the job runs on a fresh Python.
  }
}

/** The waiting spare of `python`, taken, if one is there, alive and young enough. */
export function takeSpare(python: string): Spare | undefined {
  const spare = waiting;
  if (!spare || spare.python !== python) return undefined;
  if (!usable(spare, python)) {
    dropWaiting();
    return undefined;
  }
  waiting = undefined;
  return spare;
}

/** Whether `spare` runs `python`, is alive and is young enough to be handed a job. */
function usable(spare: Spare, python: string): boolean {
  return (
    spare.python === python &&
    spare.proc.exitCode === null &&
    spare.proc.signalCode === null &&
    performance.now() - spare.started <= TOO_OLD_MS
  );
}

function dropWaiting(): void {
  if (waiting) signalGroup(waiting.proc);
  waiting = undefined;
}

/**
 * Runs `script` on `spare` with `args`, as `python.ts` runs a script on a fresh Python: from a
 * file in its scratch dir named `name`, output captured, killed after `timeoutMs`. Undefined
 * when the spare could not be handed the job (it ended meanwhile): nothing ran.
 */
export async function runOnSpare(
  spare: Spare,
  script: string,
  opts: { name: string; args: string[]; timeoutMs: number; label: string },
): Promise<KicadRun | undefined> {
  try {
    const file = join(spare.dir, basename(opts.name));
    await writeFile(file, script, { mode: 0o600 });
    spare.proc.stdin.write(`${JSON.stringify({ script: file, args: opts.args })}\n`);
    await spare.proc.stdin.end();
  } catch {
    signalGroup(spare.proc);
    return undefined;
  }
  spare.proc.ref();
  return awaitKicad(spare.proc, opts.label, opts.timeoutMs);
}

function startSpare(python: string): Spare {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-kicad-"));
  // The exit of copperhead kills the spare (`process-group.ts`); its dir goes with it.
  const removeNow = () => rmSync(dir, { recursive: true, force: true });
  process.on("exit", removeNow);
  try {
    const file = join(dir, "spare.py");
    writeFileSync(file, spareProgram, { mode: 0o600 });
    const proc = spawnKicad(python, [file, String(IDLE_SECONDS)], {
      scratchDir: dir,
      stdin: "pipe",
      label: "KiCad's Python",
    }) as Spare["proc"];
    proc.unref();
    void proc.exited.then(async () => {
      process.off("exit", removeNow);
      await rm(dir, { recursive: true, force: true });
    });
    return { python, dir, proc, started: performance.now() };
  } catch (err) {
    process.off("exit", removeNow);
    removeNow();
    throw err;
  }
}
