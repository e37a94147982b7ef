import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runBoardSync } from "../../src/commands/board-sync.ts";
import { runDrc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { renameLedNet, setField } from "../support/usb-led-edits.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

const REPO = resolve(import.meta.dir, "..", "..");

/** Runs the CLI in a child process, with `board` registered (the lead wires it into run.ts). */
function copperhead(...args: string[]) {
  const script = [
    'import { rootCommand, runCli } from "./src/cli/run.ts";',
    'rootCommand.subCommands = { ...rootCommand.subCommands, board: () => import("./src/cli/board.ts").then((m) => m.boardCommand) };',
    "process.exitCode = await runCli(process.argv.slice(1));",
  ].join("\n");
  return Bun.spawnSync(["bun", "-e", script, "--", ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
}

describe("copperhead board sync", () => {
  test("--dry-run reports the plan and writes nothing; the real run writes it", async () => {
    const dir = await copyFixture("usb-led");
    setField(dir, "R1", "Value", "4.7k");
    renameLedNet(dir, "LED_ANODE");
    const before = readFileSync(join(dir, "usb-led.kicad_pcb"), "utf8");

    const dry = await runBoardSync({ repo: dir, dryRun: true });
    expect(dry).toMatchObject({
      schema: "copperhead.board-sync/1",
      board: "usb-led.kicad_pcb",
      dryRun: true,
      written: false,
    });
    expect(dry.updated.map((u) => [u.ref, u.value])).toEqual([["R1", { from: "5.1k", to: "4.7k" }]]);
    expect(dry.renets).toEqual([{ from: "/LED_A", to: "/LED_ANODE", code: 4 }]);
    expect(dry.added).toEqual([]);
    expect(dry.removed).toEqual([]);
    expect(dry.warnings).toEqual([]);
    expect(readFileSync(join(dir, "usb-led.kicad_pcb"), "utf8")).toBe(before);

    const real = await runBoardSync({ repo: dir });
    expect(real.written).toBe(true);
    expect({ ...real, dryRun: true, written: false }).toEqual(dry);
    const drc = await runDrc(join(dir, "usb-led.kicad_pcb"), { cli, schematicParity: true });
    expect(drc.parityChecked).toBe(true);
    expect(drc.report.schematic_parity).toEqual([]);

    const again = await runBoardSync({ repo: dir });
    expect([again.written, again.added, again.updated, again.removed, again.renets]).toEqual([false, [], [], [], []]);
  }, 60_000);

  test("the CLI prints the plan as JSON and a readable summary", async () => {
    const dir = await copyFixture("usb-led");
    setField(dir, "R1", "Value", "4.7k");
    const json = copperhead("board", "sync", "--repo", dir, "--dry-run", "--json");
    expect(json.exitCode).toBe(0);
    const result = JSON.parse(json.stdout.toString());
    expect(result.updated.map((u: { ref: string }) => u.ref)).toEqual(["R1"]);
    expect(result.dryRun).toBe(true);

    const text = copperhead("board", "sync", "--repo", dir);
    expect(text.exitCode).toBe(0);
    expect(text.stdout.toString()).toBe(
      "~ R1  value 5.1k → 4.7k\nusb-led.kicad_pcb: changed 0 added, 1 updated, 0 removed, 0 net change(s)\n",
    );
    expect(readFileSync(join(dir, "usb-led.kicad_pcb"), "utf8")).toContain('(property "Value" "4.7k"');
  }, 60_000);

  test("a missing footprint is a typed error in --json output, exit 3", async () => {
    const dir = await copyFixture("usb-led");
    setField(dir, "R1", "Footprint", "Resistor_SMD:Nope");
    const out = copperhead("board", "sync", "--repo", dir, "--json");
    expect(out.exitCode).toBe(3);
    expect(JSON.parse(out.stdout.toString()).error.code).toBe("footprint_not_found");
  });
});
