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
 *
 *     ## Why
 *     ## Planned changes
 *     ## Verification
 *
 * `renderProposal` and `parseProposal` are inverses, so what `do` writes always validates.
 */

export const APPROVALS = ["auto", "interactive"] as const;
export type Approval = (typeof APPROVALS)[number];

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
}

export interface ProposalProblem {
  line: number;
  message: string;
}

const SECTIONS = { why: "Why", changes: "Planned changes", verification: "Verification" } as const;

export function renderProposal(p: Proposal): string {
  const meta = [
    `- Change: ${p.id}`,
    ...(p.runId ? [`- Run: ${p.runId}`] : []),
    `- Approval: ${p.approval}`,
    `- Requirements touched: ${p.requirements.length ? p.requirements.join(", ") : "none"}`,
  ];
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
  ].join("\n");
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
    const heading = /^## (.+?)\s*$/.exec(line);
    if (heading) {
      current = { start: i + 1, body: [] };
      sections.set(heading[1]!.toLowerCase(), current);
      continue;
    }
    if (current) current.body.push(line);
    else {
      const m = /^- ([A-Za-z ]+):\s*(.*)$/.exec(line);
      if (m) meta.set(m[1]!.trim().toLowerCase(), { value: m[2]!.trim(), line: i + 1 });
    }
  }

  const requireMeta = (key: string): string => {
    const entry = meta.get(key);
    if (!entry || !entry.value) problems.push({ line: titleIndex + 2, message: `missing \`- ${capitalise(key)}: …\` line` });
    return entry?.value ?? "";
  };
  const id = requireMeta("change");
  const approvalText = requireMeta("approval").toLowerCase();
  if (approvalText && !(APPROVALS as readonly string[]).includes(approvalText)) {
    problems.push({ line: meta.get("approval")!.line, message: `approval must be one of ${APPROVALS.join(", ")}, not "${approvalText}"` });
  }
  const reqText = requireMeta("requirements touched");
  const requirements = reqText && reqText.toLowerCase() !== "none" ? reqText.split(/\s*,\s*/).filter(Boolean) : [];
  for (const req of requirements) {
    if (!/^REQ-[A-Z0-9-]+$/.test(req)) problems.push({ line: meta.get("requirements touched")!.line, message: `"${req}" is not a requirement id (REQ-…)` });
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
    },
  };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function capitalise(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1);
}
