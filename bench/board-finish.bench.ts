/**
 * Finishing one added part on a real board — placing it, routing it and refilling the zones its
 * copper touches with KiCad's filler — against one `kicad-cli pcb drc` of the same board, side
 * by side. Target: ≤ 0.25× kicad-cli's time for each.
 *
 * - Add a part: what a run's board sync does for a new 0603 capacitor next to the board's main
 *   IC, from the file: parse, index, place (`placeAdditions`), write it in (`applyBoardSync`),
 *   route on the same index and refill (`kicad/board/route/connect-added.ts`).
 * - Route and refill a designer's part: a grounded two-pad capacitor of the board loses its
 *   tracks and vias on a copy, and is routed and refilled where it stands: a part whose pads do
 *   route, where the new one next to a dense IC may not (glasgow's PLL pins are boxed in).
 * - Move the added part: what `place_footprint` does in a run that added it, through the run's
 *   `BoardEditor`: its tracks and vias lifted, the part placed beside that designer's capacitor,
 *   routed there, and the zones refilled where it was and where it is. The add is made on a
 *   fresh editor before each timed move and is not counted. As in a run, the editor starts
 *   KiCad's Python for the refill as the move begins (`kicad/cli/python-spare.ts`).
 *
 * Each round starts from the same bytes.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { footprintItems } from "../src/kicad/board/clearance/items.ts";
import { BoardRules } from "../src/kicad/board/clearance/rules.ts";
import { BoardObstacles } from "../src/kicad/board/clearance/obstacles.ts";
import { indexForRouting, placeAdditions } from "../src/kicad/board/placement.ts";
import { connectAdded, type AddedConnections } from "../src/kicad/board/route/connect-added.ts";
import { applyBoardSync } from "../src/kicad/board/sync/sync-board.ts";
import { Board } from "../src/kicad/board/model.ts";
import { BoardEditor } from "../src/kicad/board/editor.ts";
import { findKicadCli, runDrc } from "../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../src/kicad/library/libraries.ts";
import { child, children, num, printSexprBytes, removeChild } from "../src/kicad/sexpr/index.ts";
import { additionPlan, decouplingNets, mainIc } from "../test/support/board-additions.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const BOARDS = [
  { name: "vme-wren", file: "/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb" },
  {
    name: "glasgow-revc3",
    file: join(import.meta.dir, "../../shared/corpus/glasgow-revc3/hardware/boards/glasgow/glasgow.kicad_pcb"),
  },
];

/** A copy of the board with its project and rules beside it, in a temp folder. */
function projectCopy(file: string, board: Board): string {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-bench-finish-"));
  const stem = basename(file, ".kicad_pcb");
  for (const ext of [".kicad_pro", ".kicad_dru"])
    if (existsSync(join(dirname(file), stem + ext)))
      copyFileSync(join(dirname(file), stem + ext), join(dir, stem + ext));
  const path = join(dir, `${stem}.kicad_pcb`);
  writeFileSync(path, printSexprBytes(board.doc));
  return path;
}

/** `board` with one grounded two-pad capacitor stripped of its tracks and vias; returns its reference. */
function stripCapacitor(board: Board, file: string): string {
  const part = board
    .footprints()
    .find(
      (f) =>
        /^C\d+$/.test(f.ref) &&
        f.pads.length === 2 &&
        f.pads.some((p) => /GND/i.test(p.net?.name ?? "")) &&
        f.pads.every((p) => p.net?.name),
    );
  if (!part) throw new Error(`no grounded two-pad capacitor on ${file}`);
  const pads = footprintItems(part.node, ["F.Cu", "B.Cu"]).filter((i) => i.kind === "pad");
  const onPad = (x: number, y: number) =>
    pads.some((p) => x >= p.box.minX && x <= p.box.maxX && y >= p.box.minY && y <= p.box.maxY);
  for (const item of [...children(board.root, "segment"), ...children(board.root, "via")]) {
    const ends = ["start", "end", "at"].flatMap((k) => (child(item, k) ? [child(item, k)!] : []));
    if (ends.some((n) => onPad(num(n, 1)!, num(n, 2)!))) removeChild(board.root, item);
  }
  return part.ref;
}

/** "1:routed 2:pour" and what was left, for the report. */
function outcome(done: AddedConnections): string {
  return done.outcomes
    .map(
      (o) =>
        `${o.connected.map((c) => `${c.pad}:${c.how}`).join(" ")}${o.left.length ? ` left ${o.left.map((l) => `${l.pad}: ${l.reason}`).join("; ")}` : ""}`,
    )
    .join("");
}

export async function benchBoardFinish(): Promise<void> {
  const cli = await findKicadCli();
  for (const { name, file } of BOARDS) {
    if (!existsSync(file))
      throw new Error(
        `${file} is missing (scripts/setup.sh --test installs the demos; the corpus is ../shared/corpus)`,
      );
    const original = readFileSync(file);
    const path = projectCopy(file, Board.parse(original, file));
    const stripped = Board.parse(original, file);
    const ref = stripCapacitor(stripped, file);
    const strippedBytes = printSexprBytes(stripped.doc);
    const libraries = await openLibraries(dirname(file));
    const projectFile = path.replace(/\.kicad_pcb$/, ".kicad_pro");
    const rules = BoardRules.load(projectFile, null);
    const summary = { added: "", routed: "", moved: "" };
    // What the schematic side hands the board sync: the part, its nets and its anchor.
    const ic = mainIc(stripped);
    const nets = decouplingNets(stripped, ic);
    const addPart = async () => {
      const board = Board.parse(original, path);
      const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", nets);
      const obstacles = new BoardObstacles(board, rules);
      const staged = placeAdditions(board, plan, libraries, () => ic.ref, rules, obstacles);
      if (staged.length > 0) throw new Error(`${name}: the capacitor was staged: ${staged[0]!.reason}`);
      const written = applyBoardSync(board, plan, libraries);
      const done = await connectAdded(board, path, rules, ["C900"], {
        obstacles: indexForRouting(obstacles, written, plan),
      });
      const { at, side } = plan.added[0]!;
      summary.added = `C900 next to ${ic.ref} at ${at.x}, ${at.y} on the ${side}: ${outcome(done)}`;
      return printSexprBytes(board.doc);
    };
    const routeAgain = async () => {
      const board = Board.parse(strippedBytes, path);
      summary.routed = `${ref}: ${outcome(await connectAdded(board, path, rules, [ref]))}`;
      return printSexprBytes(board.doc);
    };
    /** A run's editor on `path` holding the added part, routed as the run's own copper; the move is timed. */
    const movePart = async () => {
      writeFileSync(path, original);
      const editor = BoardEditor.open(path, { within: dirname(path), projectFile });
      const plan = additionPlan(editor.board, "C900", "Capacitor_SMD:C_0603_1608Metric", nets);
      editor.change((board) => {
        placeAdditions(board, plan, libraries, () => ic.ref, rules);
        applyBoardSync(board, plan, libraries);
      });
      await editor.connect(["C900"]);
      const start = performance.now();
      const { spot, vacated, rerouted } = editor.place("C900", { near: ref });
      const done = await editor.connect(["C900", ...rerouted], { vacated });
      summary.moved = `C900 next to ${ref} at ${spot.x}, ${spot.y} on the ${spot.side}: ${outcome(done)}`;
      return performance.now() - start;
    };
    report(
      `board finish on ${name} (${(original.length / 1e6).toFixed(1)} MB) vs kicad-cli ${cli.version.raw} pcb drc`,
    );
    let moved = 0;
    const result = await compare(
      {
        addPart,
        routeAgain,
        movePart: async () => (moved = await movePart()),
        "kicad-cli pcb drc": () => runDrc(path, { cli, timeoutMs: 900_000 }),
      },
      1,
    );
    const drc = result["kicad-cli pcb drc"]!.median;
    report(
      `  add a part (parse, place, route, refill) ${ms(result.addPart!.median)}  ${ratio(result.addPart!.median / drc, { max: 0.25 })}  ${summary.added}`,
    );
    report(
      `  route + refill a designer's part ${ms(result.routeAgain!.median)}  ${ratio(result.routeAgain!.median / drc, { max: 0.25 })}  ${summary.routed}`,
    );
    report(
      `  move the added part (lift, place, route, refill) ${ms(moved)}  ${ratio(moved / drc, { max: 0.25 })}  ${summary.moved}`,
    );
    report(`  kicad-cli pcb drc ${ms(drc)}`);
  }
}

if (import.meta.main) await benchBoardFinish();
