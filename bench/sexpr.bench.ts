/**
 * The lossless engine on real and generated boards, in one run:
 *
 * - throughput on KiCad's `vme-wren` demo board (70 MB): parse, print unedited, print after
 *   one edit, print with every node opened; target ≥ 100 MB/s each way;
 * - against the `kicadts` parser on a generated 20 MB board; target ≥ 5× faster;
 * - peak RSS of parsing (in a fresh process: runtime + bytes + tree) as a multiple of the file
 *   size, and how time and memory grow from 5 MB to a 200 MB board; target ≤ 3×.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseKicadPcb } from "kicadts";
import {
  child,
  children,
  parseSexpr,
  printSexprBytes,
  sameBytes,
  setAtom,
  walk,
  type SDocument,
} from "../src/kicad/sexpr/index.ts";
import { generateBigBoard, tilesForBytes } from "./lib/big-board.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";
import { measureParseMemory } from "./lib/parse-memory.ts";

const MB = 1e6;

/** KiCad's vme-wren demo board; the demos come from the kicad-demos package (`scripts/setup.sh --test`). */
function vmeWrenBoard(): string {
  const path = join(process.env.COPPERHEAD_DEMOS_DIR ?? "/usr/share/kicad/demos", "vme-wren", "vme-wren.kicad_pcb");
  if (!existsSync(path))
    throw new Error(
      `${path} is missing: install KiCad's demos (bash scripts/setup.sh --test) or set COPPERHEAD_DEMOS_DIR`,
    );
  return path;
}

const mbps = (bytes: number, millis: number) => `${(bytes / MB / (millis / 1000)).toFixed(0)} MB/s`;

export async function benchSexpr(): Promise<void> {
  const vme = vmeWrenBoard();
  const dir = mkdtempSync(join(tmpdir(), "copperhead-bench-sexpr-"));
  const generated: string[] = [];
  try {
    await throughput(vme);
    const board20 = generateBigBoard(tilesForBytes(20 * MB));
    generated.push(board20.path);
    await againstKicadts(board20.path, board20.footprints);
    const board5 = generateBigBoard(tilesForBytes(5 * MB), "board5");
    generated.push(board5.path);
    await growth([board5.path, board20.path, vme, tripled(vme, dir)]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const path of generated) rmSync(dirname(path), { recursive: true, force: true });
  }
}

async function throughput(path: string): Promise<void> {
  const bytes = readFileSync(path);
  report(`sexpr: vme-wren.kicad_pcb, ${(bytes.length / MB).toFixed(1)} MB`);
  let doc: SDocument = parseSexpr(bytes);
  if (!sameBytes(printSexprBytes(doc), bytes)) throw new Error("round trip is not byte-identical");
  const parse = await compare({ parse: () => (doc = parseSexpr(bytes)) });
  const unedited = await compare({ print: () => printSexprBytes(doc) });

  // One edit deep in the file: the path to it is printed node by node, the rest as byte ranges.
  const edited = parseSexpr(bytes);
  const footprints = children(edited.root, "footprint");
  const at = child(footprints[footprints.length - 1]!, "at")!;
  setAtom(at, 1, Number((at.items[1] as { raw: string }).raw) + 1);
  const oneEdit = await compare({ print: () => printSexprBytes(edited) });

  // Every list and atom made into a node: the most the printer ever walks.
  const opened = parseSexpr(bytes);
  walk(opened.root, () => {});
  const allOpened = await compare({ print: () => printSexprBytes(opened) }, 3);

  const p = parse.parse!.median;
  report(
    `  parse:                     ${ms(p).padStart(8)} = ${mbps(bytes.length, p)}  ${ratio(bytes.length / MB / (p / 1000) / 100, { min: 1 })} of 100 MB/s`,
  );
  const u = unedited.print!.median;
  report(
    `  print, unedited:           ${ms(u).padStart(8)} = ${mbps(bytes.length, u)}  ${ratio(bytes.length / MB / (u / 1000) / 100, { min: 1 })} of 100 MB/s`,
  );
  const e = oneEdit.print!.median;
  report(
    `  print, one edit:           ${ms(e).padStart(8)} = ${mbps(bytes.length, e)}  ${ratio(bytes.length / MB / (e / 1000) / 100, { min: 1 })} of 100 MB/s`,
  );
  const o = allOpened.print!.median;
  report(`  print, every node opened:  ${ms(o).padStart(8)} = ${mbps(bytes.length, o)}`);
}

async function againstKicadts(path: string, footprints: number): Promise<void> {
  const text = readFileSync(path, "utf8");
  const bytes = readFileSync(path);
  report(`sexpr vs kicadts: generated board ${(bytes.length / MB).toFixed(1)} MB, ${footprints} footprints`);
  let doc: SDocument = parseSexpr(bytes);
  let theirs = parseKicadPcb(text);
  const parse = await compare(
    {
      copperhead: () => (doc = parseSexpr(bytes)),
      kicadts: () => (theirs = parseKicadPcb(text)),
    },
    3,
  );
  const print = await compare(
    {
      copperhead: () => printSexprBytes(doc),
      kicadts: () => theirs.getString(),
    },
    3,
  );
  const ours = { parse: parse.copperhead!.median, print: print.copperhead!.median };
  report(
    `  parse: copperhead ${ms(ours.parse)} = ${mbps(bytes.length, ours.parse)}, kicadts ${ms(parse.kicadts!.median)}`,
  );
  report(
    `  print: copperhead ${ms(ours.print)} = ${mbps(bytes.length, ours.print)}, kicadts ${ms(print.kicadts!.median)}`,
  );
  report(
    `  speed-up over kicadts: parse ${ratio(parse.kicadts!.median / ours.parse, { min: 5 })}, print ${ratio(print.kicadts!.median / ours.print, { min: 5 })}`,
  );
}

/** Time (in this process, warm) and peak RSS (a fresh process each) of parsing files of growing size. */
async function growth(files: string[]): Promise<void> {
  report("sexpr growth: parse time and peak RSS of a fresh process parsing the file (runtime, bytes and tree)");
  report(
    `  ${"file".padEnd(28)} ${"size".padStart(9)} ${"parse".padStart(9)} ${"rate".padStart(10)} ${"peak RSS".padStart(9)}  ${"above runtime/size".padEnd(19)} RSS/size`,
  );
  let base = 0;
  for (const file of files) {
    const bytes = readFileSync(file);
    const timing = await compare({ parse: () => parseSexpr(bytes) }, 3);
    const memory = measureParseMemory(file);
    base = memory.baseRss;
    const t = timing.parse!.median;
    const name = file.split("/").pop()!;
    report(
      `  ${name.padEnd(28)} ${`${(bytes.length / MB).toFixed(1)} MB`.padStart(9)} ${ms(t).padStart(9)} ${mbps(bytes.length, t).padStart(10)} ${`${(memory.peakRss / MB).toFixed(0)} MB`.padStart(9)}  ${ratio((memory.peakRss - memory.baseRss) / bytes.length).padEnd(19)} ${ratio(memory.peakRss / bytes.length, bytes.length >= 50 * MB ? { max: 3 } : undefined)}`,
    );
  }
  // A small file's multiple is mostly the runtime itself, so the 3× target is read on the large boards.
  report(
    `  (a bare runtime peaks at ${(base / MB).toFixed(0)} MB before reading anything; the 3× target applies from 50 MB)`,
  );
}

/** A 200 MB board: vme-wren's items three times over, in one root list. */
function tripled(path: string, dir: string): string {
  const bytes = readFileSync(path);
  const open = bytes.indexOf("\n") + 1;
  const close = bytes.lastIndexOf(")");
  const body = bytes.subarray(open, close);
  const out = join(dir, "vme-wren-x3.kicad_pcb");
  writeFileSync(out, Buffer.concat([bytes.subarray(0, open), body, body, body, bytes.subarray(close)]));
  return out;
}

if (import.meta.main) await benchSexpr();
