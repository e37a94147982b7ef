/** How long a KiCad process may take (`kicad/cli/timeout.ts`): kicad-cli and the zone refill alike. */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KICAD_TIMEOUT_ENV, kicadTimeoutMs } from "../../src/kicad/cli/timeout.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterEach(() => {
  delete process.env[KICAD_TIMEOUT_ENV];
});
afterEach(cleanupTempDirs);

describe("the cut-off of a KiCad process", () => {
  test("grows by 10 s per MB of its input over its floor, and the override replaces it for kicad-cli and the refill alike", async () => {
    const board = join(await makeTempDir(), "big.kicad_pcb");
    writeFileSync(board, Buffer.alloc(2_500_000, 32));
    expect(kicadTimeoutMs([board], 120_000)).toBe(150_000);
    expect(kicadTimeoutMs([board], 300_000)).toBe(330_000);
    process.env[KICAD_TIMEOUT_ENV] = "1800";
    expect(kicadTimeoutMs([board], 300_000)).toBe(1_800_000);
  });

  test("an override that is not a number of seconds is a usage error that says what to set", () => {
    process.env[KICAD_TIMEOUT_ENV] = "soon";
    expect(() => kicadTimeoutMs([], 120_000)).toThrow(
      /COPPERHEAD_KICAD_TIMEOUT must be a number of seconds, not "soon"/,
    );
  });
});
