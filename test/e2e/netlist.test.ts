import { afterAll, expect, test } from "bun:test";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { exportNetlist } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";
import { runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

test("netlist --json on the usb-led fixture matches kicad-cli's netlist", async () => {
  const cli = await requireKicadCli();
  const repo = await copyFixture("usb-led");
  const { exitCode, stdout, stderr } = await runBinary(["netlist", "--repo", repo, "--json"]);
  expect(stderr).toBe("");
  expect(exitCode).toBe(0);
  const ours = JSON.parse(stdout);
  expect(ours.schema).toBe("copperhead.netlist/1");
  const kicad = parseKicadNetlist(await exportNetlist(join(repo, "usb-led.kicad_sch"), { cli }));
  expect(netlistDiff(kicad, ours)).toEqual([]);
  expect(ours.nets).toEqual(kicad.nets);
}, 60_000);

test("netlist text output is a readable table on stdout, logs stay off stdout", async () => {
  const repo = await copyFixture("usb-led");
  const { exitCode, stdout } = await runBinary(["netlist", "--repo", repo]);
  expect(exitCode).toBe(0);
  expect(stdout).toContain("GND  (10 pins)");
  expect(stdout).toContain("    U1.5  VOUT, power_out");
  expect(stdout.trimEnd().endsWith("7 nets")).toBe(true);
});

test("a repo with no KiCad project: exit 3, a fix on stderr, a typed error with --json", async () => {
  const repo = await copyFixture("usb-led");
  const empty = join(repo, "docs");
  await Bun.write(join(empty, "README.md"), "nothing here\n");
  const text = await runBinary(["netlist", "--repo", empty]);
  expect(text.exitCode).toBe(3);
  expect(text.stdout).toBe("");
  expect(text.stderr).toContain("No .kicad_pro file found");
  expect(text.stderr).toContain("Fix:");
  const json = await runBinary(["netlist", "--repo", empty, "--json"]);
  expect(json.exitCode).toBe(3);
  expect(JSON.parse(json.stdout).error.code).toBe("project_not_found");
});

test("a malformed schematic: exit 3 naming the file, line and column", async () => {
  const repo = await copyFixture("usb-led");
  const sch = join(repo, "regulator.kicad_sch");
  const source = await Bun.file(sch).text();
  await Bun.write(sch, source.slice(0, Math.floor(source.length / 2)));
  const { exitCode, stdout, stderr } = await runBinary(["netlist", "--repo", repo, "--json"]);
  expect(exitCode).toBe(3);
  const { error } = JSON.parse(stdout);
  expect(error.code).toBe("parse_error");
  expect(error.file).toEndWith("regulator.kicad_sch");
  expect(error.line).toBeGreaterThan(1);
  expect(stderr).toMatch(/regulator\.kicad_sch:\d+:\d+: /);
});

test("a repo nesting a second project: the top-level one, named on stderr and in --json", async () => {
  const repo = await copyFixture("usb-led");
  await cp(join(FIXTURES_DIR, "netlist", "kicad6"), join(repo, "jig"), { recursive: true });
  const { exitCode, stdout, stderr } = await runBinary(["netlist", "--repo", repo, "--json"]);
  expect(exitCode).toBe(0);
  expect(JSON.parse(stdout).project).toBe("usb-led.kicad_pro");
  expect(stderr).toContain("Using usb-led.kicad_pro, the top-level KiCad project (also found: jig/kicad6.kicad_pro)");
});

test("a KiCad 6 project netlists like kicad-cli (no refusal of old formats)", async () => {
  const cli = await requireKicadCli();
  const repo = await copyFixture("netlist/kicad6");
  const { exitCode, stdout } = await runBinary(["netlist", "--repo", repo, "--json"]);
  expect(exitCode).toBe(0);
  const kicad = parseKicadNetlist(await exportNetlist(join(repo, "kicad6.kicad_sch"), { cli }));
  expect(JSON.parse(stdout).nets).toEqual(kicad.nets);
}, 60_000);
