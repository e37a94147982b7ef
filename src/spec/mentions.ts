/**
 * Inline code spans in markdown prose: where docs name refs and nets (`R3`, `VBUS`).
 *
 * Two kinds of text are deliberately not prose:
 * - fenced code blocks, which hold examples and commands, not claims about this design;
 * - requirement rule lines (`- check: …`), which the `requirements` family evaluates; a rule
 *   such as `R9 absent` names a missing ref on purpose.
 */

export interface Mention {
  /** The span's content, trimmed. */
  text: string;
  /** 1-based line and column of the opening backtick. */
  line: number;
  column: number;
  /** The rest of the line before and after the span, for context words such as "net". */
  before: string;
  after: string;
}

const FENCE_RE = /^\s{0,3}(`{3,}|~{3,})/;
const CHECK_LINE_RE = /^\s*[-*+]\s+check:/;
/** How much of the line around a span `before` and `after` keep: enough for "the nets `A`, `B` and `C`". */
const CONTEXT_CHARS = 200;

export function codeSpanMentions(markdown: string): Mention[] {
  const mentions: Mention[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((text, index) => {
    const opener = FENCE_RE.exec(text)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      return;
    }
    if (opener) {
      fence = opener;
      return;
    }
    if (CHECK_LINE_RE.test(text)) return;
    for (const span of codeSpans(text)) {
      const content = text.slice(span.start + span.ticks, span.end - span.ticks).trim();
      if (!content) continue;
      mentions.push({
        text: content,
        line: index + 1,
        column: span.start + 1,
        before: text.slice(Math.max(0, span.start - CONTEXT_CHARS), span.start),
        after: text.slice(span.end, span.end + CONTEXT_CHARS),
      });
    }
  });
  return mentions;
}

/**
 * The code spans of one line, as CommonMark reads them: a run of backticks opens a span that
 * the next run of the same length closes; a run no later run matches is literal text. Linear:
 * a length found missing once is never searched for again, and a span's inside is not rescanned
 * (a backreference pattern retried every run against every later one).
 */
export function codeSpans(line: string): { start: number; end: number; ticks: number }[] {
  const runs: { start: number; length: number }[] = [];
  for (let i = 0; i < line.length; i++) {
    if (line[i] !== "`") continue;
    const start = i;
    while (line[i + 1] === "`") i++;
    runs.push({ start, length: i - start + 1 });
  }
  const spans: { start: number; end: number; ticks: number }[] = [];
  const unmatched = new Set<number>();
  for (let open = 0; open < runs.length; open++) {
    const { start, length } = runs[open]!;
    if (unmatched.has(length)) continue;
    let close = open + 1;
    while (close < runs.length && runs[close]!.length !== length) close++;
    if (close === runs.length) {
      unmatched.add(length);
      continue;
    }
    spans.push({ start, end: runs[close]!.start + length, ticks: length });
    open = close;
  }
  return spans;
}
