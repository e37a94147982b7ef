import { describe, expect, test } from "bun:test";
import { describeVersion, has, kicadMajor, SCHEMATIC, symbolLibraryVersion } from "../../src/kicad/format-versions.ts";
import { kicadShareDir } from "../../src/kicad/cli/install.ts";
import { Libraries } from "../../src/kicad/library/libraries.ts";
import {
  adaptSyntax,
  addLegacyInstances,
  layOutInserted,
  legacyInstancePath,
  removeLegacyInstances,
  setLegacyInstanceField,
} from "../../src/kicad/schematic/dialect.ts";
import { junctionNode, labelNode, lineNode, noConnectNode } from "../../src/kicad/schematic/item-nodes.ts";
import {
  child,
  children,
  childText,
  insertChild,
  list,
  parseSexpr,
  printSexpr,
  q,
  text,
  type SList,
} from "../../src/kicad/sexpr/index.ts";

describe("format versions", () => {
  test("each release's version maps to its KiCad major, development versions to the next release", () => {
    expect(kicadMajor("schematic", 20211123)).toBe(6);
    expect(kicadMajor("schematic", 20220914)).toBe(7);
    expect(kicadMajor("schematic", 20230121)).toBe(7);
    expect(kicadMajor("schematic", 20231120)).toBe(8);
    expect(kicadMajor("schematic", 20250114)).toBe(9);
    expect(kicadMajor("schematic", 20250318)).toBe(10);
    expect(kicadMajor("board", 20211014)).toBe(6);
    expect(kicadMajor("board", 20241229)).toBe(9);
    expect(describeVersion("schematic", 20230121)).toBe("KiCad 7 (20230121)");
  });

  test("a change applies from its version on", () => {
    expect(has(20211123, SCHEMATIC.symbolInstancesInSymbols)).toBe(false);
    expect(has(20230121, SCHEMATIC.symbolInstancesInSymbols)).toBe(true);
    expect(has(20230121, SCHEMATIC.modernPowerSymbols)).toBe(false);
    expect(has(20230221, SCHEMATIC.modernPowerSymbols)).toBe(true);
  });

  test("every change is dated within the s-expression era, newest last in the table", () => {
    const dates = Object.values(SCHEMATIC).map((c) => c.since);
    for (const d of dates) expect(d).toBeGreaterThanOrEqual(20200310);
    expect(Math.max(...dates)).toBe(SCHEMATIC.tildeIsText.since);
  });

  test("symbol library versions map onto schematic syntax", () => {
    expect(symbolLibraryVersion(20211014)).toBe(SCHEMATIC.overbarBraces.since);
    expect(has(symbolLibraryVersion(20241209), SCHEMATIC.pinHideBoolean)).toBe(true);
    expect(has(symbolLibraryVersion(20220914), SCHEMATIC.v8Syntax)).toBe(false);
  });
});

describe("writing in a file's own syntax", () => {
  const stock = new Libraries({
    projectDir: process.cwd(),
    major: 9,
    shareDir: kicadShareDir(),
    configHome: "/nonexistent",
  });
  const led = () => stock.resolveSymbol("Device:LED");
  /** Printed as it would be once inserted into a file. */
  const laidOut = (node: SList) => {
    const holder = list("kicad_sch");
    insertChild(holder, node);
    return printSexpr(holder).replace(/\s+/g, " ");
  };

  test("a KiCad 9 library symbol becomes KiCad 6 syntax", () => {
    const old = laidOut(adaptSyntax(led(), 20211123));
    expect(old).not.toContain("exclude_from_sim");
    expect(old).not.toContain("embedded_fonts");
    expect(old).not.toContain("(hide yes)");
    expect(old).not.toContain('"Description"');
    expect(old).toContain('"ki_description"');
    expect(old).toContain("(color 0 0 0 0)");
    const node = adaptSyntax(led(), 20211123);
    const ids = children(node, "property").map((p) => [text(p, 1), childText(p, "id")]);
    expect(ids.slice(0, 4)).toEqual([
      ["Reference", "0"],
      ["Value", "1"],
      ["Footprint", "2"],
      ["Datasheet", "3"],
    ]);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
  });

  test("KiCad 7 keeps ids off and dnp, but not exclude_from_sim or boolean hide", () => {
    const placed = list(
      "symbol",
      list("lib_id", q("Device:LED")),
      list("exclude_from_sim", "no"),
      list("dnp", "no"),
      list("uuid", q("0b2e6139-071a-49ee-be84-0a0e4d3a2ad6")),
      list("property", q("Reference"), q("D1"), list("effects", list("hide", "yes"))),
    );
    const out = laidOut(adaptSyntax(placed, 20230121));
    expect(out).toBe(
      '(kicad_sch (symbol (lib_id "Device:LED") (dnp no) (uuid 0b2e6139-071a-49ee-be84-0a0e4d3a2ad6) (property "Reference" "D1" (effects hide) ) ) )',
    );
  });

  test("an old library symbol becomes KiCad 9 syntax when it goes into a KiCad 9 file", () => {
    const source =
      '(symbol "L:X" (pin_names (offset 0) hide) (property "Reference" "U" (id 0) (at 0 0 0) (effects (font (size 1.27 1.27)) hide)) (property "ki_description" "d" (id 4) (at 0 0 0)) (symbol "X_1_1" (pin input line (at 0 0 0) (length 2.54) hide (name "A") (number "1"))))';
    const node = adaptSyntax(parseSexpr(source).root, 20250114);
    const out = laidOut(node);
    expect(out).not.toContain("(id ");
    expect(out).toContain('"Description"');
    expect(child(child(node, "pin_names")!, "hide")).toBeDefined();
    expect(child(children(children(node, "symbol")[0]!, "pin")[0]!, "hide")).toBeDefined();
  });
});

describe("KiCad 6 symbol_instances", () => {
  const root = () => parseSexpr('(kicad_sch (version 20211123) (sheet_instances (path "/" (page "1"))))').root;

  test("rows go in sorted, with value and footprint in KiCad 6 files", () => {
    const tree = root();
    addLegacyInstances(tree, 20211123, [
      { path: "/b", reference: "R2", unit: 1, value: "1k", footprint: "R:0603" },
      { path: "/a", reference: "R1", unit: 1, value: "2k", footprint: "" },
    ]);
    const rows = children(child(tree, "symbol_instances")!, "path");
    expect(rows.map((r) => text(r, 1))).toEqual(["/a", "/b"]);
    expect(childText(rows[1]!, "value")).toBe("1k");
    expect(tree.items.map((i) => (i.type === "list" ? text(i, 0) : ""))).toEqual([
      "",
      "version",
      "sheet_instances",
      "symbol_instances",
    ]);
  });

  test("field edits and removals find a symbol's rows by its uuid", () => {
    const tree = root();
    addLegacyInstances(tree, 20211123, [
      { path: "/s1/u1", reference: "R1", unit: 1, value: "1k", footprint: "" },
      { path: "/s2/u1", reference: "R2", unit: 1, value: "1k", footprint: "" },
      { path: "/u2", reference: "C1", unit: 1, value: "1u", footprint: "" },
    ]);
    setLegacyInstanceField(tree, "u1", "value", "4k7");
    setLegacyInstanceField(tree, "u1", "reference", "R9", "R2");
    const rows = () => children(child(tree, "symbol_instances")!, "path");
    expect(rows().map((r) => [childText(r, "reference"), childText(r, "value")])).toEqual([
      ["R1", "4k7"],
      ["R9", "4k7"],
      ["C1", "1u"],
    ]);
    removeLegacyInstances(tree, new Set(["u1"]));
    expect(rows().map((r) => childText(r, "reference"))).toEqual(["C1"]);
    expect(legacyInstancePath("/root/s1", "/root", "u1")).toBe("/s1/u1");
  });
});

describe("KiCad 6 and 7 layout of new items", () => {
  // Each expectation is copied from a file KiCad 6 saved (the corpus's rp2040-designguide).
  const insertInto = (version: number, node: SList, depth = 1) => {
    const root = parseSexpr(
      `(kicad_sch (version ${version}) (generator eeschema)\n\n  (uuid ba62e47e-9e07-4e97-ab08-24b670d50f97)\n)\n`,
    ).root;
    const adapted = adaptSyntax(node, version);
    insertChild(root, adapted, root.items.length);
    layOutInserted(root, adapted, depth, version);
    return printSexpr(adapted);
  };

  test("a wire, a junction, a no-connect flag and a label", () => {
    expect(
      insertInto(20211123, lineNode("wire", [93.98, 83.82], [88.9, 83.82], "027fc444-68f5-4546-bba9-094ebdd0940b")),
    ).toBe(
      "\n\n  (wire (pts (xy 93.98 83.82) (xy 88.9 83.82))\n    (stroke (width 0) (type default) (color 0 0 0 0))\n    (uuid 027fc444-68f5-4546-bba9-094ebdd0940b)\n  )",
    );
    expect(insertInto(20211123, junctionNode([192.405, 66.04], "057af6bb-cf6f-4bfb-b0c0-2e92a2c09a47"))).toBe(
      "\n\n  (junction (at 192.405 66.04) (diameter 0) (color 0 0 0 0)\n    (uuid 057af6bb-cf6f-4bfb-b0c0-2e92a2c09a47)\n  )",
    );
    expect(insertInto(20211123, noConnectNode([257.175, 59.69], "64db077b-86dd-46fe-b6c1-960d66e34270"))).toBe(
      "\n\n  (no_connect (at 257.175 59.69) (uuid 64db077b-86dd-46fe-b6c1-960d66e34270))",
    );
    expect(insertInto(20211123, labelNode("GPIO28", [93.98, 107.95], 0, "007db87b-6fbe-4067-8a62-eddb458829e2"))).toBe(
      '\n\n  (label "GPIO28" (at 93.98 107.95 0)\n    (effects (font (size 1.27 1.27)) (justify left bottom))\n    (uuid 007db87b-6fbe-4067-8a62-eddb458829e2)\n  )',
    );
  });

  test("KiCad 8 and later keep KiCad 9's tab layout", () => {
    expect(insertInto(20231120, noConnectNode([1, 2], "64db077b-86dd-46fe-b6c1-960d66e34270"))).toBe(
      '\n\t(no_connect\n\t\t(at 1 2)\n\t\t(uuid "64db077b-86dd-46fe-b6c1-960d66e34270")\n\t)',
    );
  });
});
