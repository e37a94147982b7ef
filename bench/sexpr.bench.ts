/**
 * Parse and print throughput of the lossless engine on a generated board of at least 20 MB,
 * side by side with the `kicadts` parser on the same text.
 * Targets: ≥ 100 MB/s each way, and ≥ 5× faster than kicadts.
 */
import { readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { parseKicadPcb } from "kicadts";
import { parseSexpr, printSexpr, type SDocument } from "../src/kicad/sexpr.ts";
import { generateBigBoard, tilesForBytes } from "./lib/big-board.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

export async function benchSexpr(): Promise<void> {
  const board = generateBigBoard(tilesForBytes(20 * 1024 * 1024));
  try {
    const source = readFileSync(board.path, "utf8");
    const mb = board.bytes / 1e6;
    report(`sexpr: generated board ${mb.toFixed(1)} MB, ${board.footprints} footprints`);

    let doc: SDocument = parseSexpr(source);
    let theirs = parseKicadPcb(source);
    if (printSexpr(doc) !== source) throw new Error("round trip is not byte-identical");

    const parse = await compare({
      copperhead: () => {
        doc = parseSexpr(source);
      },
      kicadts: () => {
        theirs = parseKicadPcb(source);
      },
    });
    const print = await compare({
      copperhead: () => printSexpr(doc),
      kicadts: () => theirs.getString(),
    });
    const ours = { parse: parse.copperhead!.median, print: print.copperhead!.median };
    report(`  parse: copperhead ${ms(ours.parse)} = ${(mb / (ours.parse / 1000)).toFixed(0)} MB/s, kicadts ${ms(parse.kicadts!.median)}`);
    report(`  print: copperhead ${ms(ours.print)} = ${(mb / (print.copperhead!.median / 1000)).toFixed(0)} MB/s, kicadts ${ms(print.kicadts!.median)}`);
    report(`  speed-up over kicadts: parse ${ratio(parse.kicadts!.median / ours.parse, { min: 5 })}, print ${ratio(print.kicadts!.median / ours.print, { min: 5 })}`);
  } finally {
    rmSync(dirname(board.path), { recursive: true, force: true });
  }
}

if (import.meta.main) await benchSexpr();
