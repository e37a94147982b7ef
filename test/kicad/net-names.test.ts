import { describe, expect, test } from "bun:test";
import { lookupNet, resolveNet } from "../../src/kicad/netlist/net-names.ts";
import { thrownCopperheadError } from "../support/errors.ts";

const NETS = ["GND", "+3V3", "/DATA", "/Power/EN", "/Sensor/EN", "/Power/VBAT_SENSE", "Net-(D1-A)"];

describe("net names", () => {
  test("an exact netlist name wins, global or local", () => {
    expect(resolveNet(NETS, "GND")).toBe("GND");
    expect(resolveNet(NETS, "/DATA")).toBe("/DATA");
    expect(resolveNet(NETS, "Net-(D1-A)")).toBe("Net-(D1-A)");
  });

  test("a unique short name means its local net on whatever sheet", () => {
    expect(resolveNet(NETS, "DATA")).toBe("/DATA");
    expect(resolveNet(NETS, "VBAT_SENSE")).toBe("/Power/VBAT_SENSE");
  });

  test("a short name used on two sheets is ambiguous and lists both", () => {
    expect(lookupNet(NETS, "EN")).toEqual({ kind: "ambiguous", candidates: ["/Power/EN", "/Sensor/EN"] });
    const err = thrownCopperheadError(() => resolveNet(NETS, "EN"));
    expect(err.code).toBe("not_found");
    expect(err.message).toContain("/Power/EN, /Sensor/EN");
  });

  test("an unknown name suggests close ones; a path never falls back to a short name", () => {
    expect(thrownCopperheadError(() => resolveNet(NETS, "DATTA")).fix).toContain("/DATA");
    expect(lookupNet(NETS, "/Other/DATA")).toEqual({ kind: "missing" });
    expect(lookupNet(NETS, "")).toEqual({ kind: "missing" });
  });
});
