import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadDesign } from "../../src/design/design.ts";
import { checkDrift, scanDrift } from "../../src/checks/drift.ts";
import { runInit } from "../../src/commands/init.ts";
import { projectLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { cleanupTempDirs, copyFixture } from "../support/kicad.ts";

/** Every drift finding code resolves names the command, wherever it is read. */
const CODE_FIX = "; fix: run `copperhead sync --resolve` (no model needed)";

afterAll(cleanupTempDirs);

/** A copy of usb-led set up by `init` (no git, no hook), ready for doc edits. */
async function initialised(): Promise<string> {
  const repo = await copyFixture("usb-led");
  await runInit({ repo, hooks: false });
  return repo;
}

function drift(repo: string) {
  return checkDrift(loadDesign(discoverProject(repo)), { docsDir: "docs" });
}

function editFile(repo: string, path: string, edit: (text: string) => string): void {
  const file = join(repo, path);
  writeFileSync(file, edit(readFileSync(file, "utf8")));
}

function lineOf(repo: string, path: string, needle: string): number {
  return (
    readFileSync(join(repo, path), "utf8")
      .split("\n")
      .findIndex((l) => l.startsWith(needle)) + 1
  );
}

describe("drift: BOM", () => {
  test("docs fresh from init: pass", async () => {
    const repo = await initialised();
    expect(drift(repo)).toEqual({
      id: "drift",
      status: "pass",
      summary: "BOM, pinout and docs agree with the design",
      findings: [],
    });
  });

  test("a BOM value that disagrees with the design: one error keyed by ref and field, at its line", async () => {
    const repo = await initialised();
    editFile(repo, "docs/BOM.md", (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |"));
    const result = drift(repo);
    expect(result.status).toBe("fail");
    expect(result.findings).toEqual([
      {
        check: "drift",
        rule: "bom",
        severity: "error",
        key: "drift:bom:R3:value",
        message:
          "docs/BOM.md:" +
          lineOf(repo, "docs/BOM.md", "| R3 |") +
          ': R3 value is "2k2" in the BOM but "1k" in the design' +
          CODE_FIX,
        location: { file: "docs/BOM.md", line: lineOf(repo, "docs/BOM.md", "| R3 |"), ref: "R3" },
      },
    ]);
  });

  test("a part marked DNP in the design but fitted in the BOM (and back): one error keyed drift:bom:<ref>:dnp; a pre-DNP table drifts only for DNP parts", async () => {
    const repo = await initialised();
    const setDnp = (dnp: boolean) => {
      const project = discoverProject(repo);
      const editor = SchematicEditor.open(project.schematic, projectLibraries(project.projectFile), { within: repo });
      editor.setAttributes("R3", { dnp });
      editor.save();
    };
    setDnp(true);
    expect(loadDesign(discoverProject(repo)).components.find((c) => c.ref === "R3")!.dnp).toBe(true);
    const line = lineOf(repo, "docs/BOM.md", "| R3 |");
    expect(drift(repo).findings.map((f) => [f.key, f.message])).toEqual([
      [
        "drift:bom:R3:dnp",
        `docs/BOM.md:${line}: R3 is fitted in the BOM but not fitted (DNP) in the design${CODE_FIX}`,
      ],
    ]);
    // A table written before the DNP column: no finding until a part is DNP.
    editFile(repo, "docs/BOM.md", (t) =>
      t
        .replace("| MPN | DNP |", "| MPN |")
        .replace("| --- | --- | --- | --- | --- | --- |", "| --- | --- | --- | --- | --- |")
        .replace(/^(\| [A-Z]+\d+ \|[^|]*\|[^|]*\|[^|]*\|)  \|/gm, "$1"),
    );
    expect(drift(repo).findings.map((f) => f.key)).toEqual(["drift:bom:R3:dnp"]);
    setDnp(false);
    expect(drift(repo).findings).toEqual([]);
    await runInit({ repo, hooks: false, force: true });
    setDnp(true);
    await runInit({ repo, hooks: false, force: true });
    expect(readFileSync(join(repo, "docs/BOM.md"), "utf8")).toMatch(/^\| R3 \| 1k \|[^|]*\|[^|]*\| DNP \|/m);
    expect(drift(repo).findings).toEqual([]);
  });

  test("footprint, MPN, missing, extra and duplicate rows each get their own key", async () => {
    const repo = await initialised();
    editFile(repo, "docs/BOM.md", (t) =>
      t
        .replace("| C1 | 1u | Capacitor_SMD:C_0603_1608Metric |", "| C1 | 1u | Capacitor_SMD:C_0805_2012Metric |")
        .replace(
          "| U1 | AP2112K-3.3 | Package_TO_SOT_SMD:SOT-23-5 | AP2112K-3.3TRG1 |",
          "| U1 | AP2112K-3.3 | Package_TO_SOT_SMD:SOT-23-5 |  |",
        )
        .replace(/^\| R2 \|.*\n/m, "")
        .replace(/^(\| R3 \|.*\n)/m, "$1| R9 | 10k | Resistor_SMD:R_0603_1608Metric |  |  |\n$1"),
    );
    const result = drift(repo);
    expect(result.findings.map((f) => f.key)).toEqual([
      "drift:bom:C1:footprint",
      "drift:bom:R2:missing",
      "drift:bom:R3:duplicate",
      "drift:bom:R9:extra",
      "drift:bom:U1:mpn",
    ]);
    expect(result.summary).toBe("5 errors");
    const scan = scanDrift(loadDesign(discoverProject(repo)), { docsDir: "docs" });
    expect(scan.items.find((i) => i.key === "drift:bom:U1:mpn")).toMatchObject({
      kind: "bom_mpn",
      doc: "docs/BOM.md",
      claim: "",
      actual: "AP2112K-3.3TRG1",
    });
    expect(scan.items.find((i) => i.key === "drift:bom:R9:extra")).toMatchObject({
      kind: "bom_extra_row",
      claim: "R9",
      actual: null,
    });
  });

  test("no BOM.md: skipped, pointing at init; a BOM.md without the table: one error", async () => {
    const repo = await initialised();
    rmSync(join(repo, "docs/BOM.md"));
    expect(drift(repo)).toEqual({
      id: "drift",
      status: "skipped",
      summary: "docs/BOM.md not found: run copperhead init",
      findings: [],
    });
    writeFileSync(join(repo, "docs/BOM.md"), "# Parts\n");
    expect(drift(repo).findings.map((f) => f.key)).toEqual(["drift:bom:table"]);
  });

  test("the docs folder may be given absolute, as check passes it", async () => {
    const repo = await initialised();
    editFile(repo, "docs/BOM.md", (t) => t.replace("| R3 | 1k |", "| R3 | 2k2 |"));
    const result = checkDrift(loadDesign(discoverProject(repo)), { docsDir: join(repo, "docs") });
    expect(result.findings.map((f) => [f.key, f.location?.file])).toEqual([["drift:bom:R3:value", "docs/BOM.md"]]);
  });
});

describe("drift: PINOUT", () => {
  test("a net renamed in the schematic shows up as the connector pin's row, keyed by ref, pin and what differs", async () => {
    const repo = await initialised();
    const project = discoverProject(repo);
    const editor = SchematicEditor.open(project.schematic, projectLibraries(project.projectFile), { within: repo });
    editor.renameNet("/CC1", "/CC1_IN");
    editor.save();
    const line = lineOf(repo, "docs/PINOUT.md", "| A5 |");
    expect(drift(repo).findings).toEqual([
      {
        check: "drift",
        rule: "pinout",
        severity: "error",
        key: "drift:pinout:J1.A5:net",
        message: `docs/PINOUT.md:${line}: J1 pin A5 net is "/CC1" in the pinout but "/CC1_IN" in the design${CODE_FIX}`,
        location: { file: "docs/PINOUT.md", line, ref: "J1" },
      },
    ]);
  });

  test("missing, extra and renamed pins each get their own key; a doc without markers is one error", async () => {
    const repo = await initialised();
    editFile(repo, "docs/PINOUT.md", (t) =>
      t
        .replace("| A12 | GND | GND |\n", "")
        .replace("| 2 | Pin_2 | GND |", "| 2 | Pin_2 | GND |\n| 3 | Pin_3 | GND |")
        .replace("| S1 | SHIELD |", "| S1 | SHLD |"),
    );
    expect(
      drift(repo)
        .findings.map((f) => f.key)
        .sort(),
    ).toEqual(["drift:pinout:J1.A12:missing", "drift:pinout:J1.S1:name", "drift:pinout:J2.3:extra"]);
    writeFileSync(join(repo, "docs/PINOUT.md"), "# Pinout\n\nWritten by hand.\n");
    expect(drift(repo).findings.map((f) => f.key)).toEqual(["drift:pinout:table"]);
  });

  test("a repo without PINOUT.md (initialised before copperhead wrote one) has no pinout drift", async () => {
    const repo = await initialised();
    rmSync(join(repo, "docs/PINOUT.md"));
    expect(drift(repo).status).toBe("pass");
  });
});

describe("drift: stale references", () => {
  test("a backticked ref or net the design lacks is an error keyed by doc and name", async () => {
    const repo = await initialised();
    writeFileSync(
      join(repo, "docs/NOTES.md"),
      [
        "# Notes",
        "",
        "`R3` sets the LED current; `R9` was the old pull-up.", // R9 is gone
        "Probe `J1.A9` and `U1.5`; the `VBUS` net and `+3V3` exist, so do `/CC1` and `CC1`.",
        "Test on the `VBUS_SENSE` net and the `+5V` rail.", // both stale nets
        "",
        "Not refs or nets: `copperhead check`, `UART1`, `USB2`, `docs/BOM.md`, `true`, `1k`, `R*`.",
        "",
        "```",
        "`R10` inside a fence is an example",
        "```",
      ].join("\n"),
    );
    const result = drift(repo);
    expect(result.findings.map((f) => f.key)).toEqual([
      "drift:stale-net:docs/NOTES.md:+5V",
      "drift:stale-net:docs/NOTES.md:VBUS_SENSE",
      "drift:stale-ref:docs/NOTES.md:R9",
    ]);
    expect(result.findings.find((f) => f.key.endsWith(":R9"))).toEqual({
      check: "drift",
      rule: "stale-ref",
      severity: "error",
      key: "drift:stale-ref:docs/NOTES.md:R9",
      message:
        "docs/NOTES.md:3: `R9` names R9, which does not exist in the design; fix: reword it, or run `copperhead sync --resolve` with a model (--model)",
      location: { file: "docs/NOTES.md", line: 3, ref: "R9" },
    });
    expect(result.findings.find((f) => f.key.endsWith(":+5V"))!.location).toEqual({
      file: "docs/NOTES.md",
      line: 5,
      net: "+5V",
    });
  });

  test("a ref mentioned twice in one doc is one finding, at its first line; REF.PIN names the ref", async () => {
    const repo = await initialised();
    mkdirSync(join(repo, "docs/design"));
    writeFileSync(join(repo, "docs/design/power.md"), "`U7` here.\n\nAnd `U7.3` again.\n");
    expect(drift(repo).findings.map((f) => [f.key, f.location?.line])).toEqual([
      ["drift:stale-ref:docs/design/power.md:U7", 1],
    ]);
  });

  test("check: rule lines, names declared absent, history docs and change proposals are not scanned", async () => {
    const repo = await initialised();
    editFile(repo, "docs/SPEC.md", (t) =>
      t.replace(
        "- REQ-CON-1:",
        [
          "- REQ-GONE-1: The old `Q9` and the `VPP` net stay out; `Q7` switches the LED.",
          "  - check: Q9 absent",
          "  - check: `net VPP absent`",
          "  - check: Q8 exists",
          "- REQ-CON-1:",
        ].join("\n"),
      ),
    );
    editFile(repo, "docs/CHANGELOG.md", (t) => `${t}\n- Removed \`R9\`.\n`);
    editFile(repo, "docs/DECISIONS.md", (t) => `${t}- 2025-01-01 manual: drop \`R9\` — not needed\n`);
    mkdirSync(join(repo, "docs/changes"));
    writeFileSync(join(repo, "docs/changes/c1.md"), "Removes `R9`.\n");
    expect(drift(repo).findings.map((f) => f.key)).toEqual(["drift:stale-ref:docs/SPEC.md:Q7"]);
  });
});
