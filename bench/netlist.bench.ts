/**
 * Native netlist (load + connectivity + naming) against `kicad-cli sch export netlist`, side by
 * side in one run:
 *
 * - every fixture project (target: median ≤ 0.25× kicad-cli's time);
 * - KiCad's vme-wren demo, 40 sheets and 1,800 nets (target ≤ 0.1×), with the netlist checked
 *   equal to kicad-cli's before it is timed;
 * - growth: 1, 2 and 4 copies of vme-wren's whole hierarchy (every file copied, so nothing is
 *   shared between copies) under one root, so the design doubles each step; the time should
 *   double too (linear), for both tools;
 * - whole processes, start-up included, on the usb-led fixture.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportNetlist, findKicadCli, type KicadCli } from "../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../src/kicad/netlist/kicad-netlist.ts";
import { buildNetlist } from "../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../src/kicad/schematic/model/hierarchy.ts";
import { childText, parseSexpr } from "../src/kicad/sexpr/index.ts";
import { demosDir } from "../test/support/corpora.ts";
import { netlistDiff } from "../test/support/netlist.ts";
import { compare, median, ms, ratio, report } from "./lib/measure.ts";

const native = (root: string) => () => buildNetlist(loadSchematicProject(root));

export async function benchNetlist(): Promise<void> {
  const cli = await findKicadCli();
  await fixtures(cli);
  await vmeWren(cli);
  await processes(cli);
}

async function fixtures(cli: KicadCli): Promise<void> {
  const roots = [...new Bun.Glob("fixtures/**/*.kicad_pro").scanSync(".")]
    .sort()
    .map((pro) => pro.replace(/\.kicad_pro$/, ".kicad_sch"))
    .filter(existsSync);
  report(`netlist: ${roots.length} fixture projects, native vs kicad-cli ${cli.version.raw}`);
  const ratios: number[] = [];
  for (const root of roots) {
    const result = await compare({ native: native(root), "kicad-cli": () => exportNetlist(root, { cli }) });
    const r = result.native!.median / result["kicad-cli"]!.median;
    ratios.push(r);
    report(
      `  ${root.padEnd(52)} native ${ms(result.native!.median).padStart(9)}  kicad-cli ${ms(result["kicad-cli"]!.median).padStart(7)}  ${ratio(r)}`,
    );
  }
  report(
    `  median ratio native/kicad-cli: ${ratio(median(ratios), { max: 0.25 })}, worst ${ratio(Math.max(...ratios), { max: 0.25 })}`,
  );
}

async function vmeWren(cli: KicadCli): Promise<void> {
  const dir = join(tmpdir(), `copperhead-bench-vme-wren-${process.pid}`);
  // kicad-cli may write next to the design; the demos are read-only, so work on a copy.
  cpSync(join(demosDir(), "vme-wren"), dir, { recursive: true });
  try {
    const root = join(dir, "vme-wren.kicad_sch");
    const diff = netlistDiff(
      parseKicadNetlist(await exportNetlist(root, { cli, timeoutMs: 600_000 }), root),
      native(root)(),
    );
    if (diff.length > 0)
      throw new Error(`vme-wren: the native netlist differs from kicad-cli's:\n  ${diff.slice(0, 20).join("\n  ")}`);
    const result = await compare(
      { native: native(root), "kicad-cli": () => exportNetlist(root, { cli, timeoutMs: 600_000 }) },
      3,
    );
    const r = result.native!.median / result["kicad-cli"]!.median;
    report(
      `netlist: vme-wren (equal to kicad-cli's) native ${ms(result.native!.median)}, kicad-cli ${ms(result["kicad-cli"]!.median)}  ${ratio(r, { max: 0.1 })}`,
    );

    // Growth: 1, 2 and 4 separate copies of the hierarchy under a new root.
    const times: { copies: number; native: number; kicad: number }[] = [];
    const sheets = [...new Bun.Glob("*.kicad_sch").scanSync(dir)].filter((f) => !f.startsWith("grown-"));
    for (let n = 1; n <= 4; n++) copyHierarchy(dir, sheets, `c${n}-`);
    for (const copies of [1, 2, 4]) {
      const grown = join(dir, `grown-${copies}.kicad_sch`);
      writeFileSync(grown, replicatedRoot(root, copies));
      writeFileSync(grown.replace(/\.kicad_sch$/, ".kicad_pro"), readFileSync(join(dir, "vme-wren.kicad_pro")));
      const step = await compare(
        { native: native(grown), "kicad-cli": () => exportNetlist(grown, { cli, timeoutMs: 600_000 }) },
        3,
      );
      times.push({ copies, native: step.native!.median, kicad: step["kicad-cli"]!.median });
    }
    const growth = (t: number, base: number) => (t / base).toFixed(2);
    for (const t of times) {
      report(
        `  ${t.copies}× vme-wren: native ${ms(t.native).padStart(8)} (${growth(t.native, times[0]!.native)}×), kicad-cli ${ms(t.kicad).padStart(8)} (${growth(t.kicad, times[0]!.kicad)}×)  ${ratio(t.native / t.kicad, { max: 0.1 })}`,
      );
    }
    const last = times[times.length - 1]!;
    report(
      `  growth 1× → ${last.copies}×: native ${ratio(last.native / times[0]!.native, { max: last.copies * 1.25 })} (linear is ${last.copies}×)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Copies every sheet file of the hierarchy in `dir` as `<prefix><name>`, its sheets' Sheetfile
 * properties pointing at the prefixed copies, so each copy is a hierarchy of its own files.
 */
function copyHierarchy(dir: string, sheets: string[], prefix: string): void {
  for (const name of sheets) {
    const text = readFileSync(join(dir, name), "latin1").replace(
      /\(property "Sheetfile" "([^"]+)"/g,
      (_, file: string) => `(property "Sheetfile" "${prefix}${file}"`,
    );
    writeFileSync(join(dir, prefix + name), text, "latin1");
  }
}

/** A root schematic placing copies 1…`copies` of the hierarchy (see `copyHierarchy`) as sheets. */
function replicatedRoot(root: string, copies: number): string {
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  const version = childText(parseSexpr(readFileSync(root)).root, "version");
  const sheets = Array.from({ length: copies }, (_, i) => {
    const at = 25.4 + i * 30;
    return `(sheet (at ${at} 25.4) (size 25 25) (uuid "${uuid(i + 2)}")
  (property "Sheetname" "copy${i + 1}" (at ${at} 24.7 0) (effects (font (size 1.27 1.27))))
  (property "Sheetfile" "c${i + 1}-vme-wren.kicad_sch" (at ${at} 51 0) (effects (font (size 1.27 1.27))))
  (instances (project "grown" (path "/${uuid(1)}" (page "${i + 2}")))))`;
  });
  return `(kicad_sch (version ${version}) (generator "eeschema") (uuid "${uuid(1)}") (paper "A4")\n${sheets.join("\n")}\n(sheet_instances (path "/" (page "1"))))\n`;
}

/** Whole processes too, start-up included: what a user waits for at the prompt. */
async function processes(cli: KicadCli): Promise<void> {
  if (!existsSync(BINARY)) {
    report("  (build dist/copperhead to compare whole processes)");
    return;
  }
  const root = "fixtures/usb-led/usb-led.kicad_sch";
  const result = await compare({
    copperhead: () =>
      Bun.spawn([BINARY, "netlist", "--json", "--repo", "fixtures/usb-led"], { stdout: "ignore", stderr: "ignore" })
        .exited,
    "kicad-cli": () => exportNetlist(root, { cli }),
  });
  const r = result.copperhead!.median / result["kicad-cli"]!.median;
  report(
    `  whole process on usb-led: copperhead ${ms(result.copperhead!.median)}, kicad-cli ${ms(result["kicad-cli"]!.median)}  ${ratio(r, { max: 0.25 })}`,
  );
}

const BINARY = "dist/copperhead";

if (import.meta.main) await benchNetlist();
