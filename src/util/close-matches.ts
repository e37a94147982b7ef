/**
 * "Did you mean …" for names an agent or a user typed: references, pins, sheets, lib ids, nets.
 * A typed error that lists the nearest real names lets the caller fix the call in one step
 * instead of listing everything first.
 */

/**
 * Up to `limit` candidates closest to `input`: case-insensitive edit distance; substrings, and
 * names holding every word and number of the input (LED1 → PWR_LED1, LED_ACT1), first.
 */
export function closeMatches(input: string, candidates: Iterable<string>, limit = 5): string[] {
  const want = input.toLowerCase();
  const wantTokens = tokens(want);
  const scored: { name: string; score: number }[] = [];
  const seen = new Set<string>();
  for (const name of candidates) {
    if (seen.has(name)) continue;
    seen.add(name);
    const have = name.toLowerCase();
    const haveTokens = new Set(tokens(have));
    const sameWords = wantTokens.length > 1 && wantTokens.every((t) => haveTokens.has(t));
    const contains = want.length > 0 && (have.includes(want) || want.includes(have));
    const distance = editDistance(want, have);
    const tolerance = Math.max(2, Math.floor(want.length / 3));
    if (!sameWords && !contains && distance > tolerance) continue;
    scored.push({ name, score: sameWords ? distance / 1000 : contains ? distance / 100 : distance });
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.name);
}

/** A `fix` sentence: the close matches when there are any, else (some of) what exists. */
export function suggestion(what: string, input: string, candidates: string[], limit = 12): string {
  const close = closeMatches(input, candidates);
  if (close.length > 0) return `Did you mean ${close.join(", ")}?`;
  if (candidates.length === 0) return `There are no ${what}.`;
  const shown = candidates.slice(0, limit).join(", ");
  return `Available ${what}: ${shown}${candidates.length > limit ? `, … (${candidates.length} in all)` : ""}.`;
}

/** The runs of letters and of digits in a name: `pwr_led1` → pwr, led, 1. */
function tokens(name: string): string[] {
  return name.match(/[a-z]+|\d+/g) ?? [];
}

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
