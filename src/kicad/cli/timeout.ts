/**
 * How long a KiCad process (kicad-cli, or KiCad's Python filling zones) may take before it is
 * taken for hung. Its time grows with the design (a 70 MB board takes a minute and a half to
 * check on an idle machine, many more on a busy one), so the default grows by 10 s per MB of
 * input over a floor: a cut-off for a hung process, not a budget. `COPPERHEAD_KICAD_TIMEOUT`
 * (seconds) replaces it for machines slower than that.
 */
import { existsSync, statSync } from "node:fs";
import { CopperheadError } from "../../errors.ts";

/** Overrides how long each KiCad process may take, in seconds. */
export const KICAD_TIMEOUT_ENV = "COPPERHEAD_KICAD_TIMEOUT";

/** The cut-off for a KiCad process reading `files`, ms: `floorMs` and 10 s per MB of them, or the override. */
export function kicadTimeoutMs(files: string[], floorMs: number): number {
  const override = process.env[KICAD_TIMEOUT_ENV];
  if (override !== undefined && override !== "") {
    const seconds = Number(override);
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new CopperheadError(
        "usage",
        `${KICAD_TIMEOUT_ENV} must be a number of seconds, not ${JSON.stringify(override)}.`,
        {
          fix: `Set ${KICAD_TIMEOUT_ENV}=600 (for example), or unset it for the default, which grows with the design.`,
        },
      );
    }
    return seconds * 1000;
  }
  const bytes = files.reduce((sum, file) => sum + (existsSync(file) ? statSync(file).size : 0), 0);
  return floorMs + Math.ceil(bytes / 1e6) * 10_000;
}
