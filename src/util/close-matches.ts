/**
 * "Did you mean …" for names an agent or a user typed: references, pins, sheets, lib ids, nets.
 * A typed error that lists the nearest real names lets the caller fix the call in one step
 * instead of listing everything first.
 */

/** Up to `limit` candidates closest to `input`: case-insensitive edit distance, substrings first. */
export function closeMatches(input: string, candidates: Iterable<string>, limit = 5): string[] {
  const want = input.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  const seen = new Set<string>();
  for (const name of candidates) {
    if (seen.has(name)) continue;
    seen.add(name);
    const have = name.toLowerCase();
    const contains = want.length > 0 && (have.includes(want) || want.includes(have));
    const distance = editDistance(want, have);
    const tolerance = Math.max(2, Math.floor(want.length / 3));
    if (!contains && distance > tolerance) continue;
    scored.push({ name, score: contains ? distance / 100 : distance });
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

function editDistance(a: string, b: string): number {
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
