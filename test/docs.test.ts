/**
 * The README is the two-minute page; the reference lives in `docs/`. Nothing the README used
 * to say was lost on the way: every heading of the README as it was before the split is a
 * heading of the README or of a `docs/` page, every `docs/` page is linked from the README,
 * and every relative link in them leads to a file that exists.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const read = (rel: string) => readFileSync(join(ROOT, rel), "utf8");
const PAGES = readdirSync(join(ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`);

/** The headings of the README before it was split into `docs/` pages (frozen). */
const OLD_HEADINGS = [
  "copperhead",
  "What works today",
  "Install",
  "Upgrading",
  "Commands",
  "`copperhead demo [--dir DIR] [--json]`",
  '`copperhead do "<request>" [--dry-run] [--yes] [--model M] [--max-repair-cycles N] [--max-turns N] [--json]`',
  "The proposal binds the edits",
  "Board sync in a run",
  "`copperhead check [--fab] [--strict] [--baseline [REF]] [--staged] [--json] [--format text|json|sarif|github|junit]`",
  "`copperhead diff [--base REF] [--head REF] [--format text|markdown] [--render DIR] [--json]`",
  "`copperhead init [--project FILE] [--force] [--no-hooks] [--json]`",
  "`copperhead sync [--resolve] [--model M] [--json]`",
  "`copperhead board sync [--dry-run] [--fields] [--json] [--project FILE]`",
  "`copperhead netlist [--json] [--project FILE]`",
  "`copperhead doctor [--json]`",
  "Exit codes",
  "Hostile repositories",
  "Project discovery",
  "Configuration: `.copperhead/config.json`",
  "MCP server",
  "CI",
  "kicad-cli",
  "Developing",
];

/** A heading as compared: a command's heading by the command alone, so its options may grow. */
function headingKey(heading: string): string {
  const plain = heading.replace(/`/g, "").trim();
  if (!plain.startsWith("copperhead ")) return plain;
  const words = plain.split(/\s+/);
  const end = words.findIndex((w, i) => i > 0 && /^["<[-]/.test(w));
  return words.slice(0, end < 0 ? undefined : end).join(" ");
}

/** The headings of a markdown page, outside code blocks. */
function headings(markdown: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

describe("README and docs/", () => {
  const readme = read("README.md");

  test("the README is short enough to read in two minutes", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  });

  test("every heading of the old README is a heading of the README or a docs/ page", () => {
    const present = new Set([readme, ...PAGES.map(read)].flatMap(headings).map(headingKey));
    expect(OLD_HEADINGS.map(headingKey).filter((h) => !present.has(h))).toEqual([]);
  });

  test("every docs/ page is linked from the README", () => {
    expect(PAGES.length).toBeGreaterThanOrEqual(5);
    expect(PAGES.filter((page) => !readme.includes(`](${page})`))).toEqual([]);
  });

  test("every relative link in the README and docs/ leads to a file that exists", () => {
    const broken: string[] = [];
    for (const page of ["README.md", ...PAGES]) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith("#")) continue;
        const file = target!.replace(/#.*$/, "");
        if (!existsSync(join(ROOT, dirname(page), file))) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
