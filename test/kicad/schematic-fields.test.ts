/**
 * Fields as KiCad places them, on the built-in board's regulator sheet made to look like a
 * design converted from a pre-KiCad 6 library: its capacitor symbol (embedded and placed) shows
 * the Footprint field, larger, across pin 2. A new capacitor with `connect` still wires up (its
 * own fields never block its wiring), keeps Footprint/Datasheet hidden unless the `like` example
 * shows them, reads upright or bottom to top, and none of its fields overlaps another item
 * (boxes from the saved tree). Errors about room name what is in the way and say nothing was
 * written.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { child, children, flag, num, parseSexpr, text } from "../../src/kicad/sexpr/index.ts";
import { cleanupTempDirs, copyFixture, requireKicadCli } from "../support/kicad.ts";
import { drawnItems, overlaps } from "../support/sheet-boxes.ts";

afterAll(cleanupTempDirs);

let dir: string;
let sheet: string;

/** The Footprint field, shown at 1.524 mm across pin 2, in the embedded Device:C and on C1. */
function showFootprints(file: string): void {
  let source = readFileSync(file, "utf8");
  const visible = (at: string) =>
    `(property "Footprint" $1\n\t\t\t\t(at ${at})\n\t\t\t\t(effects\n\t\t\t\t\t(font\n\t\t\t\t\t\t(size 1.524 1.524)\n\t\t\t\t\t)\n\t\t\t\t)\n\t\t\t)`;
  source = source.replace(
    /\(property "Footprint" ("")\n\t\t\t\t\(at 0\.9652 -3\.81 0\)\n\t\t\t\t\(effects\n\t\t\t\t\t\(font\n\t\t\t\t\t\t\(size 1\.27 1\.27\)\n\t\t\t\t\t\)\n\t\t\t\t\t\(hide yes\)\n\t\t\t\t\)\n\t\t\t\)/,
    visible("0.9652 -3.81 0"),
  );
  source = source.replace(
    /\(property "Footprint" ("Capacitor_SMD:C_0603_1608Metric")\n\t\t\t\(at 109\.22 80\.01 0\)\n\t\t\t\(effects\n\t\t\t\t\(font\n\t\t\t\t\t\(size 1\.27 1\.27\)\n\t\t\t\t\)\n\t\t\t\t\(hide yes\)\n\t\t\t\)\n\t\t\)/,
    `(property "Footprint" $1\n\t\t\t(at 110.19 83.82 0)\n\t\t\t(effects\n\t\t\t\t(font\n\t\t\t\t\t(size 1.524 1.524)\n\t\t\t\t)\n\t\t\t)\n\t\t)`,
  );
  writeFileSync(file, source);
}

beforeEach(async () => {
  await requireKicadCli();
  dir = await copyFixture("usb-led");
  sheet = join(dir, "regulator.kicad_sch");
  showFootprints(sheet);
  const c1 = loadSchematicProject(join(dir, "usb-led.kicad_sch"))
    .instances.flatMap((i) => i.file.symbols)
    .find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "C1"))!;
  expect(
    c1.fields
      .find((f) => f.name === "Footprint")!
      .node.items.some((i) => i.type === "list" && text(i, 0) === "effects" && !flag(i, "hide")),
  ).toBe(true);
});

async function editor(): Promise<SchematicEditor> {
  return SchematicEditor.open(join(dir, "usb-led.kicad_sch"), await openLibraries(dir));
}

/** The placed symbol `ref` in the saved sheet: each field's name, angle and visibility. */
function fieldsOf(ref: string) {
  const root = parseSexpr(readFileSync(sheet, "utf8")).root;
  const symbol = children(root, "symbol").find((s) =>
    children(s, "property").some((p) => text(p, 1) === "Reference" && text(p, 2) === ref),
  )!;
  return children(symbol, "property").map((p) => {
    const effects = child(p, "effects");
    return {
      name: text(p, 1)!,
      angle: num(child(p, "at")!, 3) ?? 0,
      hidden: Boolean(flag(p, "hide") || (effects && flag(effects, "hide"))),
      uuid: text(child(symbol, "uuid")!, 1)!,
    };
  });
}

/** Fields of `uuid` that overlap any other item's box on the sheet. */
function fieldOverlaps(uuid: string): string[] {
  const items = drawnItems(sheet);
  const own = items.filter((i) => i.uuid === uuid && i.kind === "field");
  return own.flatMap((f) =>
    items
      .filter((o) => o !== f && !(o.uuid === uuid && o.kind === "symbol") && overlaps(f.box, o.box))
      .map((o) => `${JSON.stringify(f.box)} overlaps ${o.kind} ${JSON.stringify(o.box)}`),
  );
}

describe("a capacitor from a converted library", () => {
  test("added by lib id with a footprint and connect: wired, Footprint and Datasheet hidden, fields upright and clear", async () => {
    const e = await editor();
    const added = e.addComponent({
      libId: "Device:C",
      value: "100n",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      sheet: "/Regulator/",
      near: "C1",
      connect: { "1": "+3V3", "2": "GND" },
    });
    e.save();
    const fields = fieldsOf(added.ref);
    expect(
      fields.filter((f) => ["Footprint", "Datasheet", "Description"].includes(f.name)).every((f) => f.hidden),
    ).toBe(true);
    for (const f of fields) expect([0, 90]).toContain(f.angle);
    expect(fieldOverlaps(fields[0]!.uuid)).toEqual([]);
  }, 120_000);

  test("added like C1, which shows its Footprint across pin 2: the layout is copied, and its own field does not block its wiring", async () => {
    const e = await editor();
    const added = e.addComponent({
      like: "C1",
      value: "100n",
      sheet: "/Regulator/",
      near: "C1",
      connect: { "1": "+3V3", "2": "GND" },
    });
    e.save();
    const fields = fieldsOf(added.ref);
    expect(fields.find((f) => f.name === "Footprint")!.hidden).toBe(false);
    expect(fields.find((f) => f.name === "Datasheet")!.hidden).toBe(true);
    for (const f of fields) expect([0, 90]).toContain(f.angle);
    expect(fieldOverlaps(fields[0]!.uuid)).toEqual([]);
  }, 120_000);
});

describe("errors about room", () => {
  test("a move onto other parts names them with their places and says nothing was moved", async () => {
    const e = await editor();
    const before = readFileSync(sheet, "utf8");
    expect(() => e.moveSymbol("C1", { at: [127, 76.2] })).toThrow(
      /does not fit at 127, 76\.2 on sheet \/Regulator\/: it would overlap .*U1's .* at \(\d+(\.\d+)?, \d+(\.\d+)?\).*Nothing was moved\./,
    );
    e.save();
    expect(readFileSync(sheet, "utf8")).toBe(before);
  }, 60_000);
});

/**
 * A rename that makes a label longer never leaves it over another item: LED_A, below R3 and
 * left of the GND symbol's text, renamed to a much longer name reads the other way from its
 * wire rather than run over that text; CC1, boxed in along its short wire, makes room (moved
 * along its wiring, or its wire lengthened) rather than run over its neighbours.
 */
describe("a renamed label keeps clear", () => {
  const root = () => join(dir, "usb-led.kicad_sch");
  /** Boxes of the label `name` on the root sheet, and what else on the sheet each overlaps. */
  const labelCrowding = (name: string) => {
    const source = readFileSync(root(), "utf8");
    const uuid = /\(label "([^"]+)"[\s\S]*?\(uuid "([^"]+)"\)/g;
    const uuids = [...source.matchAll(uuid)].filter((m) => m[1] === name).map((m) => m[2]);
    const items = drawnItems(root());
    const own = items.filter((i) => i.kind === "label" && uuids.includes(i.uuid));
    expect(own.length).toBe(1);
    return items
      .filter((o) => o !== own[0] && o.kind !== "wire" && overlaps(own[0]!.box, o.box))
      .map((o) => `${o.kind} ${JSON.stringify(o.box)}`);
  };

  test("LED_A renamed to a much longer name reads the other way, over nothing", async () => {
    expect(labelCrowding("LED_A")).toEqual([]);
    const e = await editor();
    e.renameNet("LED_A", "LED_ANODE_THROUGH_THE_RESISTOR");
    e.save();
    expect(labelCrowding("LED_ANODE_THROUGH_THE_RESISTOR")).toEqual([]);
    const label = parseSexpr(readFileSync(root(), "utf8")).root.items.find(
      (i) => i.type === "list" && text(i, 0) === "label" && text(i, 1) === "LED_ANODE_THROUGH_THE_RESISTOR",
    );
    expect(label && num(child(label as never, "at")!, 3)).toBe(180);
  }, 60_000);

  test("CC1, boxed in along its short wire, makes room the least way and reads over nothing", async () => {
    const e = await editor();
    e.renameNet("CC1", "CC1_PULLDOWN_5K1_TO_GROUND_X");
    e.save();
    expect(labelCrowding("CC1_PULLDOWN_5K1_TO_GROUND_X")).toEqual([]);
    expect(e.netlist().nets.map((n) => n.name)).toContain("/CC1_PULLDOWN_5K1_TO_GROUND_X");
  }, 60_000);
});
