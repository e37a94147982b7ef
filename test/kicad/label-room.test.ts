/**
 * A renamed label makes room, judged by KiCad's own render: on every sheet of every demo and
 * corpus project (copies), the label in the sheet's tightest spot is renamed to a name twice as
 * long. Every rename that commits reads clear: in `kicad-cli sch export svg`'s drawing no other
 * item crosses the new text. One that cannot be drawn readably is refused, saying what each way
 * of making room ran into (the log lists them). One export per project keeps the sweep to a
 * few minutes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { exportSvg } from "../../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { intersects, labelBox, occupiedItems } from "../../src/kicad/schematic/space.ts";
import type { Label } from "../../src/kicad/schematic/model/sheet-items.ts";
import type { SchematicFile } from "../../src/kicad/schematic/model/schematic-file.ts";
import { allProjects, copyCorpusProject } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { textOverlaps } from "../support/svg-text.ts";

afterAll(cleanupTempDirs);

/**
 * Projects where a committed rename is still drawn crossed in KiCad's render, with what was
 * found. For these the sweep asserts the crossing is still there, so a fix shows up as a failure
 * asking to shrink this list.
 */
const KNOWN_CROSSINGS: Record<string, string> = {
  "corpus/bms-c1":
    "LED_GREEN at (157.48, 134.62, turned 270), renamed twice as long and committed in place now that the label no longer counts itself as an obstacle, is drawn with its text (from 157.93, 134.25) crossing a 1.27 mm vertical stroke at x 174.76, y 133.14 to 134.41, that copperhead's boxes place clear of it; which drawn item that is and why the boxes miss it is not yet traced",
};

/**
 * The label of `file` in its tightest spot: the one whose text, twice as long, would newly run
 * over the most items (as copperhead's boxes see them). Local labels (whose rename changes only
 * this sheet's drawing) first; global ones where a sheet has none. Bus labels are left out, and
 * so are `members` of a bus (see `busMembers`): a bus member keeps its connection through the bus only under
 * its member name, so renaming it alone is refused as changing the nets.
 */
function tightestLabel(
  file: SchematicFile,
  netNames: Set<string>,
  members: Set<string>,
  netOf: (label: Label) => string,
): Label | undefined {
  const items = occupiedItems(file);
  const candidates = file.labels.filter(
    (l) =>
      (l.kind === "local" || l.kind === "global") &&
      l.text !== "" &&
      !/[[{\s]/.test(l.text) &&
      netNames.has(netOf(l)) &&
      !members.has(l.text),
  );
  const pool = candidates.some((l) => l.kind === "local") ? candidates.filter((l) => l.kind === "local") : candidates;
  let best: { label: Label; fresh: number } | undefined;
  for (const label of pool) {
    const flagged = label.kind !== "local";
    const now = labelBox(label.at, label.text.length, label.rotation, flagged);
    const longer = labelBox(label.at, label.text.length * 2, label.rotation, flagged);
    const fresh = items.filter((i) => intersects(longer, i.box) && !intersects(now, i.box)).length;
    if (!best || fresh > best.fresh) best = { label, fresh };
  }
  return best?.label;
}

/**
 * The member names of every bus labelled in `files`, in KiCad's bus syntax: `D[0..7]` has
 * members D0 to D7, `SPI{SCK, MOSI}` has SPI.SCK and SPI.MOSI, `ANALOG{A[0..1]}` ANALOG.A0 and
 * ANALOG.A1.
 */
function busMembers(files: Iterable<SchematicFile>): Set<string> {
  const vector = (name: string): string[] => {
    const m = /^(.*)\[(\d+)\.\.(\d+)\]$/.exec(name);
    if (!m) return [name];
    const [from, to] = [Number(m[2]), Number(m[3])].sort((x, y) => x - y) as [number, number];
    return Array.from({ length: to - from + 1 }, (_, i) => `${m[1]}${from + i}`);
  };
  const members = new Set<string>();
  for (const file of files)
    for (const { text } of file.labels) {
      const group = /^(.*)\{([^}]*)\}$/.exec(text);
      const names = group
        ? group[2]!
            .split(/[\s,]+/)
            .filter(Boolean)
            .flatMap(vector)
            .map((member) => (group[1] ? `${group[1]}.${member}` : member))
        : text.includes("[")
          ? vector(text)
          : [];
      for (const name of names) members.add(name);
    }
  return members;
}

describe("a rename to a name twice as long, in each sheet's tightest spot, reads clear in KiCad's render or is refused saying why", () => {
  for (const project of allProjects().filter((p) => p.schematic)) {
    test(project.id, async () => {
      const cli = await requireKicadCli();
      const copy = await copyCorpusProject(project);
      const root = copy.schematic!;
      const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
      const renamed: { sheet: string; from: string; to: string }[] = [];
      const refused: string[] = [];
      const members = busMembers(editor.project.files.values());
      for (const file of editor.project.files.values()) {
        const instance = editor.project.instancesOf(file)[0];
        if (!instance) continue;
        const names = new Set(editor.netlist().nets.map((n) => n.name));
        const netOf = (l: Label) => (l.kind === "global" ? l.text : instance.humanPath + l.text);
        const label = tightestLabel(file, names, members, netOf);
        if (!label) continue;
        const from = netOf(label);
        const to = label.text + "X".repeat(label.text.length);
        if (names.has(label.kind === "global" ? to : instance.humanPath + to)) continue;
        try {
          editor.renameNet(from, to);
          renamed.push({ sheet: instance.humanPath, from, to });
        } catch (err) {
          refused.push(`${instance.humanPath} ${from}: ${(err as Error).message}`);
        }
      }
      // Where no way of making room is clear, the refusal must say what each way ran into.
      for (const why of refused) expect(why).toContain("Tried, least change first: turned at the same point:");
      editor.save();
      const out = await makeTempDir();
      await exportSvg(root, out, { cli });
      const svgs = readdirSync(out)
        .filter((f) => f.endsWith(".svg"))
        .map((f) => join(out, f));
      const unreadable: string[] = [];
      for (const r of renamed) {
        const anchors = [...editor.project.files.values()].flatMap((f) =>
          f.labels.filter((l) => l.text === r.to).map((l): [number, number] => [l.at.x / 10_000, l.at.y / 10_000]),
        );
        const drawn = svgs.flatMap((svg) => textOverlaps(svg, r.to, anchors).map((d) => ({ svg, ...d })));
        if (drawn.length === 0) unreadable.push(`${r.sheet} ${r.to}: not found in the render`);
        for (const d of drawn)
          if (d.crossing.length > 0)
            unreadable.push(
              `${r.sheet} ${r.to} (${d.box.x0.toFixed(2)}, ${d.box.y0.toFixed(2)}) in ${d.svg.split("/").pop()}: crossed by ${d.crossing.slice(0, 3).join(" | ")}`,
            );
      }
      console.log(
        `${project.id}: ${renamed.length} renamed (${renamed.map((r) => r.to).join(", ")}); ${refused.length} refused${refused.length ? `:\n  ${refused.join("\n  ")}` : ""}`,
      );
      const known = KNOWN_CROSSINGS[project.id];
      if (known) {
        if (unreadable.length === 0)
          throw new Error(`${project.id} now reads clear: take it off KNOWN_CROSSINGS (it was listed for: ${known})`);
        console.log(`${project.id}: known crossing (${known}): ${unreadable.join("; ")}`);
      } else expect(unreadable).toEqual([]);
    }, 180_000);
  }
});
