/**
 * Wildcard matching for patterns people write in a repo (`count R* == 4` in SPEC.md): `*` is
 * any run of characters, `?` exactly one, everything else literal, and the whole text must
 * match. A pattern compiled to a regular expression backtracks exponentially on a dozen `*`s
 * against a longer name; this matcher keeps one resume point (the last `*`) and so takes at
 * most (pattern length + 1) × (text length + 1) steps, whatever the input.
 */

/** Counts the matcher's steps, for tests that prove the bound without timing anything. */
export interface GlobSteps {
  steps: number;
}

/** Whether `text` matches `pattern` in full; characters are compared by code point. */
export function globMatch(pattern: string, text: string, counter?: GlobSteps): boolean {
  const p = Array.from(pattern);
  const t = Array.from(text);
  let pi = 0;
  let ti = 0;
  // The last `*` seen, and where in the text its run currently ends.
  let star = -1;
  let resume = 0;
  while (ti < t.length) {
    if (counter) counter.steps++;
    if (pi < p.length && (p[pi] === "?" || (p[pi] !== "*" && p[pi] === t[ti]))) {
      pi++;
      ti++;
    } else if (pi < p.length && p[pi] === "*") {
      star = pi++;
      resume = ti;
    } else if (star >= 0) {
      // Let the last `*` take one more character and retry what follows it.
      pi = star + 1;
      ti = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === "*") pi++;
  return pi === p.length;
}
