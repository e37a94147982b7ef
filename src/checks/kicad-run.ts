/**
 * Everything `check` asks of kicad-cli, cached per family and run concurrently: ERC on the
 * root schematic, DRC on the board, and — for `--fab` — a Gerber and drill export into a
 * throw-away folder.
 *
 * Each family is cached by the files it reads (`kicadInputs`), so an edit re-runs only the
 * families that read what it changed: a schematic edit re-runs ERC, a board edit DRC, a docs
 * edit nothing. DRC runs without `--schematic-parity`: the parity family is native
 * (`parity.ts`) and equals kicad-cli's, so DRC never has to read the schematic.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { asCopperheadError } from "../errors.ts";
import {
  DEFAULT_KICAD_TIMEOUT_MS,
  exportDrill,
  exportGerbers,
  findKicadCli,
  runDrc,
  runErc,
  type DrcResult,
  type ErcReport,
  type KicadCli,
} from "../kicad/cli/kicad-cli.ts";
import { kicadInstallStamp } from "../kicad/cli/install.ts";
import { kicadTimeoutMs } from "../kicad/cli/timeout.ts";
import { readLibTable, type LibraryKind } from "../kicad/library/libraries.ts";
import { CACHE_DIR, cacheKey, openCache, readCache, writeCache } from "./cache.ts";
import type { Design } from "../design/design.ts";

export interface KicadRequest {
  erc: boolean;
  drc: boolean;
  fabExport: boolean;
  /** The repo whose cache holds results; default the project's own (a snapshot passes its repo's). */
  cacheRepo?: string;
}

export interface FabExport {
  ok: boolean;
  /** What kicad-cli said when an export failed. */
  error?: string;
}

export interface KicadResults {
  version: string;
  erc?: ErcReport;
  drc?: DrcResult;
  fabExport?: FabExport;
}

/** The kicad-cli jobs `check` runs; each is one cache entry. */
export type KicadFamily = "erc" | "drc" | "fab";

/** One cache entry: what kicad-cli (which version) said for one family. */
export interface KicadCacheEntry<T = unknown> {
  family: KicadFamily;
  version: string;
  result: T;
}

/**
 * The files each kicad-cli job reads, whose content is its cache key (the KiCad install and
 * the copperhead version are in every key too, see `cache.ts`):
 *
 * - ERC: every schematic sheet, the `.kicad_pro` (rule severities, net classes), the project's
 *   `sym-lib-table` and the project libraries it names (ERC compares symbols with them);
 * - DRC: the board, the `.kicad_pro` (rule severities, exclusions, net classes), the custom
 *   rules `<name>.kicad_dru`, the project's `fp-lib-table` and the footprint libraries it names
 *   (DRC compares footprints with them);
 * - the fab export: the board and the `.kicad_pro`.
 *
 * Libraries outside the repo are KiCad's stock ones, which the install stamp covers.
 */
export function kicadInputs(design: Design, family: KicadFamily): string[] {
  const { project } = design;
  const board = project.board ? [project.board] : [];
  switch (family) {
    case "erc":
      return [project.projectFile, ...design.schematic.files.keys(), ...libraryInputs(design, "symbol")];
    case "drc":
      return [
        project.projectFile,
        ...board,
        project.projectFile.replace(/\.kicad_pro$/, ".kicad_dru"),
        ...libraryInputs(design, "footprint"),
      ];
    case "fab":
      return [project.projectFile, ...board];
  }
}

const TABLE: Record<LibraryKind, string> = { symbol: "sym-lib-table", footprint: "fp-lib-table" };

/** The project's lib table and every file of the libraries it names inside the repo. */
function libraryInputs(design: Design, kind: LibraryKind): string[] {
  const { repoRoot, projectFile } = design.project;
  const projectDir = dirname(projectFile);
  const table = join(projectDir, TABLE[kind]);
  if (!existsSync(table)) return [table];
  const files = [table];
  let entries;
  try {
    entries = readLibTable(table, kind, (uri) =>
      resolve(projectDir, uri.replace(/\$\{KIPRJMOD\}|\$\(KIPRJMOD\)/g, projectDir)),
    );
  } catch {
    // kicad-cli reports an unreadable table itself; its bytes are still in the key.
    return files;
  }
  for (const { path } of entries) {
    const rel = relative(repoRoot, path);
    if (rel.startsWith("..") || isAbsolute(rel) || !existsSync(path)) continue;
    files.push(...filesUnder(path));
  }
  return files;
}

/** A library file, or every file in a library folder (a `.pretty` holds one `.kicad_mod` per footprint). */
function filesUnder(path: string): string[] {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.isFile() ? [path] : [];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isFile() ? [join(path, entry.name)] : [],
  );
}

/**
 * The kicad-cli jobs whose results a cache folder holds, by entry file name: what tells, after
 * a check, which jobs it ran (the entries it added). Takes the repo root.
 */
export function cachedJobs(repoRoot: string): Map<string, KicadFamily> {
  const jobs = new Map<string, KicadFamily>();
  if (!existsSync(join(repoRoot, CACHE_DIR))) return jobs;
  const cache = openCache(repoRoot);
  if (!cache) return jobs;
  for (const name of readdirSync(cache.dir).filter((n) => n.endsWith(".json"))) {
    const family = readCache<KicadCacheEntry>(cache, name.slice(0, -".json".length))?.family;
    if (family) jobs.set(name, family);
  }
  return jobs;
}

/** Runs (or recalls) what `request` asks for. Throws typed errors when kicad-cli cannot run. */
export async function runKicadChecks(design: Design, request: KicadRequest): Promise<KicadResults> {
  const { repoRoot, schematic, board } = design.project;
  const cache = openCache(request.cacheRepo ?? repoRoot);
  const kicadStamp = kicadInstallStamp();
  const jobs: Array<{ family: KicadFamily; run: (cli: KicadCli, timeoutMs: number) => Promise<unknown> }> = [];
  if (request.erc) jobs.push({ family: "erc", run: (cli, timeoutMs) => runErc(schematic, { cli, timeoutMs }) });
  if (request.drc && board) jobs.push({ family: "drc", run: (cli, timeoutMs) => runDrc(board, { cli, timeoutMs }) });
  if (request.fabExport && board) jobs.push({ family: "fab", run: (cli) => exportForFab(board, cli) });

  const entries = jobs.map((job) => {
    const files = kicadInputs(design, job.family);
    const key = cacheKey({ repoRoot, files, kicadStamp, variant: job.family });
    return { ...job, files, key, cached: readCache<KicadCacheEntry>(cache, key) };
  });
  const missing = entries.filter((e) => e.cached?.family !== e.family);
  if (missing.length > 0) {
    const cli = await findKicadCli();
    await Promise.all(
      missing.map(async (entry) => {
        const result = await entry.run(cli, kicadTimeoutMs(entry.files, DEFAULT_KICAD_TIMEOUT_MS));
        entry.cached = { family: entry.family, version: cli.version.raw, result };
        writeCache(cache, entry.key, entry.cached);
      }),
    );
  }
  const result = <T>(family: KicadFamily) => entries.find((e) => e.family === family)?.cached?.result as T | undefined;
  const erc = result<ErcReport>("erc");
  const drc = result<DrcResult>("drc");
  const fabExport = result<FabExport>("fab");
  const version = entries[0]?.cached?.version ?? (await findKicadCli()).version.raw;
  return { version, ...(erc && { erc }), ...(drc && { drc }), ...(fabExport && { fabExport }) };
}

/** A fab house needs Gerbers and drill files; a board that cannot produce them fails `--fab`. */
async function exportForFab(board: string, cli: KicadCli): Promise<FabExport> {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-fab-"));
  try {
    await exportGerbers(board, join(dir, "gerbers"), { cli });
    await exportDrill(board, join(dir, "drill"), { cli });
    return { ok: true };
  } catch (err) {
    return { ok: false, error: asCopperheadError(err).message };
  } finally {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
