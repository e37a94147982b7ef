/**
 * The words of a proposal id, from its title: what a reviewer reads in `docs/changes/<id>.md`
 * and in the commit, so it must say what the title says. Signs are spelled (`+12V` and `-12V`
 * are two rails, not `12v` twice), a decimal keeps its digits together the way schematics
 * write values (`3.3V` → `3v3`, `4.7k` → `4k7`, `2.5` → `2p5`), the id holds whole words only and does not
 * end on a word that needs the next one (`…-at-the`), and it never ends in a bare number, so a
 * trailing `-2`, `-3` is always the suffix that tells apart two proposals of one day.
 */

/** Longest slug kept, in characters: ids stay readable in file lists and commit trailers. */
const MAX_SLUG = 48;

/** Words that only lead into the next one: an id cut after them reads as cut. */
const LEADING_WORDS = new Set([
  "a",
  "an",
  "the",
  "and",
  "or",
  "at",
  "on",
  "in",
  "of",
  "to",
  "for",
  "with",
  "by",
  "from",
  "into",
  "near",
  "next",
  "between",
]);

export function proposalSlug(title: string): string {
  const spelled = title
    .toLowerCase()
    .replace(/±/g, " plus-minus ")
    .replace(/\+(?=[\p{L}\p{N}])/gu, " plus ")
    // A minus sign is one that starts a value (`-12V`, `(−5V)`), not a hyphen inside a word.
    .replace(/(^|[^\p{L}\p{N}])[-−](?=\p{N})/gu, "$1 minus ")
    .replace(/µ/g, "u")
    // The unit's letter takes the point's place: written on (`4.7k`), or a lone letter after a space (`3.3 V`).
    .replace(
      /(\d+)\.(\d+)(?:([a-z])|\s([a-z])(?![a-z]))/g,
      (_, whole: string, part: string, on?: string, apart?: string) => `${whole}${on ?? apart}${part}`,
    )
    .replace(/(\d+)\.(\d+)/g, "$1p$2");
  const words = spelled.split(/[^a-z0-9]+/).filter(Boolean);
  const kept: string[] = [];
  for (const word of words) {
    if ([...kept, word].join("-").length > MAX_SLUG) break;
    kept.push(word);
  }
  // One word longer than the limit is all there is to say: keep its start.
  if (kept.length === 0 && words[0]) kept.push(words[0].slice(0, MAX_SLUG));
  while (kept.length > 1 && LEADING_WORDS.has(kept.at(-1)!)) kept.pop();
  // A number last would read as the dedupe suffix: join it to the word before (`rev2`).
  if (kept.length > 1 && /^\d+$/.test(kept.at(-1)!)) {
    const number = kept.pop()!;
    kept.push(`${kept.pop()!}${number}`);
  }
  return kept.join("-") || "change";
}
