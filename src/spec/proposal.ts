/**
 * Change proposals: `docs/changes/<id>.md`, the record of what a run set out to do and why,
 * written by `do` after its spec gate passed and checked by the `changes` family.
 *
 * The format is plain markdown a reviewer reads in a pull request:
 *
 *     # Add reverse-polarity protection on VIN
 *
 *     - Change: 20261129-add-reverse-polarity
 *     - Approval: auto
 *     - Requirements touched: REQ-PWR-1
 *     - Refs: J1
 *     - Nets: VIN
 *     - New refs: D3
 *     - New nets: none
 *
 *     ## Why
 *     ## Planned changes
 *     ## Verification
 *     ## Amendments          (only when the run widened the proposal)
 *
 *     ### Amendment 1
 *
 *     - Refs: R4
 *     - Nets: none
 *     - New refs: none
 *     - New nets: none
 *     - Requirements touched: none
 *
 *     Why R4 has to change too.
 *
 *     - planned change the amendment adds
 *
 * The four name lines are the proposal's scope: the parts and nets the run's edits may touch
 * (a proposal copperhead writes itself, `sync`'s, has none and binds nothing). An amendment
 * adds to them.
 *
 * `renderProposal` and `parseProposal` are inverses, so what `do` writes always validates.
 */
import * as v from "valibot";
import { oneLine } from "../util/trim.ts";

export const APPROVALS = ["auto", "interactive"] as const;
export const ApprovalSchema = v.picklist(APPROVALS);
export type Approval = v.InferOutput<typeof ApprovalSchema>;

export interface Proposal {
  id: string;
  title: string;
  approval: Approval;
  /** Requirement ids the change touches (must exist; none may change). */
  requirements: string[];
  why: string;
  /** One line per planned change. */
  changes: string[];
  verification: string;
  /** Optional: the run that wrote it. */
  runId?: string;
  /** The parts and nets the change may touch; absent for a proposal that binds no names. */
  scope?: ProposalScope;
  /** What the run added to the approved proposal, in order. */
  amendments?: Amendment[];
}

/** The parts and nets a proposal names, as it wrote them. */
export const ProposalScopeSchema = v.object({
  refs: v.array(v.string()),
  nets: v.array(v.string()),
  newRefs: v.array(v.string()),
  newNets: v.array(v.string()),
});
export type ProposalScope = v.InferOutput<typeof ProposalScopeSchema>;

/** A widening of the approved proposal during the run: more names, and why. */
export const AmendmentSchema = v.object({
  why: v.string(),
  /** Planned changes it adds (may be none). */
  changes: v.array(v.string()),
  /** Further requirement ids involved. */
  requirements: v.array(v.string()),
  /** The names it adds. */
  scope: ProposalScopeSchema,
});
export type Amendment = v.InferOutput<typeof AmendmentSchema>;

export interface ProposalProblem {
  line: number;
  message: string;
}

const SECTIONS = {
  why: "Why",
  changes: "Planned changes",
  verification: "Verification",
  amendments: "Amendments",
} as const;

/** The scope's meta lines: label and field, in the order they are written. */
const SCOPE_LINES = [
  ["Refs", "refs"],
  ["Nets", "nets"],
  ["New refs", "newRefs"],
  ["New nets", "newNets"],
] as const;

/** A `- Label: value` line; the value runs to the end of the line, so a stray CR cannot make it backtrack. */
const META_LINE_RE = /^- ([A-Za-z ]+):\s*([^]*)/;

const list = (items: string[]) => (items.length ? items.join(", ") : "none");
const unlist = (text: string) =>
  text && text.toLowerCase() !== "none"
    ? text
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean)
    : [];

function scopeLines(scope: ProposalScope): string[] {
  return SCOPE_LINES.map(([label, key]) => `- ${label}: ${list(scope[key])}`);
}

/** The scope from meta lines (keys lower-cased), or undefined when none of its lines is there. */
function scopeFrom(meta: Map<string, { value: string }>): ProposalScope | undefined {
  if (!SCOPE_LINES.some(([label]) => meta.has(label.toLowerCase()))) return undefined;
  const field = (label: string) => unlist(meta.get(label.toLowerCase())?.value ?? "");
  return { refs: field("Refs"), nets: field("Nets"), newRefs: field("New refs"), newNets: field("New nets") };
}

export function renderProposal(p: Proposal): string {
  const meta = [
    `- Change: ${p.id}`,
    ...(p.runId ? [`- Run: ${p.runId}`] : []),
    `- Approval: ${p.approval}`,
    `- Requirements touched: ${list(p.requirements)}`,
    ...(p.scope ? scopeLines(p.scope) : []),
  ];
  const amendments = (p.amendments ?? []).flatMap((a, i) => [
    `### Amendment ${i + 1}`,
    "",
    ...scopeLines(a.scope),
    `- Requirements touched: ${list(a.requirements)}`,
    "",
    oneLine(a.why),
    "",
    ...(a.changes.length ? [...a.changes.map((c) => `- ${oneLine(c)}`), ""] : []),
  ]);
  return [
    `# ${oneLine(p.title)}`,
    "",
    ...meta,
    "",
    `## ${SECTIONS.why}`,
    "",
    p.why.trim(),
    "",
    `## ${SECTIONS.changes}`,
    "",
    ...p.changes.map((c) => `- ${oneLine(c)}`),
    "",
    `## ${SECTIONS.verification}`,
    "",
    p.verification.trim(),
    "",
    ...(amendments.length ? [`## ${SECTIONS.amendments}`, "", ...amendments] : []),
  ].join("\n");
}

/**
 * The `### Amendment N` blocks of the Amendments section: their name lines, then the why, then
 * the planned changes it adds (a trailing list).
 */
function parseAmendments(body: string[], start: number, problems: ProposalProblem[]): Amendment[] {
  const blocks: { line: number; lines: string[] }[] = [];
  body.forEach((line, i) => {
    if (/^### Amendment \d+\s*$/.test(line)) blocks.push({ line: start + i + 1, lines: [] });
    else if (blocks.length) blocks[blocks.length - 1]!.lines.push(line);
    else if (line.trim())
      problems.push({ line: start + i + 1, message: "the Amendments section holds only `### Amendment N` blocks" });
  });
  return blocks.map(({ line, lines }) => {
    const meta = new Map<string, { value: string }>();
    let i = 0;
    for (; i < lines.length; i++) {
      const m = META_LINE_RE.exec(lines[i]!);
      if (lines[i]!.trim() === "" && meta.size === 0) continue;
      if (!m) break;
      meta.set(m[1]!.trim().toLowerCase(), { value: m[2]!.trim() });
    }
    const rest = lines.slice(i);
    let end = rest.length;
    while (end > 0 && (rest[end - 1]!.trim() === "" || /^- /.test(rest[end - 1]!.trim()))) end--;
    const why = rest.slice(0, end).join("\n").trim();
    const changes = rest
      .slice(end)
      .map((l) => /^- (.+)$/.exec(l.trim())?.[1])
      .filter((c): c is string => Boolean(c));
    const scope = scopeFrom(meta);
    if (!scope)
      problems.push({
        line,
        message: "an amendment needs its `- Refs:`, `- Nets:`, `- New refs:` and `- New nets:` lines",
      });
    if (!why) problems.push({ line, message: "an amendment needs its why" });
    return {
      why,
      changes,
      requirements: unlist(meta.get("requirements touched")?.value ?? ""),
      scope: scope ?? { refs: [], nets: [], newRefs: [], newNets: [] },
    };
  });
}

/** What an amendment adds, in a few words: "adds R4, TP1 (new), net GND". */
export function describeAmendment(amendment: Amendment): string {
  const { refs, newRefs, nets, newNets } = amendment.scope;
  const added = [
    ...refs,
    ...newRefs.map((r) => `${r} (new)`),
    ...nets.map((n) => `net ${n}`),
    ...newNets.map((n) => `net ${n} (new)`),
  ];
  return added.length ? `adds ${added.join(", ")}` : "adds planned changes";
}

/** Parses a proposal; problems carry 1-based line numbers (0 when the whole file is at fault). */
export function parseProposal(markdown: string): { proposal?: Proposal; problems: ProposalProblem[] } {
  const lines = markdown.split(/\r?\n/);
  const problems: ProposalProblem[] = [];
  const titleIndex = lines.findIndex((l) => l.trim() !== "");
  const titleMatch = titleIndex >= 0 ? /^# (.+)$/.exec(lines[titleIndex]!) : null;
  if (!titleMatch) problems.push({ line: titleIndex + 1, message: "the first line must be the title: `# <title>`" });

  const meta = new Map<string, { value: string; line: number }>();
  const sections = new Map<string, { start: number; body: string[] }>();
  let current: { start: number; body: string[] } | undefined;
  for (let i = titleIndex + 1; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = line.startsWith("## ") ? line.slice(3).trimEnd() : "";
    if (heading) {
      current = { start: i + 1, body: [] };
      sections.set(heading.toLowerCase(), current);
      continue;
    }
    if (current) current.body.push(line);
    else {
      const m = META_LINE_RE.exec(line);
      if (m) meta.set(m[1]!.trim().toLowerCase(), { value: m[2]!.trim(), line: i + 1 });
    }
  }

  const requireMeta = (key: string): string => {
    const entry = meta.get(key);
    if (!entry || !entry.value)
      problems.push({ line: titleIndex + 2, message: `missing \`- ${capitalise(key)}: …\` line` });
    return entry?.value ?? "";
  };
  const id = requireMeta("change");
  const approvalText = requireMeta("approval").toLowerCase();
  if (approvalText && !(APPROVALS as readonly string[]).includes(approvalText)) {
    problems.push({
      line: meta.get("approval")!.line,
      message: `approval must be one of ${APPROVALS.join(", ")}, not "${approvalText}"`,
    });
  }
  const reqText = requireMeta("requirements touched");
  const requirements = unlist(reqText);
  for (const req of requirements) {
    if (!/^REQ-[A-Z0-9-]+$/.test(req))
      problems.push({
        line: meta.get("requirements touched")!.line,
        message: `"${req}" is not a requirement id (REQ-…)`,
      });
  }

  const section = (name: string): string[] => {
    const s = sections.get(name.toLowerCase());
    const body = s?.body.join("\n").trim() ?? "";
    if (!s || !body) problems.push({ line: s?.start ?? 0, message: `section "## ${name}" is missing or empty` });
    return s?.body ?? [];
  };
  const why = section(SECTIONS.why).join("\n").trim();
  const changes = section(SECTIONS.changes)
    .map((l) => /^- (.+)$/.exec(l.trim())?.[1])
    .filter((c): c is string => Boolean(c));
  const verification = section(SECTIONS.verification).join("\n").trim();
  const amendmentSection = sections.get(SECTIONS.amendments.toLowerCase());
  const amendments = amendmentSection ? parseAmendments(amendmentSection.body, amendmentSection.start, problems) : [];
  const scope = scopeFrom(meta);

  if (problems.length > 0) return { problems };
  return {
    problems,
    proposal: {
      id,
      title: titleMatch![1]!.trim(),
      approval: approvalText as Approval,
      requirements,
      why,
      changes,
      verification,
      ...(meta.get("run")?.value ? { runId: meta.get("run")!.value } : {}),
      ...(scope ? { scope } : {}),
      ...(amendments.length ? { amendments } : {}),
    },
  };
}

function capitalise(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1);
}
