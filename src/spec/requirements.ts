/**
 * The machine-checkable half of `docs/SPEC.md`: its `## Requirements` section,
 * parsed into requirements and the closed grammar of `check:` rules.
 *
 * ```
 * ## Requirements
 * - REQ-PWR-1: The board runs from USB-C VBUS at 5 V.
 *   - check: net VBUS exists
 *   - check: J1.A9 on VBUS
 * ```
 *
 * Parsing never throws on content: anything it cannot read becomes a `SpecProblem` with the
 * line and column of the offending token, because a requirement that silently drops out of the
 * check is worse than a loud error. It is linear in the size of the file, and a spec past
 * `MAX_REQUIREMENTS` requirements or `MAX_RULES` rules is `input_too_large` (a typed error):
 * nobody maintains such a file by hand, and evaluating it would be the whole check's cost.
 * Decisions a spec author can rely on:
 * - The section runs from a level-2 `Requirements` heading (any case) to the next level-1 or
 *   level-2 heading; `###` sub-headings inside it are fine. Fenced code blocks and HTML
 *   comments are skipped, so a spec can show example rules without them being checked.
 * - A requirement is a top-level bullet `- REQ-<PART>-<PART>…: text` (upper-case letters and
 *   digits); its checks are nested bullets `- check: <rule>`. Other nested bullets are prose.
 *   A top-level bullet that looks like a requirement or a check but is malformed is a problem.
 * - A rule may be wrapped whole in backticks (`` - check: `net VBUS exists` ``), so it renders
 *   as code. Names with spaces are quoted with `"…"` or `` `…` ``; `R1."Part Number"` quotes
 *   a field or pin name.
 * - Keywords (`net`, `exists`, `on`, `count`, `board`, …) are case-insensitive; references,
 *   nets, pins and patterns are case-sensitive, as KiCad treats them.
 * - In `<REF>.<FIELD> <op> <value>`, a bare value that parses as a quantity (`680`, `4k7`,
 *   `100 nF`) compares numerically; a quoted value is always text. Ordering a text value
 *   (`U1.value >= "abc"`) is a parse problem.
 */
import { CopperheadError } from "../errors.ts";
import { parseLength, parseQuantity, type Quantity } from "./units.ts";

/** The most requirements, and the most `check:` rules, one SPEC.md may hold. */
export const MAX_REQUIREMENTS = 10_000;
export const MAX_RULES = 10_000;

export type Op = "==" | "!=" | "<" | "<=" | ">" | ">=";
const OPS: readonly string[] = ["==", "!=", "<", "<=", ">", ">="];

/** Where a rule sits in the file; 1-based, `endColumn` exclusive. */
export interface SourceSpan {
  line: number;
  column: number;
  endColumn: number;
}

interface RuleBase {
  /** Canonical text: keywords lower-case, single spaces, quotes only where needed. */
  text: string;
  span: SourceSpan;
}

export type Rule =
  | (RuleBase & { kind: "net"; net: string; expect: "exists" | "absent" })
  | (RuleBase & { kind: "ref"; ref: string; expect: "exists" | "absent" })
  | (RuleBase & { kind: "pin"; ref: string; pin: string; net: string })
  | (RuleBase & { kind: "field"; ref: string; field: string; op: Op; value: string; quantity?: Quantity })
  | (RuleBase & { kind: "count"; pattern: string; by: "ref" | "libId"; op: Op; count: number })
  | (RuleBase & { kind: "net-pins"; net: string; op: Op; count: number })
  | (RuleBase & { kind: "board"; dimension: "width" | "height"; op: Op; length: string; mm: number });

export interface Requirement {
  id: string;
  /** The requirement's prose, continuation lines joined with single spaces. */
  text: string;
  line: number;
  checks: Rule[];
}

export interface SpecProblem {
  kind: "parse" | "duplicate";
  /** Starts with `file:line:column:`. */
  message: string;
  line: number;
  column: number;
  /** The requirement the problem belongs to, when there is one. */
  reqId?: string;
  /** The offending text as written (the rule, or the bullet). */
  source: string;
}

/** Inclusive, 1-based line range: the heading line through the section's last line. */
export interface LineRange {
  start: number;
  end: number;
}

export interface ParsedSpec {
  file: string;
  section: LineRange;
  requirements: Requirement[];
  problems: SpecProblem[];
}

// Every pattern here sees repo text, so none may backtrack more than linearly: a pattern ends
// in `[^]*` (which cannot fail) rather than `.*$` (which fails on a stray CR and retries every
// split of the whitespace before it), and headings and bullets are scanned by hand.
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})/;
const REQ_RE = /^(REQ-[A-Z0-9]+(?:-[A-Z0-9]+)*):[ \t]*([^]*)/;
const CHECK_RE = /^check:[ \t]*/i;

const isSpace = (c: string | undefined) => c !== undefined && c.trim() === "";

/**
 * An ATX heading (`## Requirements ##`): its level and its text without the closing `#`s, or
 * undefined. Up to three spaces of indent, one to six `#`s, then whitespace.
 */
function heading(line: string): { level: number; text: string } | undefined {
  let start = 0;
  while (start < 3 && line[start] === " ") start++;
  let end = start;
  while (line[end] === "#") end++;
  const level = end - start;
  if (level < 1 || level > 6 || !isSpace(line[end])) return undefined;
  const text = line.slice(end).trim();
  let close = text.length;
  while (close > 0 && text[close - 1] === "#") close--;
  return {
    level,
    text: close > 0 && close < text.length && isSpace(text[close - 1]) ? text.slice(0, close).trimEnd() : text,
  };
}

/** A list item (`- text`, `* text`, `+ text`): its indent and its text, or undefined. */
function bulletItem(line: string): { indent: string; body: string } | undefined {
  let marker = 0;
  while (line[marker] === " " || line[marker] === "\t") marker++;
  if (!"-*+".includes(line[marker] ?? "x") || (line[marker + 1] !== " " && line[marker + 1] !== "\t")) return undefined;
  let body = marker + 1;
  while (line[body] === " " || line[body] === "\t") body++;
  return { indent: line.slice(0, marker), body: line.slice(body) };
}

/** Marks the lines that are inside fenced code blocks or HTML comments, which carry no meaning. */
function inertLines(lines: string[]): boolean[] {
  const inert: boolean[] = [];
  let fence: string | undefined;
  let comment = false;
  for (const line of lines) {
    if (fence) {
      inert.push(true);
      const m = FENCE_RE.exec(line);
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && line.trim() === m[1]) fence = undefined;
      continue;
    }
    if (comment) {
      inert.push(true);
      if (line.includes("-->")) comment = false;
      continue;
    }
    const m = FENCE_RE.exec(line);
    if (m) {
      fence = m[1];
      inert.push(true);
      continue;
    }
    const open = line.indexOf("<!--");
    if (open >= 0 && !line.includes("-->", open)) comment = true;
    inert.push(comment || (open >= 0 && line.trim().startsWith("<!--")));
  }
  return inert;
}

function splitLines(markdown: string): string[] {
  return markdown.split(/\r?\n/);
}

/**
 * All level-2 `Requirements` sections, in order. The first is the one that counts; a second
 * one is reported as a problem rather than silently checked or ignored.
 */
function requirementsSections(lines: string[]): LineRange[] {
  const inert = inertLines(lines);
  const ranges: LineRange[] = [];
  let open: number | undefined;
  lines.forEach((line, i) => {
    if (inert[i]) return;
    const h = heading(line);
    if (!h || h.level > 2) return;
    if (open !== undefined) {
      ranges.push({ start: open + 1, end: i });
      open = undefined;
    }
    if (h.level === 2 && h.text.toLowerCase() === "requirements") open = i;
  });
  if (open !== undefined) ranges.push({ start: open + 1, end: lines.length });
  return ranges;
}

/** The line range edit tools must refuse to touch, or `undefined` when there is no section. */
export function requirementsSectionRange(markdown: string): LineRange | undefined {
  return requirementsSections(splitLines(markdown))[0];
}

/**
 * The exact text of every Requirements section, in order (the first is the one that counts; a
 * second one is a problem the check reports). Two documents whose Requirements sections read
 * the same return equal arrays, however the rest of the document differs.
 */
export function requirementsSectionTexts(markdown: string): string[] {
  const lines = splitLines(markdown);
  return requirementsSections(lines).map((range) => lines.slice(range.start - 1, range.end).join("\n"));
}

/** Parses the Requirements section; `undefined` when the document has none. */
export function parseRequirements(markdown: string, file: string): ParsedSpec | undefined {
  const lines = splitLines(markdown);
  const sections = requirementsSections(lines);
  const section = sections[0];
  if (!section) return undefined;
  const inert = inertLines(lines);
  const problems: SpecProblem[] = [];
  const requirements: Requirement[] = [];
  const problem = (
    kind: SpecProblem["kind"],
    line: number,
    column: number,
    message: string,
    source: string,
    reqId?: string,
  ) =>
    problems.push({
      kind,
      message: `${file}:${line}:${column}: ${message}`,
      line,
      column,
      source,
      ...(reqId ? { reqId } : {}),
    });

  for (const extra of sections.slice(1)) {
    problem(
      "parse",
      extra.start,
      1,
      "a second Requirements section; merge it into the first",
      lines[extra.start - 1]!.trim(),
    );
  }

  let current: Requirement | undefined;
  let continuing = false;
  let rules = 0;
  /** Line of each requirement id's first definition, for duplicates. */
  const firstLine = new Map<string, number>();
  for (let i = section.start; i < section.end; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (inert[i]) continue;
    if (line.trim() === "") {
      continuing = false;
      continue;
    }
    if (heading(line)) {
      current = undefined;
      continuing = false;
      continue;
    }
    const bullet = bulletItem(line);
    if (!bullet) {
      if (current && continuing && /^[ \t]/.test(line)) current.text = `${current.text} ${line.trim()}`;
      continue;
    }
    continuing = false;
    const indent = bullet.indent.replace(/\t/g, "    ").length;
    const body = bullet.body.trimEnd();
    const bodyColumn = line.length - bullet.body.length + 1;
    if (indent < 2) {
      const req = REQ_RE.exec(body);
      if (req) {
        current = { id: req[1]!, text: req[2]!.trim(), line: lineNo, checks: [] };
        continuing = true;
        const first = firstLine.get(current.id);
        if (first !== undefined) {
          problem(
            "duplicate",
            lineNo,
            bodyColumn,
            `duplicate requirement id ${current.id} (first on line ${first})`,
            body,
            current.id,
          );
        } else firstLine.set(current.id, lineNo);
        if (requirements.length === MAX_REQUIREMENTS)
          throw tooManyEntries(file, lineNo, `${MAX_REQUIREMENTS} requirements`);
        requirements.push(current);
      } else {
        current = undefined;
        if (/^\**REQ-/i.test(body)) {
          problem(
            "parse",
            lineNo,
            bodyColumn,
            "malformed requirement; write `- REQ-<AREA>-<N>: text` (upper-case letters and digits)",
            body,
          );
        } else if (CHECK_RE.test(body)) {
          problem("parse", lineNo, bodyColumn, "a check must be a nested bullet under a requirement", body);
        }
      }
      continue;
    }
    const check = CHECK_RE.exec(body);
    if (!check) continue;
    const ruleColumn = bodyColumn + check[0].length;
    const ruleText = body.slice(check[0].length);
    if (!current) {
      problem("parse", lineNo, bodyColumn, "a check must be nested under a `- REQ-…:` requirement", body);
      continue;
    }
    if (++rules > MAX_RULES) throw tooManyEntries(file, lineNo, `${MAX_RULES} check: rules`);
    const parsed = parseRule(ruleText, lineNo, ruleColumn);
    if ("problem" in parsed) problem("parse", lineNo, parsed.column, parsed.problem, ruleText.trim(), current.id);
    else current.checks.push(parsed);
  }
  return { file, section, requirements, problems };
}

function tooManyEntries(file: string, line: number, limit: string): CopperheadError {
  return new CopperheadError(
    "input_too_large",
    `${file}:${line}: the Requirements section holds more than ${limit}, copperhead's limit.`,
    {
      file,
      line,
      fix: `Keep ${file} to the requirements people review: split generated or repeated rules into fewer, broader ones (e.g. \`count R* == 40\`).`,
    },
  );
}

interface Token {
  text: string;
  /** As written, quotes included. */
  raw: string;
  column: number;
  endColumn: number;
  quoted: boolean;
}

/** Why a rule did not parse, and the 1-based column of the offending token. */
export interface RuleProblem {
  problem: string;
  column: number;
}

const QUOTES = new Set(['"', "`"]);

/** Splits a rule into whitespace-separated tokens; `"…"`/`` `…` `` quote a token or the part after `.`. */
function tokenize(text: string, column: number): Token[] | RuleProblem {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i]!)) {
      i++;
      continue;
    }
    const start = i;
    let value = "";
    let quoted = false;
    while (i < text.length && !/\s/.test(text[i]!)) {
      const c = text[i]!;
      if (QUOTES.has(c) && (i === start || text[i - 1] === ".")) {
        const close = text.indexOf(c, i + 1);
        if (close < 0) return { problem: `unterminated ${c} quote`, column: column + i };
        if (close === i + 1) return { problem: "empty quoted name", column: column + i };
        value += text.slice(i + 1, close);
        quoted = i === start;
        i = close + 1;
        continue;
      }
      value += c;
      i++;
    }
    tokens.push({ text: value, raw: text.slice(start, i), column: column + start, endColumn: column + i, quoted });
  }
  return tokens;
}

const FORMS =
  "expected `net <NET> exists|absent|pins`, `count <PATTERN> <op> <N>`, `board width|height <op> <LENGTH>`, " +
  "`<REF> exists|absent`, `<REF>.<PIN> on <NET>` or `<REF>.<FIELD> <op> <value>`";

/** The tokens of one rule, with what every form needs to report or finish. */
class RuleTokens {
  constructor(
    readonly tokens: Token[],
    readonly span: SourceSpan,
  ) {}

  at(i: number): Token | undefined {
    return this.tokens[i];
  }

  /** The lower-cased keyword at `i` when it is one of `words` (never a quoted token). */
  keyword(i: number, ...words: string[]): string | undefined {
    const t = this.tokens[i];
    const word = t && !t.quoted ? t.text.toLowerCase() : undefined;
    return word && words.includes(word) ? word : undefined;
  }

  /** "expected X, got `y`" at the token, or "missing X" at the end of the rule. */
  expected(i: number, what: string, hint = ""): RuleProblem {
    const t = this.tokens[i];
    if (t) return { problem: `expected ${what}, got \`${t.text}\`${hint}`, column: t.column };
    return { problem: `missing ${what}`, column: this.tokens[this.tokens.length - 1]!.endColumn };
  }

  op(i: number, what = `an operator (${OPS.join(" ")})`): { op: Op } | RuleProblem {
    const t = this.tokens[i];
    if (t && !t.quoted && OPS.includes(t.text)) return { op: t.text as Op };
    return this.expected(i, what, t?.text === "=" ? "; use `==`" : "");
  }

  count(i: number): { count: number } | RuleProblem {
    const t = this.tokens[i];
    if (t && !t.quoted && /^\d+$/.test(t.text)) return { count: Number(t.text) };
    return this.expected(i, "a whole number");
  }

  /** A value token, merged with the next when together they read as one (`100 mA`, `40 mm`). */
  value(i: number, reads: (text: string) => boolean): { text: string; token: Token; next: number } | undefined {
    const token = this.tokens[i];
    if (!token) return undefined;
    const next = this.tokens[i + 1];
    if (!token.quoted && next && !next.quoted && reads(token.text) && reads(`${token.text} ${next.text}`)) {
      return { text: `${token.text}${next.text}`, token, next: i + 2 };
    }
    return { text: token.text, token, next: i + 1 };
  }

  /** The rule, unless tokens are left over after it. */
  done(i: number, rule: Rule): Rule | RuleProblem {
    const extra = this.tokens[i];
    return extra ? { problem: `unexpected \`${extra.text}\` after the rule`, column: extra.column } : rule;
  }
}

/**
 * Parses one rule. `line` and `column` place the rule's first character in the file so every
 * failure points at its token; exported so proposals and tools can validate a rule alone.
 */
export function parseRule(source: string, line = 1, column = 1): Rule | RuleProblem {
  let text = source.trim();
  column += source.length - source.trimStart().length;
  if (/^`[^`]+`$/.test(text)) {
    text = text.slice(1, -1);
    column += 1;
  }
  const tokens = tokenize(text, column);
  if ("problem" in tokens) return tokens;
  if (tokens.length === 0) return { problem: "empty check; write a rule after `check:`", column };
  const rt = new RuleTokens(tokens, { line, column, endColumn: column + text.length });
  switch (rt.keyword(0, "net", "count", "board")) {
    case "net":
      return parseNetRule(rt);
    case "count":
      return parseCountRule(rt);
    case "board":
      return parseBoardRule(rt);
    default:
      return parseRefRule(rt);
  }
}

function parseNetRule(rt: RuleTokens): Rule | RuleProblem {
  const net = rt.at(1);
  if (!net) return rt.expected(1, "a net name after `net`");
  const verb = rt.keyword(2, "exists", "absent", "pins");
  if (!verb) return rt.expected(2, "`exists`, `absent` or `pins` after the net name");
  if (verb !== "pins") {
    return rt.done(3, {
      kind: "net",
      net: net.text,
      expect: verb as "exists" | "absent",
      span: rt.span,
      text: `net ${quote(net.text)} ${verb}`,
    });
  }
  const op = rt.op(3);
  if ("problem" in op) return op;
  const count = rt.count(4);
  if ("problem" in count) return count;
  const text = `net ${quote(net.text)} pins ${op.op} ${count.count}`;
  return rt.done(5, { kind: "net-pins", net: net.text, op: op.op, count: count.count, span: rt.span, text });
}

function parseCountRule(rt: RuleTokens): Rule | RuleProblem {
  const pattern = rt.at(1);
  if (!pattern) return rt.expected(1, "a ref or lib_id pattern after `count`");
  const op = rt.op(2);
  if ("problem" in op) return op;
  const count = rt.count(3);
  if ("problem" in count) return count;
  const by = pattern.text.includes(":") ? "libId" : "ref";
  const text = `count ${quote(pattern.text)} ${op.op} ${count.count}`;
  return rt.done(4, { kind: "count", pattern: pattern.text, by, op: op.op, count: count.count, span: rt.span, text });
}

function parseBoardRule(rt: RuleTokens): Rule | RuleProblem {
  const dimension = rt.keyword(1, "width", "height") as "width" | "height" | undefined;
  if (!dimension) return rt.expected(1, "`width` or `height` after `board`");
  const op = rt.op(2);
  if ("problem" in op) return op;
  const value = rt.value(3, (t) => parseLength(t) !== undefined);
  if (!value) return rt.expected(3, "a length such as `40mm`, `1500mil` or `1.6in`");
  const mm = value.token.quoted ? undefined : parseLength(value.text);
  if (mm === undefined) {
    return {
      problem: `\`${value.text}\` is not a length; use mm, mil or in (e.g. \`40mm\`)`,
      column: value.token.column,
    };
  }
  const text = `board ${dimension} ${op.op} ${value.text}`;
  return rt.done(value.next, { kind: "board", dimension, op: op.op, length: value.text, mm, span: rt.span, text });
}

/** `<REF> exists|absent`, `<REF>.<PIN> on <NET>` and `<REF>.<FIELD> <op> <value>`. */
function parseRefRule(rt: RuleTokens): Rule | RuleProblem {
  const first = rt.at(0)!;
  if (first.quoted) return { problem: `a rule cannot start with a quoted name; ${FORMS}`, column: first.column };
  const dot = first.text.indexOf(".");
  if (dot < 0) {
    const verb = rt.keyword(1, "exists", "absent") as "exists" | "absent" | undefined;
    if (!verb && !rt.at(1)) return { problem: `incomplete rule \`${first.text}\`; ${FORMS}`, column: first.column };
    if (!verb) return rt.expected(1, `\`exists\` or \`absent\` after \`${first.text}\``, `; ${FORMS}`);
    const rule: Rule = { kind: "ref", ref: first.text, expect: verb, span: rt.span, text: `${first.text} ${verb}` };
    return checkRef(first.text, first.column) ?? rt.done(2, rule);
  }
  const ref = first.text.slice(0, dot);
  const member = first.text.slice(dot + 1);
  const memberColumn = first.column + dot + 1;
  const bad = checkRef(ref, first.column);
  if (bad) return bad;
  if (member === "") return { problem: `missing pin or field name after \`${ref}.\``, column: memberColumn };
  const glued = /[=!<>]/.exec(member);
  if (glued && !/["`]/.test(first.raw)) {
    return { problem: "put spaces around the operator, e.g. `R2.value >= 680`", column: memberColumn + glued.index };
  }
  if (rt.keyword(1, "on")) {
    const net = rt.at(2);
    if (!net) return rt.expected(2, "a net name after `on`");
    return rt.done(3, {
      kind: "pin",
      ref,
      pin: member,
      net: net.text,
      span: rt.span,
      text: `${ref}.${quote(member)} on ${quote(net.text)}`,
    });
  }
  const op = rt.op(1, `\`on\` or one of ${OPS.join(" ")} after \`${first.text}\``);
  if ("problem" in op) return op;
  const value = rt.value(2, (t) => parseQuantity(t) !== undefined);
  if (!value) return rt.expected(2, `a value after \`${op.op}\``);
  const quantity = value.token.quoted ? undefined : parseQuantity(value.text);
  if (!quantity && op.op !== "==" && op.op !== "!=") {
    return {
      problem: `\`${op.op}\` needs a number such as \`680\`, \`4k7\` or \`100nF\`; text compares only with == or !=`,
      column: value.token.column,
    };
  }
  const text = `${ref}.${quote(member)} ${op.op} ${quotedValue(value.text, value.token.quoted)}`;
  const rule: Rule = { kind: "field", ref, field: member, op: op.op, value: value.text, span: rt.span, text };
  return rt.done(value.next, quantity ? { ...rule, quantity } : rule);
}

/** A reference designator: a letter or `_` first, then letters, digits and `_`. */
function checkRef(ref: string, column: number): RuleProblem | undefined {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(ref)) return undefined;
  return { problem: `\`${ref}\` is not a reference designator (e.g. \`R1\`, \`U3\`); ${FORMS}`, column };
}

/** Quotes a name for canonical rule text only when it would not read back as one token. */
function quote(name: string): string {
  return /[\s"`]/.test(name) ? forceQuote(name) : name;
}

/** A quoted value stays quoted in canonical text only where the quotes change its meaning. */
function quotedValue(text: string, quoted: boolean): string {
  return quoted && parseQuantity(text) !== undefined ? forceQuote(text) : quote(text);
}

function forceQuote(text: string): string {
  return text.includes('"') ? `\`${text}\`` : `"${text}"`;
}
