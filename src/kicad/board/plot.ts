/**
 * A board plotted as a reviewer or a model wants to see it: the chosen layers by kicad-cli,
 * with copper pours left out — the plot is of a copy without zone fills, beside the output —
 * because a filled plane covers every track and pad beneath it and leaves nothing to read.
 */
import { exportBoardSvg, type KicadCli } from "../cli/kicad-cli.ts";
import { child, children, readSexprFile, removeChild, text, writeSexprFile } from "../sexpr/index.ts";
import type { Board } from "./model.ts";

/** Plots `layers` of the board file `pcbPath` into `outFile` without zone fills. */
export async function plotBoardUnfilled(
  pcbPath: string,
  outFile: string,
  cli: KicadCli,
  layers: string[],
): Promise<string> {
  const unfilled = readSexprFile(pcbPath);
  for (const zone of children(unfilled.root, "zone")) {
    for (const fill of [...children(zone, "filled_polygon"), ...children(zone, "fill_segments")])
      removeChild(zone, fill);
  }
  const copy = outFile.replace(/\.svg$/, ".kicad_pcb");
  writeSexprFile(copy, unfilled);
  return exportBoardSvg(copy, outFile, { cli, layers });
}

/** The layer names the board's layer table defines. */
export function boardLayers(board: Board): Set<string> {
  const table = child(board.root, "layers");
  return new Set((table ? table.items : []).flatMap((entry) => (entry.type === "list" ? [text(entry, 1) ?? ""] : [])));
}
