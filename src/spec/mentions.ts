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
const CODE_SPAN_RE = /(`+)(.+?)\1(?!`)/g;

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
    for (const m of text.matchAll(CODE_SPAN_RE)) {
      const content = m[2]!.trim();
      if (!content) continue;
      mentions.push({
        text: content,
        line: index + 1,
        column: m.index + 1,
        before: text.slice(0, m.index),
        after: text.slice(m.index + m[0].length),
      });
    }
  });
  return mentions;
}
