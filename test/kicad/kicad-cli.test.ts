import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, realpathSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CopperheadError, type ErrorCode } from "../../src/errors.ts";
import {
  exportDrill,
  exportGerbers,
  exportNetlist,
  exportSvg,
  findKicadCli,
  type KicadCli,
  parseKicadVersion,
  runDrc,
  runErc,
  type Violation,
} from "../../src/kicad/cli/kicad-cli.ts";
import { assertSupportedVersion, KICAD_CLI_ENV } from "../../src/kicad/cli/install.ts";
import { parseDrcReport, parseErcReport } from "../../src/kicad/cli/report.ts";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";

const SLOW = 60_000;

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

/** Runs `fn` with some environment variables replaced (undefined deletes), then restores them. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

async function rejection(promise: Promise<unknown>): Promise<CopperheadError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CopperheadError);
    return err as CopperheadError;
  }
  throw new Error("expected the call to fail");
}

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<CopperheadError> {
  const err = await rejection(promise);
  expect(err.code).toBe(code);
  return err;
}

const types = (violations: Violation[]) => violations.map((v) => v.type).sort();

describe("findKicadCli", () => {
  test("finds the installed kicad-cli, version 8 or newer", () => {
    expect(existsSync(cli.path)).toBe(true);
    expect(cli.version.major).toBeGreaterThanOrEqual(8);
    expect(cli.version.raw).toMatch(/^\d+\.\d+/);
    expect(cli.shareDir).not.toBeNull();
  });

  test(`${KICAD_CLI_ENV} pointing at a missing file is an error naming the variable`, async () => {
    const err = await withEnv({ [KICAD_CLI_ENV]: "/nonexistent/kicad-cli" }, () =>
      expectCode(findKicadCli(), "kicad_cli_missing"),
    );
    expect(err.message).toContain(KICAD_CLI_ENV);
    expect(err.fix).toContain(KICAD_CLI_ENV);
    expect(err.fix).toContain("apt-get install -t bookworm-backports kicad");
    expect(err.fix).toContain("brew install --cask kicad");
    expect(err.fix).toContain("Windows");
  });

  test(`${KICAD_CLI_ENV} pointing at a non-executable file is an error, not a fallback to PATH`, async () => {
    const file = join(await makeTempDir(), "kicad-cli");
    await writeFile(file, "not a program\n", { mode: 0o644 });
    const err = await withEnv({ [KICAD_CLI_ENV]: file }, () => expectCode(findKicadCli(), "kicad_cli_missing"));
    expect(err.message).toContain(KICAD_CLI_ENV);
  });

  test(`${KICAD_CLI_ENV} pointing at the real binary is used`, async () => {
    const real = realpathSync(cli.path);
    const found = await withEnv({ [KICAD_CLI_ENV]: real }, () => findKicadCli());
    expect(found.path).toBe(real);
    expect(found.version).toEqual(cli.version);
  });

  test("without the variable, kicad-cli is found on PATH", async () => {
    const found = await withEnv({ [KICAD_CLI_ENV]: undefined }, () => findKicadCli());
    expect(found.path).toBe(Bun.which("kicad-cli") ?? "(kicad-cli is not on PATH)");
  });
});

describe("parseKicadVersion", () => {
  test("parses release, packaged and development version strings", () => {
    expect(parseKicadVersion("9.0.8\n")).toEqual({ major: 9, minor: 0, patch: 8, raw: "9.0.8" });
    expect(parseKicadVersion("8.0.1-1")).toEqual({ major: 8, minor: 0, patch: 1, raw: "8.0.1-1" });
    expect(parseKicadVersion("9.99.0-1234-gabcdef")).toMatchObject({ major: 9, minor: 99, patch: 0 });
    expect(parseKicadVersion("10.0")).toMatchObject({ major: 10, minor: 0, patch: 0 });
  });

  test("skips chatter lines and rejects output without a version", () => {
    expect(parseKicadVersion("Some first-run notice.\n9.0.8\n")).toMatchObject({ major: 9, patch: 8 });
    expect(parseKicadVersion("")).toBeNull();
    expect(parseKicadVersion("usage: something 9.0.8 else")).toBeNull();
  });

  test("KiCad 7 is too old", () => {
    const old = { major: 7, minor: 0, patch: 11, raw: "7.0.11" };
    expect(() => assertSupportedVersion(old, "/opt/kicad-cli")).toThrow(
      expect.objectContaining({ code: "kicad_cli_too_old" }) as unknown as Error,
    );
    expect(() => assertSupportedVersion(cli.version, cli.path)).not.toThrow();
  });
});

describe("runErc", () => {
  test(
    "reports the unconnected pins of the erc-error fixture by type",
    async () => {
      const dir = await copyFixture("cli/erc-error");
      const report = await runErc(join(dir, "erc-error.kicad_sch"), { cli });
      expect(report.sheets.map((s) => s.path)).toEqual(["/"]);
      const violations = report.sheets.flatMap((s) => s.violations);
      expect(types(violations)).toEqual(["pin_not_connected", "pin_not_connected"]);
      for (const v of violations) {
        expect(v.severity).toBe("error");
        expect(v.items[0]?.uuid).toMatch(/^[0-9a-f-]{36}$/);
      }
    },
    SLOW,
  );

  test(
    "on a fresh machine (empty HOME) the stock libraries still resolve",
    async () => {
      const dir = await copyFixture("cli/erc-error");
      const home = await makeTempDir();
      const homeless = { HOME: home, XDG_CONFIG_HOME: undefined, KICAD_CONFIG_HOME: undefined };

      // Control: plain kicad-cli with that HOME has no symbol library table, so the fixture
      // does trigger the library warning this test guards against.
      const raw = join(home, "raw.json");
      const proc = Bun.spawn(
        [cli.path, "sch", "erc", "--format", "json", "--severity-all", "-o", raw, join(dir, "erc-error.kicad_sch")],
        {
          env: { PATH: process.env.PATH ?? "", HOME: home },
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      expect(await proc.exited).toBe(0);
      const control = parseErcReport(await readFile(raw, "utf8"), raw);
      expect(types(control.sheets.flatMap((s) => s.violations))).toContain("lib_symbol_issues");

      const erc = await withEnv(homeless, () => runErc(join(dir, "erc-error.kicad_sch"), { cli }));
      expect(types(erc.sheets.flatMap((s) => s.violations))).toEqual(["pin_not_connected", "pin_not_connected"]);

      const board = await copyFixture("cli/drc-parity");
      const drc = await withEnv(homeless, () => runDrc(join(board, "drc-parity.kicad_pcb"), { cli }));
      expect(types(drc.report.violations).filter((t) => t.startsWith("lib_"))).toEqual([]);
    },
    SLOW,
  );

  test(
    "a garbage schematic is kicad_load_failed naming the file",
    async () => {
      const dir = await makeTempDir();
      const file = join(dir, "broken.kicad_sch");
      await writeFile(file, "this is not a schematic (((\n");
      const err = await expectCode(runErc(file, { cli }), "kicad_load_failed");
      expect(err.details.file).toBe(file);
      expect(String(err.details.output)).toContain("Failed to load");
    },
    SLOW,
  );

  test("a missing schematic is kicad_load_failed", async () => {
    const err = await expectCode(runErc(join(await makeTempDir(), "nope.kicad_sch"), { cli }), "kicad_load_failed");
    expect(err.message).toContain("nope.kicad_sch");
  });

  test("a .kicad_pro that kicad-cli would silently ignore is kicad_load_failed", async () => {
    const dir = await copyFixture("cli/erc-error");
    await writeFile(join(dir, "erc-error.kicad_pro"), "{ not json");
    const err = await expectCode(runErc(join(dir, "erc-error.kicad_sch"), { cli }), "kicad_load_failed");
    expect(err.details.file).toBe(join(dir, "erc-error.kicad_pro"));
  });

  test(
    "a run past its timeout is killed and reported as kicad_timeout",
    async () => {
      const dir = await copyFixture("cli/erc-error");
      const err = await expectCode(runErc(join(dir, "erc-error.kicad_sch"), { cli, timeoutMs: 1 }), "kicad_timeout");
      expect(err.details.timeoutMs).toBe(1);
    },
    SLOW,
  );
});

describe("runDrc", () => {
  test(
    "parses violations, unconnected items and schematic parity",
    async () => {
      const dir = await copyFixture("cli/drc-parity");
      const { report, parityChecked } = await runDrc(join(dir, "drc-parity.kicad_pcb"), { cli, schematicParity: true });
      expect(parityChecked).toBe(true);
      expect(types(report.violations)).toContain("courtyards_overlap");
      expect(types(report.violations)).toContain("clearance");
      expect(report.unconnected_items).toEqual([]);
      expect(types(report.schematic_parity)).toContain("extra_footprint");
      const extra = report.schematic_parity.find((v) => v.type === "extra_footprint");
      expect(extra?.items[0]?.description).toContain("R2");
      expect(extra?.items[0]?.pos).toEqual({ x: 100.5, y: 100 });
    },
    SLOW,
  );

  test(
    "without --schematic-parity, parity is not checked",
    async () => {
      const dir = await copyFixture("cli/drc-parity");
      const { report, parityChecked } = await runDrc(join(dir, "drc-parity.kicad_pcb"), { cli });
      expect(parityChecked).toBe(false);
      expect(report.schematic_parity).toEqual([]);
      expect(report.violations.length).toBeGreaterThan(0);
    },
    SLOW,
  );

  test(
    "a missing schematic gives an empty parity list that is flagged as unchecked",
    async () => {
      const dir = await copyFixture("cli/drc-parity");
      await rm(join(dir, "drc-parity.kicad_sch"));
      const { report, parityChecked } = await runDrc(join(dir, "drc-parity.kicad_pcb"), { cli, schematicParity: true });
      expect(report.schematic_parity).toEqual([]);
      expect(parityChecked).toBe(false);
    },
    SLOW,
  );

  test(
    "a garbage schematic next to the board fails parity with kicad_load_failed naming the schematic",
    async () => {
      const dir = await copyFixture("cli/drc-parity");
      const sch = join(dir, "drc-parity.kicad_sch");
      await writeFile(sch, "garbage (((\n");
      const err = await expectCode(
        runDrc(join(dir, "drc-parity.kicad_pcb"), { cli, schematicParity: true }),
        "kicad_load_failed",
      );
      expect(err.details.file).toBe(sch);
    },
    SLOW,
  );

  test(
    "a garbage board is kicad_load_failed",
    async () => {
      const dir = await makeTempDir();
      const file = join(dir, "broken.kicad_pcb");
      await writeFile(file, "(kicad_pcb (version 20241229\n");
      const err = await expectCode(runDrc(file, { cli }), "kicad_load_failed");
      expect(err.details.file).toBe(file);
    },
    SLOW,
  );
  test(
    "the routed usb-led board passes DRC with parity checked",
    async () => {
      const dir = await copyFixture("usb-led");
      const { report, parityChecked } = await runDrc(join(dir, "usb-led.kicad_pcb"), { cli, schematicParity: true });
      expect(parityChecked).toBe(true);
      expect(report.violations.filter((v) => v.severity === "error" && !v.excluded)).toEqual([]);
      expect(report.unconnected_items).toEqual([]);
      expect(report.schematic_parity).toEqual([]);
    },
    SLOW,
  );
});

describe("exports", () => {
  test(
    "exportNetlist returns kicadsexpr netlist text",
    async () => {
      const dir = await copyFixture("cli/erc-error");
      const netlist = await exportNetlist(join(dir, "erc-error.kicad_sch"), { cli });
      expect(netlist.startsWith("(export")).toBe(true);
      expect(netlist).toContain('(ref "R1")');
      expect(netlist).toContain("unconnected-(R1-Pad1)");
    },
    SLOW,
  );

  test(
    "exportSvg writes one SVG per sheet",
    async () => {
      const dir = await copyFixture("cli/erc-error");
      const out = join(await makeTempDir(), "svg");
      const files = await exportSvg(join(dir, "erc-error.kicad_sch"), out, { cli, excludeDrawingSheet: true });
      expect(files).toEqual([join(out, "erc-error.svg")]);
      expect(await readFile(files[0] ?? "", "utf8")).toContain("<svg");
    },
    SLOW,
  );

  test(
    "Gerbers and drill files export into one dir and are listed separately",
    async () => {
      const dir = await copyFixture("cli/drc-parity");
      const out = await makeTempDir();
      const board = join(dir, "drc-parity.kicad_pcb");
      const gerbers = await exportGerbers(board, out, { cli });
      expect(gerbers).toContain(join(out, "drc-parity-F_Cu.gbr"));
      expect(gerbers).toContain(join(out, "drc-parity-Edge_Cuts.gbr"));
      expect(gerbers).toContain(join(out, "drc-parity-job.gbrjob"));
      const drill = await exportDrill(board, out, { cli });
      expect(drill).toEqual([join(out, "drc-parity.drl")]);

      const layers = await exportGerbers(board, join(out, "cu"), { cli, layers: ["F.Cu", "B.Cu"] });
      expect(layers.filter((f) => !f.endsWith(".gbrjob")).length).toBe(2);
    },
    SLOW,
  );

  test(
    "exporting a garbage board is kicad_load_failed",
    async () => {
      const dir = await makeTempDir();
      const file = join(dir, "broken.kicad_pcb");
      await writeFile(file, "nope\n");
      await expectCode(exportGerbers(file, join(dir, "out"), { cli }), "kicad_load_failed");
    },
    SLOW,
  );
});

describe("report parsing", () => {
  test("keeps unknown keys and fills optional fields", () => {
    const report = parseDrcReport(
      JSON.stringify({
        kicad_version: "10.0.0",
        ignored_checks: [{ key: "x" }],
        violations: [{ type: "clearance", severity: "error", comment: "new in 10", items: [{ uuid: "u1" }] }],
      }),
      "b.kicad_pcb",
    );
    expect(report.unconnected_items).toEqual([]);
    expect(report.schematic_parity).toEqual([]);
    expect(report.violations[0]).toMatchObject({ type: "clearance", description: "", comment: "new in 10" });
    expect(report.violations[0]?.items[0]).toEqual({ uuid: "u1", description: "" });
    expect((report as Record<string, unknown>).ignored_checks).toEqual([{ key: "x" }]);
  });

  test("a malformed report is a typed error, never an empty pass", () => {
    for (const text of ["{", "{}", JSON.stringify({ violations: [{ severity: "error" }] })]) {
      expect(() => parseDrcReport(text, "b.kicad_pcb")).toThrow(
        expect.objectContaining({ code: "kicad_failed" }) as unknown as Error,
      );
    }
    expect(() => parseErcReport(JSON.stringify({ violations: [] }), "a.kicad_sch")).toThrow(
      expect.objectContaining({ code: "kicad_failed" }) as unknown as Error,
    );
  });
});
