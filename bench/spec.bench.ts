/**
 * Parsing docs/SPEC.md's Requirements section must be linear in its size: a spec twice as
 * long takes about twice as long (it was quadratic: 100,000 requirements made `check` take
 * 145 s). Measured as the ratio of doubling sizes up to the requirement cap, side by side in
 * one run, plus the time a spec of 100,000 requirements (ten times the cap) takes to be
 * refused, relative to parsing one at the cap: linear in the file, it stays near 10×, where
 * the quadratic parser took 100×.
 * Targets: each doubling ≤ 2.5×; 100,000 requirements refused in ≤ 12× the cap's parse.
 */
import { MAX_REQUIREMENTS, parseRequirements } from "../src/spec/requirements.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

/** `n` requirements with a rule each, every tenth id repeated (duplicates are looked up too). */
function spec(n: number): string {
  const lines = ["# Spec", "", "## Requirements", ""];
  for (let i = 0; i < n; i++)
    lines.push(`- REQ-GEN-${i % 10 === 9 ? i - 1 : i}: generated requirement ${i}`, "  - check: net VBUS exists");
  return `${lines.join("\n")}\n`;
}

export async function benchSpec(): Promise<void> {
  const sizes = [MAX_REQUIREMENTS / 4, MAX_REQUIREMENTS / 2, MAX_REQUIREMENTS];
  const texts = new Map(sizes.map((n) => [n, spec(n)]));
  const huge = spec(100_000);
  const refuse = () => {
    try {
      parseRequirements(huge, "docs/SPEC.md");
    } catch {
      return;
    }
    throw new Error("a spec of 100,000 requirements parsed; it must be refused");
  };
  const samples = await compare(
    {
      ...Object.fromEntries(sizes.map((n) => [`${n}`, () => parseRequirements(texts.get(n)!, "docs/SPEC.md")])),
      refuse,
    },
    9,
  );
  report(
    `SPEC.md requirements parsing (one rule each): ${sizes.map((n) => `${n} in ${ms(samples[`${n}`]!.median)}`).join(", ")}`,
  );
  for (let i = 1; i < sizes.length; i++) {
    const grow = samples[`${sizes[i]}`]!.median / samples[`${sizes[i - 1]}`]!.median;
    report(`  ${sizes[i - 1]} → ${sizes[i]} requirements  ${ratio(grow, { max: 2.5 })}`);
  }
  report(
    `  100000 requirements refused (input_too_large) vs ${MAX_REQUIREMENTS} parsed  ${ratio(samples.refuse!.median / samples[`${MAX_REQUIREMENTS}`]!.median, { max: 12 })}`,
  );
}
