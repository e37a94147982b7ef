import { describe, expect, test } from "bun:test";
import { loadDesign } from "../../src/design/design.ts";
import type { Net } from "../../src/kicad/netlist/netlist.ts";
import { discoverProject } from "../../src/repo/project.ts";
import {
  isConnector,
  NOT_CONNECTED,
  parsePinout,
  pinoutConnectors,
  pinoutDifferences,
  renderPinout,
} from "../../src/spec/pinout.ts";
import { FIXTURES_DIR } from "../support/kicad.ts";
import { join } from "node:path";

const design = loadDesign(discoverProject(join(FIXTURES_DIR, "usb-led")));

describe("PINOUT.md on the built-in board", () => {
  const md = renderPinout(design);

  test("lists every connector's pins in natural order, with names and nets", () => {
    const connectors = pinoutConnectors(design);
    expect(connectors.map((c) => c.ref)).toEqual(["J1", "J2"]);
    expect(connectors[0]!.pins.map((p) => p.pin)).toEqual(["A5", "A9", "A12", "B5", "B9", "B12", "S1"]);
    expect(md).toContain("### J1: USB_C_Receptacle_PowerOnly_6P (`Connector:USB_C_Receptacle_PowerOnly_6P`)");
    expect(md).toContain("| A5 | CC1 | /CC1 |");
    expect(md).toContain("| 1 | Pin_1 | +3V3 |");
  });

  test("reads back as written: no differences, not edited", () => {
    const table = parsePinout(md)!;
    expect(table.edited).toBe(false);
    expect(table.rows).toHaveLength(9);
    expect(pinoutDifferences(pinoutConnectors(design), table)).toEqual([]);
  });

  test("a hand edit inside the markers is detected, and names the row", () => {
    const edited = parsePinout(md.replace("| A5 | CC1 | /CC1 |", "| A5 | CC1 | /CC_ONE |"))!;
    expect(edited.edited).toBe(true);
    expect(pinoutDifferences(pinoutConnectors(design), edited)).toEqual([
      { ref: "J1", pin: "A5", what: "net", claim: "/CC_ONE", actual: "/CC1", line: edited.rows[0]!.line },
    ]);
  });

  test("a net rename in the design shows up as a changed row", () => {
    const renamed = {
      ...design,
      netlist: { nets: design.netlist.nets.map((n: Net) => (n.name === "/CC1" ? { ...n, name: "/USB_CC1" } : n)) },
    };
    const diffs = pinoutDifferences(pinoutConnectors(renamed), parsePinout(md)!);
    expect(diffs).toEqual([
      { ref: "J1", pin: "A5", what: "net", claim: "/CC1", actual: "/USB_CC1", line: expect.any(Number) },
    ]);
    expect(renderPinout(renamed, md)).toContain("| A5 | CC1 | /USB_CC1 |");
  });

  test("regenerating keeps everything outside the markers, byte for byte", () => {
    const human = `# Pinout\n\nHand-written intro.\n\n${md.slice(md.indexOf("<!-- copperhead:pinout:begin"))}\nHand-written notes after.\n`;
    expect(renderPinout(design, human)).toBe(human);
  });

  test("a doc without markers gets the tables appended; missing and extra rows are differences", () => {
    const appended = renderPinout(design, "# Notes\n\nMine.\n");
    expect(appended).toStartWith("# Notes\n\nMine.\n\n<!-- copperhead:pinout:begin");
    const dropped = parsePinout(
      md
        .replace("| S1 | SHIELD | GND |\n", "")
        .replace("| 2 | Pin_2 | GND |", "| 2 | Pin_2 | GND |\n| 3 | Pin_3 | GND |"),
    )!;
    expect(pinoutDifferences(pinoutConnectors(design), dropped).map((d) => `${d.ref}.${d.pin}:${d.what}`)).toEqual([
      "J1.S1:missing",
      "J2.3:extra",
    ]);
  });
});

describe("what counts as a connector", () => {
  const component = (ref: string, libId: string) => ({ ref, libId }) as Parameters<typeof isConnector>[0];
  test("J, P, CN and CON references, or a symbol from a Connector library", () => {
    for (const [ref, lib] of [
      ["J3", "Device:R"],
      ["P1", "x:y"],
      ["CN2", "x:y"],
      ["CON1", "x:y"],
      ["U7", "Connector_Generic:Conn_01x04"],
    ])
      expect(isConnector(component(ref!, lib!))).toBe(true);
    for (const [ref, lib] of [
      ["R1", "Device:R"],
      ["U1", "MCU:RP2040"],
      ["JP1x", "Jumper:SolderJumper"],
    ])
      expect(isConnector(component(ref!, lib!))).toBe(false);
  });

  test("a pin on a net of its own reads as not connected", () => {
    const netlist = {
      nets: [{ name: "unconnected-(J9-Pad2)", nodes: [{ ref: "J9", pin: "2", pinfunction: "Pin_2" }] }],
    };
    const connectors = pinoutConnectors({
      components: [{ ref: "J9", value: "Conn", libId: "Connector_Generic:Conn_01x02" } as never],
      netlist,
    });
    expect(connectors[0]!.pins).toEqual([{ pin: "2", name: "Pin_2", net: NOT_CONNECTED }]);
  });
});
