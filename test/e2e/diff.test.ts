/**
 * `copperhead diff` through the compiled binary: exit codes, stdout carrying only data, the
 * three output forms, --render, and the typed errors for what cannot be compared.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { addResistor, setField } from "../support/usb-led-edits.ts";
import { runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

let template: string;
beforeAll(async () => {
  template = await initialisedRepo();
}, 60_000);

const diff = (args: string[]) => runBinary(["diff", ...args], { env: ISOLATED_ENV });

async function editedRepo(): Promise<string> {
  const repo = await copyRepo(template);
  setField(repo, "R1", "Value", "4k7");
  addResistor(repo);
  return repo;
}

describe("copperhead diff", () => {
  test("a clean tree: exit 0, says there is nothing, logs nothing", async () => {
    const repo = await copyRepo(template);
    const r = await diff(["--repo", repo]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^copperhead diff: HEAD \([0-9a-f]{7}\) → the working tree\nno changes to the design\n$/);
  });

  test("--json is the typed result, the same bytes every time", async () => {
    const repo = await editedRepo();
    const r = await diff(["--repo", repo, "--json"]);
    expect(r.exitCode).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.schema).toBe("copperhead.diff/1");
    expect(result.head).toEqual({ commit: null });
    expect(result.components.map((c: { ref: string; status: string }) => `${c.status} ${c.ref}`)).toEqual([
      "changed R1",
      "added R4",
    ]);
    expect((await diff(["--repo", repo, "--json"])).stdout).toBe(r.stdout);
  });

  test("text and markdown say the same, each in its form", async () => {
    const repo = await editedRepo();
    const text = await diff(["--repo", repo]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(
      "Parts\n  ~ R1 on /: Value 5.1k → 4k7\n  + R4 10k (Device:R, Resistor_SMD:R_0603_1608Metric) on / — 1: /LED_A, 2: GND\n",
    );
    const md = await diff(["--repo", repo, "--format", "markdown"]);
    expect(md.exitCode).toBe(0);
    expect(md.stdout).toMatch(/^### Design changes: HEAD \([0-9a-f]{7}\) → the working tree\n/);
    expect(md.stdout).toContain("- *changed* `R1` on `/`: Value `5.1k` → `4k7`\n");
    expect(md.stdout).toContain(
      "- *added* `R4` `10k` (Device:R, Resistor_SMD:R_0603_1608Metric) on `/` — 1: `/LED_A`, 2: `GND`\n",
    );
  });

  test("--render writes the plots, the overview and an inset per change; stdout still carries only the result", async () => {
    const repo = await editedRepo();
    const out = join(await makeTempDir(), "renders");
    const r = await diff(["--repo", repo, "--json", "--render", out]);
    expect(r.exitCode).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.renders.sheets.map((s: { path: string }) => s.path)).toEqual(["/"]);
    expect(readdirSync(out).sort()).toEqual([
      "usb-led.R1.png",
      "usb-led.R1.svg",
      "usb-led.R4.png",
      "usb-led.R4.svg",
      "usb-led.after.svg",
      "usb-led.before.svg",
      "usb-led.diff.svg",
    ]);
    expect(r.stderr).toContain(`renders: 7 file(s) in ${out}`);
  }, 60_000);

  test("an unknown ref: exit 3, the fix on stderr, a typed error with --json", async () => {
    const repo = await copyRepo(template);
    const text = await diff(["--repo", repo, "--base", "nope"]);
    expect(text.exitCode).toBe(3);
    expect(text.stdout).toBe("");
    expect(text.stderr).toContain('"nope" does not name a commit');
    expect(text.stderr).toContain("Fix:");
    const json = await diff(["--repo", repo, "--base", "nope", "--json"]);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout).error.code).toBe("not_found");
  });

  test("--json with --format, or an unknown format: exit 3 as a usage error", async () => {
    const repo = await copyRepo(template);
    const both = await diff(["--repo", repo, "--json", "--format", "markdown"]);
    expect(both.exitCode).toBe(3);
    expect(JSON.parse(both.stdout).error.code).toBe("usage");
    const unknown = await diff(["--repo", repo, "--format", "html"]);
    expect(unknown.exitCode).toBe(3);
    expect(unknown.stdout).toBe("");
  });
});
