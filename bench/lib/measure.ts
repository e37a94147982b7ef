/**
 * Side-by-side timing. Absolute times on shared machines are noise, so every benchmark runs
 * its contenders interleaved in one process and reports ratios of medians.
 */

export interface Sample {
  name: string;
  /** Median wall time in milliseconds. */
  median: number;
  runs: number[];
}

/**
 * Runs each contender `rounds` times, interleaved, after one warm-up run each. A full garbage
 * collection precedes every timed run so no contender pays for the garbage of the one before.
 */
export async function compare(
  contenders: Record<string, () => unknown | Promise<unknown>>,
  rounds = 5,
): Promise<Record<string, Sample>> {
  const names = Object.keys(contenders);
  const runs: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) await contenders[name]!();
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      Bun.gc(true);
      const start = performance.now();
      await contenders[name]!();
      runs[name]!.push(performance.now() - start);
    }
  }
  return Object.fromEntries(names.map((name) => [name, { name, median: median(runs[name]!), runs: runs[name]! }]));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Prints one result line to stderr-free stdout: benchmarks are tools, their output is data. */
export function report(line: string): void {
  console.log(line);
}

export function ms(value: number): string {
  return `${value.toFixed(value < 10 ? 2 : 0)} ms`;
}

export function ratio(value: number, target?: { max?: number; min?: number }): string {
  const met =
    target === undefined
      ? ""
      : (target.max !== undefined ? value <= target.max : value >= target.min!)
        ? "  (target met)"
        : "  (TARGET MISSED)";
  return `${value.toFixed(3)}×${met}`;
}
