/**
 * Board sync on a generated board of ≥ 1,000 footprints after 50 symbol changes, against
 * `kicad-cli pcb drc` of the same board. Target: ≤ 0.5× kicad-cli's time.
 *
 * The board tiles the routed usb-led fixture (bench/lib/big-board.ts). The schematic side is
 * tiled the same way at the model level: the real usb-led schematic is loaded and netlisted,
 * then its components and nets are repeated per tile under the tile's references, net names
 * and footprint paths. Planning and applying then run the real code on a design whose every
 * footprint, field and pad is compared — 40 values, 5 footprints and 5 net names changed.
 * Loading and netlisting a schematic of that size is the netlist benchmark's business; here it
 * would only add a constant both sides of the comparison do not share.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Board } from "../src/kicad/board/model.ts";
import { applyBoardSync, planBoardSync, type BoardSyncInputs } from "../src/kicad/board/sync/sync-board.ts";
import { listComponents, type Component } from "../src/kicad/netlist/components.ts";
import { findKicadCli, runDrc } from "../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../src/kicad/library/libraries.ts";
import { buildNetlist, type Netlist } from "../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../src/kicad/schematic/model/hierarchy.ts";
import { printSexpr } from "../src/kicad/sexpr/index.ts";
import { generateBigBoard, retileRef } from "./lib/big-board.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const FIXTURE = join(import.meta.dir, "../fixtures/usb-led");
const TILES = 112; // 9 footprints a tile: 1,008 footprints

/** The usb-led design repeated once per board tile, with `changes` symbol edits applied. */
function tiledDesign(board: Board, tiles: number): Omit<BoardSyncInputs, "board" | "libraries"> {
  const schematic = loadSchematicProject(join(FIXTURE, "usb-led.kicad_sch"));
  const components = listComponents(schematic);
  const netlist = buildNetlist(schematic);
  const paths = new Map(board.footprints().map((f) => [f.ref, f.path ?? ""]));
  const tiled: Component[] = [];
  const nets: Netlist["nets"] = [];
  for (let t = 0; t < tiles; t++) {
    for (const c of components) {
      const ref = retileRef(c.ref, t);
      tiled.push({ ...c, ref, fields: { ...c.fields, Reference: ref }, symbolPath: paths.get(ref)! });
    }
    for (const net of netlist.nets) {
      nets.push({ name: `${net.name}_T${t}`, nodes: net.nodes.map((n) => ({ ...n, ref: retileRef(n.ref, t) })) });
    }
  }
  // 50 symbol changes spread over the board: values, footprints and net names.
  const resistors = tiled.filter((c) => c.ref.startsWith("R"));
  for (let i = 0; i < 40; i++) resistors[i * 7]!.value = `${i + 1}k`;
  for (let i = 0; i < 5; i++) resistors[300 - i * 11]!.footprint = "Resistor_SMD:R_0805_2012Metric";
  const ledNets = nets.filter((n) => n.name.startsWith("/LED_A_"));
  for (let i = 0; i < 5; i++) ledNets[i * 20]!.name = ledNets[i * 20]!.name.replace("/LED_A_", "/LED_ANODE_");
  return { schematic, components: tiled, netlist: { nets } };
}

export async function benchBoardSync(): Promise<void> {
  const cli = await findKicadCli();
  const big = generateBigBoard(TILES, "sync");
  const source = readFileSync(big.path, "utf8");
  const libraries = await openLibraries(FIXTURE);
  const design = tiledDesign(Board.parse(source, big.path), TILES);

  const sync = () => {
    const board = Board.parse(source, big.path);
    const plan = planBoardSync({ ...design, board, libraries });
    applyBoardSync(board, plan, libraries);
    return { plan, text: printSexpr(board.doc) };
  };
  const { plan } = sync();
  const changed = plan.updated.length + plan.renets.length;
  if (plan.updated.length !== 45 || plan.renets.length !== 5 || plan.added.length || plan.removed.length) {
    throw new Error(
      `unexpected plan: ${plan.updated.length} updated, ${plan.renets.length} renets, ${plan.added.length} added, ${plan.removed.length} removed`,
    );
  }
  report(
    `board sync: ${big.footprints} footprints (${(big.bytes / 1e6).toFixed(1)} MB), ${changed} changes, native vs kicad-cli ${cli.version.raw} pcb drc`,
  );
  const result = await compare(
    {
      "board sync": sync,
      "kicad-cli pcb drc": () => runDrc(big.path, { cli, timeoutMs: 600_000 }),
    },
    3,
  );
  const native = result["board sync"]!.median;
  const drc = result["kicad-cli pcb drc"]!.median;
  report(
    `  parse + plan + apply + print ${ms(native)}, kicad-cli pcb drc ${ms(drc)}  ${ratio(native / drc, { max: 0.5 })}`,
  );
  report(`  (board in ${dirname(big.path)})`);
}

if (import.meta.main) await benchBoardSync();
