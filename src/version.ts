/**
 * The copperhead version. `build.ts` bakes in "<package version>+<git revision>" with a
 * compile-time define; running from source reports the package version marked "-dev", so a
 * source checkout is never mistaken for a release.
 */
import pkg from "../package.json" with { type: "json" };

declare const COPPERHEAD_BUILD_VERSION: string | undefined;

export const VERSION: string =
  typeof COPPERHEAD_BUILD_VERSION === "string" ? COPPERHEAD_BUILD_VERSION : `${pkg.version}-dev`;
