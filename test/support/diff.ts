/** Asserting on a diff: exactly the expected sections, every other one empty. */
import { expect } from "bun:test";
import type { DiffResult } from "../../src/commands/diff.ts";
import type { DesignDiff } from "../../src/diff/diff.ts";
import { diffShort, diffText } from "../../src/diff/format.ts";

export type Sections = Omit<DesignDiff, "schema" | "empty">;

const NOTHING: Sections = {
  sheets: [],
  components: [],
  nets: [],
  pins: [],
  board: null,
  requirements: [],
  bom: [],
  problems: [],
};

/**
 * The diff of `project` holds `expected` and nothing else; it is `empty` exactly when nothing
 * is expected.
 */
export function expectOnly(result: DiffResult, project: string, expected: Partial<Sections>): void {
  const { schema, project: compared, base: _base, head: _head, empty, renders: _renders, ...sections } = result;
  expect(schema).toBe("copperhead.diff/1");
  expect(compared).toBe(project);
  expect(sections).toEqual({ ...NOTHING, ...expected });
  expect(empty).toBe(Object.values(expected).every((v) => v === null || (Array.isArray(v) && v.length === 0)));
  expectShortAgrees(result);
}

/** The short form's lines (`- title: a, b and 3 more`) as the number of entries each counts. */
function shortEntries(short: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of short.split("\n").slice(1)) {
    const [, title, list] = /^- ([^:]+): (.*)$/.exec(line)!;
    const more = / and (\d+) more$/.exec(list!);
    const listed = (more ? list!.slice(0, more.index) : list!).split(", ");
    out.set(title!, [...listed, ...Array.from({ length: Number(more?.[1] ?? 0) }, () => "(more)")]);
  }
  return out;
}

/** The long form's sections, by title, each with its entry lines. */
function longSections(long: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of long.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("  ")) current.push(line.trim());
    else out.set(line.replace(/ \(.*\)$/, ""), (current = []));
  }
  return out;
}

const sum = (texts: string[], pattern: RegExp) =>
  texts.reduce((n, t) => n + [...t.matchAll(pattern)].reduce((m, x) => m + Number(x[1]), 0), 0);

/**
 * Every count the commit body gives (`diffShort`) is the count the run summary shows
 * (`diffText`) for the same diff: entries per section, pads on board nets, tracks and zones.
 */
export function expectShortAgrees(diff: DesignDiff): void {
  const short = diffShort(diff);
  if (diff.empty) return void expect(short).toBe("Design: no changes.");
  const entries = shortEntries(short);
  const sections = longSections(diffText(diff, { base: "before", head: "after" }, { heading: null }));
  const pairs: [string, string][] = [
    ["parts", "Parts"],
    ["nets", "Nets"],
    ["pins", "Pins moved to another net"],
    ["requirements", "Requirements"],
    ["BOM", "BOM rows"],
  ];
  for (const [brief, long] of pairs)
    expect([brief, entries.get(brief)?.length ?? 0]).toEqual([brief, sections.get(long)?.length ?? 0]);
  const board = sections.get("Board") ?? [];
  const items = entries.get("board") ?? [];
  if (!diff.board) return void expect(items).toEqual([]);
  const padNets = board.filter((l) => l.endsWith("on the pads"));
  const padMoves = board.filter((l) => l.startsWith("pad "));
  const tracks = board.filter((l) => l.startsWith("tracks "));
  const zones = board.filter((l) => / (zone|rule area)\b/.test(l) && !l.startsWith("tracks"));
  const shown = items.join(", ");
  if (!shown.includes("(more)"))
    expect(sum([shown], /on (\d+) pads?/g) + sum([shown], /(\d+) pads? moved/g)).toBe(
      sum(padNets, /\((\d+) pads?/g) + padMoves.length,
    );
  // `tracks +3/-1`, `vias +1`, `zones -2`: added and removed, a zero left out.
  const shortCount = (label: string) => {
    const m = new RegExp(`(?:^|, )${label} (?:\\+(\\d+))?/?(?:-(\\d+))?(?:,|$)`).exec(shown);
    return m ? [Number(m[1] ?? 0), Number(m[2] ?? 0)] : undefined;
  };
  const segments = [sum(tracks, /\+(\d+) (?:segment|arc)/g), sum(tracks, /−(\d+) (?:segment|arc)/g)];
  const vias = [sum(tracks, /\+(\d+) via/g), sum(tracks, /−(\d+) via/g)];
  expect(shortCount("tracks") ?? [0, 0]).toEqual(segments);
  expect(shortCount("vias") ?? [0, 0]).toEqual(vias);
  const zoneItem = shortCount("zones");
  if (zoneItem)
    expect(zoneItem).toEqual([
      zones.filter((l) => l.startsWith("+")).length,
      zones.filter((l) => l.startsWith("−")).length,
    ]);
  const footprints = board.filter((l) => / footprint /.test(l)).length;
  const copper = (segments[0]! + segments[1]! ? 1 : 0) + (vias[0]! + vias[1]! ? 1 : 0);
  const expected =
    footprints +
    padNets.length +
    (padMoves.length ? 1 : 0) +
    copper +
    (zones.length ? 1 : 0) +
    (diff.board.layers.length ? 1 : 0) +
    (diff.board.outline ? 1 : 0);
  expect(items.length).toBe(expected || 1);
}
