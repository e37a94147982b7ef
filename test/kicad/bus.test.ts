import { describe, expect, test } from "bun:test";
import { escapeNetName, expandBus, parseBusGroup, parseBusVector } from "../../src/kicad/netlist/bus.ts";

describe("bus labels", () => {
  test("a vector expands in ascending order whichever way the bounds are written", () => {
    expect(parseBusVector("D[0..3]")?.members).toEqual(["D0", "D1", "D2", "D3"]);
    expect(parseBusVector("A[3..0]")?.members).toEqual(["A0", "A1", "A2", "A3"]);
    expect(expandBus("D[1..2]")).toEqual([
      { name: "D1", local: "D1", vectorIndex: 0 },
      { name: "D2", local: "D2", vectorIndex: 1 },
    ]);
  });

  test("equal bounds, spaces and missing parts are not vectors", () => {
    for (const label of ["D[1..1]", "D [0..3]", "D[0..3", "D[a..3]", "D0", "D[0..3]x"])
      expect(parseBusVector(label)).toBeUndefined();
  });

  test("groups: unnamed, named (prefix.member), nested vectors and aliases", () => {
    expect(expandBus("{SDA SCL}")?.map((m) => m.name)).toEqual(["SDA", "SCL"]);
    expect(expandBus("I2C{SDA SCL}")?.map((m) => m.name)).toEqual(["I2C.SDA", "I2C.SCL"]);
    expect(expandBus("MEM{A[0..1] RW}")?.map((m) => m.name)).toEqual(["MEM.A0", "MEM.A1", "MEM.RW"]);
    expect(expandBus("{CTRL}", new Map([["CTRL", ["RD", "WR"]]]))?.map((m) => m.name)).toEqual(["RD", "WR"]);
    expect(parseBusGroup("{A,B}")?.members).toEqual(["A", "B"]);
  });

  test("braces after _, ^ or ~ are markup, not groups", () => {
    for (const label of ["~{RESET}", "V_{CC}"]) {
      expect(parseBusVector(label)).toBeUndefined();
      expect(parseBusGroup(label)).toBeUndefined();
    }
    expect(parseBusVector("SIG") ?? parseBusGroup("SIG")).toBeUndefined();
  });

  // Each expectation below was measured with kicad-cli 9.0.8 (a bus through a sheet pin, member
  // wires labelled with and without the markup: only the markup-free name joins the member).
  test("member names drop markup: vector prefixes and suffixes, group members", () => {
    expect(parseBusVector("~{D}[0..1]")?.members).toEqual(["D0", "D1"]);
    expect(parseBusVector("~{D[0..1]}")?.members).toEqual(["D0", "D1"]);
    expect(parseBusVector("A~{B}C[0..1]")?.members).toEqual(["ABC0", "ABC1"]);
    expect(expandBus("SWD_TRG{~{RESET}, SWDIO, SWDCLK}")?.map((m) => m.name)).toEqual([
      "SWD_TRG.RESET",
      "SWD_TRG.SWDIO",
      "SWD_TRG.SWDCLK",
    ]);
    expect(expandBus("{~{X} Y}")?.map((m) => m.name)).toEqual(["X", "Y"]);
    expect(expandBus("G{~{A}[0..1]}")?.map((m) => m.name)).toEqual(["G.A0", "G.A1"]);
  });

  test("a group's prefix drops the markup character and opening brace, not the closing one", () => {
    expect(parseBusGroup("~{Q}{A B}")?.prefix).toBe("Q}");
    expect(parseBusGroup("Q_{x}{A B}")?.prefix).toBe("Qx}");
    expect(expandBus("~{Q}X{A B}")?.map((m) => m.name)).toEqual(["Q}X.A", "Q}X.B"]);
  });

  test("net names escape the hierarchy separator", () => {
    expect(escapeNetName("A/B")).toBe("A{slash}B");
  });
});
