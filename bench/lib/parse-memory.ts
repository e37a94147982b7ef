/**
 * Run as a child process: reads one file, parses it once, and prints (as JSON) the process's
 * peak resident set size before and after, so a benchmark sees what parsing really costs in
 * memory: the runtime, the file's bytes and the tree, not just the JS heap.
 *
 *   bun bench/lib/parse-memory.ts <file>
 */
import { readFileSync } from "node:fs";
import { parseSexpr } from "../../src/kicad/sexpr/index.ts";

/** Peak resident set size of this process so far, in bytes (Linux: VmHWM). */
function peakRss(): number {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status);
  return kb ? Number(kb[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

export interface ParseMemory {
  bytes: number;
  /** Peak RSS of the bare runtime, before the file is read. */
  baseRss: number;
  /** Peak RSS once the file is read and parsed (the tree kept alive). */
  peakRss: number;
  rootItems: number;
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: bun bench/lib/parse-memory.ts <file>");
  const baseRss = peakRss();
  const doc = parseSexpr(readFileSync(file), { file });
  const result: ParseMemory = {
    bytes: doc.bytes.length,
    baseRss,
    peakRss: peakRss(),
    rootItems: doc.root.items.length,
  };
  console.log(JSON.stringify(result));
}

/** Measures `file` in a fresh `bun` process. */
export function measureParseMemory(file: string): ParseMemory {
  const run = Bun.spawnSync([process.execPath, import.meta.path, file], { stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`parse-memory failed on ${file}: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as ParseMemory;
}
