/**
 * Placing one added part (a 0603 capacitor next to the main IC, as board sync places it) on
 * vme-wren (70 MB, 12 layers) and glasgow-revc3, against one raw `kicad-cli pcb drc` of the same
 * board, side by side. Two placement figures: the whole job from the file (parse, index the
 * obstacles, search), and `place_footprint` on a board the run has indexed already (what each
 * later call costs). Place, route and refill together are measured by board-finish.bench.ts.
 */
import { dirname, join } from "node:path";
import { BoardObstacles } from "../src/kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../src/kicad/board/clearance/rules.ts";
import { placeAdditions, placeFootprint } from "../src/kicad/board/placement.ts";
import { applyBoardSync } from "../src/kicad/board/sync/sync-board.ts";
import { Board } from "../src/kicad/board/model.ts";
import { findKicadCli, runDrc } from "../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../src/kicad/library/libraries.ts";
import { additionPlan, decouplingNets, mainIc } from "../test/support/board-additions.ts";
import { corpusProjects } from "../test/support/corpora.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const BOARDS = [
  { name: "vme-wren", board: "/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb" },
  { name: "glasgow-revc3", board: corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!.board! },
];

export async function benchPlacement(): Promise<void> {
  const cli = await findKicadCli();
  for (const { name, board: file } of BOARDS) {
    const libraries = await openLibraries(dirname(file));
    const rules = BoardRules.load(file.replace(/\.kicad_pcb$/, ".kicad_pro"), null);
    const place = () => {
      const board = Board.load(file);
      const ic = mainIc(board);
      const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", decouplingNets(board, ic));
      if (placeAdditions(board, plan, libraries, () => ic.ref, rules).length)
        throw new Error(`${name}: the capacitor was staged`);
      return { board, plan, ic };
    };
    // A board with the part on it and its index built, for the per-call figure.
    const { board, plan, ic } = place();
    applyBoardSync(board, plan, libraries);
    const obstacles = new BoardObstacles(board, rules);
    report(`placement: ${name}, one 0603 capacitor next to ${ic.ref}, vs kicad-cli ${cli.version.raw} pcb drc`);
    const result = await compare(
      {
        "parse + index + place": place,
        place_footprint: () => placeFootprint(board, "C900", { near: ic.ref }, rules, obstacles),
        "kicad-cli pcb drc": () => runDrc(file, { cli, timeoutMs: 900_000 }),
      },
      1,
    );
    const drc = result["kicad-cli pcb drc"]!.median;
    const full = result["parse + index + place"]!.median;
    const call = result.place_footprint!.median;
    report(`  parse + index + place ${ms(full)}  ${ratio(full / drc, { max: 0.25 })}`);
    report(`  place_footprint on the indexed board ${ms(call)}  ${ratio(call / drc, { max: 0.25 })}`);
    report(`  kicad-cli pcb drc ${ms(drc)} (${join(dirname(file))})`);
  }
}

if (import.meta.main) await benchPlacement();
