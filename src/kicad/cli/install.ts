/**
 * Finding kicad-cli and learning what it is: which binary, which version, and where its shared
 * data (library tables, stock libraries) lives.
 *
 * Discovery order: `COPPERHEAD_KICAD_CLI`, then PATH, then the standard install
 * locations. An explicit `COPPERHEAD_KICAD_CLI` that points nowhere is an error rather than a
 * silent fallback: a user who set it wants *that* binary, and quietly checking with another
 * KiCad would make results depend on which one happened to be installed.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { log } from "../../log.ts";
import { userCacheDir } from "../../util/user-dirs.ts";
import { execKicad, withScratchDir } from "./process.ts";

export const KICAD_CLI_ENV = "COPPERHEAD_KICAD_CLI";

/** KiCad's major version 8 is the oldest whose file formats and JSON reports we understand. */
export const MIN_KICAD_MAJOR = 8;

export interface KicadVersion {
  major: number;
  minor: number;
  patch: number;
  /** What `kicad-cli version` printed, trimmed, e.g. "9.0.8". */
  raw: string;
}

export interface KicadCli {
  /** Absolute path of the kicad-cli executable. */
  path: string;
  version: KicadVersion;
  /**
   * KiCad's shared data dir (holds `template/`, `symbols/`, `footprints/`), or null when it
   * could not be found next to the binary; then runs get no seeded library tables.
   */
  shareDir: string | null;
}

const INSTALL_HINT =
  `Install KiCad ${MIN_KICAD_MAJOR} or newer (9 recommended) — Debian/Ubuntu: ` +
  "`apt-get install -t bookworm-backports kicad` (enable bookworm-backports first); " +
  "macOS: `brew install --cask kicad`; Windows: the installer from https://www.kicad.org/download/windows/ — " +
  `or set ${KICAD_CLI_ENV} to the full path of kicad-cli.`;

const VERSION_PROBE_TIMEOUT_MS = 30_000;

/** One probe per binary path per process: the version probe costs a process spawn (~0.1 s). */
const probeCache = new Map<string, Promise<KicadCli>>();

/**
 * Locates kicad-cli, checks it is KiCad 8 or newer, and finds its shared data dir.
 * Discovery re-reads the environment on every call (cheap); only the probe is cached — in
 * memory, and on disk keyed by the install's stamp, so a command in a fresh process does not
 * pay a kicad-cli start just to learn a version it learnt before.
 */
export async function findKicadCli(): Promise<KicadCli> {
  const path = locateKicadCli();
  let probe = probeCache.get(path);
  if (!probe) {
    probe = rememberedProbe(path);
    probeCache.set(path, probe);
    // A failed probe (e.g. a timeout on a loaded machine) must not poison later calls.
    probe.catch(() => probeCache.delete(path));
  }
  const cli = await probe;
  assertSupportedVersion(cli.version, path);
  return cli;
}

/** Parses `kicad-cli version` output ("9.0.8", "8.0.1-1", "9.99.0-1234-gabc") or returns null. */
export function parseKicadVersion(output: string): KicadVersion | null {
  for (const line of output.split(/\r?\n/)) {
    const m = /^\s*(\d+)\.(\d+)(?:\.(\d+))?\S*\s*$/.exec(line);
    if (m) return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0), raw: line.trim() };
  }
  return null;
}

export function assertSupportedVersion(version: KicadVersion, path: string): void {
  if (version.major >= MIN_KICAD_MAJOR) return;
  throw new CopperheadError(
    "kicad_cli_too_old",
    `kicad-cli at ${path} is KiCad ${version.raw}; copperhead needs KiCad ${MIN_KICAD_MAJOR} or newer.`,
    { fix: INSTALL_HINT, path, version: version.raw },
  );
}

function locateKicadCli(): string {
  const fromEnv = process.env[KICAD_CLI_ENV];
  if (fromEnv !== undefined && fromEnv !== "") {
    const path = resolve(fromEnv);
    if (!isExecutableFile(path)) {
      throw new CopperheadError(
        "kicad_cli_missing",
        `${KICAD_CLI_ENV} is set to ${fromEnv}, which is not an executable file.`,
        {
          fix: `Point ${KICAD_CLI_ENV} at the kicad-cli executable, or unset it to search PATH. ${INSTALL_HINT}`,
          path,
        },
      );
    }
    return path;
  }
  const onPath = Bun.which("kicad-cli");
  if (onPath) return resolve(onPath);
  const installed = standardLocations().find(isExecutableFile);
  if (installed) return installed;
  throw new CopperheadError(
    "kicad_cli_missing",
    "kicad-cli was not found on PATH or in the standard install locations.",
    {
      fix: INSTALL_HINT,
    },
  );
}

function standardLocations(): string[] {
  if (process.platform === "darwin") return ["/Applications/KiCad/KiCad.app/Contents/MacOS/kicad-cli"];
  if (process.platform === "win32") {
    // KiCad installs side by side as `KiCad\<major>.0`; the newest one present wins.
    const root = join(process.env.ProgramFiles ?? "C:\\Program Files", "KiCad");
    let versions: string[] = [];
    try {
      versions = readdirSync(root).filter((d) => /^\d+\.\d+$/.test(d));
    } catch {
      return [];
    }
    versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    return versions.map((v) => join(root, v, "bin", "kicad-cli.exe"));
  }
  return ["/usr/bin/kicad-cli", "/usr/local/bin/kicad-cli"];
}

export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The probe result stored under the user's cache dir, valid while the binary and its stock
 * libraries are unchanged (`kicadInstallStamp`); probes and stores it otherwise. A cache that
 * cannot be read or written only costs the probe.
 */
async function rememberedProbe(path: string): Promise<KicadCli> {
  const file = join(userCacheDir(), "kicad-cli.json");
  const stamp = kicadInstallStamp();
  let known: Record<string, KicadCli> = {};
  try {
    known = JSON.parse(readFileSync(file, "utf8"));
    const hit = known[stamp];
    if (hit?.path === path && hit.version?.raw) return hit;
  } catch {
    // No cache yet, or an unreadable one: probe.
  }
  const cli = await probeInstall(path);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ ...known, [stamp]: cli }));
  } catch {
    // A read-only home still works; it just probes every time.
  }
  return cli;
}

async function probeInstall(path: string): Promise<KicadCli> {
  const version = await probeVersion(path);
  const shareDir = findShareDir(path);
  if (!shareDir) {
    log.warn(
      `KiCad's template library tables were not found next to ${path}; ERC and DRC may report stock libraries as missing.`,
    );
  }
  return { path, version, shareDir };
}

async function probeVersion(path: string): Promise<KicadVersion> {
  const run = await withScratchDir((dir) =>
    execKicad(path, ["version"], { scratchDir: dir, timeoutMs: VERSION_PROBE_TIMEOUT_MS }),
  );
  const version = run.exitCode === 0 ? parseKicadVersion(run.stdout) : null;
  if (!version) {
    throw new CopperheadError("kicad_failed", `${path} did not report a KiCad version; is it really kicad-cli?`, {
      fix: `Point ${KICAD_CLI_ENV} at KiCad's kicad-cli executable. ${INSTALL_HINT}`,
      path,
      exitCode: run.exitCode,
      output: run.excerpt,
    });
  }
  return version;
}

/**
 * KiCad's shared data dir, found from the real binary location (PATH entries are often
 * symlinks, e.g. Homebrew's into KiCad.app):
 * - macOS: `KiCad.app/Contents/MacOS/kicad-cli` → `KiCad.app/Contents/SharedSupport`;
 * - Linux and Windows: `<prefix>/bin/kicad-cli` → `<prefix>/share/kicad`.
 */
function findShareDir(binary: string): string | null {
  let real = binary;
  try {
    real = realpathSync(binary);
  } catch {
    // Keep the unresolved path; the candidates below still apply.
  }
  const binDir = dirname(real);
  const candidates = [join(binDir, "..", "SharedSupport"), join(binDir, "..", "share", "kicad")];
  const found = candidates.find((dir) => existsSync(join(dir, "template", "sym-lib-table")));
  return found ? resolve(found) : null;
}

/** KiCad's shared data dir for the kicad-cli that would run, found without starting it. */
export function kicadShareDir(): string | null {
  return findShareDir(locateKicadCli());
}

/**
 * Identifies the kicad-cli that would run and its stock libraries without starting a process,
 * so cached check results stay valid exactly until KiCad or its libraries change (package
 * upgrades replace files, which changes the library folders' modification times).
 */
export function kicadInstallStamp(): string {
  const path = locateKicadCli();
  const parts = [path, statStamp(path)];
  const share = findShareDir(path);
  if (share) for (const sub of ["symbols", "footprints", "template"]) parts.push(statStamp(join(share, sub)));
  return parts.join("|");
}

function statStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return "-";
  }
}
