/**
 * Native netlist (load + connectivity + naming) against `kicad-cli sch export netlist` on every
 * fixture project. Target: ≤ 0.25× kicad-cli's time.
 */
import { existsSync } from "node:fs";
import { exportNetlist, findKicadCli } from "../src/kicad/kicad-cli.ts";
import { buildNetlist } from "../src/kicad/netlist.ts";
import { loadSchematicProject } from "../src/kicad/schematic.ts";
import { compare, median, ms, ratio, report } from "./lib/measure.ts";

export async function benchNetlist(): Promise<void> {
  const cli = await findKicadCli();
  const roots = [...new Bun.Glob("fixtures/**/*.kicad_pro").scanSync(".")]
    .sort()
    .map((pro) => pro.replace(/\.kicad_pro$/, ".kicad_sch"))
    .filter(existsSync);
  report(`netlist: ${roots.length} fixture projects, native vs kicad-cli ${cli.version.raw}`);
  const ratios: number[] = [];
  for (const root of roots) {
    const result = await compare({
      native: () => buildNetlist(loadSchematicProject(root)),
      "kicad-cli": () => exportNetlist(root, { cli }),
    });
    const r = result.native!.median / result["kicad-cli"]!.median;
    ratios.push(r);
    report(`  ${root.padEnd(52)} native ${ms(result.native!.median).padStart(9)}  kicad-cli ${ms(result["kicad-cli"]!.median).padStart(7)}  ${ratio(r)}`);
  }
  report(`  median ratio native/kicad-cli: ${ratio(median(ratios), { max: 0.25 })}, worst ${ratio(Math.max(...ratios), { max: 0.25 })}`);

  // Whole processes too, start-up included: what a user waits for at the prompt.
  if (!existsSync(BINARY)) {
    report("  (build dist/copperhead to compare whole processes)");
    return;
  }
  const root = "fixtures/usb-led/usb-led.kicad_sch";
  const processes = await compare({
    copperhead: () => Bun.spawn([BINARY, "netlist", "--json", "--repo", "fixtures/usb-led"], { stdout: "ignore", stderr: "ignore" }).exited,
    "kicad-cli": () => exportNetlist(root, { cli }),
  });
  const r = processes.copperhead!.median / processes["kicad-cli"]!.median;
  report(`  whole process on usb-led: copperhead ${ms(processes.copperhead!.median)}, kicad-cli ${ms(processes["kicad-cli"]!.median)}  ${ratio(r, { max: 0.25 })}`);
}

const BINARY = "dist/copperhead";

if (import.meta.main) await benchNetlist();
