/**
 * The human docs `copperhead init` starts a repo with: SPEC.md, DECISIONS.md and
 * CHANGELOG.md. Once written they belong to people (and to `do`'s append-only entries), so
 * `init` only ever creates them. Their text carries no dates or versions: running `init` twice
 * must leave `git status` clean.
 */
import type { Design } from "../design/design.ts";
import { suggestRequirements } from "./suggest.ts";

/**
 * Entries of CHANGELOG.md go directly below this marker, newest first, so the header above it
 * stays put while history grows downwards.
 */
export const CHANGELOG_ENTRIES_MARKER = "<!-- copperhead:changelog:entries -->";

export function specTemplate(design: Design): string {
  const requirements = suggestRequirements(design).flatMap((req) => [
    `- ${req.id}: ${req.text}`,
    ...req.checks.map((rule) => `  - check: ${rule}`),
  ]);
  return [
    `# ${design.project.name}: specification`,
    "",
    "What this board is for, written for the people who build, review and change it. Everything",
    "above the Requirements section is free prose; copperhead reads it only to catch references",
    "to parts or nets that no longer exist.",
    "",
    "## Purpose",
    "",
    "_What the board does, who uses it, and where it lives._",
    "",
    "## Interfaces",
    "",
    "_Connectors, supplies and signals that cross the board edge._",
    "",
    "## Constraints",
    "",
    "_Size, cost, assembly, standards._",
    "",
    "## Requirements",
    "",
    "Each requirement is a bullet `- REQ-<AREA>-<N>: sentence` with nested `- check:` rules that",
    "`copperhead check` evaluates against the design. Rules: `net <NET> exists|absent`,",
    "`<REF> exists|absent`, `<REF>.<PIN> on <NET>`, `<REF>.<FIELD> <op> <value>`,",
    "`count <PATTERN> <op> <N>`, `net <NET> pins <op> <N>`, `board width|height <op> <LENGTH>`.",
    "Only people edit this section: copperhead's agent refuses to change it, and a failing rule",
    "always needs a human. The rules below were suggested by `copperhead init` from the design",
    "as it was; keep, edit or delete them.",
    "",
    ...requirements,
    "",
  ].join("\n");
}

export function decisionsTemplate(): string {
  return [
    "# Decisions",
    "",
    "Why the design is the way it is, one line per decision, oldest first. copperhead appends a",
    "line for every decision a run records; add your own the same way:",
    "",
    "    - YYYY-MM-DD run-id: decision — why",
    "",
    "`run-id` is the copperhead run that made the decision (its record is under",
    "`.copperhead/runs/`); write `manual` for a decision made by hand. Lines are never edited",
    "or removed: a decision that is reversed gets a new line that says so.",
    "",
  ].join("\n");
}

/** `docsDir` is repo-relative, as the config's `docs`. */
export function changelogTemplate(docsDir: string): string {
  return [
    "# Changelog",
    "",
    "One entry per change committed through copperhead, newest first, each naming its change",
    `proposal under \`${docsDir}/changes/\` and its run. Entries are added, never rewritten.`,
    "",
    CHANGELOG_ENTRIES_MARKER,
    "",
  ].join("\n");
}
