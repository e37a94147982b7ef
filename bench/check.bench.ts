/**
 * `copperhead check` against what it replaces: kicad-cli ERC then DRC (with schematic parity),
 * run one after the other on the same project. Whole processes on both sides, and the same
 * work on both sides: the raw runs get a fresh config home seeded with KiCad's template library
 * tables, as copperhead's do — without a symbol table kicad-cli skips the library checks
 * (and, on a fresh machine, reports every symbol's library missing), which is faster but not
 * the same check. The cold check clears the repo's result cache each round.
 * Targets: cold check ≤ 0.75× (ERC and DRC run concurrently), cached check ≤ 0.05×.
 * Then the largest generated boards, to show how DRC time grows with size.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findKicadCli } from "../src/kicad/kicad-cli.ts";
import { generateBigBoard } from "./lib/big-board.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const BINARY = "dist/copperhead";

async function run(cmd: string[], env?: Record<string, string>): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "ignore", env: { ...process.env, ...env } });
  await proc.exited;
}

export async function benchCheck(): Promise<void> {
  const cli = await findKicadCli();
  const repo = join(mkdtempSync(join(tmpdir(), "copperhead-bench-check-")), "usb-led");
  cpSync("fixtures/usb-led", repo, { recursive: true, filter: (src) => !src.includes(".copperhead") });
  try {
    const out = join(repo, "..", "out.json");
    const seededHome = () => {
      const home = mkdtempSync(join(tmpdir(), "copperhead-bench-home-"));
      mkdirSync(join(home, `${cli.version.major}.0`));
      for (const table of ["sym-lib-table", "fp-lib-table"]) copyFileSync(join(cli.shareDir!, "template", table), join(home, `${cli.version.major}.0`, table));
      return home;
    };
    const raw = async () => {
      for (const args of [
        ["sch", "erc", "--format", "json", "-o", out, join(repo, "usb-led.kicad_sch")],
        ["pcb", "drc", "--schematic-parity", "--format", "json", "-o", out, join(repo, "usb-led.kicad_pcb")],
      ]) {
        const home = seededHome();
        await run([cli.path, ...args], { KICAD_CONFIG_HOME: home });
        rmSync(home, { recursive: true, force: true });
      }
    };
    const check = () => run([BINARY, "check", "--json", "--repo", repo]);
    const cold = await compare({
      "kicad-cli erc+drc": raw,
      "copperhead check (cold)": async () => {
        rmSync(join(repo, ".copperhead"), { recursive: true, force: true });
        await check();
      },
    });
    await check();
    const warm = await compare({ "kicad-cli erc+drc": raw, "copperhead check (cached)": check });
    const base = cold["kicad-cli erc+drc"]!.median;
    report(`check on usb-led: raw sequential kicad-cli ERC + DRC (same library tables) ${ms(base)}`);
    report(`  cold check   ${ms(cold["copperhead check (cold)"]!.median).padStart(8)}  ${ratio(cold["copperhead check (cold)"]!.median / base, { max: 0.75 })}`);
    const warmBase = warm["kicad-cli erc+drc"]!.median;
    report(`  cached check ${ms(warm["copperhead check (cached)"]!.median).padStart(8)}  ${ratio(warm["copperhead check (cached)"]!.median / warmBase, { max: 0.05 })}`);

    report("check on generated boards (DRC only; growth with size):");
    for (const tiles of [1, 16, 64, 256]) {
      const board = generateBigBoard(tiles);
      const started = performance.now();
      await run([cli.path, "pcb", "drc", "--format", "json", "-o", join(board.path, "..", "drc.json"), board.path]);
      const drc = performance.now() - started;
      report(`  ${String(board.footprints).padStart(5)} footprints ${(board.bytes / 1e6).toFixed(1).padStart(5)} MB  kicad-cli drc ${ms(drc).padStart(9)}  ${(drc / board.footprints).toFixed(2)} ms/footprint`);
      rmSync(join(board.path, ".."), { recursive: true, force: true });
    }
  } finally {
    rmSync(join(repo, ".."), { recursive: true, force: true });
  }
}

if (import.meta.main) await benchCheck();
