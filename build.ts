/**
 * Builds the `copperhead` executable with `bun build --compile`.
 *
 *   bun run build.ts            dist/copperhead for this machine
 *   bun run build.ts --release  all five release targets, archived, into dist/release/
 *                               (see scripts/release/release.ts), plus the Homebrew formula
 *
 * The version baked in is "<package.json version>+<git revision>" (plus ".dirty" for an
 * uncommitted tree). The executable never autoloads `.env` or `bunfig.toml` from the folder it
 * runs in: copperhead runs inside other people's repositories, and a hostile repo must not be
 * able to inject code or environment into it.
 */
import pkg from "./package.json" with { type: "json" };
import { homebrewFormula } from "./scripts/release/homebrew.ts";
import { buildRelease, sizeReport } from "./scripts/release/release.ts";

function gitRevision(): string {
  const rev = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stderr: "ignore" });
  if (rev.exitCode !== 0) return "nogit";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stderr: "ignore" });
  const hash = rev.stdout.toString().trim();
  return dirty.stdout.toString().trim() ? `${hash}.dirty` : hash;
}

export const buildVersion = `${pkg.version}+${gitRevision()}`;

export async function buildExecutable(outfile: string, target?: Bun.Build.CompileTarget): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["src/main.ts"],
    minify: true,
    sourcemap: "none",
    bytecode: true,
    format: "esm",
    define: { COPPERHEAD_BUILD_VERSION: JSON.stringify(buildVersion) },
    compile: {
      ...(target ? { target } : {}),
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`build failed for ${target ?? "host"}`);
  }
}

if (import.meta.main && process.argv.includes("--release")) {
  const artifacts = await buildRelease({ version: pkg.version, build: buildExecutable });
  await Bun.write("packaging/homebrew/copperhead.rb", homebrewFormula(pkg.version, artifacts));
  console.error(`built release ${buildVersion} into dist/release/ and packaging/homebrew/copperhead.rb\n`);
  console.error(sizeReport(artifacts));
} else if (import.meta.main) {
  await buildExecutable("dist/copperhead");
  console.error(`built dist/copperhead ${buildVersion}`);
}
