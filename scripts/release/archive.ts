/**
 * Deterministic archives: the same binary always gives the same archive bytes, so the same
 * commit gives the same SHA256SUMS (as far as Bun's own output is reproducible).
 *
 * Both writers pin everything an archiver would otherwise take from the machine: entry
 * order, mtime (`mtime`, normally the commit time), owner and group (0, no names), mode
 * (0755), and the gzip header (no name, no timestamp). They use GNU tar and Info-ZIP `zip`,
 * the well-kept tools on the Linux machines that build releases; `Bun.Archive` cannot set a
 * mode or an mtime, so it would ship a non-executable binary stamped with the build time.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

function run(cmd: string[], options: { cwd: string; env?: Record<string, string> }): Uint8Array<ArrayBuffer> {
  const result = Bun.spawnSync(cmd, { cwd: options.cwd, env: { ...process.env, ...options.env }, stderr: "pipe" });
  if (result.exitCode !== 0)
    throw new Error(`${cmd[0]} failed (exit ${result.exitCode}): ${result.stderr.toString().trim()}`);
  return new Uint8Array(result.stdout);
}

/**
 * Writes `archive` holding `binary` as the single entry `entryName`: a .tar.gz, or a .zip when
 * `archive` ends in .zip. `mtime` is in seconds since the epoch.
 */
export function writeArchive(binary: string, entryName: string, archive: string, mtime: number): void {
  const outFile = resolve(archive);
  const stage = mkdtempSync(join(tmpdir(), "copperhead-stage-"));
  try {
    const staged = join(stage, entryName);
    copyFileSync(binary, staged);
    chmodSync(staged, 0o755);
    utimesSync(staged, mtime, mtime);
    if (outFile.endsWith(".zip")) {
      // -X: no uid/gid or extended timestamps; zip stores DOS local time, so pin the zone.
      rmSync(outFile, { force: true });
      run(["zip", "-X", "-q", "-9", outFile, entryName], { cwd: stage, env: { TZ: "UTC" } });
    } else {
      const tar = run(
        [
          "tar",
          "--sort=name",
          "--format=gnu",
          "--owner=0",
          "--group=0",
          "--numeric-owner",
          `--mtime=@${mtime}`,
          "--mode=0755",
          "-cf",
          "-",
          entryName,
        ],
        { cwd: stage },
      );
      // zlib writes a gzip header with no file name and a zero timestamp.
      writeFileSync(outFile, Bun.gzipSync(tar, { level: 9 }));
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
