/**
 * A release of the already built dist/copperhead for this machine, laid out like a GitHub
 * release (the archive plus SHA256SUMS) in a temp dir, for the install.sh and action tests.
 * It reuses the release packaging code, so the tests install exactly what a release ships.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { checksumsText, packageTarget, type ReleaseArtifact } from "../../scripts/release/release.ts";
import { RELEASE_TARGETS, type ReleaseTarget } from "../../scripts/release/targets.ts";
import { makeTempDir } from "../support/kicad.ts";
import { requireBinary } from "./binary.ts";

export function hostTarget(): ReleaseTarget {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const target = RELEASE_TARGETS.find((t) => t.os === os && t.arch === process.arch);
  if (!target) throw new Error(`copperhead has no release target for ${process.platform}-${process.arch}`);
  return target;
}

export interface LocalRelease {
  dir: string;
  url: string;
  artifact: ReleaseArtifact;
}

/** Packs dist/copperhead into a fresh temp dir; the caller registers `cleanupTempDirs`. */
export async function makeLocalRelease(): Promise<LocalRelease> {
  const dir = await makeTempDir();
  const artifact = packageTarget(requireBinary(), hostTarget(), pkg.version, dir, 1_700_000_000);
  writeFileSync(join(dir, "SHA256SUMS"), checksumsText([artifact]));
  return { dir, url: `file://${dir}`, artifact };
}
