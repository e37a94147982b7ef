/**
 * The design's own symbols on bms-c1, whose project tables point at library folders the repo
 * does not ship (`${KIPRJMOD}/libresolar-symbols/…`): its parts can still be added from the
 * copies its sheets embed, found by search, and copied with `like` — fields and all.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { exportNetlist } from "../../src/kicad/cli/kicad-cli.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { designSymbols, searchLibraries } from "../../src/kicad/library/search.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { thrownCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

async function bms(): Promise<string> {
  const project = corpusProjects().find((p) => p.id === "corpus/bms-c1");
  if (!project?.schematic) throw new Error("corpus project bms-c1 is missing");
  return (await copyCorpusProject(project)).schematic!;
}

describe("the design's own symbols (bms-c1)", () => {
  test("the library table names a folder that is not there, yet LibreSolar:C is found and added from the embedded copy", async () => {
    const root = await bms();
    const libraries = await openLibraries(dirname(root));
    expect(thrownCopperheadError(() => libraries.resolveSymbol("LibreSolar:C")).code).toBe("library_not_found");
    const hits = searchLibraries(libraries, "LibreSolar C", {
      kind: "symbol",
      design: designSymbols(loadSchematicProject(root).files.values()),
    });
    expect(hits[0]).toMatchObject({ libId: "LibreSolar:C", source: "design" });

    const editor = SchematicEditor.open(root, libraries);
    const added = editor.addComponent({
      libId: "LibreSolar:C",
      value: "100nF",
      near: "U1",
      connect: { "1": "+3V3", "2": "GND" },
    });
    expect(added.sheet).toBe("/ESP32-C3 MCU/");
    editor.save();
    const part = listComponents(loadSchematicProject(root)).find((c) => c.ref === added.ref)!;
    expect(part.libId).toBe("LibreSolar:C");
  });

  test("like C36 copies its symbol, value, footprint, manufacturer and part number; explicit arguments win", async () => {
    const cli = await requireKicadCli();
    const root = await bms();
    const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
    // C36's footprint library is not shipped either: copying it as is says so.
    const missing = thrownCopperheadError(() => editor.addComponent({ like: "C36", near: "U1" }));
    expect(missing.code).toBe("library_not_found");
    expect(missing.message).toContain("LibreSolar");

    const added = editor.addComponent({
      like: "C36",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      near: "U1",
      connect: { "1": "+3V3", "2": "GND" },
    });
    editor.save();
    const part = listComponents(loadSchematicProject(root)).find((c) => c.ref === added.ref)!;
    expect(part.libId).toBe("LibreSolar:C");
    expect(part.fields).toMatchObject({
      Value: "100nF",
      Footprint: "Capacitor_SMD:C_0603_1608Metric",
      Manufacturer: "Samsung Electro-Mechanics",
      PartNumber: "CL10B104KC8NNNC",
      LCSC: "C15725",
    });
    const netlist = parseKicadNetlist(await exportNetlist(root, { cli }), root);
    expect(netlist.nets.find((n) => n.nodes.some((x) => x.ref === added.ref && x.pin === "1"))?.name).toBe("+3V3");
    expect(thrownCopperheadError(() => editor.addComponent({})).code).toBe("usage");
  }, 120_000);
});
