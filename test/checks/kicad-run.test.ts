/**
 * The per-family cache of kicad-cli results, observed through the entries it writes: each
 * entry names the kicad-cli job that produced it, so the entries a check adds are the jobs it
 * ran. Real kicad-cli on a copy of the usb-led fixture; every edit is one a person makes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cachedJobs, type KicadFamily } from "../../src/checks/kicad-run.ts";
import { runCheck } from "../../src/commands/check.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { editFile } from "../support/variants.ts";

afterAll(cleanupTempDirs);
beforeAll(requireKicadCli);

/** Runs `check` and returns the families kicad-cli ran for it (the entries it added). */
async function ranFor(repo: string, options: { fab?: boolean } = {}): Promise<KicadFamily[]> {
  const before = cachedJobs(repo);
  await runCheck({ repo, ...options });
  return [...cachedJobs(repo)]
    .filter(([name]) => !before.has(name))
    .map(([, family]) => family)
    .sort();
}

describe("check re-runs only the kicad-cli jobs whose inputs changed", () => {
  let repo: string;
  beforeAll(async () => {
    repo = await copyFixture("usb-led");
  });

  test("a cold check runs ERC and DRC; --fab adds the export; an unchanged repo runs nothing", async () => {
    expect(await ranFor(repo)).toEqual(["drc", "erc"]);
    expect(await ranFor(repo)).toEqual([]);
    expect(await ranFor(repo, { fab: true })).toEqual(["fab"]);
    expect(await ranFor(repo, { fab: true })).toEqual([]);
  }, 120_000);

  test("a docs-only edit runs no kicad-cli job", async () => {
    mkdirSync(join(repo, "docs"), { recursive: true });
    writeFileSync(join(repo, "docs", "NOTES.md"), "# Notes\n\nThe LED is green.\n");
    expect(await ranFor(repo)).toEqual([]);
  }, 60_000);

  test("a label renamed on a sheet re-runs ERC only", async () => {
    editFile(join(repo, "usb-led.kicad_sch"), (t) => t.replace('(label "LED_A"', '(label "LED_ANODE"'));
    expect(await ranFor(repo)).toEqual(["erc"]);
  }, 60_000);

  test("a board-only edit re-runs DRC only, and the fab export with --fab", async () => {
    editFile(join(repo, "usb-led.kicad_pcb"), (t) => t.replace("(thickness 1.6)", "(thickness 1.2)"));
    expect(await ranFor(repo)).toEqual(["drc"]);
    expect(await ranFor(repo, { fab: true })).toEqual(["fab"]);
  }, 120_000);

  test("custom DRC rules re-run DRC; project settings re-run both", async () => {
    writeFileSync(
      join(repo, "usb-led.kicad_dru"),
      '(version 1)\n(rule "wide"\n\t(constraint track_width (min 0.1mm))\n)\n',
    );
    expect(await ranFor(repo)).toEqual(["drc"]);
    editFile(join(repo, "usb-led.kicad_pro"), (t) => {
      const pro = JSON.parse(t);
      pro.text_variables = { ...pro.text_variables, REVISION: "B" };
      return JSON.stringify(pro, null, 2);
    });
    expect(await ranFor(repo)).toEqual(["drc", "erc"]);
  }, 120_000);

  test("a project symbol library re-runs ERC, a project footprint library DRC", async () => {
    mkdirSync(join(repo, "lib", "local.pretty"), { recursive: true });
    writeFileSync(
      join(repo, "lib", "local.kicad_sym"),
      '(kicad_symbol_lib\n\t(version 20241209)\n\t(generator "kicad_symbol_editor")\n)\n',
    );
    writeFileSync(
      join(repo, "sym-lib-table"),
      '(sym_lib_table\n\t(version 7)\n\t(lib (name "local")(type "KiCad")(uri "${KIPRJMOD}/lib/local.kicad_sym")(options "")(descr ""))\n)\n',
    );
    expect(await ranFor(repo)).toEqual(["erc"]);
    editFile(join(repo, "lib", "local.kicad_sym"), (t) => t.replace("kicad_symbol_editor", "kicad_symbol_editor "));
    expect(await ranFor(repo)).toEqual(["erc"]);

    writeFileSync(
      join(repo, "fp-lib-table"),
      '(fp_lib_table\n\t(version 7)\n\t(lib (name "local")(type "KiCad")(uri "${KIPRJMOD}/lib/local.pretty")(options "")(descr ""))\n)\n',
    );
    expect(await ranFor(repo)).toEqual(["drc"]);
    writeFileSync(
      join(repo, "lib", "local.pretty", "Pad.kicad_mod"),
      '(footprint "Pad"\n\t(version 20241229)\n\t(generator "pcbnew")\n\t(layer "F.Cu")\n)\n',
    );
    expect(await ranFor(repo)).toEqual(["drc"]);
  }, 120_000);
});
