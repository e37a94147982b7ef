/**
 * Editing schematics saved by older KiCad versions: each edit keeps every file's format version,
 * writes the new items in that version's syntax (KiCad 6 keeps references in the root's
 * symbol_instances), and kicad-cli 9 loads the result with the netlist we expect and no new ERC
 * finding. Runs on the KiCad 6 and 7 fixtures and on KiCad 6 and 7 projects of the corpus.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exportNetlist, runErc, type KicadCli, type Violation } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { child, children, childText, parseSexpr, text, type SList } from "../../src/kicad/sexpr/index.ts";
import { corpusProjects, copyCorpusProject } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";

afterAll(cleanupTempDirs);

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});

interface Case {
  name: string;
  /** The copied project's root schematic. */
  copy: () => Promise<string>;
  /** The two existing power nets the new resistor goes between. */
  nets: [string, string];
  /** The sheet it goes on (default the root) and how many instances that sheet has. */
  sheet?: string;
  instances?: number;
}

const corpus = (id: string) => async () =>
  (await copyCorpusProject(corpusProjects().find((p) => p.id === id)!)).schematic!;
const fixture = (name: string) => async () => join(await copyFixture(`netlist/${name}`), `${name}.kicad_sch`);

const CASES: Case[] = [
  { name: "KiCad 6 fixture (hierarchy, symbol_instances)", copy: fixture("kicad6"), nets: ["+3V3", "GND"] },
  {
    name: "KiCad 6 fixture, on a sheet placed twice",
    copy: fixture("kicad6"),
    nets: ["+3V3", "GND"],
    sheet: "/ChanB/",
    instances: 2,
  },
  { name: "KiCad 7 fixture (KiCad 9 sub-sheet)", copy: fixture("kicad7"), nets: ["+3V3", "GND"] },
  { name: "corpus/rp2040-designguide (KiCad 6)", copy: corpus("corpus/rp2040-designguide"), nets: ["+3V3", "GND"] },
  { name: "corpus/antenna-eval (KiCad 7)", copy: corpus("corpus/antenna-eval"), nets: ["GND", "GND"] },
];

const versionOf = (source: string) => childText(parseSexpr(source).root, "version");
/**
 * ERC's violations by kind. A library symbol differing from its library counts once whatever
 * the number of placed symbols using it: a new power symbol reuses the design's embedded one,
 * which differs as the design's others of its name do (checks/baseline.ts).
 */
const ercKinds = (violations: Violation[]) => {
  const counts = new Map<string, number>();
  for (const v of violations) {
    if (v.type === "lib_symbol_mismatch") counts.set(`${v.type}: ${v.description}`, 1);
    else counts.set(v.type, (counts.get(v.type) ?? 0) + 1);
  }
  return counts;
};

describe("editing an older format keeps it", () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const root = await c.copy();
      const project = loadSchematicProject(root);
      const before = new Map([...project.files.keys()].map((path) => [path, readFileSync(path, "utf8")]));
      const ercBefore = await runErc(root, { cli });
      const editor = SchematicEditor.open(root, await openLibraries(root.replace(/\.kicad_sch$/, ".kicad_pro")));
      const added = editor.addComponent({
        libId: "Device:R",
        value: "10k",
        footprint: "Resistor_SMD:R_0603_1608Metric",
        sheet: c.sheet,
      });
      editor.connect(added.ref, "1", c.nets[0]);
      editor.connect(added.ref, "2", c.nets[1]);
      const changed = editor.save();
      const sheetFile = c.sheet ? project.instances.find((i) => i.humanPath === c.sheet)!.file.path : root;
      // A KiCad 6 root holds the new part's instance rows, wherever the part goes.
      expect(changed.sort()).toEqual([...new Set([root, sheetFile])].sort());

      for (const [path, text] of before) {
        const after = readFileSync(path, "utf8");
        expect(versionOf(after)).toBe(versionOf(text));
        if (!changed.includes(path)) expect(after).toBe(text);
      }

      // The new items, in the file's own syntax.
      const version = Number(versionOf(before.get(sheetFile)!));
      const rootTree = parseSexpr(readFileSync(root, "utf8")).root;
      const tree = parseSexpr(readFileSync(sheetFile, "utf8")).root;
      const placed = children(tree, "symbol").find((s) =>
        children(s, "property").some((p) => text(p, 1) === "Reference" && text(p, 2) === added.ref),
      )!;
      expect(placed).toBeDefined();
      const uuid = child(placed, "uuid")!;
      const uuidAtom = uuid.items[1]!;
      expect(uuidAtom.type === "atom" && uuidAtom.raw.startsWith('"')).toBe(version >= 20231120);
      expect(child(placed, "exclude_from_sim")).toBeUndefined();
      if (version < 20221002) {
        expect(child(placed, "instances")).toBeUndefined();
        expect(child(placed, "dnp")).toBeUndefined();
        expect(children(placed, "property").every((p) => child(p, "id") !== undefined)).toBe(true);
        const rows = children(child(rootTree, "symbol_instances")!, "path").filter((r) =>
          text(r, 1)!.endsWith(`/${childText(placed, "uuid")}`),
        );
        expect(rows).toHaveLength(c.instances ?? 1);
        expect(rows.map((r) => childText(r, "reference"))).toContain(added.ref);
        for (const r of rows)
          expect([childText(r, "value"), childText(r, "footprint")]).toEqual(["10k", "Resistor_SMD:R_0603_1608Metric"]);
      } else {
        expect(child(placed, "instances")).toBeDefined();
        expect(child(placed, "dnp")).toBeDefined();
        expect(children(placed, "property").some((p) => child(p, "id") !== undefined)).toBe(false);
      }

      // kicad-cli loads it: its netlist is ours, the part sits between the two nets, and ERC
      // finds nothing new.
      const expected = parseKicadNetlist(await exportNetlist(root, { cli }), root);
      expect(netlistDiff(expected, loadSchematicProject(root) && editor.netlist())).toEqual([]);
      const netOf = (pin: string) =>
        expected.nets.find((n) => n.nodes.some((x) => x.ref === added.ref && x.pin === pin))?.name;
      expect([netOf("1"), netOf("2")]).toEqual(c.nets);
      const ercAfter = ercKinds((await runErc(root, { cli })).sheets.flatMap((s) => s.violations));
      for (const [kind, count] of ercAfter)
        expect({ kind, count }).toEqual({
          kind,
          count: Math.min(count, ercKinds(ercBefore.sheets.flatMap((s) => s.violations)).get(kind) ?? 0),
        });
    }, 300_000);
  }
});

describe("edits that older formats cannot express", () => {
  test("renaming a net named by a legacy power symbol's hidden pin is refused, naming the format", async () => {
    const root = await fixture("kicad6")();
    const editor = SchematicEditor.open(root, await openLibraries(root.replace(/\.kicad_sch$/, ".kicad_pro")));
    const error = thrownCopperheadError(() => editor.renameNet("+3V3", "+3V3_MCU"));
    expect(error.code).toBe("edit_conflict");
    expect(error.message).toContain("KiCad 6 (20211123)");
    expect(error.fix).toContain("(disconnect, then connect)");
    expect(editor.changedFiles()).toEqual([]);
  });

  test("setting a KiCad 6 symbol's Value also sets it in the root's instance rows, which KiCad reads first", async () => {
    const root = await fixture("kicad6")();
    const editor = SchematicEditor.open(root, await openLibraries(root.replace(/\.kicad_sch$/, ".kicad_pro")));
    editor.setField("R1", "Value", "2k2");
    editor.setField("R1", "MPN", "RC0603FR-072K2L");
    editor.save();
    const tree = parseSexpr(readFileSync(root, "utf8")).root;
    const rows = children(child(tree, "symbol_instances")!, "path").filter(
      (r) => childText(r, "reference") === "R1" || childText(r, "reference") === "R2",
    );
    // R1 and R2 are one symbol in the shared sheet.
    expect(rows.map((r) => childText(r, "value"))).toEqual(["2k2", "2k2"]);
    const amp = parseSexpr(readFileSync(root.replace("kicad6.kicad_sch", "amp.kicad_sch"), "utf8")).root;
    const symbol = children(amp, "symbol").find((s: SList) =>
      children(s, "property").some((p) => text(p, 1) === "MPN"),
    )!;
    const mpn = children(symbol, "property").find((p) => text(p, 1) === "MPN")!;
    expect(childText(mpn, "id")).toBe(
      String(
        Math.max(
          ...children(symbol, "property")
            .filter((p) => p !== mpn)
            .map((p) => Number(childText(p, "id"))),
        ) + 1,
      ),
    );
    const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    expect(netlistDiff(netlist, loadSchematicProject(root) && editor.netlist())).toEqual([]);
  }, 120_000);
});
