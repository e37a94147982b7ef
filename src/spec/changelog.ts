/**
 * CHANGELOG.md is append-only and newest first: entries go right below the entries marker
 * `init` writes (or at the end of a changelog without one). Used by `do` for each committed
 * run and by `sync` to restore entries that are missing.
 */
import { CHANGELOG_ENTRIES_MARKER } from "./templates.ts";

export function insertChangelogEntries(existing: string, entries: string[]): string {
  const block = entries.map((e) => (e.endsWith("\n") ? e : `${e}\n`)).join("\n");
  const at = existing.indexOf(CHANGELOG_ENTRIES_MARKER);
  if (at < 0) return `${existing}${existing.endsWith("\n") ? "" : "\n"}\n${block}`;
  const head = existing.slice(0, at + CHANGELOG_ENTRIES_MARKER.length);
  const rest = existing.slice(at + CHANGELOG_ENTRIES_MARKER.length).replace(/^\n+/, "");
  return `${head}\n\n${block}${rest ? `\n${rest}` : ""}`;
}
