/**
 * Every kind of edit copperhead makes, written into a schematic and a board of each format in
 * the corpus (KiCad 6, 7, 8 and 9): no token appears that the file's own `(version …)` does not
 * have. The tokens checked are those of the version table (kicad/format-versions.ts): for each entry
 * newer than a file, the text that entry introduces must not grow in the file. An edit whose
 * attribute the file's format lacks is refused with the version in the message, and nothing
 * else is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ToolError } from "../../src/agent/tools/tool.ts";
import { CopperheadError } from "../../src/errors.ts";
import { BOARD, has, SCHEMATIC, type FormatChange } from "../../src/kicad/format-versions.ts";
import { childText, parseSexpr } from "../../src/kicad/sexpr/index.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);
beforeAll(async () => {
  await requireKicadCli();
});

/** What each change of the version table writes, as text found in a file that has it. */
const SCHEMATIC_TOKENS: Partial<Record<keyof typeof SCHEMATIC, RegExp[]>> = {
  dnp: [/\(dnp (yes|no)\)/g],
  excludeFromSim: [/\(exclude_from_sim /g],
  symbolInstancesInSymbols: [/\(instances\s*\(project /g],
  descriptionField: [/\(property "Description" /g],
  v8Syntax: [/\(fields_autoplaced yes\)/g, /\(generator_version /g, /\(uuid "/g, /\(hide yes\)/g],
  embeddedFiles: [/\(embedded_fonts /g],
  pinHideBoolean: [/\((pin_names|pin_numbers)\b[^()]*(\([^()]*\)[^()]*)*\(hide yes\)/g],
  sheetAttributes: [/\(size [\d. ]+\)\s*\(exclude_from_sim /g],
};
const BOARD_TOKENS: Partial<Record<keyof typeof BOARD, RegExp[]>> = {
  strokes: [/\(stroke\s*\(width /g],
  soldermaskBridgesFlag: [/\(attr\b[^()]*\ballow_soldermask_bridges\b/g],
  footprintDnp: [/\(attr\b[^()]*\bdnp\b/g],
  footprintFields: [/\(property "(Reference|Value)" /g],
  v8Syntax: [/\(uuid /g, /\(sheetname /g, /\(sheetfile /g],
  booleans: [/\((locked|hide) yes\)/g],
  embeddedFiles: [/\(embedded_(fonts|files) /g],
  netNames: [/\(net "[^"]*"\)/g],
};

/** Occurrences of the tokens of every change newer than `version`, by change and pattern. */
function newerTokens(
  source: string,
  version: number,
  table: Record<string, FormatChange>,
  tokens: Partial<Record<string, RegExp[]>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, patterns] of Object.entries(tokens)) {
    if (has(version, table[name]!)) continue;
    for (const pattern of patterns!) out[`${name} ${pattern.source}`] = source.match(pattern)?.length ?? 0;
  }
  return out;
}

interface Case {
  id: string;
  /** An existing resistor (an update on the board) and the part the new one goes next to. */
  existing: string;
  /** A net the new resistor's pin 1 joins. */
  net: string;
}

const CASES: Case[] = [
  { id: "corpus/rp2040-designguide", existing: "R1", net: "GND" },
  { id: "corpus/antenna-eval", existing: "R2", net: "GND" },
  { id: "corpus/glasgow-revc3", existing: "R1", net: "GND" },
  { id: "corpus/bms-c1", existing: "R1", net: "GND" },
];

describe("every edit keeps each file to its own format's tokens", () => {
  for (const c of CASES) {
    test(c.id, async () => {
      const project = corpusProjects().find((p) => p.id === c.id)!;
      const repo = await initialisedCorpusRepo(project);
      const refused: string[] = [];
      const { files, schematic } = await withTools(repo, async ({ ctx, call }) => {
        const files = [ctx.project.board!, ...new Bun.Glob("**/*.kicad_sch").scanSync({ cwd: repo, absolute: true })];
        const before = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
        /** Runs an edit; a refusal is recorded (and checked below), anything else fails. */
        const edit = async (name: string, args: Record<string, unknown>) => {
          try {
            await call(name, args);
          } catch (err) {
            if (!(err instanceof ToolError || err instanceof CopperheadError)) throw err;
            refused.push(`${name} ${Object.keys(args).join(",")}: ${err.message}`);
          }
        };
        // An existing part: DNP and BOM exclusion, pushed to its footprint by board sync.
        await edit("set_attribute", { ref: c.existing, exclude_from_bom: true });
        await edit("set_attribute", { ref: c.existing, dnp: true });
        await edit("set_attribute", { ref: c.existing, exclude_from_sim: true });
        await edit("set_field", { ref: c.existing, field: "MPN", value: "RC0603FR-0710KL" });
        // A new part, wired, flagged, moved, then added to the board, placed and routed.
        await edit("add_component", {
          lib_id: "Device:R",
          footprint: "Resistor_SMD:R_0603_1608Metric",
          value: "10k",
          ref: "R901",
          near: c.existing,
          connect: { "1": c.net },
        });
        await edit("mark_no_connect", { ref: "R901", pin: "2" });
        await edit("set_field", { ref: "R901", field: "Value", value: "4k7" });
        await edit("move_symbol", { ref: "R901", near: c.net });
        // A new sheet carrying the net, with a part on it: the new file takes the design's format.
        await edit("add_sheet", { name: "Extra", file: "extra.kicad_sch", nets: [c.net] });
        await edit("add_component", {
          lib_id: "Device:R",
          footprint: "Resistor_SMD:R_0603_1608Metric",
          ref: "R902",
          sheet: "/Extra/",
          connect: { "1": c.net },
        });
        await edit("sync_board", {});
        await edit("place_footprint", { ref: "R901", near: c.existing });
        await edit("route", { ref: "R901" });
        await edit("set_attribute", { ref: "R901", exclude_from_pos_files: true });
        return { files: before, schematic: ctx.project.schematic };
      });

      // The edits went in: the new parts are in the schematic and on the board.
      const board = readFileSync([...files.keys()].find((f) => f.endsWith(".kicad_pcb"))!, "utf8");
      expect(board).toContain('"R901"');
      expect(board).toContain('"R902"');
      // The new sheet is held to the root's format, against nothing before it.
      const rootVersion = Number(childText(parseSexpr(files.get(schematic)!).root, "version"));
      const created = join(dirname(schematic), "extra.kicad_sch");
      expect(existsSync(created)).toBe(true);
      files.set(created, `(kicad_sch (version ${rootVersion}))`);

      const grown: string[] = [];
      for (const [file, old] of files) {
        const now = readFileSync(file, "utf8");
        const version = Number(childText(parseSexpr(now).root, "version"));
        expect(version).toBe(Number(childText(parseSexpr(old).root, "version")));
        const isBoard = file.endsWith(".kicad_pcb");
        const [table, tokens] = isBoard ? [BOARD, BOARD_TOKENS] : [SCHEMATIC, SCHEMATIC_TOKENS];
        const was = newerTokens(old, version, table, tokens);
        for (const [token, count] of Object.entries(newerTokens(now, version, table, tokens))) {
          if (count > was[token]!)
            grown.push(`${file.slice(repo.length + 1)} (${version}): ${token} ${was[token]} → ${count}`);
        }
      }
      expect(grown).toEqual([]);

      // Only attributes the schematic's format lacks are refused, each saying so.
      const schematicVersion = Number(childText(parseSexpr(readFileSync(project.schematic!, "utf8")).root, "version"));
      const expected = [
        ...(has(schematicVersion, SCHEMATIC.dnp) ? [] : ["set_attribute ref,dnp"]),
        ...(has(schematicVersion, SCHEMATIC.excludeFromSim) ? [] : ["set_attribute ref,exclude_from_sim"]),
      ];
      expect(refused.map((r) => r.slice(0, r.indexOf(":")))).toEqual(expected);
      for (const r of refused) expect(r).toMatch(/format, which has no .* attribute \(it starts at \d{8}\)/);
    }, 600_000);
  }
});
