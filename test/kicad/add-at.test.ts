/**
 * add_component at an explicit spot, and find_space asked for a symbol, on rvpc-revb's one full
 * A4 sheet: the spot find_space gives for a regulator is one add_component accepts as `at` (the
 * part lands exactly there, its drawing and fields over nothing drawn, judged by boxes from the
 * saved file); where a 24LC02 EEPROM has no room, find_space says so as add_component does,
 * rather than offering a rectangle the part cannot use; a spot that is taken is refused, naming
 * what is in the way, with the sheet unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, overlaps } from "../support/sheet-boxes.ts";
import { withTools } from "../support/tool-context.ts";

let repo: string;
let root: string;

beforeAll(async () => {
  await requireKicadCli();
  const copy = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!);
  repo = copy.root;
  root = copy.schematic!;
});
afterAll(cleanupTempDirs);

const EEPROM = "Memory_EEPROM:24LC02";
const REGULATOR = "Regulator_Linear:AMS1117-3.3";

describe("add_component at, and find_space for a symbol", () => {
  test("the spot find_space gives for a regulator is taken as add_component's at, and nothing new overlaps what was drawn", async () => {
    const spot = (await withTools(repo, ({ call }) => call("find_space", { lib_id: REGULATOR, near: "U1" }))) as {
      sheet: string;
      x: number;
      y: number;
      rotation: number;
    };
    expect(spot.sheet).toBe("/");
    const old = new Set(drawnItems(root).map((i) => i.uuid));

    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    const added = editor.addComponent({ libId: REGULATOR, at: [spot.x, spot.y], rotation: spot.rotation });
    expect(added.at).toEqual([spot.x, spot.y]);
    editor.save();

    const items = drawnItems(root);
    const fresh = items.filter((i) => !old.has(i.uuid));
    const before = items.filter((i) => old.has(i.uuid));
    expect(fresh.some((i) => i.symbol?.reference === added.ref)).toBe(true);
    const crossed = fresh.flatMap((n) =>
      before.filter((o) => overlaps(n.box, o.box)).map((o) => `${n.kind} over ${o.kind} ${o.symbol?.reference ?? ""}`),
    );
    expect(crossed).toEqual([]);
  }, 120_000);

  test("where the EEPROM has no room, find_space and add_component both say so", async () => {
    const answer = await withTools(repo, ({ call }) => call("find_space", { lib_id: EEPROM, near: "U1" })).catch(
      (e: unknown) => e as Error,
    );
    expect(String((answer as Error).message)).toContain("No free room for Memory_EEPROM:24LC02 on sheet /");
    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    expect(thrownCopperheadError(() => editor.addComponent({ libId: EEPROM, near: "U1" })).message).toContain(
      "No free room for Memory_EEPROM:24LC02 on sheet /",
    );
  });

  test("a taken spot is refused, naming what is in the way, and the sheet is unchanged", async () => {
    const editor = SchematicEditor.open(root, await openLibraries(join(root, "..")));
    const u1 = editor.project.root.file.symbols.find((s) =>
      s.fields.some((f) => f.name === "Reference" && f.value === "U1"),
    )!;
    const at: [number, number] = [u1.placement.at.x / 10_000, u1.placement.at.y / 10_000];
    const text = editor.print(root);
    const err = thrownCopperheadError(() => editor.attempt(() => editor.addComponent({ libId: EEPROM, at })));
    expect(err.code).toBe("edit_conflict");
    expect(err.message).toContain(`does not fit at ${at.join(", ")}`);
    expect(err.message).toContain("U1's drawing");
    expect(editor.print(root)).toBe(text);
  });

  test("find_space without width and height, or a symbol, says what it needs", async () => {
    const err = await withTools(repo, ({ call }) => call("find_space", { near: "U1" })).catch(
      (e: unknown) => e as Error,
    );
    expect(String((err as Error).message)).toContain("needs width and height");
  });
});
