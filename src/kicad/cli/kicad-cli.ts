/**
 * `kicad/cli/` owns running KiCad's programs: discovery of the install, the process with its
 * seeded config home, and the reports. It knows nothing of the documents.
 *
 * The kicad-cli wrapper: every call KiCad does for us — ERC, DRC, netlist and
 * fabrication exports — as an async function with a typed result or a typed error.
 *
 * Each call runs one kicad-cli process in a private scratch dir with an isolated, seeded
 * config home (see `kicad/cli/process.ts`), writes reports and netlists to temp files, captures
 * all output, and kills the process after `timeoutMs`.
 *
 * kicad-cli does not always fail loudly, so each call also checks for the silent cases
 * measured with 9.0.8:
 * - it exits 0 without writing its output when the output path is unwritable → checked by
 *   requiring the output file (or, for exports, at least one new file);
 * - it ignores a `.kicad_pro` that is not valid JSON and checks with default rules and no
 *   exclusions → checked before running;
 * - with `--schematic-parity`, a missing schematic gives an empty parity list and only a note
 *   on stderr → reported as `parityChecked: false` (see `DrcResult`); an unparsable one does
 *   fail the run (exit 255, "Expecting '(' in '<file>', line N") → `kicad_load_failed`;
 * - a sub-sheet whose file is missing is treated as an empty sheet with no message at all;
 *   this layer cannot see that, so callers must cross-check the hierarchy themselves.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { readRepoText } from "../../repo/repo-files.ts";
import { findKicadCli, type KicadCli } from "./install.ts";
import { assertRunSucceeded, execKicad, type KicadRun, missingOutputError, withScratchDir } from "./process.ts";
import { type DrcReport, type ErcReport, parseDrcReport, parseErcReport } from "./report.ts";

export { findKicadCli, parseKicadVersion, type KicadCli, type KicadVersion } from "./install.ts";
export type { DrcReport, ErcReport, ReportItem, Violation } from "./report.ts";

/** Generous: a small board's DRC takes ~1 s, but a 70 MB board runs past a minute. */
export const DEFAULT_KICAD_TIMEOUT_MS = 120_000;

export interface KicadCallOptions {
  /** Kill kicad-cli and throw `kicad_timeout` after this long. */
  timeoutMs?: number;
  /** A kicad-cli already found with `findKicadCli()`; found afresh when omitted. */
  cli?: KicadCli;
  /** Called once kicad-cli has been started, so a caller can do other work while it runs. */
  onStart?: () => void;
}

export interface DrcOptions extends KicadCallOptions {
  /** Also compare the board with the schematic of the same name next to it. */
  schematicParity?: boolean;
}

export interface DrcResult {
  report: DrcReport;
  /**
   * Whether schematic parity really ran. kicad-cli writes an empty `schematic_parity` list
   * both when board and schematic agree and when there is no schematic to compare with:
   * then it prints "Failed to fetch schematic netlist for parity tests." on stderr, exits 0,
   * and omits its "Found N schematic parity issues" line on stdout. That line is the
   * evidence used here (the language is pinned to English, so it is not translated).
   * Always false without `schematicParity`.
   */
  parityChecked: boolean;
}

export interface SvgOptions extends KicadCallOptions {
  blackAndWhite?: boolean;
  excludeDrawingSheet?: boolean;
  /** A transparent page instead of the theme's background, so plots can be layered. */
  noBackground?: boolean;
}

export interface BoardSvgOptions extends KicadCallOptions {
  /** Untranslated layer names plotted into the one file, e.g. `F.Cu`, `Edge.Cuts`. */
  layers: string[];
}

export interface GerberOptions extends KicadCallOptions {
  /** Untranslated layer names (e.g. "F.Cu"); default: the layers in the board's own plot settings. */
  layers?: string[];
}

/** Runs ERC with every severity included; callers filter by `severity` and `excluded`. */
export async function runErc(schPath: string, opts: KicadCallOptions = {}): Promise<ErcReport> {
  return runOnFile(schPath, opts, "sch erc", async (input, scratch, kicad) => {
    const out = join(scratch, "erc.json");
    const run = await kicad(["sch", "erc", "--format", "json", "--severity-all", "-o", out, input]);
    return parseErcReport(await readOutput(run, out, input, "sch erc"), input);
  });
}

/** Runs DRC with every severity included; see `DrcResult.parityChecked`. */
export async function runDrc(pcbPath: string, opts: DrcOptions = {}): Promise<DrcResult> {
  return runOnFile(pcbPath, opts, "pcb drc", async (input, scratch, kicad) => {
    const out = join(scratch, "drc.json");
    const parity = opts.schematicParity ? ["--schematic-parity"] : [];
    const run = await kicad(["pcb", "drc", "--format", "json", "--severity-all", ...parity, "-o", out, input]);
    const report = parseDrcReport(await readOutput(run, out, input, "pcb drc"), input);
    const parityChecked = opts.schematicParity === true && /^Found \d+ schematic parity issues/m.test(run.stdout);
    return { report, parityChecked };
  });
}

/** The schematic's netlist in KiCad's `kicadsexpr` format, as text. */
export async function exportNetlist(schPath: string, opts: KicadCallOptions = {}): Promise<string> {
  return runOnFile(schPath, opts, "sch export netlist", async (input, scratch, kicad) => {
    const out = join(scratch, "netlist.net");
    const run = await kicad(["sch", "export", "netlist", "--format", "kicadsexpr", "-o", out, input]);
    return readOutput(run, out, input, "sch export netlist");
  });
}

/**
 * Plots every sheet to `outDir` (one SVG per sheet); returns the files written in the order
 * kicad-cli plotted them, which is the order of its sheet list (page order). (`--pages` cannot
 * pick sheets: kicad-cli 9.0.8 plots the root sheet for any page number.)
 */
export async function exportSvg(schPath: string, outDir: string, opts: SvgOptions = {}): Promise<string[]> {
  const flags = [
    ...(opts.blackAndWhite ? ["--black-and-white"] : []),
    ...(opts.excludeDrawingSheet ? ["--exclude-drawing-sheet"] : []),
    ...(opts.noBackground ? ["--no-background-color"] : []),
  ];
  return exportInto(
    schPath,
    outDir,
    opts,
    "sch export svg",
    (input, dir) => ["sch", "export", "svg", ...flags, "-o", dir, input],
    plottedOrder,
  );
}

/** Plots `layers` of a board into the one SVG file `outFile` (page coordinates, no drawing sheet). */
export async function exportBoardSvg(pcbPath: string, outFile: string, opts: BoardSvgOptions): Promise<string> {
  const file = resolve(outFile);
  const args = [
    "pcb",
    "export",
    "svg",
    "--mode-single",
    "--exclude-drawing-sheet",
    "--layers",
    opts.layers.join(","),
    "-o",
    file,
  ];
  const written = await exportInto(pcbPath, dirname(file), opts, "pcb export svg", (input) => [...args, input]);
  if (!written.includes(file))
    throw new CopperheadError("kicad_failed", `kicad-cli pcb export svg did not write ${file}.`, {
      file: pcbPath,
      fix: "Run the same kicad-cli command by hand to see why.",
    });
  return file;
}

/** The files of "Plotted to '<file>'." lines, in the order kicad-cli printed them. */
function plottedOrder(stdout: string): string[] {
  return [...stdout.matchAll(/^Plotted to '(.+)'\.?\s*$/gm)].map((m) => resolve(m[1]!));
}

/** Plots Gerbers (with a job file) to `outDir`; returns the files written. */
export async function exportGerbers(pcbPath: string, outDir: string, opts: GerberOptions = {}): Promise<string[]> {
  const layers = opts.layers ? ["--layers", opts.layers.join(",")] : ["--board-plot-params"];
  return exportInto(pcbPath, outDir, opts, "pcb export gerbers", (input, dir) => [
    "pcb",
    "export",
    "gerbers",
    ...layers,
    "-o",
    dir,
    input,
  ]);
}

/** Writes Excellon drill files to `outDir`; returns the files written. */
export async function exportDrill(pcbPath: string, outDir: string, opts: KicadCallOptions = {}): Promise<string[]> {
  return exportInto(pcbPath, outDir, opts, "pcb export drill", (input, dir) => [
    "pcb",
    "export",
    "drill",
    "-o",
    dir,
    input,
  ]);
}

/** Runs kicad-cli with the given arguments and throws unless it succeeded. */
type KicadRunner = (args: string[]) => Promise<KicadRun>;

/**
 * Shared frame of every call: find kicad-cli, vet the input, and hand the body a scratch dir
 * and a runner bound to this kicad-cli, input and timeout.
 */
async function runOnFile<T>(
  path: string,
  opts: KicadCallOptions,
  what: string,
  body: (input: string, scratch: string, kicad: KicadRunner) => Promise<T>,
): Promise<T> {
  const cli = opts.cli ?? (await findKicadCli());
  const input = await checkInput(path);
  return withScratchDir((scratch) =>
    body(input, scratch, async (args) => {
      const run = await execKicad(cli.path, args, {
        scratchDir: scratch,
        timeoutMs: opts.timeoutMs ?? DEFAULT_KICAD_TIMEOUT_MS,
        seed: { major: cli.version.major, shareDir: cli.shareDir },
        onSpawn: opts.onStart,
      });
      assertRunSucceeded(run, input, what);
      return run;
    }),
  );
}

async function readOutput(run: KicadRun, out: string, input: string, what: string): Promise<string> {
  if (!existsSync(out)) throw missingOutputError(run, input, what);
  return readFile(out, "utf8");
}

/**
 * Runs an export into a caller-owned dir. The result lists files that are new or rewritten
 * (by mtime), so exports into a shared dir (Gerbers and drill files together) stay distinct.
 */
async function exportInto(
  path: string,
  outDir: string,
  opts: KicadCallOptions,
  what: string,
  args: (input: string, dir: string) => string[],
  order?: (stdout: string) => string[],
): Promise<string[]> {
  const dir = resolve(outDir);
  await mkdir(dir, { recursive: true });
  const before = await fileTimes(dir);
  return runOnFile(path, opts, what, async (input, _scratch, kicad) => {
    const run = await kicad(args(input, dir));
    const after = await fileTimes(dir);
    const written = [...after].filter(([name, mtime]) => before.get(name) !== mtime).map(([name]) => join(dir, name));
    if (written.length === 0) throw missingOutputError(run, input, what);
    written.sort();
    if (!order) return written;
    // Files kicad-cli named come first, in its order; anything else after them, by name.
    const rank = new Map(order(run.stdout).map((file, i) => [file, i]));
    return written.sort((a, b) => (rank.get(a) ?? rank.size) - (rank.get(b) ?? rank.size));
  });
}

async function fileTimes(dir: string): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) times.set(entry.name, (await stat(join(dir, entry.name))).mtimeMs);
  }
  return times;
}

/**
 * Resolves the input and rejects what kicad-cli would mishandle: a missing file (its own
 * message does not say which file), and a project file it would silently ignore.
 */
async function checkInput(path: string): Promise<string> {
  const input = resolve(path);
  if (!existsSync(input)) {
    throw new CopperheadError("kicad_load_failed", `${input} does not exist.`, {
      fix: "Check the path; KiCad files are named *.kicad_sch and *.kicad_pcb.",
      file: input,
    });
  }
  const project = join(dirname(input), `${basename(input, extname(input))}.kicad_pro`);
  if (existsSync(project)) {
    const text = readRepoText(project, { within: null });
    try {
      JSON.parse(text);
    } catch (err) {
      throw new CopperheadError("kicad_load_failed", `${project} is not valid JSON: ${(err as Error).message}`, {
        fix: "kicad-cli would silently ignore it and check with default rules; fix the file or restore it from git.",
        file: project,
      });
    }
  }
  return input;
}
