import { afterAll, describe, expect, test } from "bun:test";
import { writeFile } from "node:fs/promises";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { findKicadPython, KICAD_PYTHON_ENV, prepareKicadPython, runKicadPython } from "../../src/kicad/cli/python.ts";
import { runOnSpare, takeSpare } from "../../src/kicad/cli/python-spare.ts";
import { MAX_OUTPUT_BYTES } from "../../src/kicad/cli/process.ts";
import { rejectedCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { isRunning, launcher } from "../support/launchers.ts";

afterAll(cleanupTempDirs);

async function withPython<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env[KICAD_PYTHON_ENV];
  if (value === undefined) delete process.env[KICAD_PYTHON_ENV];
  else process.env[KICAD_PYTHON_ENV] = value;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env[KICAD_PYTHON_ENV];
    else process.env[KICAD_PYTHON_ENV] = saved;
  }
}

/** A launcher (`support/launchers.ts`) in `dir` of the KiCad Python found without the variable. */
async function kicadPythonLauncher(dir: string): Promise<string> {
  return launcher(dir, "python3", (await withPython(undefined, () => findKicadPython())).path);
}

/** A script that writes its pid to the file named by its argument, then sleeps for ten minutes. */
const SLEEPER = "import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(600)";

/** The process whose pid a `SLEEPER` wrote to `pidFile` is gone. */
async function expectGone(pidFile: string): Promise<void> {
  const pid = Number(await Bun.file(pidFile).text());
  await Bun.sleep(200);
  expect(isRunning(pid)).toBe(false);
}

describe("findKicadPython", () => {
  test("finds a Python that imports pcbnew (here /usr/bin/python3, not the pyenv python3 on PATH)", async () => {
    const python = await withPython(undefined, () => findKicadPython());
    expect(python.version).toMatch(/^\d+\.\d+/);
    const check = Bun.spawnSync([python.path, "-c", "import pcbnew"]);
    expect(check.exitCode).toBe(0);
  });

  test(`${KICAD_PYTHON_ENV} pointing at a Python without pcbnew is kicad_python_missing naming the install`, async () => {
    const dir = await makeTempDir();
    const fake = join(dir, "python3");
    await writeFile(fake, "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pcbnew'\" >&2\nexit 1\n", {
      mode: 0o755,
    });
    const err = await withPython(fake, () => rejectedCopperheadError(findKicadPython()));
    expect(err.code).toBe("kicad_python_missing");
    expect(err.message).toContain(KICAD_PYTHON_ENV);
    expect(err.message).toContain("cannot import pcbnew");
    expect(err.fix).toContain("apt-get install kicad");
    expect(err.fix).toContain("brew install --cask kicad");
    expect(err.fix).toContain("python.exe");
  });

  test(`${KICAD_PYTHON_ENV} pointing at nothing is an error, not a fallback`, async () => {
    const err = await withPython("/nonexistent/python3", () => rejectedCopperheadError(findKicadPython()));
    expect(err.code).toBe("kicad_python_missing");
    expect(err.message).toContain("not an executable file");
  });
});

describe("runKicadPython", () => {
  test("passes arguments and captures stdout", async () => {
    const out = await runKicadPython("import sys, pcbnew; print(sys.argv[1], pcbnew.F_Cu)", "echo", {
      timeoutMs: 60_000,
      args: ["hello"],
    });
    expect(out.trim()).toBe("hello 0");
  });

  test("a failing script is kicad_failed with its last error line", async () => {
    const err = await rejectedCopperheadError(
      runKicadPython("raise ValueError('no such board')", "load a board", { timeoutMs: 60_000 }),
    );
    expect(err.code).toBe("kicad_failed");
    expect(err.message).toContain("load a board");
    expect(err.message).toContain("ValueError: no such board");
  });
});

describe("the refill program (src/kicad/board/zones/fill.py)", () => {
  test("compiles under KiCad's Python", async () => {
    const python = await findKicadPython();
    const program = resolve(import.meta.dir, "../../src/kicad/board/zones/fill.py");
    const compiled = Bun.spawnSync([
      python.path,
      "-c",
      "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
      program,
    ]);
    expect(compiled.stderr.toString()).toBe("");
    expect(compiled.exitCode).toBe(0);
  });

  test("a failing program's traceback names its file and line", async () => {
    const err = await rejectedCopperheadError(
      runKicadPython("import pcbnew\n\nraise ValueError('no such zone')\n", "fill zones", {
        timeoutMs: 60_000,
        name: "fill.py",
      }),
    );
    expect(err.code).toBe("kicad_failed");
    expect(String(err.details?.output)).toMatch(/fill\.py", line 3/);
  });
});

describe("KiCad's Python started through a launcher", () => {
  test("past its timeout, the launcher and the Python it started are killed, and the call ends at once", async () => {
    const dir = await makeTempDir();
    const python = await kicadPythonLauncher(dir);
    const pidFile = join(dir, "python.pid");
    const started = Date.now();
    const err = await withPython(python, () =>
      rejectedCopperheadError(runKicadPython(SLEEPER, "sleep", { timeoutMs: 3000, args: [pidFile] })),
    );
    expect(err.code).toBe("kicad_timeout");
    // It used to wait for the Python below the launcher, which held its pipes, to end.
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectGone(pidFile);
  }, 60_000);

  test("a Python that prints past the output cap is kicad_output_too_large, its output not kept", async () => {
    const dir = await makeTempDir();
    const python = await kicadPythonLauncher(dir);
    const mib = MAX_OUTPUT_BYTES / (1024 * 1024);
    const err = await withPython(python, () =>
      rejectedCopperheadError(
        runKicadPython(
          `import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(${mib + 32}): sys.stdout.buffer.write(chunk)`,
          "print",
          { timeoutMs: 120_000 },
        ),
      ),
    );
    expect(err.code).toBe("kicad_output_too_large");
    expect(err.message).toContain(`more than ${mib} MiB to stdout`);
    expect(err.details.limitBytes).toBe(MAX_OUTPUT_BYTES);
    expect(String(err.details.output).length).toBeLessThan(4096);
  }, 60_000);
});

describe("a spare KiCad Python, started ahead of its job (python-spare.ts)", () => {
  /** A spare of the Python `path` (the one found when undefined), taken from the waiting place. */
  async function spareOf(path?: string) {
    return withPython(path, async () => {
      const python = await findKicadPython();
      prepareKicadPython();
      const spare = takeSpare(python.path);
      if (!spare) throw new Error(`no spare of ${python.path} was started`);
      return spare;
    });
  }

  test("runs its job as a fresh Python would: arguments, output, pcbnew at hand, the traceback's file and line", async () => {
    const spare = await spareOf();
    const run = await runOnSpare(
      spare,
      "import sys, pcbnew\nprint(sys.argv[1:], pcbnew.F_Cu)\nraise ValueError('x')\n",
      {
        name: "job.py",
        args: ["a", "b c"],
        timeoutMs: 60_000,
        label: "KiCad's Python",
      },
    );
    expect(run!.stdout.trim()).toBe("['a', 'b c'] 0");
    expect(run!.exitCode).not.toBe(0);
    expect(run!.stderr).toMatch(/job\.py", line 3/);
    // Its scratch dir goes with it.
    await Bun.sleep(100);
    expect(existsSync(spare.dir)).toBe(false);
  });

  test("runKicadPython hands its script to the waiting spare, which is then gone", async () => {
    const python = await withPython(undefined, () => findKicadPython());
    await withPython(undefined, async () => {
      prepareKicadPython();
      const out = await runKicadPython("import sys; print(sys.argv[1])", "echo", { timeoutMs: 60_000, args: ["x"] });
      expect(out.trim()).toBe("x");
    });
    expect(takeSpare(python.path)).toBeUndefined();
  });

  test("its job's timeout runs from the hand-over, and kills the launcher and the Python it started", async () => {
    const dir = await makeTempDir();
    const python = await kicadPythonLauncher(dir);
    const spare = await spareOf(python);
    // Idle for longer than the timeout: the clock starts with the job.
    await Bun.sleep(3500);
    const pidFile = join(dir, "python.pid");
    const started = Date.now();
    const err = await rejectedCopperheadError(
      runOnSpare(spare, SLEEPER, {
        name: "sleep.py",
        args: [pidFile],
        timeoutMs: 3000,
        label: "KiCad's Python",
      }),
    );
    expect(err.code).toBe("kicad_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(Date.now() - started).toBeLessThan(20_000);
    await expectGone(pidFile);
  }, 60_000);

  test("asking for a spare of the Python now set ends a waiting one of another Python", async () => {
    const dir = await makeTempDir();
    const other = await kicadPythonLauncher(dir);
    /** Live processes started from `other` (the launcher script and the Python below it share its path in argv). */
    const startedFrom = () =>
      readdirSync("/proc").filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(other);
        } catch {
          return false;
        }
      });
    await withPython(other, async () => {
      await findKicadPython();
      prepareKicadPython();
    });
    await Bun.sleep(300);
    expect(startedFrom().length).toBeGreaterThan(0);
    const python = await withPython(undefined, () => findKicadPython());
    await withPython(undefined, async () => prepareKicadPython());
    await Bun.sleep(300);
    expect(startedFrom()).toEqual([]);
    const spare = takeSpare(python.path);
    const run = await runOnSpare(spare!, "print('fresh')", { name: "a.py", args: [], timeoutMs: 60_000, label: "x" });
    expect(run!.stdout.trim()).toBe("fresh");
  }, 60_000);

  test("a spare no job came for ends with copperhead, its scratch dir removed", async () => {
    const script = `
      import { findKicadPython, prepareKicadPython } from ${JSON.stringify(resolve(import.meta.dir, "../../src/kicad/cli/python.ts"))};
      import { takeSpare } from ${JSON.stringify(resolve(import.meta.dir, "../../src/kicad/cli/python-spare.ts"))};
      const python = await findKicadPython();
      prepareKicadPython();
      const spare = takeSpare(python.path);
      console.log(JSON.stringify({ pid: spare.proc.pid, dir: spare.dir }));
    `;
    const dir = await makeTempDir();
    await writeFile(join(dir, "spare-exit.ts"), script);
    const child = Bun.spawnSync([process.execPath, join(dir, "spare-exit.ts")], { timeout: 60_000 });
    expect(child.exitCode).toBe(0);
    const { pid, dir: scratch } = JSON.parse(child.stdout.toString()) as { pid: number; dir: string };
    await Bun.sleep(200);
    expect(isRunning(pid)).toBe(false);
    expect(existsSync(scratch)).toBe(false);
  }, 60_000);

  test("spare.py ends by itself when no job comes within its idle time, and at once when its stdin closes", async () => {
    const python = await withPython(undefined, () => findKicadPython());
    const program = resolve(import.meta.dir, "../../src/kicad/cli/spare.py");
    const idle = Bun.spawn([python.path, program, "1"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    expect(await idle.exited).toBe(0);
    const closed = Bun.spawn([python.path, program, "600"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    await closed.stdin.end();
    expect(await closed.exited).toBe(0);
  }, 60_000);
});
