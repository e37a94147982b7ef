import { describe, expect, test } from "bun:test";
import { compareQuantities, parseLength, parseQuantity, type Quantity } from "../../src/spec/units.ts";

describe("parseQuantity", () => {
  const cases: [string, Quantity][] = [
    ["4k7", { value: 4700 }],
    ["100nF", { value: 1e-7, unit: "F" }],
    ["0.1u", { value: 1e-7 }],
    ["3.3V", { value: 3.3, unit: "V" }],
    ["1M", { value: 1e6 }],
    ["1m", { value: 1e-3 }],
    ["2.2µF", { value: 2.2e-6, unit: "F" }],
    ["2.2μF", { value: 2.2e-6, unit: "F" }],
    ["2.2uF", { value: 2.2e-6, unit: "F" }],
    ["10R", { value: 10, unit: "Ω" }],
    ["1R5", { value: 1.5, unit: "Ω" }],
    ["0R", { value: 0, unit: "Ω" }],
    ["4k7Ω", { value: 4700, unit: "Ω" }],
    ["1kohm", { value: 1000, unit: "Ω" }],
    ["5.1k", { value: 5100 }],
    ["10K", { value: 10000 }],
    ["2n2", { value: 2.2e-9 }],
    ["3V3", { value: 3.3, unit: "V" }],
    ["100 mA", { value: 0.1, unit: "A" }],
    ["1e-6", { value: 1e-6 }],
    ["1.5E3", { value: 1500 }],
    ["16MHz", { value: 16e6, unit: "Hz" }],
    ["-5V", { value: -5, unit: "V" }],
    ["680", { value: 680 }],
    ["10k 1%", { value: 10000 }],
    ["10k/1%", { value: 10000 }],
    ["10k±5%", { value: 10000 }],
    ["5%", { value: 5, unit: "%" }],
  ];
  for (const [text, expected] of cases) {
    test(`${text}`, () => expect(parseQuantity(text)).toEqual(expected));
  }

  const notQuantities = ["", "Green", "AP2112K-3.3", "3V3_OUT", "100nF 50V", "1mm", "k", "4k7k", "3V3A", "1..2", "±5%"];
  for (const text of notQuantities) {
    test(`${JSON.stringify(text)} is text`, () => expect(parseQuantity(text)).toBeUndefined());
  }

  test("spellings of the same value compare exactly equal", () => {
    expect(parseQuantity("0.1u")!.value).toBe(parseQuantity("100n")!.value);
    expect(parseQuantity("4k7")!.value).toBe(parseQuantity("4.7k")!.value);
    expect(parseQuantity("1R5")!.value).toBe(parseQuantity("1.5")!.value);
  });
});

describe("compareQuantities", () => {
  const q = (t: string) => parseQuantity(t)!;
  test("orders values across prefixes", () => {
    expect(compareQuantities(q("1k"), q("680"))).toEqual({ order: 1 });
    expect(compareQuantities(q("100nF"), q("0.1uF"))).toEqual({ order: 0 });
    expect(compareQuantities(q("4k7"), q("5k1"))).toEqual({ order: -1 });
  });
  test("a bare number compares with any unit", () => {
    expect(compareQuantities(q("1u"), q("1uF"))).toEqual({ order: 0 });
    expect(compareQuantities(q("3.3V"), q("3.3"))).toEqual({ order: 0 });
  });
  test("different units are a mismatch, not an order", () => {
    expect(compareQuantities(q("1uF"), q("3.3V"))).toEqual({ mismatch: "cannot compare F with V" });
    expect(compareQuantities(q("10R"), q("10mA"))).toEqual({ mismatch: "cannot compare Ω with A" });
  });
});

describe("parseLength", () => {
  const cases: [string, number][] = [
    ["40mm", 40],
    ["40 mm", 40],
    ["40", 40],
    ["1000mil", 25.4],
    ["1.6in", 40.64],
    ['1"', 25.4],
    ["2.5e1mm", 25],
  ];
  for (const [text, mm] of cases) {
    test(`${text} = ${mm} mm`, () => expect(parseLength(text)).toBeCloseTo(mm, 9));
  }
  for (const text of ["40cm", "wide", "mm", "40 mm mm"]) {
    test(`${text} is not a length`, () => expect(parseLength(text)).toBeUndefined());
  }
});

describe("parseQuantity on hostile text", () => {
  test("a value padded with a million spaces is not a quantity, and is rejected at once", () => {
    expect(parseQuantity(`1${" ".repeat(1_000_000)}5%`)).toBeUndefined();
    expect(parseQuantity(`${" ".repeat(1_000_000)}10k`)).toMatchObject({ value: 10000 });
  }, 20_000);
});
