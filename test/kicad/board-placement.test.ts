/**
 * The footprint of "a 100 nF capacitor next to U1" on real boards: placed inside the outline,
 * near U1's footprint (as near as the board's copper allows), on its side, and judged by kicad-cli's DRC — no courtyard overlap,
 * clearance, edge-clearance or any other error that was not there before.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { boxInsideOutline, outlineSegments, placeAdditions, placementRules } from "../../src/kicad/board/placement.ts";
import { applyBoardSync, planBoardSync } from "../../src/kicad/board/sync/sync.ts";
import { Board } from "../../src/kicad/board/view.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/view.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const TIMEOUT = 240_000;

interface Project {
  schematic: string;
  board: string;
  pro: string;
}

async function corpus(id: string): Promise<Project> {
  const project = corpusProjects().find((p) => p.id === id);
  if (!project?.schematic || !project.board) throw new Error(`corpus project ${id} is missing`);
  const copy = await copyCorpusProject(project);
  return { schematic: copy.schematic!, board: copy.board!, pro: join(copy.root, copy.projectFile) };
}

const CASES: { id: string; open: () => Promise<Project> }[] = [
  {
    id: "fixtures/usb-led",
    open: async () => {
      const dir = await copyFixture("usb-led");
      return { schematic: join(dir, "usb-led.kicad_sch"), board: join(dir, "usb-led.kicad_pcb"), pro: join(dir, "usb-led.kicad_pro") };
    },
  },
  { id: "corpus/glasgow-revc3", open: () => corpus("corpus/glasgow-revc3") },
  { id: "corpus/bms-c1", open: () => corpus("corpus/bms-c1") },
];

/** Error findings as `type` counts. */
function errors(report: { violations: { type: string; severity: string }[] }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of report.violations) if (v.severity === "error") out[v.type] = (out[v.type] ?? 0) + 1;
  return out;
}

describe("the new capacitor's footprint goes next to U1's, inside the outline", () => {
  for (const c of CASES) {
    test(
      c.id,
      async () => {
        const cli = await requireKicadCli();
        const p = await c.open();
        const before = await runDrc(p.board, { cli });
        const libraries = await openLibraries(dirname(p.pro));
        const editor = SchematicEditor.open(p.schematic, libraries);
        const added = editor.addComponent({ libId: "Device:C", value: "100n", footprint: "Capacitor_SMD:C_0603_1608Metric", near: "U1", connect: { "1": "+3V3", "2": "GND" } });
        editor.save();

        const schematic = loadSchematicProject(p.schematic);
        const board = Board.load(p.board);
        const full = planBoardSync({ board, schematic, components: listComponents(schematic), netlist: buildNetlist(schematic), libraries });
        // Only the new part, as a sync scoped to the change applies it: bms-c1 carries
        // unrelated drift (J3's unconnected pads) whose re-netting would short its tracks.
        const plan = { ...full, added: full.added.filter((a) => a.ref === added.ref), updated: [], removed: [], renets: full.renets.filter((r) => !r.from) };
        const staged = placeAdditions(board, plan, libraries, (ref) => (ref === added.ref ? "U1" : undefined), placementRules(p.pro, null));
        expect(staged).toEqual([]);
        applyBoardSync(board, plan, libraries);
        writeFileSync(p.board, printSexpr(board.doc));

        const placed = Board.load(p.board).footprints();
        const cap = placed.find((f) => f.ref === added.ref)!;
        const u1 = placed.find((f) => f.ref === "U1")!;
        const capBox = boardBounds(cap.node)!;
        const u1Box = boardBounds(u1.node)!;
        const distance = Math.hypot(Math.max(0, u1Box.minX - capBox.maxX, capBox.minX - u1Box.maxX), Math.max(0, u1Box.minY - capBox.maxY, capBox.minY - u1Box.maxY));
        console.log(`${c.id}: ${added.ref} at ${cap.at.x}, ${cap.at.y} rot ${cap.at.rotation} on ${cap.layer}, courtyard ${distance.toFixed(2)} mm from U1's`);
        expect(cap.layer).toBe(u1.layer);
        // The nearest spot clear of courtyards and of other nets' copper (zone fills cover most of
        // a poured board) is within the placement's reach.
        expect(distance).toBeLessThanOrEqual(25);
        expect(boxInsideOutline(capBox, outlineSegments(Board.load(p.board)))).toBe(true);

        const after = await runDrc(p.board, { cli });
        expect(errors(after.report)).toEqual(errors(before.report));
        expect(readFileSync(p.board, "utf8")).toContain(`"${added.ref}"`);
      },
      TIMEOUT,
    );
  }
});
