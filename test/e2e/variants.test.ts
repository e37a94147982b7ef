/**
 * Every failure mode of `check`, each a variant of the initialised usb-led fixture that breaks
 * exactly one thing: the binary must fail in exactly that family, name the exact finding, and
 * exit with the documented code.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { disconnectLdoEnable, editFile, removeFootprint, setDefaultClearance } from "../support/variants.ts";
import { runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);
beforeAll(requireKicadCli);

interface Variant {
  name: string;
  break: (repo: string) => void | Promise<void>;
  args?: string[];
  failing: string[];
  finding: { check: string; rule: string; key: string; severity: string };
}

const VARIANTS: Variant[] = [
  {
    name: "ERC error: an unconnected input pin",
    break: disconnectLdoEnable,
    failing: ["erc"],
    finding: { check: "erc", rule: "pin_not_connected", key: "erc:pin_not_connected:U1.3", severity: "error" },
  },
  {
    name: "DRC clearance error",
    break: (repo) => setDefaultClearance(repo, 0.6),
    failing: ["drc"],
    finding: { check: "drc", rule: "clearance", key: "drc:clearance:U1.1+U1.2", severity: "error" },
  },
  {
    // KiCad rates a missing footprint as the project says: a warning by default, here an error.
    name: "parity error: a symbol with no footprint on the board, in a project that rates that an error",
    break: (repo) => {
      removeFootprint(join(repo, "usb-led.kicad_pcb"), "R3");
      editFile(join(repo, "usb-led.kicad_pro"), (t) => {
        const pro = JSON.parse(t);
        pro.board.design_settings.rule_severities.missing_footprint = "error";
        return JSON.stringify(pro, null, 2);
      });
    },
    failing: ["parity"],
    finding: { check: "parity", rule: "missing_footprint", key: "parity:missing_footprint:R3", severity: "error" },
  },
  {
    name: "BOM drift",
    break: (repo) => editFile(join(repo, "docs/BOM.md"), (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |")),
    failing: ["drift"],
    finding: { check: "drift", rule: "bom", key: "drift:bom:R3:value", severity: "error" },
  },
  {
    name: "a stale doc reference",
    break: (repo) => writeFileSync(join(repo, "docs/NOTES.md"), "The status LED is driven through `R9`.\n"),
    failing: ["drift"],
    finding: { check: "drift", rule: "stale-ref", key: "drift:stale-ref:docs/NOTES.md:R9", severity: "error" },
  },
  {
    name: "a failing requirement",
    break: (repo) =>
      appendRequirement(repo, "- REQ-LED-9: The LED resistor is at least 10k.\n  - check: R3.value >= 10k\n"),
    failing: ["requirements"],
    finding: {
      check: "requirements",
      rule: "REQ-LED-9",
      key: "requirements:REQ-LED-9:R3.value >= 10k",
      severity: "error",
    },
  },
  {
    name: "a malformed rule",
    break: (repo) => appendRequirement(repo, "- REQ-LED-9: Bad rule.\n  - check: R3.value >>= 10k\n"),
    failing: ["requirements"],
    finding: {
      check: "requirements",
      rule: "parse",
      key: "requirements:parse:REQ-LED-9:R3.value >>= 10k",
      severity: "error",
    },
  },
  {
    name: "a malformed change proposal",
    break: (repo) => {
      mkdirSync(join(repo, "docs/changes"), { recursive: true });
      writeFileSync(
        join(repo, "docs/changes/0001-led.md"),
        "# Brighter LED\n\n- Change: 0001-led\n- Approval: auto\n- Requirements touched: none\n\n## Why\n\nIt is dim.\n",
      );
    },
    failing: ["changes"],
    finding: {
      check: "changes",
      rule: "malformed",
      key: 'changes:malformed:docs/changes/0001-led.md:section "## Planned changes" is missing or empty',
      severity: "error",
    },
  },
  {
    name: "fab: a BOM line without an MPN",
    // The BOM is regenerated afterwards, as a person would, so only fab has something to say.
    break: async (repo) => {
      editFile(join(repo, "usb-led.kicad_sch"), (t) =>
        t.replace(/\n\t\t\(property "MPN" "RC0603FR-071KL"[\s\S]*?\n\t\t\)(?=\n)/, ""),
      );
      await initialise(repo);
    },
    args: ["--fab"],
    failing: ["fab"],
    finding: { check: "fab", rule: "mpn_missing", key: "fab:mpn_missing:R3", severity: "error" },
  },
];

/** Adds a requirement at the end of the Requirements section init wrote. */
function appendRequirement(repo: string, text: string): void {
  appendFileSync(join(repo, "docs/SPEC.md"), `\n${text}`);
}

async function initialise(repo: string): Promise<void> {
  const init = await runBinary(["init", "--repo", repo, "--no-hooks"]);
  if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr}`);
}

async function initialisedCopy(): Promise<string> {
  const repo = await copyFixture("usb-led");
  await initialise(repo);
  return repo;
}

describe("each failure mode fails in exactly its family, with exit 1", () => {
  for (const variant of VARIANTS) {
    test(variant.name, async () => {
      const repo = await initialisedCopy();
      await variant.break(repo);
      const { exitCode, stdout } = await runBinary(["check", "--repo", repo, "--json", ...(variant.args ?? [])]);
      const report = JSON.parse(stdout);
      const failing = report.checks
        .filter((c: { status: string }) => c.status === "fail")
        .map((c: { id: string }) => c.id);
      expect(failing).toEqual(variant.failing);
      const findings = report.checks.flatMap((c: { findings: unknown[] }) => c.findings);
      const found = findings.find((f: { key: string }) => f.key === variant.finding.key);
      expect(found && { check: found.check, rule: found.rule, key: found.key, severity: found.severity }).toEqual(
        variant.finding,
      );
      expect(exitCode).toBe(1);
    }, 60_000);
  }
});

describe("could not run: exit 3 and a message that says how to fix it", () => {
  test("malformed config", async () => {
    const repo = await initialisedCopy();
    writeFileSync(join(repo, ".copperhead/config.json"), '{ "strict": "yes" }\n');
    const { exitCode, stdout, stderr } = await runBinary(["check", "--repo", repo]);
    expect(exitCode).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toContain(".copperhead/config.json");
    expect(stderr).toContain("strict");
    expect(stderr).toContain("Fix:");
  });

  test("an unparseable .kicad_sch", async () => {
    const repo = await initialisedCopy();
    editFile(join(repo, "regulator.kicad_sch"), (t) => t.replace("(lib_symbols", "(lib_symbols (((("));
    const { exitCode, stdout, stderr } = await runBinary(["check", "--repo", repo, "--json"]);
    expect(exitCode).toBe(3);
    expect(JSON.parse(stdout).error).toMatchObject({
      code: "parse_error",
      file: expect.stringContaining("regulator.kicad_sch"),
    });
    expect(stderr).toMatch(/regulator\.kicad_sch:\d+:\d+: unexpected end of input/);
    expect(stderr).toContain("Fix:");
  });
});
