/**
 * Finishing one added part on a real board — placing it, routing it and refilling the zones its
 * copper touches with KiCad's filler — against one `kicad-cli pcb drc` of the same board, side
 * by side. Target: ≤ 0.25× kicad-cli's time.
 *
 * The added part is simulated on a copy of the board: a two-pad capacitor that has a ground
 * pad loses its tracks and vias, is moved next to its neighbour by `place_footprint`'s
 * placement, then routed and refilled as a run does (`kicad/board/route/finish.ts`). Each round
 * starts from the same stripped board.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { footprintItems } from "../src/kicad/board/clearance/items.ts";
import { BoardRules } from "../src/kicad/board/clearance/rules.ts";
import { finishAdded } from "../src/kicad/board/route/finish.ts";
import { Board } from "../src/kicad/board/view.ts";
import { findKicadCli, runDrc } from "../src/kicad/cli/kicad-cli.ts";
import { child, children, num, printSexprBytes, removeChild } from "../src/kicad/sexpr/index.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const BOARDS = [
  { name: "vme-wren", file: "/usr/share/kicad/demos/vme-wren/vme-wren.kicad_pcb" },
  { name: "glasgow-revc3", file: join(import.meta.dir, "../../shared/corpus/glasgow-revc3/hardware/boards/glasgow/glasgow.kicad_pcb") },
];

/** A copy of the board (with its project and rules) where one grounded two-pad capacitor has lost its copper; returns it and the part. */
function strippedCopy(file: string): { path: string; ref: string } {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-bench-finish-"));
  const stem = basename(file, ".kicad_pcb");
  for (const ext of [".kicad_pro", ".kicad_dru"]) if (existsSync(join(dirname(file), stem + ext))) copyFileSync(join(dirname(file), stem + ext), join(dir, stem + ext));
  const board = Board.parse(readFileSync(file), file);
  const part = board.footprints().find((f) => /^C\d+$/.test(f.ref) && f.pads.length === 2 && f.pads.some((p) => /GND/i.test(p.net?.name ?? "")) && f.pads.every((p) => p.net?.name));
  if (!part) throw new Error(`no grounded two-pad capacitor on ${file}`);
  const pads = footprintItems(part.node, ["F.Cu", "B.Cu"]).filter((i) => i.kind === "pad");
  const onPad = (x: number, y: number) => pads.some((p) => x >= p.box.minX && x <= p.box.maxX && y >= p.box.minY && y <= p.box.maxY);
  for (const item of [...children(board.root, "segment"), ...children(board.root, "via")]) {
    const ends = ["start", "end", "at"].flatMap((k) => (child(item, k) ? [child(item, k)!] : []));
    if (ends.some((n) => onPad(num(n, 1)!, num(n, 2)!))) removeChild(board.root, item);
  }
  const path = join(dir, `${stem}.kicad_pcb`);
  writeFileSync(path, printSexprBytes(board.doc));
  return { path, ref: part.ref };
}

export async function benchBoardFinish(): Promise<void> {
  const cli = await findKicadCli();
  for (const { name, file } of BOARDS) {
    if (!existsSync(file)) throw new Error(`${file} is missing (scripts/setup.sh --test installs the demos; the corpus is ../shared/corpus)`);
    const { path, ref } = strippedCopy(file);
    const source = readFileSync(path);
    const rules = BoardRules.load(path.replace(/\.kicad_pcb$/, ".kicad_pro"), null);
    let summary = "";
    const finish = async () => {
      const board = Board.parse(source, path);
      const done = await finishAdded(board, path, rules, [ref]);
      summary = done.outcomes.map((o) => `${o.connected.map((c) => `${c.pad}:${c.how}`).join(" ")}${o.left.length ? ` left ${o.left.map((l) => l.reason).join("; ")}` : ""}`).join("");
      return printSexprBytes(board.doc);
    };
    report(`board finish on ${name} (${(source.length / 1e6).toFixed(1)} MB): route and refill ${ref} vs kicad-cli ${cli.version.raw} pcb drc`);
    const result = await compare({ finish, "kicad-cli pcb drc": () => runDrc(path, { cli, timeoutMs: 900_000 }) }, 1);
    const native = result.finish!.median;
    const drc = result["kicad-cli pcb drc"]!.median;
    report(`  ${summary}; route + refill ${ms(native)}, kicad-cli pcb drc ${ms(drc)}  ${ratio(native / drc, { max: 0.25 })}`);
  }
}

if (import.meta.main) await benchBoardFinish();
