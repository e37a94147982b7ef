/**
 * `build.ts --release`: one executable per target, each packed into a deterministic archive,
 * then SHA256SUMS, a size report and the Homebrew formula generated from the checksums.
 *
 * Layout:
 *   dist/targets/<os>-<arch>/copperhead[.exe]   the raw executables (e.g. for the e2e suite)
 *   dist/release/                               what a GitHub release publishes, plus sizes.txt
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeArchive } from "./archive.ts";
import { RELEASE_TARGETS, archiveName, binaryName, type ReleaseTarget } from "./targets.ts";

export interface ReleaseArtifact {
  target: ReleaseTarget;
  /** File name inside the release directory. */
  archive: string;
  sha256: string;
  binaryBytes: number;
  archiveBytes: number;
}

export type BuildFn = (outfile: string, target: Bun.Build.CompileTarget) => Promise<void>;

/**
 * The archive mtime: SOURCE_DATE_EPOCH when the caller sets it (the reproducible-builds
 * convention), else the commit time, so a rebuild of the same commit stamps the same time.
 */
export function sourceDateEpoch(): number {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  const log = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { stderr: "ignore" });
  const commitTime = Number(log.stdout.toString().trim());
  return log.exitCode === 0 && Number.isInteger(commitTime) ? commitTime : 0;
}

export function sha256File(path: string): string {
  return new Bun.CryptoHasher("sha256").update(Bun.mmap(path)).digest("hex");
}

/** Packs an already built executable for `target` into `releaseDir`. */
export function packageTarget(
  binary: string,
  target: ReleaseTarget,
  version: string,
  releaseDir: string,
  mtime: number,
): ReleaseArtifact {
  const archive = archiveName(target, version);
  const path = join(releaseDir, archive);
  writeArchive(binary, binaryName(target), path, mtime);
  return {
    target,
    archive,
    sha256: sha256File(path),
    binaryBytes: statSync(binary).size,
    archiveBytes: statSync(path).size,
  };
}

/** SHA256SUMS in the format `sha256sum -c` reads, sorted by file name. */
export function checksumsText(artifacts: ReleaseArtifact[]): string {
  return [...artifacts]
    .sort((a, b) => a.archive.localeCompare(b.archive))
    .map((a) => `${a.sha256}  ${a.archive}\n`)
    .join("");
}

export function sizeReport(artifacts: ReleaseArtifact[]): string {
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`.padStart(10);
  const rows = artifacts.map(
    (a) => `${`${a.target.os}-${a.target.arch}`.padEnd(14)}${mib(a.binaryBytes)}${mib(a.archiveBytes)}  ${a.archive}`,
  );
  return [`${"target".padEnd(14)}${"binary".padStart(10)}${"archive".padStart(10)}  file`, ...rows].join("\n") + "\n";
}

export async function buildRelease(options: {
  version: string;
  build: BuildFn;
  distDir?: string;
  targets?: ReleaseTarget[];
}): Promise<ReleaseArtifact[]> {
  const distDir = options.distDir ?? "dist";
  const releaseDir = join(distDir, "release");
  rmSync(releaseDir, { recursive: true, force: true });
  mkdirSync(releaseDir, { recursive: true });
  const mtime = sourceDateEpoch();
  const artifacts: ReleaseArtifact[] = [];
  for (const target of options.targets ?? RELEASE_TARGETS) {
    const binary = join(distDir, "targets", `${target.os}-${target.arch}`, binaryName(target));
    await options.build(binary, target.bunTarget);
    artifacts.push(packageTarget(binary, target, options.version, releaseDir, mtime));
  }
  await Bun.write(join(releaseDir, "SHA256SUMS"), checksumsText(artifacts));
  await Bun.write(join(releaseDir, "sizes.txt"), sizeReport(artifacts));
  return artifacts;
}
