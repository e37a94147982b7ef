/**
 * The five release targets. Archive names carry the package version and a short os-arch
 * suffix that install.sh and action.yml compute from `uname`, so they find their archive in
 * SHA256SUMS without knowing the version (which is what makes "latest" work).
 */
export interface ReleaseTarget {
  bunTarget: Bun.Build.CompileTarget;
  os: "linux" | "darwin" | "windows";
  arch: "x64" | "arm64";
}

export const RELEASE_TARGETS: ReleaseTarget[] = [
  { bunTarget: "bun-linux-x64", os: "linux", arch: "x64" },
  { bunTarget: "bun-linux-arm64", os: "linux", arch: "arm64" },
  { bunTarget: "bun-darwin-x64", os: "darwin", arch: "x64" },
  { bunTarget: "bun-darwin-arm64", os: "darwin", arch: "arm64" },
  { bunTarget: "bun-windows-x64", os: "windows", arch: "x64" },
];

/** Windows gets a .zip holding copperhead.exe; everything else a .tar.gz holding copperhead. */
export function binaryName(target: ReleaseTarget): string {
  return target.os === "windows" ? "copperhead.exe" : "copperhead";
}

export function archiveName(target: ReleaseTarget, version: string): string {
  return `copperhead-${version}-${target.os}-${target.arch}.${target.os === "windows" ? "zip" : "tar.gz"}`;
}
