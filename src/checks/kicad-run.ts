/**
 * Everything `check` asks of kicad-cli, run concurrently and cached: ERC on the root
 * schematic, DRC with schematic parity on the board, and — for `--fab` — a Gerber and drill
 * export into a throw-away folder.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { asCopperheadError, CopperheadError } from "../errors.ts";
import { DEFAULT_KICAD_TIMEOUT_MS, exportDrill, exportGerbers, findKicadCli, runDrc, runErc, type DrcResult, type ErcReport, type KicadCli } from "../kicad/kicad-cli.ts";
import { kicadInstallStamp } from "../kicad/kicad-install.ts";
import { cacheDirOf, cacheKey, readCache, writeCache } from "./cache.ts";
import type { Design } from "../design/design.ts";

export interface KicadRequest {
  erc: boolean;
  drc: boolean;
  fabExport: boolean;
  /** Where results are cached; default the repo's own cache (a snapshot passes its repo's). */
  cacheDir?: string;
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

/** Files kicad-cli reads for this design: the cache key is their content. */
function kicadInputs(design: Design): string[] {
  const { project } = design;
  const dir = dirname(project.projectFile);
  const files = [project.projectFile, ...design.schematic.files.keys(), join(dir, "sym-lib-table"), join(dir, "fp-lib-table")];
  if (project.board) files.push(project.board);
  return files;
}

/** Runs (or recalls) what `request` asks for. Throws typed errors when kicad-cli cannot run. */
export async function runKicadChecks(design: Design, request: KicadRequest): Promise<KicadResults> {
  const { repoRoot, schematic, board } = design.project;
  const variant = [request.erc && "erc", request.drc && "drc", request.fabExport && "fab"].filter(Boolean).join("+");
  const key = cacheKey({ repoRoot, files: kicadInputs(design), kicadStamp: kicadInstallStamp(), variant });
  const cacheDir = request.cacheDir ?? cacheDirOf(repoRoot);
  const cached = readCache<KicadResults>(cacheDir, key);
  if (cached) return cached;

  const cli = await findKicadCli();
  const timeoutMs = kicadTimeout(kicadInputs(design));
  const [erc, drc, fabExport] = await Promise.all([
    request.erc ? runErc(schematic, { cli, timeoutMs }) : undefined,
    request.drc && board ? runDrc(board, { cli, schematicParity: true, timeoutMs }) : undefined,
    request.fabExport && board ? exportForFab(board, cli) : undefined,
  ]);
  const results: KicadResults = { version: cli.version.raw, ...(erc && { erc }), ...(drc && { drc }), ...(fabExport && { fabExport }) };
  writeCache(cacheDir, key, results);
  return results;
}

/** Overrides how long each kicad-cli run may take, in seconds. */
export const KICAD_TIMEOUT_ENV = "COPPERHEAD_KICAD_TIMEOUT";

/**
 * How long kicad-cli may take: DRC time grows with the board (a 70 MB board takes a minute and
 * a half on an idle machine, many more on a busy one), so the default grows by 10 s per MB of
 * input: a cut-off for a hung process, not a budget. `COPPERHEAD_KICAD_TIMEOUT` (seconds)
 * replaces it for machines slower than that.
 */
function kicadTimeout(files: string[]): number {
  const override = process.env[KICAD_TIMEOUT_ENV];
  if (override !== undefined && override !== "") {
    const seconds = Number(override);
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new CopperheadError("usage", `${KICAD_TIMEOUT_ENV} must be a number of seconds, not ${JSON.stringify(override)}.`, {
        fix: `Set ${KICAD_TIMEOUT_ENV}=600 (for example), or unset it for the default, which grows with the design.`,
      });
    }
    return seconds * 1000;
  }
  const bytes = files.reduce((sum, file) => sum + (existsSync(file) ? statSync(file).size : 0), 0);
  return DEFAULT_KICAD_TIMEOUT_MS + Math.ceil(bytes / 1e6) * 10_000;
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
